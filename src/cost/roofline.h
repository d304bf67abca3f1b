// Roofline estimate of how long an operation takes on a device type: the larger of its compute
// time at the device's (efficiency-scaled) peak and its memory-traffic time at full bandwidth.
#pragma once

#include <cstdint>

#include "model/device_type.h"

namespace hetsched::cost {

// What one operation, layer or step does on one device.
struct OpLoad {
  double flops = 0;    // floating-point (or int8) operations
  uint64_t bytes = 0;  // device-memory traffic
  model::Precision precision = model::Precision::kFp16;
};

// Seconds for `flops` at type.PeakFlops(precision) x type.efficiency. A precision the device
// has no figure for falls back to fp32 (as DeviceType::PeakFlops does). Returns 0 when flops is
// 0, and +infinity when flops > 0 but the device has no usable peak (0 peak or efficiency <= 0):
// such work cannot run there, and comparisons against finite times stay correct.
double ComputeSeconds(double flops, model::Precision precision, const model::DeviceType& type);

// Seconds to move `bytes` through device memory at type.memory_bandwidth (no efficiency
// factor: datasheet bandwidths are what streaming kernels approach). 0 for 0 bytes;
// +infinity when bytes > 0 and the bandwidth is 0.
double MemorySeconds(uint64_t bytes, const model::DeviceType& type);

// max(ComputeSeconds, MemorySeconds): compute and memory traffic overlap perfectly.
double RooflineSeconds(const OpLoad& load, const model::DeviceType& type);

// FLOP per byte at which `type` turns from memory-bound to compute-bound for `precision`
// (effective peak / bandwidth). +infinity when the bandwidth is 0.
double RidgeIntensity(model::Precision precision, const model::DeviceType& type);

}  // namespace hetsched::cost
