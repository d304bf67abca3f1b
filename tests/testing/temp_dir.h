// A temporary folder per test, removed with everything in it, and bounded waits: what the
// tests that start daemons, stores and processes share.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <thread>

namespace hetsched::testing {

using SteadyClock = std::chrono::steady_clock;

inline SteadyClock::time_point DeadlineIn(double seconds) {
  return SteadyClock::now() +
         std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

inline double SecondsLeft(SteadyClock::time_point deadline) {
  return std::chrono::duration<double>(deadline - SteadyClock::now()).count();
}

// Polls `done` every `every_ms` until it holds or `seconds` pass; true when it held.
inline bool WaitUntil(const std::function<bool()>& done, double seconds = 10, int every_ms = 20) {
  const auto deadline = DeadlineIn(seconds);
  while (SteadyClock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
  }
  return done();
}

// A fresh folder under ::testing::TempDir(), removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "hetsched-test-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace hetsched::testing
