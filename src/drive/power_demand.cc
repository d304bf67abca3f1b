#include "drive/power_demand.h"

#include <algorithm>
#include <string>
#include <vector>

namespace hetsched::drive {

power::DemandView DemandOf(const sched::Scheduler& scheduler, size_t max_demands) {
  const model::Cluster& cluster = scheduler.cluster();
  const sched::ClusterState& state = scheduler.state();
  const int32_t types = state.type_count();
  power::DemandView view;
  view.warm_free.resize(types);
  for (int32_t t = 0; t < types; ++t) view.warm_free[t] = state.FreeOfType(model::DeviceTypeId(t));
  view.usable.resize(cluster.nodes.size());
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const model::Node& node = cluster.nodes[n];
    auto& usable = view.usable[n];
    for (int32_t i = 0; i < node.device_count; ++i) {
      const model::DeviceId d(node.first_device.value() + i);
      if (state.IsFailed(d) || state.IsReserved(d)) continue;
      const int32_t t = cluster.device(d).type.value();
      auto it =
          std::find_if(usable.begin(), usable.end(), [&](const auto& tc) { return tc.first == t; });
      if (it == usable.end()) {
        usable.push_back({t, 1});
      } else {
        it->second++;
      }
    }
  }
  std::vector<int32_t> queued = scheduler.queued_ids();
  const auto seq = [&](int32_t id) { return scheduler.record(model::JobId(id)).seq; };
  const size_t keep = std::min(queued.size(), max_demands);
  std::partial_sort(queued.begin(), queued.begin() + static_cast<std::ptrdiff_t>(keep),
                    queued.end(), [&](int32_t a, int32_t b) { return seq(a) < seq(b); });
  queued.resize(keep);
  for (int32_t id : queued) {
    const sched::JobRecord& r = scheduler.record(model::JobId(id));
    power::Demand d;
    d.gang = std::max(1, r.job->gang_size);
    if (!r.job->pinned_devices.empty()) {
      for (const std::string& p : r.job->pinned_devices) {
        if (auto n = cluster.FindNode(p.substr(0, p.find('/'))))
          d.pinned_nodes.push_back(n->value());
      }
      std::sort(d.pinned_nodes.begin(), d.pinned_nodes.end());
      d.pinned_nodes.erase(std::unique(d.pinned_nodes.begin(), d.pinned_nodes.end()),
                           d.pinned_nodes.end());
    } else {
      for (int32_t t = 0; t < types; ++t) {
        if (r.allowed[t] && r.speed[t] > 0 && state.TotalOfType(model::DeviceTypeId(t)) > 0) {
          d.types.push_back(t);
        }
      }
      std::stable_sort(d.types.begin(), d.types.end(),
                       [&](int32_t a, int32_t b) { return r.speed[a] > r.speed[b]; });
    }
    view.demands.push_back(std::move(d));
  }
  return view;
}

}  // namespace hetsched::drive
