// The local backend's files under <state_dir>/run/ (backends/local/local_backend.h): the job
// names their file names are made of, and the pid record and exit file they hold.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hetsched::svc::local {

// [A-Za-z0-9][A-Za-z0-9._-]{0,127}: safe as a file name's part.
bool ValidJobName(std::string_view name);

// The whole of `text` as a decimal integer of type T.
template <typename T>
bool ParseInt(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// The contents of a pid record: "key value" lines in any order.
struct Record {
  std::string boot_id;
  std::string job;
  int64_t attempt = -1;
  int64_t pid = 0;
  uint64_t start_time = 0;
  int64_t monitor_pid = 0;
  uint64_t monitor_start_time = 0;
  bool stop_requested = false;
  int64_t kill_at_unix_ms = 0;
};

// A record written by the monitor or LocalBackend::WriteRecord; nullopt when a line does not
// read, a required key (job, attempt, pid, start_time, monitor_pid, monitor_start_time) is
// missing, or a pid is not above 1.
std::optional<Record> ParseRecord(std::string_view text);

// An exit file's "exit N" (status N) or "signal N" (status 128 + N), with a message saying
// which; false for anything else.
bool ParseOutcome(std::string_view text, int& exit_status, std::string& message);

}  // namespace hetsched::svc::local
