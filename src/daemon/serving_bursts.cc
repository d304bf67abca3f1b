#include "daemon/serving_bursts.h"

#include <utility>

namespace hetsched::svc {

void BurstWindows::Add(double at_s, double requests, bool counted) {
  if (open_since_s_ < 0) {
    open_since_s_ = at_s;
    return;
  }
  requests_ += requests;
  counted_ = counted_ || counted;
  const double length = at_s - open_since_s_;
  if (length < window_s_) return;
  if (counted_) closed_.push_back({at_s, length, requests_ / length});
  open_since_s_ = at_s;
  requests_ = 0;
  counted_ = false;
}

std::vector<BurstWindows::Window> BurstWindows::Since(double since_s) {
  while (!closed_.empty() && closed_.front().end_s <= since_s) closed_.pop_front();
  return {closed_.begin(), closed_.end()};
}

void BurstWindows::Restore(std::vector<Window> closed) {
  closed_.assign(std::make_move_iterator(closed.begin()), std::make_move_iterator(closed.end()));
}

}  // namespace hetsched::svc
