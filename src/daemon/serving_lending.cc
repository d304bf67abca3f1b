// Lending serving's idle devices to training (docs/serving-live.md#lending-to-training): the
// plan counts devices that preemptible jobs hold as its own, and a replica that needs them is
// pinned to them while the jobs holding them are preempted with the daemon's stop_grace; the
// service then drains no replica for a while, so that training is not preempted at every rise.
#include <fmt/format.h>

#include <algorithm>

#include "daemon/service.h"
#include "daemon/serving_loop.h"
#include "daemon/serving_loop_internal.h"

namespace hetsched::svc {

bool ServingLoop::Lendable(const std::string& name) {
  auto job = service_->Get(name);
  return job.ok() && job->preemptible && job->state == JobState::kRunning;
}

std::optional<ServingLoop::Reclaim> ServingLoop::ReclaimFor(const sched::ServiceShape& shape) {
  const model::Cluster& cluster = service_->cluster();
  const std::string& type = cluster.catalog.Get(shape.type).name;
  auto nodes = service_->Nodes(cluster.nodes.size() + 1, std::nullopt);
  if (!nodes.ok()) return std::nullopt;
  std::optional<Reclaim> best;
  for (const NodeView& n : nodes->nodes) {
    std::vector<std::string> free;
    std::vector<std::pair<std::string, std::string>> lent;  // (device, job)
    for (const DeviceView& d : n.devices) {
      if (d.type != type) continue;
      const std::string device = n.name + "/" + std::to_string(d.index);
      if (d.state == "free") free.push_back(device);
      if (d.state == "busy" && Lendable(d.job)) lent.emplace_back(device, d.job);
    }
    if (static_cast<int32_t>(free.size()) >= shape.tp) return std::nullopt;  // room already
    if (static_cast<int32_t>(free.size() + lent.size()) < shape.tp) continue;
    Reclaim r{free, {}};
    for (const auto& [device, job] : lent) {
      if (static_cast<int32_t>(r.pinned.size()) == shape.tp) break;
      r.pinned.push_back(device);
      if (std::find(r.jobs.begin(), r.jobs.end(), job) == r.jobs.end()) r.jobs.push_back(job);
    }
    if (!best || r.jobs.size() < best->jobs.size()) best = std::move(r);
  }
  return best;
}

std::vector<int32_t> ServingLoop::HoldTakenBack(Served& s, std::vector<int32_t> drain, double now) {
  if (drain.empty() || now >= s.drains_held_until_s) return drain;
  s.plan.why += fmt::format(
      " {} replica(s) the plan drops kept: the service took devices back from training less "
      "than {:g} s ago (serving.hold_taken_back).",
      drain.size(), options_.hold_taken_back_s);
  return {};
}

}  // namespace hetsched::svc
