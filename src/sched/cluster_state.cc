#include "sched/cluster_state.h"

#include <algorithm>
#include <cassert>

#include "model/compatibility.h"

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;
using model::NodeId;

HostRequest HostRequestOf(const model::Job& job) {
  return {job.cores_per_worker, job.host_memory_per_worker};
}

ClusterState::ClusterState(const model::Cluster& cluster) : cluster_(cluster) {
  type_count_ = static_cast<int32_t>(cluster.catalog.size());
  const size_t n_dev = cluster.devices.size();
  status_.assign(n_dev, kFree);
  reserved_.assign(n_dev, 0);
  node_on_.assign(cluster.nodes.size(), 1);
  node_powered_.assign(cluster.nodes.size(), 1);
  node_drained_.assign(cluster.nodes.size(), 0);
  node_removed_.assign(cluster.nodes.size(), 0);
  free_total_.assign(type_count_, 0);
  up_total_.assign(type_count_, 0);
  total_.assign(type_count_, 0);
  rack_free_.assign(std::max<size_t>(cluster.racks.size(), 1) * type_count_, 0);
  node_free_.assign(cluster.nodes.size(), {});
  by_free_.assign(type_count_, {});
  for (const model::Node& n : cluster.nodes) {
    free_cores_.push_back(n.cores);
    free_memory_.push_back(n.host_memory_bytes);
  }
  for (size_t i = 0; i < n_dev; ++i) {
    const model::Device& d = cluster.devices[i];
    total_[d.type.value()]++;
    up_total_[d.type.value()]++;
    AdjustFree(d.node, d.type, +1);
  }
}

void ClusterState::AddNode(NodeId node) {
  const size_t n_dev = cluster_.devices.size(), n_nodes = cluster_.nodes.size();
  status_.resize(n_dev, kFree);
  reserved_.resize(n_dev, 0);
  node_on_.resize(n_nodes, 1);
  node_powered_.resize(n_nodes, 1);
  node_drained_.resize(n_nodes, 0);
  node_removed_.resize(n_nodes, 0);
  node_free_.resize(n_nodes);
  rack_free_.resize(std::max<size_t>(cluster_.racks.size(), 1) * type_count_, 0);
  const model::Node& n = cluster_.node(node);
  free_cores_.resize(n_nodes, 0);
  free_memory_.resize(n_nodes, 0);
  free_cores_[node.value()] = n.cores;
  free_memory_[node.value()] = n.host_memory_bytes;
  for (int32_t i = 0; i < n.device_count; ++i) {
    const model::Device& d = cluster_.device(DeviceId(n.first_device.value() + i));
    total_[d.type.value()]++;
    up_total_[d.type.value()]++;
    AdjustFree(node, d.type, +1);
  }
}

void ClusterState::RemoveNode(NodeId node) {
  if (node_removed_[node.value()]) return;
  SetNodeDrained(node, true);
  const model::Node& n = cluster_.node(node);
  for (int32_t i = 0; i < n.device_count; ++i) {
    const DeviceId d(n.first_device.value() + i);
    assert(status_[d.value()] != kBusy);
    SetDown(d);
    total_[cluster_.device(d).type.value()]--;
  }
  node_removed_[node.value()] = 1;
}

int32_t ClusterState::FreeInNode(NodeId node, DeviceTypeId type) const {
  for (const auto& [t, n] : node_free_[node.value()]) {
    if (t == type.value()) return n;
  }
  return 0;
}

void ClusterState::AdjustFree(NodeId node, DeviceTypeId type, int32_t delta) {
  auto& counts = node_free_[node.value()];
  int32_t* slot = nullptr;
  for (auto& [t, n] : counts) {
    if (t == type.value()) slot = &n;
  }
  if (slot == nullptr) {
    counts.emplace_back(type.value(), 0);
    slot = &counts.back().second;
  }
  auto& index = by_free_[type.value()];
  const int32_t before = *slot;
  *slot += delta;
  assert(*slot >= 0);
  if (before > 0 && *slot > 0) {
    // The node's entry moves to its new count: its tree node is re-keyed and re-inserted, not
    // freed and allocated again.
    auto entry = index.extract({before, node.value()});
    entry.value().first = *slot;
    index.insert(std::move(entry));
  } else if (before > 0) {
    index.erase({before, node.value()});
  } else if (*slot > 0) {
    index.insert({*slot, node.value()});
  }
  free_total_[type.value()] += delta;
  const model::RackId rack = cluster_.node(node).rack;
  if (rack.valid()) rack_free_[rack.value() * type_count_ + type.value()] += delta;
}

void ClusterState::AddToRun(FreeRun& run, DeviceId d, int32_t delta) {
  const model::Device& device = cluster_.device(d);
  if (run.delta != 0 && (run.node != device.node || run.type != device.type)) ApplyRun(run);
  run.node = device.node;
  run.type = device.type;
  run.delta += delta;
}

void ClusterState::ApplyRun(FreeRun& run) {
  if (run.delta != 0) AdjustFree(run.node, run.type, run.delta);
  run.delta = 0;
}

void ClusterState::Allocate(const std::vector<DeviceId>& devices) {
  FreeRun run;
  for (DeviceId d : devices) {
    assert(status_[d.value()] == kFree);
    const bool was_indexed = Indexed(d);
    status_[d.value()] = kBusy;
    if (was_indexed) AddToRun(run, d, -1);
  }
  ApplyRun(run);
}

