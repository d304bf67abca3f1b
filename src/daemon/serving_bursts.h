// Request rates over short windows, for the burst term of the replica plan's forecast
// (sched::ForecastRequestRate): the simulator counts arrivals in windows of
// sched::kBurstWindowS; the daemon sums the requests its replicas' counters gained from one
// read to the next into windows at least that long (docs/serving-live.md, "The plan").
#pragma once

#include <deque>
#include <vector>

namespace hetsched::svc {

class BurstWindows {
 public:
  // A closed window: when it ended (unix seconds), how long it was, its requests/s.
  struct Window {
    double end_s = 0;
    double length_s = 0;
    double rate = 0;
  };

  explicit BurstWindows(double window_s) : window_s_(window_s) {}

  // The requests the replicas counted between the previous reads and those at `at_s`;
  // `counted` says whether a replica's metrics count completed requests at all (a window in
  // which none did is dropped: it measured nothing). The first call only opens a window. A
  // window closes at the first read at least window_s after it opened.
  void Add(double at_s, double requests, bool counted);

  // The windows that ended after `since_s`, oldest first; older ones are forgotten.
  std::vector<Window> Since(double since_s);

  // What Persist keeps and Restore gives back: the closed windows (a restarted daemon opens a
  // new window at its first read).
  const std::deque<Window>& closed() const { return closed_; }
  void Restore(std::vector<Window> closed);

 private:
  double window_s_;
  double open_since_s_ = -1;  // < 0: no read yet
  double requests_ = 0;
  bool counted_ = false;
  std::deque<Window> closed_;
};

}  // namespace hetsched::svc
