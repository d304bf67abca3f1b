// Quantities with units as users write them in YAML and on the command line:
// "80GiB", "600GB/s", "200Gb/s", "180s", "2.5ms", "400W". Plain numbers are in base units
// (bytes, bytes/s, seconds, watts). Results are validated: finite, non-negative, no overflow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace hetsched::util {

inline constexpr uint64_t kKiB = 1ull << 10;
inline constexpr uint64_t kMiB = 1ull << 20;
inline constexpr uint64_t kGiB = 1ull << 30;
inline constexpr uint64_t kTiB = 1ull << 40;
inline constexpr double kGB = 1e9;  // decimal, as datasheets quote bandwidth

// Bytes: B, KB/MB/GB/TB (decimal), KiB/MiB/GiB/TiB (binary). "80GiB" -> 85899345920.
Result<uint64_t> ParseBytes(std::string_view text);
// Bytes per second: "GB/s", "MB/s" (bytes) or "Gb/s", "Gbps", "Mb/s" (bits). -> bytes/s.
Result<double> ParseBandwidth(std::string_view text);
// Seconds: "us", "ms", "s", "m"/"min", "h", "d". -> seconds.
Result<double> ParseDuration(std::string_view text);
// Watts: "W", "kW". -> watts.
Result<double> ParsePower(std::string_view text);

// Human-readable forms for tables: "80 GiB", "600 GB/s", "3.2 h", "1.2 kW".
std::string FormatBytes(uint64_t bytes);
std::string FormatBandwidth(double bytes_per_s);
std::string FormatDuration(double seconds);
std::string FormatPower(double watts);

}  // namespace hetsched::util
