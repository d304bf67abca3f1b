#include "model/cluster.h"

namespace hetsched::model {

std::string_view LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kXgmi:
      return "xgmi";
    case LinkKind::kHccs:
      return "hccs";
    case LinkKind::kPcie:
      return "pcie";
  }
  return "unknown";
}

std::optional<NodeId> Cluster::FindNode(std::string_view name) const {
  auto it = node_index_.find(std::string(name));
  if (it == node_index_.end()) return std::nullopt;
  return NodeId(it->second);
}

std::optional<RackId> Cluster::FindRack(std::string_view name) const {
  auto it = rack_index_.find(std::string(name));
  if (it == rack_index_.end()) return std::nullopt;
  return RackId(it->second);
}

std::optional<int32_t> Cluster::FindStorage(std::string_view name) const {
  for (size_t i = 0; i < storage.size(); ++i) {
    if (storage[i].name == name) return static_cast<int32_t>(i);
  }
  return std::nullopt;
}

std::vector<std::pair<DeviceTypeId, int32_t>> Cluster::DeviceTypeCounts() const {
  std::vector<int32_t> counts(catalog.size(), 0);
  for (const Device& d : devices) ++counts[d.type.value()];
  std::vector<std::pair<DeviceTypeId, int32_t>> out;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > 0) out.emplace_back(DeviceTypeId(static_cast<int32_t>(i)), counts[i]);
  }
  return out;
}

void Cluster::Reindex() {
  node_index_.clear();
  rack_index_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) node_index_[nodes[i].name] = static_cast<int32_t>(i);
  for (size_t i = 0; i < racks.size(); ++i) rack_index_[racks[i].name] = static_cast<int32_t>(i);
}

NodeId AddNode(Cluster& cluster, Node node, const std::vector<DeviceTypeId>& types) {
  const NodeId id(static_cast<int32_t>(cluster.nodes.size()));
  node.first_device = DeviceId(static_cast<int32_t>(cluster.devices.size()));
  node.device_count = static_cast<int32_t>(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    Device d;
    d.type = types[i];
    d.node = id;
    d.local_index = static_cast<int32_t>(i);
    cluster.devices.push_back(d);
  }
  for (size_t g = 0; g < node.islands.size(); ++g) {
    for (int32_t m : node.islands[g].members) {
      cluster.devices[node.first_device.value() + m].island = static_cast<int32_t>(g);
    }
  }
  for (size_t g = 0; g < node.pcie_switches.size(); ++g) {
    for (int32_t m : node.pcie_switches[g].members) {
      cluster.devices[node.first_device.value() + m].pcie_switch = static_cast<int32_t>(g);
    }
  }
  if (node.rack.valid()) cluster.racks[node.rack.value()].nodes.push_back(id);
  cluster.nodes.push_back(std::move(node));
  cluster.Reindex();
  return id;
}

Cluster SubCluster(const Cluster& cluster, const std::vector<NodeId>& nodes) {
  Cluster out;
  out.name = cluster.name;
  out.catalog = cluster.catalog;
  out.racks = cluster.racks;
  for (Rack& r : out.racks) r.nodes.clear();
  out.network_latency_s = cluster.network_latency_s;
  out.spine_bandwidth = cluster.spine_bandwidth;
  out.storage = cluster.storage;
  for (NodeId id : nodes) {
    const NodeId new_id(static_cast<int32_t>(out.nodes.size()));
    Node n = cluster.node(id);
    const DeviceId first = n.first_device;
    n.first_device = DeviceId(static_cast<int32_t>(out.devices.size()));
    for (int32_t i = 0; i < n.device_count; ++i) {
      Device d = cluster.device(DeviceId(first.value() + i));
      d.node = new_id;
      out.devices.push_back(d);
    }
    if (n.rack.valid()) out.racks[n.rack.value()].nodes.push_back(new_id);
    out.nodes.push_back(std::move(n));
  }
  out.Reindex();
  return out;
}

}  // namespace hetsched::model
