#include "model/topology.h"

#include <algorithm>
#include <limits>

namespace hetsched::model {

std::string_view DistanceName(Distance distance) {
  switch (distance) {
    case Distance::kSameDevice:
      return "device";
    case Distance::kIsland:
      return "island";
    case Distance::kPcieSwitch:
      return "pcie-switch";
    case Distance::kNode:
      return "node";
    case Distance::kRack:
      return "rack";
    case Distance::kNetwork:
      return "network";
  }
  return "unknown";
}

double Path::TransferSeconds(uint64_t bytes) const {
  if (distance == Distance::kSameDevice) return 0;
  return latency_s + static_cast<double>(bytes) / bandwidth;
}

Topology::Topology(const Cluster& cluster) : cluster_(cluster) {
  nodes_.reserve(cluster.nodes.size());
  devices_.resize(cluster.devices.size());
  for (const Rack& rack : cluster.racks) racks_.push_back({rack.uplink_bandwidth, rack.latency_s});
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const Node& node = cluster.nodes[n];
    nodes_.push_back({node.rack.value(), node.host_bandwidth, node.host_latency_s,
                      node.nic_bandwidth, node.nic_latency_s});
    const int32_t island_base = static_cast<int32_t>(islands_.size());
    const int32_t switch_base = static_cast<int32_t>(switches_.size());
    for (const DeviceGroup& g : node.islands) islands_.push_back({g.bandwidth, g.latency_s});
    for (const DeviceGroup& g : node.pcie_switches) switches_.push_back({g.bandwidth, g.latency_s});
    for (int32_t i = 0; i < node.device_count; ++i) {
      const int32_t id = node.first_device.value() + i;
      const Device& d = cluster.devices[id];
      devices_[id] = {static_cast<int32_t>(n), d.island < 0 ? -1 : island_base + d.island,
                      d.pcie_switch < 0 ? -1 : switch_base + d.pcie_switch};
    }
  }
}

Path Topology::BetweenHosts(int32_t a, int32_t b) const {
  const NodeInfo& na = nodes_[a];
  const NodeInfo& nb = nodes_[b];
  const double nic_bw = std::min(na.nic_bandwidth, nb.nic_bandwidth);
  const double nic_lat = na.nic_latency_s + nb.nic_latency_s;
  const LinkInfo& ra = racks_[na.rack];
  if (na.rack == nb.rack) return {Distance::kRack, nic_bw, nic_lat + ra.latency_s};
  const LinkInfo& rb = racks_[nb.rack];
  return {Distance::kNetwork, std::min({nic_bw, ra.bandwidth, rb.bandwidth}),
          nic_lat + ra.latency_s + rb.latency_s + cluster_.network_latency_s};
}

Path Topology::Between(DeviceId a, DeviceId b) const {
  if (a == b) return {Distance::kSameDevice, std::numeric_limits<double>::infinity(), 0};
  const DeviceInfo& da = devices_[a.value()];
  const DeviceInfo& db = devices_[b.value()];
  if (da.node != db.node) return BetweenHosts(da.node, db.node);
  if (da.group >= 0 && da.group == db.group) {
    const LinkInfo& l = islands_[da.group];
    return {Distance::kIsland, l.bandwidth, l.latency_s};
  }
  if (da.pswitch >= 0 && da.pswitch == db.pswitch) {
    const LinkInfo& l = switches_[da.pswitch];
    return {Distance::kPcieSwitch, l.bandwidth, l.latency_s};
  }
  const NodeInfo& n = nodes_[da.node];
  return {Distance::kNode, n.host_bandwidth, n.host_latency_s};
}

Path Topology::BetweenNodes(NodeId a, NodeId b) const {
  if (a == b) return {Distance::kSameDevice, std::numeric_limits<double>::infinity(), 0};
  return BetweenHosts(a.value(), b.value());
}

}  // namespace hetsched::model
