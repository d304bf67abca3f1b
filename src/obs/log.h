// Logger: the daemon's structured logs, one JSON object per line (JSON Lines) with a UTC
// timestamp, a level, a message and typed fields, written to stderr or to a caller's sink.
//
// A line: {"ts":"2026-12-03T12:00:00.123Z","level":"info","msg":"placed","job":"a","devices":4}
// Every line is valid JSON whatever the strings hold: quotes and backslashes are escaped, control
// characters too (\n, \r, \t, else \u00XX), and bytes that are not UTF-8 become U+FFFD.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string_view>
#include <variant>

#include "util/status.h"

namespace hetsched::svc {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// "debug", "info", "warn", "error": what lines carry and what ParseLogLevel accepts.
std::string_view LogLevelName(LogLevel level);
// The inverse of LogLevelName (lowercase only, as --log-level takes it); anything else is
// kInvalidArgument naming the accepted values.
util::Result<LogLevel> ParseLogLevel(std::string_view text);

// One key/value pair of a line, e.g. {"job", name}, {"devices", 4}, {"wait_s", 12.5}.
// Holds views, not copies: build fields in the logging call's argument list, where whatever they
// view lives until the call returns.
struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  // Without this overload a string literal would pick the bool one (a standard conversion beats
  // the user-defined one to string_view).
  LogField(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  LogField(std::string_view k, bool v) : key(k), value(v) {}
  template <std::signed_integral T>
  LogField(std::string_view k, T v) : key(k), value(static_cast<int64_t>(v)) {}
  template <std::unsigned_integral T>
  LogField(std::string_view k, T v) : key(k), value(static_cast<uint64_t>(v)) {}
  // Non-finite values are written as the strings "NaN", "+Inf", "-Inf" (JSON has no numbers for
  // them).
  template <std::floating_point T>
  LogField(std::string_view k, T v) : key(k), value(static_cast<double>(v)) {}

  std::string_view key;
  std::variant<std::string_view, int64_t, uint64_t, double, bool> value;
};

// Thread-safe: any thread may log; each line is formatted outside the lock and written whole
// under it, so lines never interleave. Messages below the logger's level cost a comparison (the
// clock is not read and nothing is formatted).
class Logger {
 public:
  using Sink = std::function<void(std::string_view line)>;
  using Clock = std::function<double()>;  // unix seconds (UTC), e.g. 1796299200.123

  // Writes each line and its '\n' to `out` (not owned; outlives the logger) in one fwrite, then
  // flushes. Write errors are ignored: logging never fails the caller. A null clock means the
  // system clock.
  explicit Logger(LogLevel level = LogLevel::kInfo, std::FILE* out = stderr, Clock clock = {});
  // Hands each line, without '\n', to `sink`. The sink is called with the logger's mutex held,
  // one line at a time: it needs no locking of its own, and must not log to this logger.
  Logger(LogLevel level, Sink sink, Clock clock = {});
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // Lets callers skip computing expensive fields for lines that would be dropped.
  bool Enabled(LogLevel level) const { return level >= level_; }

  // Fields follow ts, level and msg in the order given; keys are not checked for duplicates.
  void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void Debug(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    Log(LogLevel::kDebug, msg, fields);
  }
  void Info(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    Log(LogLevel::kError, msg, fields);
  }

 private:
  const LogLevel level_;
  const Clock clock_;
  std::FILE* const out_;  // null when writing to sink_
  const Sink sink_;
  std::mutex mu_;  // held while writing one line
};

}  // namespace hetsched::svc
