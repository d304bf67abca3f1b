#include "plan/transfer_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetsched::plan {

TransferModel TransferModel::Uniform(int32_t processors, double bandwidth) {
  TransferModel m;
  m.n_ = processors;
  m.inv_bandwidth_ = std::isinf(bandwidth) ? 0 : 1.0 / bandwidth;
  if (processors > 1) {
    m.mean_inv_bandwidth_ = m.inv_bandwidth_;
    m.min_inv_bandwidth_ = m.inv_bandwidth_;
  }
  return m;
}

TransferModel TransferModel::None(int32_t processors) { return Uniform(processors, INFINITY); }

TransferModel TransferModel::FromLinks(int32_t processors,
                                       const std::function<Link(int32_t, int32_t)>& link) {
  TransferModel m;
  m.n_ = processors;
  m.pairs_.assign(static_cast<size_t>(processors) * processors, Pair{});
  if (processors < 2) return m;
  double sum_lat = 0, sum_inv = 0;
  m.min_latency_ = std::numeric_limits<double>::infinity();
  m.min_inv_bandwidth_ = std::numeric_limits<double>::infinity();
  for (int32_t a = 0; a < processors; ++a) {
    for (int32_t b = 0; b < processors; ++b) {
      if (a == b) continue;
      const Link l = link(a, b);
      Pair& pr = m.pairs_[static_cast<size_t>(a) * processors + b];
      pr.latency = l.latency;
      pr.inv_bandwidth = std::isinf(l.bandwidth) ? 0 : 1.0 / l.bandwidth;
      sum_lat += pr.latency;
      sum_inv += pr.inv_bandwidth;
      m.min_latency_ = std::min(m.min_latency_, pr.latency);
      m.min_inv_bandwidth_ = std::min(m.min_inv_bandwidth_, pr.inv_bandwidth);
    }
  }
  const double pairs = static_cast<double>(processors) * (processors - 1);
  m.mean_latency_ = sum_lat / pairs;
  m.mean_inv_bandwidth_ = sum_inv / pairs;
  return m;
}

bool TransferModel::Interchangeable(int32_t a, int32_t b) const {
  if (pairs_.empty() || a == b) return true;
  auto at = [&](int32_t x, int32_t y) { return pairs_[static_cast<size_t>(x) * n_ + y]; };
  auto same = [](const Pair& x, const Pair& y) {
    return x.latency == y.latency && x.inv_bandwidth == y.inv_bandwidth;
  };
  if (!same(at(a, b), at(b, a))) return false;
  for (int32_t c = 0; c < n_; ++c) {
    if (c == a || c == b) continue;
    if (!same(at(a, c), at(b, c)) || !same(at(c, a), at(c, b))) return false;
  }
  return true;
}

}  // namespace hetsched::plan
