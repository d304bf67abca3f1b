// Power, energy and money: a device's draw at a utilization (linear between idle and peak),
// the energy over an interval, and what an interval costs by the hour or by the kWh.
#pragma once

#include "model/device_type.h"

namespace hetsched::cost {

inline constexpr double kJoulesPerKwh = 3.6e6;
inline constexpr double kSecondsPerHour = 3600;

// idle + u x (peak - idle) watts. `utilization` is clamped to [0, 1]; NaN counts as 0.
double PowerWatts(const model::DeviceType& type, double utilization);

// Joules drawn at a constant `watts` for `seconds` (negative or NaN inputs count as 0).
double EnergyJoules(double watts, double seconds);
// Joules of one device of `type` at `utilization` for `seconds`.
double EnergyJoules(const model::DeviceType& type, double utilization, double seconds);

double JoulesToKwh(double joules);
double KwhToJoules(double kwh);

// Renting: price_per_hour x seconds / 3600 (USD).
double RentalCost(double price_per_hour, double seconds);
double RentalCost(const model::DeviceType& type, double seconds);

// Electricity: joules in kWh x usd_per_kwh (USD).
double EnergyCost(double joules, double usd_per_kwh);

}  // namespace hetsched::cost
