// TransferModel: how long moving data between two processors takes, for the DAG planners.
// Uniform bandwidth (the paper's model), no communication at all, or any per-pair links (a
// cluster topology plugs in through FromLinks).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace hetsched::plan {

class TransferModel {
 public:
  // One directed link between two distinct processors.
  struct Link {
    double latency = 0;    // time units, paid once per transfer
    double bandwidth = 0;  // data units per time unit; must be > 0 (infinity = free)
  };

  // data / bandwidth between distinct processors, 0 on the same one.
  static TransferModel Uniform(int32_t processors, double bandwidth);
  // Every transfer is free (the "without communication" variant of the paper).
  static TransferModel None(int32_t processors);
  // `link(a, b)` for every ordered pair a != b; called processors * (processors - 1) times here,
  // never afterwards. Memory O(processors^2).
  static TransferModel FromLinks(int32_t processors,
                                 const std::function<Link(int32_t, int32_t)>& link);

  int32_t num_processors() const { return n_; }

  // Time to move `data` from processor `from` to `to`; 0 when they are the same. O(1).
  double Time(int32_t from, int32_t to, double data) const {
    if (from == to) return 0;
    if (pairs_.empty()) return data * inv_bandwidth_;
    const Pair& pr = pairs_[static_cast<size_t>(from) * n_ + to];
    return pr.latency + data * pr.inv_bandwidth;
  }
  // Mean of Time over ordered pairs of distinct processors (HEFT's c-bar); 0 with one processor.
  double MeanTime(double data) const { return mean_latency_ + data * mean_inv_bandwidth_; }
  // Smallest Time over distinct pairs (a lower bound for any transfer across processors).
  double MinTime(double data) const { return min_latency_ + data * min_inv_bandwidth_; }
  // True when swapping processors a and b changes no transfer time (used to break symmetry).
  bool Interchangeable(int32_t a, int32_t b) const;

 private:
  struct Pair {
    double latency = 0;
    double inv_bandwidth = 0;
  };
  int32_t n_ = 0;
  double inv_bandwidth_ = 0;  // uniform model (pairs_ empty)
  std::vector<Pair> pairs_;   // n_ * n_, row = from
  double mean_latency_ = 0, mean_inv_bandwidth_ = 0;
  double min_latency_ = 0, min_inv_bandwidth_ = 0;
};

}  // namespace hetsched::plan
