#include "cost/roofline.h"

#include <algorithm>
#include <limits>

namespace hetsched::cost {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double EffectivePeak(model::Precision precision, const model::DeviceType& type) {
  const double peak = type.PeakFlops(precision) * type.efficiency;
  return peak > 0 ? peak : 0;
}

}  // namespace

double ComputeSeconds(double flops, model::Precision precision, const model::DeviceType& type) {
  if (!(flops > 0)) return 0;
  const double peak = EffectivePeak(precision, type);
  return peak > 0 ? flops / peak : kInfinity;
}

double MemorySeconds(uint64_t bytes, const model::DeviceType& type) {
  if (bytes == 0) return 0;
  return type.memory_bandwidth > 0 ? static_cast<double>(bytes) / type.memory_bandwidth : kInfinity;
}

double RooflineSeconds(const OpLoad& load, const model::DeviceType& type) {
  return std::max(ComputeSeconds(load.flops, load.precision, type),
                  MemorySeconds(load.bytes, type));
}

double RidgeIntensity(model::Precision precision, const model::DeviceType& type) {
  if (!(type.memory_bandwidth > 0)) return kInfinity;
  return EffectivePeak(precision, type) / type.memory_bandwidth;
}

}  // namespace hetsched::cost
