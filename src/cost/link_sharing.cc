#include "cost/link_sharing.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace hetsched::cost {

std::vector<double> MaxMinShares(const std::vector<double>& capacity,
                                 const std::vector<FlowLinks>& flows) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const size_t n = flows.size();
  std::vector<double> rate(n, 0);
  // The finite links the flows use, numbered densely: a flow set touches few of the cluster's.
  std::unordered_map<int32_t, int32_t> dense;
  std::vector<double> full;              // the link's capacity
  std::vector<double> left;              // capacity not yet given out
  std::vector<double> load;              // summed weights of the unfrozen flows on the link
  std::vector<std::vector<int32_t>> on;  // flows using the link
  std::vector<std::vector<FlowLinks::Use>> uses(n);  // per flow, dense link indexes
  for (size_t f = 0; f < n; ++f) {
    for (const FlowLinks::Use& u : flows[f].links) {
      const double c = capacity[u.link];
      if (!std::isfinite(c)) continue;
      auto [it, added] = dense.try_emplace(u.link, static_cast<int32_t>(left.size()));
      if (added) {
        full.push_back(c);
        left.push_back(c);
        load.push_back(0);
        on.emplace_back();
      }
      uses[f].push_back({it->second, u.weight});
      load[it->second] += u.weight;
      on[it->second].push_back(static_cast<int32_t>(f));
    }
  }
  std::vector<char> frozen(n, 0);
  size_t active = n;
  const auto freeze = [&](size_t f) {
    if (frozen[f]) return;
    frozen[f] = 1;
    --active;
    for (const FlowLinks::Use& u : uses[f]) load[u.link] -= u.weight;
  };
  while (active > 0) {
    // The largest equal increase every unfrozen flow can take.
    double step = kInf;
    for (size_t l = 0; l < left.size(); ++l) {
      if (load[l] > 0) step = std::min(step, std::max(0.0, left[l]) / load[l]);
    }
    for (size_t f = 0; f < n; ++f) {
      if (!frozen[f]) step = std::min(step, flows[f].demand - rate[f]);
    }
    if (!std::isfinite(step)) {  // what is left is bounded by nothing
      for (size_t f = 0; f < n; ++f) {
        if (!frozen[f]) rate[f] = kInf;
      }
      break;
    }
    for (size_t f = 0; f < n; ++f) {
      if (!frozen[f]) rate[f] += step;
    }
    for (size_t l = 0; l < left.size(); ++l) left[l] -= step * load[l];
    for (size_t f = 0; f < n; ++f) {
      if (!frozen[f] && rate[f] >= flows[f].demand * (1 - 1e-12)) freeze(f);
    }
    for (size_t l = 0; l < left.size(); ++l) {
      if (load[l] > 0 && left[l] <= 1e-9 * full[l]) {
        for (int32_t f : on[l]) freeze(static_cast<size_t>(f));
      }
    }
  }
  return rate;
}

}  // namespace hetsched::cost
