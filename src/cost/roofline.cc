#include "cost/roofline.h"

#include <algorithm>
#include <limits>

namespace hetsched::cost {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

double EffectiveFlops(model::Precision precision, const model::DeviceType& type) {
  const double peak = type.PeakFlops(precision) * type.efficiency;
  return peak > 0 ? peak : 0;
}

double ComputeSeconds(double flops, double flops_per_s) {
  if (!(flops > 0)) return 0;
  return flops_per_s > 0 ? flops / flops_per_s : kInfinity;
}

double ComputeSeconds(double flops, model::Precision precision, const model::DeviceType& type) {
  return ComputeSeconds(flops, EffectiveFlops(precision, type));
}

double MemorySeconds(double bytes, double bytes_per_s) {
  if (!(bytes > 0)) return 0;
  return bytes_per_s > 0 ? bytes / bytes_per_s : kInfinity;
}

double MemorySeconds(uint64_t bytes, const model::DeviceType& type) {
  return MemorySeconds(static_cast<double>(bytes), type.memory_bandwidth);
}

double RooflineSeconds(const OpLoad& load, const model::DeviceType& type) {
  return std::max(ComputeSeconds(load.flops, load.precision, type),
                  MemorySeconds(load.bytes, type));
}

double RooflineSeconds(double flops, double bytes, double flops_per_s, double bytes_per_s) {
  return std::max(ComputeSeconds(flops, flops_per_s), MemorySeconds(bytes, bytes_per_s));
}

double RidgeIntensity(model::Precision precision, const model::DeviceType& type) {
  if (!(type.memory_bandwidth > 0)) return kInfinity;
  return EffectiveFlops(precision, type) / type.memory_bandwidth;
}

}  // namespace hetsched::cost
