#include "model/device_type.h"

#include <fmt/format.h>

namespace hetsched::model {

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNpu:
      return "npu";
    case DeviceKind::kAsic:
      return "asic";
  }
  return "unknown";
}

util::Result<DeviceKind> ParseDeviceKind(std::string_view text) {
  for (DeviceKind k : {DeviceKind::kCpu, DeviceKind::kGpu, DeviceKind::kNpu, DeviceKind::kAsic}) {
    if (text == DeviceKindName(k)) return k;
  }
  return util::Status::InvalidArgument(
      fmt::format("unknown device kind '{}' (expected cpu, gpu, npu or asic)", text));
}

double DeviceType::PeakFlops(Precision precision) const {
  double tflops = fp32_tflops;
  if (precision == Precision::kFp16 && fp16_tflops > 0) tflops = fp16_tflops;
  if (precision == Precision::kInt8 && int8_tops > 0) tflops = int8_tops;
  return tflops * 1e12;
}

}  // namespace hetsched::model
