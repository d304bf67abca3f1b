#include "power/tariff.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "cost/power.h"

namespace hetsched::power {
namespace {

constexpr double kDay = 86400;
using cost::kJoulesPerKwh;

bool ParseNumber(std::string_view text, double& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(out);
}

util::Status BadTariff(std::string_view text, const std::string& what) {
  return util::Status::InvalidArgument(fmt::format(
      "--tariff '{}': {} (expected START-END:PRICE bands in hours of the day covering 0-24 "
      "without gaps or overlaps, e.g. 0-7:0.10,7-22:0.25,22-24:0.10)",
      text, what));
}

}  // namespace

Tariff Tariff::Flat(double usd_per_kwh) {
  Tariff t;
  t.bands_ = {{0, 24, usd_per_kwh}};
  return t;
}

util::Result<Tariff> Tariff::FromBands(std::vector<TariffBand> bands) {
  if (bands.empty()) return util::Status::InvalidArgument("tariff: no bands");
  std::sort(bands.begin(), bands.end(),
            [](const TariffBand& a, const TariffBand& b) { return a.start_h < b.start_h; });
  double at = 0;
  for (const TariffBand& b : bands) {
    if (!(b.start_h < b.end_h)) {
      return util::Status::InvalidArgument(
          fmt::format("tariff band {}-{}: the start must be before the end", b.start_h, b.end_h));
    }
    if (!(b.usd_per_kwh >= 0)) {
      return util::Status::InvalidArgument(
          fmt::format("tariff band {}-{}: price {} (expected >= 0 per kWh)", b.start_h, b.end_h,
                      b.usd_per_kwh));
    }
    if (b.start_h != at) {
      return util::Status::InvalidArgument(
          b.start_h > at ? fmt::format("tariff: hours {}-{} are not covered", at, b.start_h)
                         : fmt::format("tariff: hours {}-{} are covered twice", b.start_h, at));
    }
    at = b.end_h;
  }
  if (at != 24) {
    return util::Status::InvalidArgument(
        at < 24 ? fmt::format("tariff: hours {}-24 are not covered", at)
                : fmt::format("tariff: the bands end at hour {}, after 24", at));
  }
  Tariff t;
  t.bands_ = std::move(bands);
  return t;
}

util::Result<Tariff> Tariff::Parse(std::string_view text) {
  std::vector<TariffBand> bands;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(pos, comma - pos);
    const size_t dash = item.find('-');
    const size_t colon = item.find(':');
    TariffBand b;
    if (dash == std::string_view::npos || colon == std::string_view::npos || colon < dash ||
        !ParseNumber(item.substr(0, dash), b.start_h) ||
        !ParseNumber(item.substr(dash + 1, colon - dash - 1), b.end_h) ||
        !ParseNumber(item.substr(colon + 1), b.usd_per_kwh)) {
      return BadTariff(text, fmt::format("band '{}' is not START-END:PRICE", item));
    }
    if (b.start_h < 0 || b.end_h > 24) {
      return BadTariff(text, fmt::format("band '{}' is outside hours 0-24", item));
    }
    bands.push_back(b);
    pos = comma + 1;
  }
  auto t = FromBands(std::move(bands));
  if (!t.ok()) return BadTariff(text, t.status().message());
  return t;
}

double Tariff::PriceAt(double t_s) const {
  const double h = std::fmod(std::max(0.0, t_s), kDay) / 3600;
  for (const TariffBand& b : bands_) {
    if (h < b.end_h) return b.usd_per_kwh;
  }
  return bands_.back().usd_per_kwh;
}

double Tariff::Cost(double watts, double from_s, double to_s) const {
  if (!(to_s > from_s) || !(watts > 0)) return 0;
  double cost = 0;
  double t = from_s;
  while (t < to_s) {
    const double day_start = std::floor(t / kDay) * kDay;
    const double h = (t - day_start) / 3600;
    const TariffBand* band = &bands_.back();
    for (const TariffBand& b : bands_) {
      if (h < b.end_h) {
        band = &b;
        break;
      }
    }
    double end = std::min(to_s, day_start + band->end_h * 3600);
    if (end <= t) end = std::min(to_s, std::nextafter(t, to_s + 1));  // rounding at a boundary
    cost += watts * (end - t) / kJoulesPerKwh * band->usd_per_kwh;
    t = end;
  }
  return cost;
}

std::string Tariff::ToString() const {
  std::string out;
  for (const TariffBand& b : bands_) {
    if (!out.empty()) out += ",";
    out += fmt::format("{}-{}:{}", b.start_h, b.end_h, b.usd_per_kwh);
  }
  return out;
}

}  // namespace hetsched::power
