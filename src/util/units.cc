#include "util/units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace hetsched::util {
namespace {

struct UnitFactor {
  std::string_view suffix;
  double factor;
};

// Splits "12.5 GiB" into 12.5 and "GiB"; rejects anything but a finite, non-negative number.
Result<std::pair<double, std::string>> SplitNumber(std::string_view text, std::string_view what) {
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  text.remove_prefix(begin);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (text.empty()) return Status::InvalidArgument(fmt::format("empty {}", what));
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    return Status::InvalidArgument(fmt::format("'{}' is out of range", text));
  }
  if (ec != std::errc() || ptr == first) {
    return Status::InvalidArgument(fmt::format("'{}' is not a {}", text, what));
  }
  if (!std::isfinite(value)) {
    return Status::InvalidArgument(fmt::format("'{}' is not a finite number", text));
  }
  if (value < 0) return Status::InvalidArgument(fmt::format("'{}' is negative", text));
  std::string unit(ptr, last);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) {
    unit.erase(unit.begin());
  }
  return std::make_pair(value, unit);
}

Result<double> ParseWithUnits(std::string_view text, std::string_view what,
                              const std::vector<UnitFactor>& units, std::string_view expected) {
  ASSIGN_OR_RETURN(auto split, SplitNumber(text, what));
  auto [value, unit] = split;
  if (unit.empty()) return value;
  for (const UnitFactor& u : units) {
    if (unit == u.suffix) {
      double scaled = value * u.factor;
      if (!std::isfinite(scaled)) {
        return Status::InvalidArgument(fmt::format("'{}' overflows", text));
      }
      return scaled;
    }
  }
  return Status::InvalidArgument(
      fmt::format("unknown unit '{}' in '{}' (expected {})", unit, text, expected));
}

}  // namespace

Result<uint64_t> ParseBytes(std::string_view text) {
  static const std::vector<UnitFactor> kUnits = {
      {"B", 1},           {"KB", 1e3},           {"MB", 1e6},
      {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
      {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  ASSIGN_OR_RETURN(double value, ParseWithUnits(text, "byte count", kUnits,
                                                "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"));
  // 2^63 keeps room for sums of many such values without wrapping.
  if (value >= 9.2e18) return Status::InvalidArgument(fmt::format("'{}' overflows", text));
  return static_cast<uint64_t>(std::llround(value));
}

Result<double> ParseBandwidth(std::string_view text) {
  static const std::vector<UnitFactor> kUnits = {
      {"B/s", 1},       {"KB/s", 1e3},    {"MB/s", 1e6},    {"GB/s", 1e9},    {"TB/s", 1e12},
      {"b/s", 0.125},   {"Kb/s", 125.0},  {"Mb/s", 1.25e5}, {"Gb/s", 1.25e8}, {"Tb/s", 1.25e11},
      {"Mbps", 1.25e5}, {"Gbps", 1.25e8}, {"Tbps", 1.25e11}};
  return ParseWithUnits(text, "bandwidth", kUnits, "B/s, MB/s, GB/s, TB/s, Mb/s, Gb/s or Gbps");
}

Result<double> ParseDuration(std::string_view text) {
  static const std::vector<UnitFactor> kUnits = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3},
                                                 {"s", 1},     {"m", 60},    {"min", 60},
                                                 {"h", 3600},  {"d", 86400}};
  return ParseWithUnits(text, "duration", kUnits, "ns, us, ms, s, m, min, h or d");
}

Result<double> ParsePower(std::string_view text) {
  static const std::vector<UnitFactor> kUnits = {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};
  return ParseWithUnits(text, "power", kUnits, "W, kW or MW");
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int i = 0;
  while (v >= 1024 && i < 5) {
    v /= 1024;
    ++i;
  }
  return i == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.4g} {}", v, kNames[i]);
}

std::string FormatBandwidth(double bytes_per_s) {
  if (bytes_per_s >= 1e12) return fmt::format("{:.4g} TB/s", bytes_per_s / 1e12);
  if (bytes_per_s >= 1e9) return fmt::format("{:.4g} GB/s", bytes_per_s / 1e9);
  if (bytes_per_s >= 1e6) return fmt::format("{:.4g} MB/s", bytes_per_s / 1e6);
  return fmt::format("{:.4g} B/s", bytes_per_s);
}

std::string FormatDuration(double seconds) {
  if (seconds >= 86400) return fmt::format("{:.3g} d", seconds / 86400);
  if (seconds >= 3600) return fmt::format("{:.3g} h", seconds / 3600);
  if (seconds >= 60) return fmt::format("{:.3g} min", seconds / 60);
  if (seconds >= 1 || seconds == 0) return fmt::format("{:.3g} s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} us", seconds * 1e6);
}

std::string FormatPower(double watts) {
  if (watts >= 1e6) return fmt::format("{:.4g} MW", watts / 1e6);
  if (watts >= 1e3) return fmt::format("{:.4g} kW", watts / 1e3);
  return fmt::format("{:.4g} W", watts);
}

}  // namespace hetsched::util
