// libFuzzer target for a model server's /metrics page: parsing must not crash, and whatever
// parses must be read as a server's load (or refused) without crashing either.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "obs/prometheus_text.h"
#include "obs/server_load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto samples = hetsched::svc::ParsePrometheusText(text);
  if (!samples.ok()) return 0;
  auto load = hetsched::svc::ReadServerLoad(*samples);
  if (load.ok() && load->ttft) (void)hetsched::svc::HistogramQuantile(*load->ttft, 0.99);
  return 0;
}
