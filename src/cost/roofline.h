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

// The rate compute runs at on `type`: type.PeakFlops(precision) x type.efficiency, FLOP/s (0
// when that is not positive). A precision the device has no figure for falls back to fp32.
double EffectiveFlops(model::Precision precision, const model::DeviceType& type);

// Seconds for `flops` at an effective rate of `flops_per_s` (peak x efficiency), for callers that
// keep a device's rate rather than its DeviceType. 0 when flops <= 0; +infinity when flops > 0
// and flops_per_s <= 0.
double ComputeSeconds(double flops, double flops_per_s);

// Seconds for `flops` at EffectiveFlops(precision, type). A precision the device
// has no figure for falls back to fp32 (as DeviceType::PeakFlops does). Returns 0 when flops is
// 0, and +infinity when flops > 0 but the device has no usable peak (0 peak or efficiency <= 0):
// such work cannot run there, and comparisons against finite times stay correct.
double ComputeSeconds(double flops, model::Precision precision, const model::DeviceType& type);

// Seconds to move `bytes` through device memory at type.memory_bandwidth (no efficiency
// factor: datasheet bandwidths are what streaming kernels approach). 0 for 0 bytes;
// +infinity when bytes > 0 and the bandwidth is 0.
double MemorySeconds(uint64_t bytes, const model::DeviceType& type);

// bytes / bytes_per_s: memory traffic at a given bandwidth, fractional bytes allowed (a
// replica's share). 0 when bytes <= 0; +infinity when bytes > 0 and bytes_per_s <= 0.
double MemorySeconds(double bytes, double bytes_per_s);

// max(ComputeSeconds, MemorySeconds): compute and memory traffic overlap perfectly.
double RooflineSeconds(const OpLoad& load, const model::DeviceType& type);

// The same from rates: max(ComputeSeconds(flops, flops_per_s), MemorySeconds(bytes,
// bytes_per_s)), for callers that hold a device's figures (plan/'s device classes) and loads
// that are not whole bytes.
double RooflineSeconds(double flops, double bytes, double flops_per_s, double bytes_per_s);

// FLOP per byte at which `type` turns from memory-bound to compute-bound for `precision`
// (effective peak / bandwidth). +infinity when the bandwidth is 0.
double RidgeIntensity(model::Precision precision, const model::DeviceType& type);

}  // namespace hetsched::cost
