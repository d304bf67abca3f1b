// libFuzzer target for the Azure LLM inference trace reader: the input is the CSV file. A parsed
// trace must hold what the reader promises, and must loop and time-warp without surprises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "model/io/azure_trace_reader.h"
#include "model/request_stream.h"

namespace {

// Requests sorted by arrival, all within [start, end).
bool Ordered(const std::vector<hetsched::model::InferenceRequest>& requests, double start,
             double end) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const double t = requests[i].arrival_s;
    if (!(t >= start && t < end)) return false;
    if (i > 0 && t < requests[i - 1].arrival_s) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace model = hetsched::model;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = model::io::ParseAzureTrace(text, "fuzz.csv");
  if (!trace.ok()) return 0;
  if (trace->empty() || trace->front().arrival_s != 0) std::abort();
  for (size_t i = 0; i < trace->size(); ++i) {
    const model::InferenceRequest& r = (*trace)[i];
    if (r.input_tokens < 0 || r.input_tokens > model::io::kMaxAzureTokens || r.output_tokens < 0 ||
        r.output_tokens > model::io::kMaxAzureTokens ||
        (i > 0 && r.arrival_s < (*trace)[i - 1].arrival_s)) {
      std::abort();
    }
  }
  // Small limits keep each run fast; errors (too many requests, no period) are fine.
  auto looped = model::LoopTrace(*trace, 100, 3700, 10'000);
  if (looped.ok() && !Ordered(*looped, 100, 3700)) std::abort();
  const model::RateCurve curve = model::DiurnalCurve(0.5, 2, 12 * 3600);
  auto warped = model::GenerateRequests(curve, 0, 3600, *trace, 0, 0, 1, 10'000);
  if (warped.ok() && !Ordered(*warped, 0, 3600)) std::abort();
  return 0;
}
