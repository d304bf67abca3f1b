// libFuzzer target for the workload readers: the first byte picks YAML or JSONL, the rest is
// the document. Any input must give a value or an error Status, never a crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/io/workload_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    (void)hetsched::model::io::ParseWorkloadJsonl(text, "fuzz.jsonl");
  } else {
    (void)hetsched::model::io::ParseWorkloadYaml(text, "fuzz.yaml");
  }
  return 0;
}
