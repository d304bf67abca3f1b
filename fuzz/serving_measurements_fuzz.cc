// libFuzzer target for the measured serving table (Splitwise's perf_model.csv format): parsing
// must not crash, and whatever parses must fit a calibration without crashing either.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cost/serving.h"
#include "model/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rows = hetsched::cost::ParseServingMeasurements(text, "fuzz.csv");
  if (!rows.ok()) return 0;
  (void)hetsched::cost::FitServingCalibration(*rows, hetsched::model::DeviceCatalog::BuiltIn(),
                                              hetsched::cost::kMeasuredLinkBandwidth);
  return 0;
}
