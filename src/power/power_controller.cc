#include "power/power_controller.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace hetsched::power {
namespace {

std::vector<std::string> TypeNames(const model::Cluster& cluster) {
  std::vector<std::string> out;
  for (size_t t = 0; t < cluster.catalog.size(); ++t) {
    out.push_back(cluster.catalog.Get(model::DeviceTypeId(static_cast<int32_t>(t))).name);
  }
  return out;
}

}  // namespace

util::Result<PowerController> PowerController::Create(const model::Cluster& cluster,
                                                      const PowerOptions& options, double start_s) {
  RETURN_IF_ERROR(ValidatePowerOptions(options, cluster));
  ASSIGN_OR_RETURN(const PolicyParts parts, ParsePowerPolicy(options.policy));
  return PowerController(cluster, parts, options, start_s);
}

PowerController::PowerController(const model::Cluster& cluster, PolicyParts parts,
                                 const PowerOptions& options, double start_s)
    : cluster_(&cluster),
      parts_(parts),
      options_(options),
      manager_(parts, options),
      meter_(TypeNames(cluster), options.tariff, start_s) {
  Grow(start_s);
  if (parts.caps) {
    for (size_t t = 0; t < cluster.catalog.size(); ++t) {
      curves_.push_back(
          CurveFor(cluster.catalog.Get(model::DeviceTypeId(static_cast<int32_t>(t)))));
    }
  }
  for (size_t n = 0; n < nodes_.size(); ++n) RefreshNode(static_cast<int32_t>(n));
}

void PowerController::RefreshNode(int32_t n) {
  const model::Node& node = cluster_->nodes[n];
  const NodeState old_state = booked_state_[n];
  const NodeState state = nodes_[n].state;
  const double base = BaseWatts(node, state, options_.standby_fraction);
  meter_.Add(old_state, -1, -booked_base_w_[n]);
  meter_.Add(state, -1, base);
  booked_base_w_[n] = base;
  for (int32_t i = 0; i < node.device_count; ++i) {
    const int32_t d = node.first_device.value() + i;
    const model::DeviceType& type = cluster_->type_of(model::DeviceId(d));
    const int32_t t = cluster_->devices[d].type.value();
    const double cap = std::max(device_busy_[d] ? device_cap_[d] : 0.0, service_draw_[d]);
    const double w = DeviceWatts(type, state, Active(d), cap);
    meter_.Add(old_state, t, -booked_dev_w_[d]);
    meter_.Add(state, t, w);
    booked_dev_w_[d] = w;
  }
  booked_state_[n] = state;
}

void PowerController::Transition(int32_t n, NodeState to, double now_s) {
  const bool ok = nodes_[n].Enter(to, now_s);
  assert(ok);
  (void)ok;
  RefreshNode(n);
}

void PowerController::SetBusy(const std::vector<model::DeviceId>& devices, bool busy,
                              double cap_power, double now_s) {
  meter_.Advance(now_s);
  std::vector<int32_t> touched;
  for (model::DeviceId d : devices) {
    if (static_cast<bool>(device_busy_[d.value()]) == busy) continue;
    const bool was_active = Active(d.value());
    device_busy_[d.value()] = busy ? 1 : 0;
    device_cap_[d.value()] = cap_power;
    const int32_t n = cluster_->device(d).node.value();
    node_busy_[n] += static_cast<int32_t>(Active(d.value())) - static_cast<int32_t>(was_active);
    touched.push_back(n);
  }
  RefreshBusyNodes(std::move(touched), now_s);
}

void PowerController::SetServiceDraw(const std::vector<model::DeviceId>& devices, double draw,
                                     double now_s) {
  meter_.Advance(now_s);
  std::vector<int32_t> touched;
  for (model::DeviceId d : devices) {
    const bool was_active = Active(d.value());
    service_draw_[d.value()] = std::max(0.0, draw);
    const int32_t n = cluster_->device(d).node.value();
    node_busy_[n] += static_cast<int32_t>(Active(d.value())) - static_cast<int32_t>(was_active);
    touched.push_back(n);
  }
  RefreshBusyNodes(std::move(touched), now_s);
}

void PowerController::RefreshBusyNodes(std::vector<int32_t> touched, double now_s) {
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (int32_t n : touched) {
    const NodeState s = nodes_[n].state;
    if (s == NodeState::kOnIdle && node_busy_[n] > 0) {
      nodes_[n].Enter(NodeState::kOnBusy, now_s);
    } else if (s == NodeState::kOnBusy && node_busy_[n] == 0) {
      nodes_[n].Enter(NodeState::kOnIdle, now_s);
    }
    RefreshNode(n);
  }
}