void ClusterState::Release(const std::vector<DeviceId>& devices) {
  FreeRun run;
  for (DeviceId d : devices) {
    if (status_[d.value()] != kBusy) continue;  // went down while busy: stays down
    status_[d.value()] = kFree;
    if (Indexed(d)) AddToRun(run, d, +1);
  }
  ApplyRun(run);
}

void ClusterState::SetDown(DeviceId d) {
  if (status_[d.value()] == kDown) return;
  if (Indexed(d)) AdjustFree(cluster_.device(d).node, cluster_.device(d).type, -1);
  if (node_on_[cluster_.device(d).node.value()]) up_total_[cluster_.device(d).type.value()]--;
  status_[d.value()] = kDown;
}

void ClusterState::SetUp(DeviceId d) {
  if (status_[d.value()] != kDown || node_removed_[cluster_.device(d).node.value()]) return;
  status_[d.value()] = kFree;
  if (node_on_[cluster_.device(d).node.value()]) up_total_[cluster_.device(d).type.value()]++;
  if (Indexed(d)) AdjustFree(cluster_.device(d).node, cluster_.device(d).type, +1);
}

void ClusterState::Reserve(DeviceId d) {
  if (reserved_[d.value()]++ > 0) return;
  ++reserved_devices_;
  if (status_[d.value()] == kFree && Offers(cluster_.device(d).node)) {
    AdjustFree(cluster_.device(d).node, cluster_.device(d).type, -1);
  }
}

void ClusterState::Unreserve(DeviceId d) {
  assert(reserved_[d.value()] > 0);
  if (--reserved_[d.value()] > 0) return;
  --reserved_devices_;
  if (Indexed(d)) AdjustFree(cluster_.device(d).node, cluster_.device(d).type, +1);
}

int32_t ClusterState::HostFit(NodeId node, const HostRequest& request) const {
  if (request.empty()) return model::kAnyWorkers;
  return model::HostWorkersFit(cluster_.node(node), free_cores_[node.value()],
                               free_memory_[node.value()], request.cores, request.memory);
}

bool ClusterState::HostHolds(const std::vector<DeviceId>& devices,
                             const HostRequest& request) const {
  if (request.empty()) return true;
  std::vector<std::pair<int32_t, int32_t>> workers;  // (node, workers there)
  for (DeviceId d : devices) {
    const int32_t node = cluster_.device(d).node.value();
    auto it = std::find_if(workers.begin(), workers.end(),
                           [&](const auto& e) { return e.first == node; });
    if (it == workers.end()) it = workers.insert(workers.end(), {node, 0});
    ++it->second;
  }
  for (const auto& [node, n] : workers) {
    if (HostFit(NodeId(node), request) < n) return false;
  }
  return true;
}

void ClusterState::TakeHost(const std::vector<DeviceId>& devices, const HostRequest& request) {
  if (request.empty()) return;
  for (DeviceId d : devices) {
    const NodeId node = cluster_.device(d).node;
    const model::Node& n = cluster_.node(node);
    if (n.cores > 0) {
      assert(free_cores_[node.value()] >= request.cores);
      free_cores_[node.value()] -= request.cores;
    }
    if (n.host_memory_bytes > 0) {
      assert(free_memory_[node.value()] >= request.memory);
      free_memory_[node.value()] -= request.memory;
    }
  }
}

void ClusterState::ReturnHost(const std::vector<DeviceId>& devices, const HostRequest& request) {
  if (request.empty()) return;
  for (DeviceId d : devices) {
    const NodeId node = cluster_.device(d).node;
    const model::Node& n = cluster_.node(node);
    if (n.cores > 0) free_cores_[node.value()] += request.cores;
    if (n.host_memory_bytes > 0) free_memory_[node.value()] += request.memory;
    assert(free_cores_[node.value()] <= n.cores);
    assert(free_memory_[node.value()] <= n.host_memory_bytes);
  }
}

void ClusterState::SetNodeOn(NodeId node, bool on) {
  if (node_removed_[node.value()]) return;
  node_powered_[node.value()] = on ? 1 : 0;
  SetOffers(node, on && !node_drained_[node.value()]);
}

void ClusterState::SetNodeDrained(NodeId node, bool drained) {
  if (node_removed_[node.value()]) return;
  node_drained_[node.value()] = drained ? 1 : 0;
  SetOffers(node, node_powered_[node.value()] && !drained);
}

void ClusterState::SetOffers(NodeId node, bool offers) {
  if (static_cast<bool>(node_on_[node.value()]) == offers) return;
  const model::Node& n = cluster_.node(node);
  for (int32_t i = 0; i < n.device_count; ++i) {
    const DeviceId d(n.first_device.value() + i);
    const DeviceTypeId type = cluster_.device(d).type;
    if (!offers) {
      if (Indexed(d)) AdjustFree(node, type, -1);
      if (status_[d.value()] != kDown) up_total_[type.value()]--;
    }
  }
  node_on_[node.value()] = offers ? 1 : 0;
  if (offers) {
    for (int32_t i = 0; i < n.device_count; ++i) {
      const DeviceId d(n.first_device.value() + i);
      const DeviceTypeId type = cluster_.device(d).type;
      if (Indexed(d)) AdjustFree(node, type, +1);
      if (status_[d.value()] != kDown) up_total_[type.value()]++;
    }
  }
}

}  // namespace hetsched::sched
