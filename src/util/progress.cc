#include "util/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace hetsched::util {

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() { Done(); }

void ProgressBar::Update(double fraction) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  fraction = std::clamp(fraction, 0.0, 1.0);
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %.0fs", label_.c_str(), filled,
               "==============================", kWidth - filled, "",
               static_cast<int>(fraction * 100), elapsed);
  std::fflush(stderr);
}

void ProgressBar::Done() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  drawn_ = false;
  enabled_ = false;
}

}  // namespace hetsched::util
