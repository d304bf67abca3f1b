// libFuzzer target for simulate's --config reader: any bytes must give a config or an
// InvalidArgument with a "file:..." message. Never a crash, a hang, or a leak. An accepted
// config keeps the ranges the simulator relies on.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cli/sim_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = hetsched::cli::ParseSimConfig(text, "fuzz.yaml");
  if (!config.ok()) {
    if (config.status().code() != hetsched::util::StatusCode::kInvalidArgument) std::abort();
    if (config.status().message().rfind("fuzz.yaml:", 0) != 0) std::abort();
    return 0;
  }
  const hetsched::cli::SimConfig& c = *config;
  if (c.preempt_interval_s && !(*c.preempt_interval_s >= 0)) std::abort();
  if (c.serving_interval_s && !(*c.serving_interval_s >= 10 && *c.serving_interval_s <= 86400)) {
    std::abort();
  }
  for (const auto& [kind, w] : c.classes) {
    if (kind == hetsched::model::JobKind::kService) std::abort();
    if (!(w.weight > 0 && w.weight <= 1e6) || std::abs(w.priority) > 1000000) std::abort();
  }
  return 0;
}
