#include "backends/local/run_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace hetsched::svc::local {

bool ValidJobName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

std::optional<Record> ParseRecord(std::string_view text) {
  Record r;
  bool has_pid = false, has_monitor = false, has_start = false, has_monitor_start = false;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(0, space);
    const std::string_view value = line.substr(space + 1);
    bool ok = true;
    if (key == "boot_id") {
      r.boot_id = std::string(value);
    } else if (key == "job") {
      r.job = std::string(value);
    } else if (key == "attempt") {
      ok = ParseInt(value, r.attempt);
    } else if (key == "pid") {
      ok = has_pid = ParseInt(value, r.pid);
    } else if (key == "start_time") {
      ok = has_start = ParseInt(value, r.start_time);
    } else if (key == "monitor_pid") {
      ok = has_monitor = ParseInt(value, r.monitor_pid);
    } else if (key == "monitor_start_time") {
      ok = has_monitor_start = ParseInt(value, r.monitor_start_time);
    } else if (key == "stop_requested") {
      r.stop_requested = value == "1";
    } else if (key == "kill_at_unix_ms") {
      ok = ParseInt(value, r.kill_at_unix_ms);
    }  // other keys (pgid: always the pid) are informational
    if (!ok) return std::nullopt;
  }
  if (!ValidJobName(r.job) || r.attempt < 0 || !has_pid || !has_monitor || !has_start ||
      !has_monitor_start || r.pid <= 1 || r.monitor_pid <= 1 || r.pid > INT32_MAX ||
      r.monitor_pid > INT32_MAX) {
    return std::nullopt;
  }
  return r;
}

bool ParseOutcome(std::string_view text, int& exit_status, std::string& message) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int n = 0;
  if (text.rfind("exit ", 0) == 0 && ParseInt(text.substr(5), n) && n >= 0 && n <= 255) {
    exit_status = n;
    message = fmt::format("exited with status {}", n);
    return true;
  }
  if (text.rfind("signal ", 0) == 0 && ParseInt(text.substr(7), n) && n > 0 && n < 128) {
    exit_status = 128 + n;
    message = fmt::format("killed by signal {}", n);
    return true;
  }
  return false;
}

}  // namespace hetsched::svc::local
