#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "daemon/service.h"
#include "daemon/service_internal.h"
#include "drive/power_demand.h"

namespace hetsched::svc {

using model::DeviceId;
using model::JobId;

void Service::SetNodeUp(const std::string& node_name, bool up, double now) {
  auto node = cluster_.FindNode(node_name);
  if (!node) {
    logger_->Warn("backend reported an unknown node", {{"node", node_name}});
    return;
  }
  if (power_driver_) {
    const drive::NodeReport r = power_driver_->Reported(node->value(), up, now);
    if (r == drive::NodeReport::kUpWhileHeldOff) {
      logger_->Warn("a node hetsched powered off reports up", {{"node", node_name}});
    }
    if (r != drive::NodeReport::kNotPower) return;
  }
  const model::Node& n = cluster_.node(*node);
  if (up) {
    down_nodes_.erase(node_name);
  } else {
    down_nodes_.insert(node_name);
  }
  for (int32_t i = 0; i < n.device_count; ++i) {
    const DeviceId d(n.first_device.value() + i);
    if (up) {
      scheduler_->SetDeviceUp(d);
      continue;
    }
    // Lost with the node (drive::Attempts: not a start failure; its other nodes are stopped).
    if (auto job = scheduler_->JobOn(d)) {
      attempts_->Lose(*job, fmt::format("node {} went down", node_name), now);
    }
    scheduler_->SetDeviceDown(d);
  }
  Event("node", node_name, up ? "up" : "down");
  logger_->Warn(up ? "node up" : "node down", {{"node", node_name}});
}

std::string Service::PowerStateOf(model::NodeId node) const {
  if (scheduler_->state().NodeRemoved(node)) return "removed";
  if (!power_) return scheduler_->state().NodeOn(node) ? "on" : "off";
  const power::NodeState s = power_->node(node.value()).state;
  return power::IsOn(s) ? "on" : std::string(power::NodeStateName(s));
}

StoredNode Service::StoredNodeOf(model::NodeId node) const {
  StoredNode s;
  s.name = cluster_.node(node).name;
  s.drained = scheduler_->state().NodeDrained(node);
  s.power_state = PowerStateOf(node);
  s.since_s = WallNow();
  if (auto it = node_spec_.find(node.value()); it != node_spec_.end()) s.spec = it->second;
  return s;
}

void Service::StoreNode(model::NodeId node, const std::string& event_detail,
                        const std::string& event_kind) {
  const StoredNode s = StoredNodeOf(node);
  if (auto st = store_->PutNode(s); !st.ok()) {
    logger_->Error("storing a node's state failed", {{"node", s.name}, {"error", st.message()}});
  }
  if (!event_detail.empty()) Event(event_kind, s.name, event_detail);
}

util::Result<model::NodeId> Service::AddNodeFromSpec(const std::string& name,
                                                     const std::string& spec, double now) {
  const auto bad = [&](const std::string& why) {
    return util::Status::InvalidArgument(fmt::format("node {}: {}", name, why));
  };
  if (cluster_.FindNode(name)) return bad("a node of that name exists");
  const nlohmann::json j = nlohmann::json::parse(spec, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.value("devices", nlohmann::json()).is_array()) {
    return bad("its description is not {\"rack\", \"devices\": [[TYPE, COUNT], ...]}");
  }
  std::vector<model::DeviceTypeId> types;
  for (const nlohmann::json& d : j["devices"]) {
    if (!d.is_array() || d.size() != 2 || !d[0].is_string() || !d[1].is_number_integer() ||
        d[1].get<int64_t>() < 1 || d[1].get<int64_t>() > 4096) {
      return bad("devices entries are [TYPE, COUNT] with COUNT from 1 to 4096");
    }
    const auto type = cluster_.catalog.FindId(d[0].get<std::string>());
    if (!type)
      return bad(fmt::format("device type '{}' is not in the catalog", d[0].get<std::string>()));
    types.insert(types.end(), d[1].get<int64_t>(), *type);
  }
  if (types.empty()) return bad("it has no devices");
  const std::string rack = j.value("rack", std::string());
  std::optional<model::RackId> rack_id;
  if (!rack.empty()) {
    rack_id = cluster_.FindRack(rack);
    if (!rack_id) return bad(fmt::format("rack '{}' is not in the cluster", rack));
  }
  // Links, memory, power and boot times as its rack's first node (else the cluster's first):
  // the backend describes devices, not the rest.
  model::Node node;
  for (const model::Node& n : cluster_.nodes) {
    if (!rack_id || n.rack == *rack_id) {
      node = n;
      break;
    }
  }
  node.name = name;
  node.rack = rack_id.value_or(model::RackId());
  node.islands.clear();
  node.pcie_switches.clear();
  node.labels.clear();
  const model::NodeId id = model::AddNode(cluster_, std::move(node), types);
  scheduler_->AddNode(id);
  if (power_) power_->AddNode(id.value(), now);
  node_spec_[id.value()] = spec;
  return id;
}

void Service::RemoveNode(model::NodeId node, double now) {
  const model::Node& n = cluster_.node(node);
  for (int32_t i = 0; i < n.device_count; ++i) {
    auto job = scheduler_->JobOn(DeviceId(n.first_device.value() + i));
    if (!job) continue;
    // Its other nodes, if any, are stopped; it waits again with the progress it had.
    attempts_->Lose(*job, fmt::format("node {} left the cluster; requeued", n.name), now);
  }
  if (auto st = scheduler_->RemoveNode(node); !st.ok()) {
    logger_->Error("removing a node failed", {{"node", n.name}, {"error", st.message()}});
    return;
  }
  // Never suspended or woken again: it is not there.
  if (power_driver_ && !power_driver_->Left(node.value(), now)) {
    logger_->Warn("a node that left was not idle in the power books", {{"node", n.name}});
  }
  StoreNode(node, "left the cluster", "node");
  logger_->Warn("node left the cluster", {{"node", n.name}});
}

std::string Service::NodeAddress(const std::string& node) const {
  std::lock_guard lock(mu_);
  auto it = node_addresses_.find(node);
  return it == node_addresses_.end() ? "" : it->second;
}

void Service::SyncNodes(const std::vector<BackendNode>& listed, double now) {
  std::set<std::string> names;
  for (const BackendNode& b : listed) {
    names.insert(b.name);
    node_addresses_[b.name] = b.address;
    if (!b.problem.empty() && !cluster_.FindNode(b.name)) {
      // Said once per problem, not at every reconciliation.
      if (node_problems_.insert(b.name + ": " + b.problem).second) {
        logger_->Error("a node the backend lists cannot join",
                       {{"node", b.name}, {"error", b.problem}});
        Event("node", b.name, "cannot join: " + b.problem);
      }
      continue;
    }
    if (auto known = cluster_.FindNode(b.name)) {
      // Down in the backend while the daemon counts on it (a failure reported while the daemon
      // was down): its attempts are lost and nothing starts there until it is reported up.
      if (!b.up && down_nodes_.count(b.name) == 0 && !scheduler_->state().NodeRemoved(*known) &&
          (!power_ || power::IsOn(power_->node(known->value()).state))) {
        SetNodeUp(b.name, false, now);
      }
      // A drain done in the backend (e.g. scontrol) is followed when it changes, so that one
      // done through the API stays until the backend's own changes.
      auto [it, first] = listed_drained_.emplace(b.name, b.drained);
      if ((first && b.drained) || (!first && it->second != b.drained)) {
        it->second = b.drained;
        if (!scheduler_->state().NodeRemoved(*known) &&
            scheduler_->state().NodeDrained(*known) != b.drained) {
          scheduler_->SetNodeDrained(*known, b.drained);
          StoreNode(*known, b.drained ? "drained in the backend" : "undrained in the backend",
                    b.drained ? "drain" : "undrain");
          logger_->Info(b.drained ? "node drained in the backend" : "node undrained in the backend",
                        {{"node", b.name}});
          demand_changed_ = true;
        }
      }
      continue;
    }
    if (b.devices.empty()) continue;
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& [type, count] : b.devices) devices.push_back({type, count});
    const std::string spec = nlohmann::json{{"rack", b.rack}, {"devices", devices}}.dump();
    auto id = AddNodeFromSpec(b.name, spec, now);
    if (!id.ok()) {
      logger_->Warn("a node the backend lists cannot join", {{"error", id.status().message()}});
      continue;
    }
    StoreNode(*id, fmt::format("joined the cluster: {}", spec), "node");
    logger_->Info("node joined the cluster", {{"node", b.name}});
    demand_changed_ = true;
  }
  // Gone: listed before, or joined at run time (a backend that comes back after a restart
  // without it lost it), and not listed now.
  std::set<std::string> known = listed_nodes_;
  for (const auto& [id, spec] : node_spec_) known.insert(cluster_.nodes[id].name);
  for (const std::string& name : known) {
    if (names.count(name) != 0) continue;
    auto node = cluster_.FindNode(name);
    if (node && !scheduler_->state().NodeRemoved(*node)) RemoveNode(*node, now);
  }
  listed_nodes_ = std::move(names);
}

