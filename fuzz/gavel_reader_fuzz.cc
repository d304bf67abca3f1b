// libFuzzer target for the Gavel readers: the first byte picks the throughput JSON or the trace
// parser, the rest is the file. A parsed trace is also written back and must parse again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/io/gavel_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    (void)hetsched::model::io::ParseGavelThroughputs(text, "fuzz.json");
    return 0;
  }
  auto workload = hetsched::model::io::ParseGavelTrace(text, "fuzz.trace");
  if (!workload.ok()) return 0;
  const std::string written = hetsched::model::io::FormatGavelTrace(*workload);
  auto again = hetsched::model::io::ParseGavelTrace(written, "rewritten.trace");
  if (!again.ok() || again->jobs.size() != workload->jobs.size()) std::abort();
  return 0;
}
