#include "cost/power.h"

namespace hetsched::cost {
namespace {

// Clamps to [0, 1]; NaN (which fails every comparison) becomes 0.
double Clamp01(double u) {
  if (!(u > 0)) return 0;
  return u < 1 ? u : 1;
}

double NonNegative(double x) { return x > 0 ? x : 0; }

}  // namespace

double PowerWatts(const model::DeviceType& type, double utilization) {
  return type.idle_watts + Clamp01(utilization) * (type.peak_watts - type.idle_watts);
}

double EnergyJoules(double watts, double seconds) {
  return NonNegative(watts) * NonNegative(seconds);
}

double EnergyJoules(const model::DeviceType& type, double utilization, double seconds) {
  return EnergyJoules(PowerWatts(type, utilization), seconds);
}

double JoulesToKwh(double joules) { return joules / kJoulesPerKwh; }
double KwhToJoules(double kwh) { return kwh * kJoulesPerKwh; }

double RentalCost(double price_per_hour, double seconds) {
  return NonNegative(price_per_hour) * NonNegative(seconds) / kSecondsPerHour;
}

double RentalCost(const model::DeviceType& type, double seconds) {
  return RentalCost(type.price_per_hour, seconds);
}

double EnergyCost(double joules, double usd_per_kwh) {
  return JoulesToKwh(NonNegative(joules)) * NonNegative(usd_per_kwh);
}

}  // namespace hetsched::cost