void Service::ManagePower(double now) {
  power_->Advance(now);
  if (now >= power_driver_->next_timer_s()) power_driver_->Expire(now);
  if (!power_->suspends()) return;
  const double wall = WallNow();
  const bool due =
      now >= power_driver_->next_check_s() || (demand_changed_ && wall - last_power_wall_s_ >= 1.0);
  if (!due) return;
  last_power_wall_s_ = wall;
  demand_changed_ = false;
  power_driver_->Decide(now);
}

void Service::RecordPower(const power::PowerCommands& commands, double now) {
  (void)now;
  // Write ahead: the node rows and events are on disk before the backend hears of them.
  const bool grouped = store_->Begin().ok();
  for (const power::NodeCommand& c : commands.suspend) {
    StoreNode(model::NodeId(c.node), "suspend requested");
  }
  for (const power::NodeCommand& c : commands.resume) {
    StoreNode(model::NodeId(c.node), "resume requested");
  }
  if (grouped) {
    if (auto st = store_->Commit(); !st.ok()) {
      logger_->Error("storing power actions failed", {{"error", st.message()}});
    }
  }
}

void Service::NodePowerChanged(int32_t node, drive::NodeChange change, double now) {
  (void)now;
  const model::NodeId id(node);
  const std::string& name = cluster_.nodes[node].name;
  switch (change) {
    case drive::NodeChange::kSuspending:
      logger_->Info("suspending node", {{"node", name}});
      break;
    case drive::NodeChange::kBooting:
      logger_->Info("resuming node", {{"node", name}});
      break;
    case drive::NodeChange::kOff:
      StoreNode(id, "off");
      break;
    case drive::NodeChange::kUp:
      StoreNode(id, "up: boot completed");
      demand_changed_ = true;
      break;
    case drive::NodeChange::kDown:
      StoreNode(id, fmt::format("down: not up within the resume timeout ({} s)",
                                options_.power.resume_timeout_s));
      logger_->Warn("node did not come up; down", {{"node", name}});
      break;
  }
}

void Service::PowerSwitchFailed(int32_t node, bool on, const util::Status& status) {
  logger_->Error(on ? "resume failed" : "suspend failed",
                 {{"node", cluster_.nodes[node].name}, {"error", status.message()}});
}

}  // namespace hetsched::svc
