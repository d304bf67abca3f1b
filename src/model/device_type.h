// DeviceType: data describing one kind of device (a GPU model, a CPU socket, an NPU).
// Types are data, not code: the built-in catalog and user YAML both produce them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/software_stack.h"
#include "util/status.h"

namespace hetsched::model {

enum class DeviceKind { kCpu, kGpu, kNpu, kAsic };

std::string_view DeviceKindName(DeviceKind kind);  // "cpu", "gpu", "npu", "asic"
util::Result<DeviceKind> ParseDeviceKind(std::string_view text);

enum class Precision { kFp32, kFp16, kInt8 };  // kFp16 covers bf16 too

// One point of a device's power-cap curve (power/cap_curve.h): at `cap` x its default power
// limit it keeps `throughput` of its speed and draws `power` of its busy power (fractions).
struct PowerCapPoint {
  double cap = 1;
  double throughput = 1;
  double power = 1;
};

struct DeviceType {
  std::string name;                  // catalog key, lower case: "a100-80g"
  std::vector<std::string> aliases;  // other names for it, e.g. Gavel's "v100"
  std::string vendor;                // "nvidia", "amd", "intel", "huawei"
  DeviceKind kind = DeviceKind::kGpu;
  std::vector<SoftwareStack> stacks;

  // Dense peak throughput in TFLOPS (TOPS for int8); 0 where not meaningful.
  double fp32_tflops = 0;
  double fp16_tflops = 0;
  double int8_tops = 0;

  uint64_t memory_bytes = 0;    // device memory (for a CPU socket: typical attached DRAM)
  double memory_bandwidth = 0;  // bytes/s
  double idle_watts = 0;
  double peak_watts = 0;
  double price_per_hour = 0;  // USD, on-demand cloud price or amortized estimate
  // Fraction of peak compute a well-tuned kernel reaches; the roofline cost model scales by it.
  double efficiency = 0.5;
  // Measured power-cap curve, caps increasing and ending at 1; empty: the power layer's
  // default (Zeus-fitted) curve.
  std::vector<PowerCapPoint> power_cap_curve;

  std::string source;      // where the figures come from
  bool estimated = false;  // true when some figures are estimates, not datasheet values

  // Peak in FLOP/s for a precision; falls back to fp32 when the precision is not supported.
  double PeakFlops(Precision precision) const;
};

}  // namespace hetsched::model
