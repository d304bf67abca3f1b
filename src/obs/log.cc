#include "obs/log.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

#include "util/utf8.h"

namespace hetsched::svc {
namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
// 9999-12-31T23:59:59.999Z: the last instant a four-digit RFC 3339 year can spell.
constexpr double kMaxUnixS = 253402300799.999;

double SystemClock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// RFC 3339 UTC with milliseconds. A clock outside 1970..9999 (or NaN) is clamped, so the line
// stays well-formed even with a broken clock.
void AppendTimestamp(std::string& out, double unix_s) {
  if (!(unix_s >= 0)) unix_s = 0;
  unix_s = std::min(unix_s, kMaxUnixS);
  // Rounding, not truncation: 1.001 s times 1000 is 1000.9999... in binary.
  const int64_t ms = std::llround(unix_s * 1000);
  constexpr int64_t kMsPerDay = 86'400'000;
  const std::chrono::year_month_day date{std::chrono::sys_days{std::chrono::days{ms / kMsPerDay}}};
  const int64_t in_day = ms % kMsPerDay;
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                 static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                 static_cast<unsigned>(date.day()), in_day / 3'600'000, in_day / 60'000 % 60,
                 in_day / 1000 % 60, in_day % 1000);
}

// Appends `s` as a JSON string. Ill-formed UTF-8 becomes one U+FFFD per maximal ill-formed
// subpart (the Unicode-recommended practice), so a truncated character costs one U+FFFD.
void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20) {
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const util::Utf8Step step = util::NextUtf8(s, i);
    if (step.length > 0) {
      out += s.substr(i, step.length);
    } else {
      out += kReplacementChar;
    }
    i += step.consumed;
  }
  out += '"';
}

void AppendJsonValue(std::string& out, const LogField& field) {
  if (const auto* s = std::get_if<std::string_view>(&field.value)) {
    AppendJsonString(out, *s);
  } else if (const auto* i = std::get_if<int64_t>(&field.value)) {
    fmt::format_to(std::back_inserter(out), "{}", *i);
  } else if (const auto* u = std::get_if<uint64_t>(&field.value)) {
    fmt::format_to(std::back_inserter(out), "{}", *u);
  } else if (const auto* d = std::get_if<double>(&field.value)) {
    if (std::isnan(*d)) {
      out += "\"NaN\"";
    } else if (std::isinf(*d)) {
      out += *d > 0 ? "\"+Inf\"" : "\"-Inf\"";
    } else {
      // Shortest round-trip form: 12.5, 4, 1e+21 (all valid JSON numbers).
      fmt::format_to(std::back_inserter(out), "{}", *d);
    }
  } else {
    out += std::get<bool>(field.value) ? "true" : "false";
  }
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

util::Result<LogLevel> ParseLogLevel(std::string_view text) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (text == LogLevelName(level)) return level;
  }
  return util::Status::InvalidArgument(
      fmt::format("log level \"{}\": expected debug, info, warn or error", text));
}

Logger::Logger(LogLevel level, std::FILE* out, Clock clock)
    : level_(level), clock_(clock ? std::move(clock) : SystemClock), out_(out) {}

Logger::Logger(LogLevel level, Sink sink, Clock clock)
    : level_(level),
      clock_(clock ? std::move(clock) : SystemClock),
      out_(nullptr),
      sink_(std::move(sink)) {}

void Logger::Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!Enabled(level)) return;
  std::string line = "{\"ts\":\"";
  AppendTimestamp(line, clock_());
  line += "\",\"level\":\"";
  line += LogLevelName(level);
  line += "\",\"msg\":";
  AppendJsonString(line, msg);
  for (const LogField& field : fields) {
    line += ',';
    AppendJsonString(line, field.key);
    line += ':';
    AppendJsonValue(line, field);
  }
  line += "}\n";

  std::lock_guard lock(mu_);
  if (out_ != nullptr) {
    // One fwrite: stdio locks the stream per call, so even writers that bypass this logger
    // cannot split the line.
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
  } else {
    sink_(std::string_view(line).substr(0, line.size() - 1));
  }
}

}  // namespace hetsched::svc
