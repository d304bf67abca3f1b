#include "svc/virtual_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace hetsched::svc {

VirtualBackend::VirtualBackend(VirtualBackendOptions options) : options_(std::move(options)) {
  if (!options_.clock) {
    options_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  for (const std::string& n : options_.nodes) node_on_[n] = true;
}

util::Status VirtualBackend::Start(const LaunchSpec& spec) {
  auto node = node_on_.find(spec.node);
  if (node == node_on_.end()) {
    return util::Status::NotFound(fmt::format("virtual backend: no node '{}'", spec.node));
  }
  if (!node->second) {
    return util::Status::Infeasible(fmt::format("virtual backend: node '{}' is off", spec.node));
  }
  Run run;
  run.node = spec.node;
  run.end_wall_s = options_.clock() + std::max(0.0, spec.modeled_s) / options_.time_scale;
  runs_[{spec.job, spec.attempt, spec.node}] = run;
  return util::Status::Ok();
}

util::Status VirtualBackend::Stop(const std::string& job, int64_t attempt, double grace_s) {
  // Each part writes its checkpoint (unless the grace period cuts that short), then exits.
  const double save_s = std::min(options_.checkpoint_save_s, grace_s);
  for (auto it = runs_.lower_bound({job, attempt, ""});
       it != runs_.end() && std::get<0>(it->first) == job && std::get<1>(it->first) == attempt;
       ++it) {
    if (it->second.stopped) continue;
    it->second.stopped = true;
    it->second.end_wall_s =
        std::min(it->second.end_wall_s, options_.clock() + save_s / options_.time_scale);
  }
  return util::Status::Ok();
}

util::Status VirtualBackend::SetNodePower(const std::string& node, bool on) {
  auto it = node_on_.find(node);
  if (it == node_on_.end()) {
    return util::Status::NotFound(fmt::format("virtual backend: no node '{}'", node));
  }
  if (it->second == on) return util::Status::Ok();
  it->second = on;
  BackendEvent e;
  e.kind = on ? BackendEventKind::kNodeUp : BackendEventKind::kNodeDown;
  e.node = node;
  pending_.push_back(std::move(e));
  return util::Status::Ok();
}

std::vector<BackendNode> VirtualBackend::ListNodes() {
  std::vector<BackendNode> out;
  for (const std::string& n : options_.nodes) out.push_back({n, node_on_[n]});
  return out;
}

std::vector<BackendJob> VirtualBackend::ListJobs() {
  std::vector<BackendJob> out;
  for (const auto& [key, run] : runs_)
    out.push_back({std::get<0>(key), std::get<1>(key), run.node});
  return out;
}

std::vector<BackendEvent> VirtualBackend::Poll() {
  std::vector<BackendEvent> out = std::move(pending_);
  pending_.clear();
  const double now = options_.clock();
  // Exits in the order they happened.
  std::vector<std::pair<double, Key>> ended;
  for (auto& [key, run] : runs_) {
    if (!run.started_reported) {
      run.started_reported = true;
      BackendEvent e;
      e.kind = BackendEventKind::kStarted;
      e.job = std::get<0>(key);
      e.attempt = std::get<1>(key);
      e.node = run.node;
      out.push_back(std::move(e));
    }
    if (run.end_wall_s <= now) ended.push_back({run.end_wall_s, key});
  }
  std::sort(ended.begin(), ended.end());
  for (const auto& [at, key] : ended) {
    const Run& run = runs_[key];
    BackendEvent e;
    e.kind = BackendEventKind::kExited;
    e.job = std::get<0>(key);
    e.attempt = std::get<1>(key);
    e.node = run.node;
    e.stopped = run.stopped;
    out.push_back(std::move(e));
    runs_.erase(key);
  }
  return out;
}

}  // namespace hetsched::svc
