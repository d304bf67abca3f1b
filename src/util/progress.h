// ProgressBar: a one-line progress bar on stderr for long runs. It appears only after the run
// has taken a second, only when stderr is a terminal, and never when disabled (--quiet).
#pragma once

#include <chrono>
#include <string>

namespace hetsched::util {

class ProgressBar {
 public:
  // `enabled` false (--quiet) or stderr not a terminal: every call does nothing.
  ProgressBar(std::string label, bool enabled);
  ~ProgressBar();  // ends the line if anything was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `fraction` in [0, 1]. Redraws at most ten times a second.
  void Update(double fraction);
  void Done();

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace hetsched::util
