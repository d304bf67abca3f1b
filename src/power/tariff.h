// Electricity tariff: a price per kWh by hour of the day (time-of-day bands covering 0-24 h),
// and the cost of drawing a constant power over an interval of virtual time.
// Virtual time 0 is midnight of day one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace hetsched::power {

struct TariffBand {
  double start_h = 0;  // [start_h, end_h) hours of the day
  double end_h = 24;
  double usd_per_kwh = 0;
};

class Tariff {
 public:
  // One price all day.
  static Tariff Flat(double usd_per_kwh);
  // Bands must be contiguous, in any order, cover exactly [0, 24) and have prices >= 0.
  static util::Result<Tariff> FromBands(std::vector<TariffBand> bands);
  // "0-7:0.10,7-22:0.25,22-24:0.10" ($/kWh by hour of day; hours may be fractional).
  // Errors name the flag (--tariff), the value and what was expected.
  static util::Result<Tariff> Parse(std::string_view text);

  // Price at virtual time `t_s` (seconds since midnight of day one).
  double PriceAt(double t_s) const;
  // USD for drawing `watts` from `from_s` to `to_s` (nothing when to_s <= from_s).
  double Cost(double watts, double from_s, double to_s) const;
  const std::vector<TariffBand>& bands() const { return bands_; }
  std::string ToString() const;

 private:
  std::vector<TariffBand> bands_;  // sorted by start, contiguous over [0, 24)
};

}  // namespace hetsched::power
