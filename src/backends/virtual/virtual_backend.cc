#include "backends/virtual/virtual_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hetsched::svc {

VirtualBackend::VirtualBackend(VirtualBackendOptions options) : options_(std::move(options)) {
  if (!options_.clock) {
    options_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  for (const std::string& n : options_.nodes) {
    if (nodes_.emplace(n, BackendNode{n, true, {}, "", "", false, ""}).second)
      node_order_.push_back(n);
  }
  start_wall_s_ = options_.clock();
  for (size_t i = 0; i < options_.faults.size(); ++i) {
    const VirtualFault& f = options_.faults[i];
    fault_steps_.emplace(f.at_s, std::make_pair(i, true));
    if (std::isfinite(f.duration_s)) {
      fault_steps_.emplace(f.at_s + f.duration_s, std::make_pair(i, false));
    }
  }
}

void VirtualBackend::PlayFaults(double now, std::vector<BackendEvent>& out) {
  const double modeled = (now - start_wall_s_) * options_.time_scale;
  while (!fault_steps_.empty() && fault_steps_.begin()->first <= modeled) {
    const auto [index, begins] = fault_steps_.begin()->second;
    fault_steps_.erase(fault_steps_.begin());
    const VirtualFault& f = options_.faults[index];
    if (f.start_failure) {
      failing_starts_[f.node] += begins ? 1 : -1;
      continue;
    }
    const int down = failed_[f.node] += begins ? 1 : -1;
    if (down != (begins ? 1 : 0)) continue;  // another fault holds it down
    BackendEvent ev;
    ev.node = f.node;
    if (begins) {
      // Its attempts die with it: lost (the driver queues them again), never an exit.
      for (auto it = runs_.begin(); it != runs_.end();) {
        if (it->second.node != f.node) {
          ++it;
          continue;
        }
        BackendEvent lost;
        lost.kind = BackendEventKind::kLost;
        lost.job = std::get<0>(it->first);
        lost.attempt = std::get<1>(it->first);
        lost.node = f.node;
        lost.message = "its node failed";
        out.push_back(std::move(lost));
        if (it->second.end != by_end_.end()) by_end_.erase(it->second.end);
        it = runs_.erase(it);
      }
    }
    ev.kind = begins ? BackendEventKind::kNodeDown : BackendEventKind::kNodeUp;
    out.push_back(std::move(ev));
  }
}

bool VirtualBackend::StartFails(const std::string& node) const {
  auto it = failing_starts_.find(node);
  return it != failing_starts_.end() && it->second > 0;
}

void VirtualBackend::AddNode(BackendNode node) {
  std::lock_guard lock(nodes_mu_);
  const std::string name = node.name;
  if (nodes_.insert_or_assign(name, std::move(node)).second) node_order_.push_back(name);
}

void VirtualBackend::RemoveNode(const std::string& node) {
  std::lock_guard lock(nodes_mu_);
  if (nodes_.erase(node) == 0) return;
  node_order_.erase(std::find(node_order_.begin(), node_order_.end(), node));
  left_.push_back(node);
}

void VirtualBackend::DropLeftNodes() {
  std::vector<std::string> left;
  {
    std::lock_guard lock(nodes_mu_);
    left.swap(left_);
  }
  for (const std::string& node : left) {
    for (auto it = runs_.begin(); it != runs_.end();) {
      if (it->second.node != node) {
        ++it;
        continue;
      }
      if (it->second.end != by_end_.end()) by_end_.erase(it->second.end);
      it = runs_.erase(it);
    }
  }
}

util::Status VirtualBackend::Start(const LaunchSpec& spec) {
  {
    std::lock_guard lock(nodes_mu_);
    auto node = nodes_.find(spec.node);
    if (node == nodes_.end()) {
      return util::Status::NotFound(fmt::format("virtual backend: no node '{}'", spec.node));
    }
    if (!node->second.up) {
      return util::Status::Infeasible(fmt::format("virtual backend: node '{}' is off", spec.node));
    }
  }
  const Key key{spec.job, spec.attempt, spec.node};
  if (auto down = failed_.find(spec.node); down != failed_.end() && down->second > 0) {
    return util::Status::Infeasible(fmt::format("virtual backend: node '{}' is down", spec.node));
  }
  if (StartFails(spec.node)) {  // reported by the next Poll, as a real backend would
    failed_starts_.push_back(key);
    return util::Status::Ok();
  }
  if (runs_.count(key) != 0) {
    return util::Status::InvalidArgument(
        fmt::format("virtual backend: attempt {} of '{}' runs on '{}' already", spec.attempt,
                    spec.job, spec.node));
  }
  auto run = runs_.emplace(key, Run{spec.node, by_end_.end(), false}).first;
  EndAt(run,
        options_.clock() + std::max(0.0, spec.startup_s + spec.modeled_s) / options_.time_scale);
  unreported_.push_back(key);
  return util::Status::Ok();
}

void VirtualBackend::EndAt(std::map<Key, Run>::iterator run, double end_wall_s) {
  if (run->second.end != by_end_.end()) by_end_.erase(run->second.end);
  run->second.end = by_end_.emplace(end_wall_s, run->first);
}

util::Status VirtualBackend::Stop(const std::string& job, int64_t attempt, double grace_s) {
  // Each part stops working, writes its checkpoint (unless the grace period cuts that short),
  // then exits (as the simulator's attempts do). One that already ended keeps its end. The
  // write takes modeled seconds, the grace is wall seconds (the daemon's stop_grace_s).
  const double save_wall_s = std::min(options_.checkpoint_save_s / options_.time_scale, grace_s);
  const double now = options_.clock();
  for (auto it = runs_.lower_bound({job, attempt, ""});
       it != runs_.end() && std::get<0>(it->first) == job && std::get<1>(it->first) == attempt;
       ++it) {
    if (it->second.stopped) continue;
    it->second.stopped = true;
    if (it->second.end->first > now) EndAt(it, now + save_wall_s);
  }
  return util::Status::Ok();
}

util::Status VirtualBackend::SetNodePower(const std::string& node, bool on) {
  std::lock_guard lock(nodes_mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    return util::Status::NotFound(fmt::format("virtual backend: no node '{}'", node));
  }
  if (it->second.up == on) return util::Status::Ok();
  it->second.up = on;
  BackendEvent e;
  e.kind = on ? BackendEventKind::kNodeUp : BackendEventKind::kNodeDown;
  e.node = node;
  pending_.push_back(std::move(e));
  return util::Status::Ok();
}

std::vector<BackendNode> VirtualBackend::ListNodes() {
  std::lock_guard lock(nodes_mu_);
  std::vector<BackendNode> out;
  for (const std::string& n : node_order_) {
    out.push_back(nodes_.at(n));
    if (auto f = failed_.find(n); f != failed_.end() && f->second > 0) out.back().up = false;
  }
  return out;
}

std::vector<BackendJob> VirtualBackend::ListJobs() {
  DropLeftNodes();
  std::vector<BackendJob> out;
  for (const auto& [key, run] : runs_)
    out.push_back({std::get<0>(key), std::get<1>(key), run.node});
  return out;
}

std::vector<BackendEvent> VirtualBackend::Poll() {
  DropLeftNodes();
  std::vector<BackendEvent> out = std::move(pending_);
  pending_.clear();
  PlayFaults(options_.clock(), out);
  const auto event = [](BackendEventKind kind, const Key& key) {
    BackendEvent e;
    e.kind = kind;
    e.job = std::get<0>(key);
    e.attempt = std::get<1>(key);
    e.node = std::get<2>(key);
    return e;
  };
  for (const Key& key : unreported_) {
    if (runs_.count(key) != 0) out.push_back(event(BackendEventKind::kStarted, key));
  }
  unreported_.clear();
  for (const Key& key : failed_starts_) {
    BackendEvent e = event(BackendEventKind::kStartFailed, key);
    e.message = "injected start failure";
    out.push_back(std::move(e));
  }
  failed_starts_.clear();
  // Exits in the order they happened.
  const double now = options_.clock();
  while (!by_end_.empty() && by_end_.begin()->first <= now) {
    const Key key = by_end_.begin()->second;
    by_end_.erase(by_end_.begin());
    auto run = runs_.find(key);
    BackendEvent e = event(BackendEventKind::kExited, key);
    e.stopped = run->second.stopped;
    out.push_back(std::move(e));
    runs_.erase(run);
  }
  return out;
}

}  // namespace hetsched::svc