CapPoint PowerController::CapFor(model::DeviceTypeId type, std::optional<double> deadline_s,
                                 double now_s, double seconds_at_full) const {
  if (!parts_.caps) return {};
  return ChooseCap(curves_[type.value()], deadline_s, now_s, seconds_at_full,
                   options_.cap_max_slowdown);
}

PowerCommands PowerController::Decide(DemandView demand, double now_s) {
  meter_.Advance(now_s);
  assert(demand.usable.size() == nodes_.size());
  PowerView view;
  view.now_s = now_s;
  view.warm_free = std::move(demand.warm_free);
  view.demands = std::move(demand.demands);
  view.nodes.resize(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) {
    NodeView& v = view.nodes[n];
    v.state = nodes_[n].state;
    v.idle_since_s = nodes_[n].idle_since_s;
    v.resumable_at_s = nodes_[n].resumable_at_s;
    v.excluded = excluded_[n];
    v.devices = std::move(demand.usable[n]);
  }
  const PowerActions a = manager_.Decide(view);
  wake_blocked_ = a.wake_blocked;
  PowerCommands out;
  out.next_check_s = a.next_check_s;
  for (int32_t n : a.suspend) {
    const model::Node& node = cluster_->nodes[n];
    Transition(n, NodeState::kSuspending, now_s);
    // Slurm's SuspendTimeout: no resume before it, nor before the node is off.
    nodes_[n].resumable_at_s = now_s + std::max(node.shutdown_s, options_.suspend_timeout_s);
    out.suspend.push_back(
        {n, nodes_[n].boot_attempt, now_s + NodePower::Duration(node, NodeState::kSuspending)});
    ++transitions_;
  }
  for (int32_t n : a.resume) {
    Transition(n, NodeState::kBooting, now_s);
    ++booting_;
    out.resume.push_back({n, nodes_[n].boot_attempt, now_s + options_.resume_timeout_s});
    ++transitions_;
  }
  return out;
}

bool PowerController::OnSuspended(int32_t node, uint32_t attempt, double now_s) {
  const NodePower& p = nodes_[node];
  if (p.boot_attempt != attempt || p.state != NodeState::kSuspending) return false;
  meter_.Advance(now_s);
  Transition(node, NodeState::kOff, now_s);
  return true;
}

void PowerController::AddNode(int32_t node, double now_s) {
  meter_.Advance(now_s);
  Grow(now_s);
  RefreshNode(node);
}

void PowerController::Grow(double now_s) {
  const size_t old_nodes = nodes_.size();
  const size_t nodes = cluster_->nodes.size(), devices = cluster_->devices.size();
  NodePower initial;
  initial.since_s = initial.idle_since_s = now_s;
  nodes_.resize(nodes, initial);
  excluded_.resize(nodes, 0);
  node_busy_.resize(nodes, 0);
  booked_state_.resize(nodes, NodeState::kOnIdle);
  booked_base_w_.resize(nodes, 0);
  booked_dev_w_.resize(devices, 0);
  device_busy_.resize(devices, 0);
  device_cap_.resize(devices, 1);
  service_draw_.resize(devices, 0);
  for (const std::string& name : options_.exclude_nodes) {
    if (auto n = cluster_->FindNode(name); n && static_cast<size_t>(n->value()) >= old_nodes) {
      excluded_[n->value()] = 1;
    }
  }
}

bool PowerController::AssumeOff(int32_t node, double now_s) {
  NodePower& p = nodes_[node];
  if (p.state != NodeState::kOnIdle) return false;
  meter_.Advance(now_s);
  // No shutdown to wait for: straight to off, as if the suspend had completed.
  p.state = NodeState::kOff;
  p.since_s = now_s;
  p.resumable_at_s = now_s;
  RefreshNode(node);
  return true;
}

bool PowerController::OnBooted(int32_t node, uint32_t attempt, double now_s) {
  const NodePower& p = nodes_[node];
  if (p.boot_attempt != attempt || p.state != NodeState::kBooting) return false;
  meter_.Advance(now_s);
  Transition(node, NodeState::kOnIdle, now_s);
  --booting_;
  return true;
}

bool PowerController::OnResumeTimeout(int32_t node, uint32_t attempt, double now_s) {
  const NodePower& p = nodes_[node];
  if (p.boot_attempt != attempt || p.state != NodeState::kBooting) return false;
  meter_.Advance(now_s);
  Transition(node, NodeState::kDown, now_s);
  --booting_;
  ++boot_failures_;
  return true;
}

}  // namespace hetsched::power
