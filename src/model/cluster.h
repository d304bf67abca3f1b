// Cluster: racks, nodes and devices, with the intra-node links (NVLink / xGMI / HCCS islands,
// PCIe switches) and network attachment that the topology needs. Built by the cluster readers
// (model/io/cluster_reader.h); immutable afterwards. Devices of a node are contiguous ids.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/catalog.h"
#include "util/strong_id.h"

namespace hetsched::model {

using NodeId = util::StrongId<struct NodeTag>;
using DeviceId = util::StrongId<struct DeviceTag>;
using RackId = util::StrongId<struct RackTag>;

enum class LinkKind { kNvlink, kXgmi, kHccs, kPcie };
std::string_view LinkKindName(LinkKind kind);  // "nvlink", "xgmi", "hccs", "pcie"

// A set of devices of one node joined by a fast link: an island (NVLink/xGMI/HCCS) or the
// devices under one PCIe switch. Indexes are positions within the node (0..device_count-1).
struct DeviceGroup {
  LinkKind kind = LinkKind::kPcie;
  std::vector<int32_t> members;
  double bandwidth = 0;  // bytes/s per direction between two members
  double latency_s = 0;
};

struct Node {
  std::string name;
  RackId rack;
  DeviceId first_device;  // devices are first_device .. first_device + device_count - 1
  int32_t device_count = 0;
  std::vector<DeviceGroup> islands;        // NVLink / xGMI / HCCS
  std::vector<DeviceGroup> pcie_switches;  // kind == kPcie
  // Path between two devices of the node that share no island or switch: through the host.
  double host_bandwidth = 0;  // bytes/s
  double host_latency_s = 0;
  double nic_bandwidth = 0;  // bytes/s per direction
  double nic_latency_s = 0;
  uint64_t host_memory_bytes = 0;
  int32_t cores = 0;
  double base_watts = 0;  // chassis, fans, idle host CPUs not modelled as devices
  double boot_s = 0;
  double shutdown_s = 0;
  std::map<std::string, std::string> labels;
};

struct Device {
  DeviceTypeId type;
  NodeId node;
  int32_t local_index = 0;   // position within the node
  int32_t island = -1;       // index into node.islands, -1 if none
  int32_t pcie_switch = -1;  // index into node.pcie_switches, -1 if none
};

struct Rack {
  std::string name;
  double uplink_bandwidth = 0;  // bytes/s from the rack switch to the network core
  double latency_s = 0;         // one hop through the rack switch
  std::vector<NodeId> nodes;
};

// Where datasets and checkpoints live: a storage server or array in a rack, or a shared
// filesystem attached to the network core (no rack). Jobs read their input from it over the
// network (sim/network.h).
struct Storage {
  std::string name;
  RackId rack;           // invalid: attached to the network core
  double bandwidth = 0;  // bytes/s it serves, per direction (reads and writes each)
};

class Cluster {
 public:
  std::string name;
  DeviceCatalog catalog;  // built-in types plus the file's own additions / overrides
  std::vector<Rack> racks;
  std::vector<Node> nodes;
  std::vector<Device> devices;
  double network_latency_s = 0;  // extra latency through the core between racks
  // Capacity of the network core (spine) that all traffic between racks shares, per
  // direction; 0: the core is not a bottleneck (a non-blocking fabric).
  double spine_bandwidth = 0;
  std::vector<Storage> storage;

  const Node& node(NodeId id) const { return nodes[id.value()]; }
  const Device& device(DeviceId id) const { return devices[id.value()]; }
  const Rack& rack(RackId id) const { return racks[id.value()]; }
  const DeviceType& type_of(DeviceId id) const { return catalog.Get(device(id).type); }
  DeviceId device_of(NodeId node_id, int32_t local_index) const {
    return DeviceId(node(node_id).first_device.value() + local_index);
  }

  std::optional<NodeId> FindNode(std::string_view name) const;
  std::optional<RackId> FindRack(std::string_view name) const;
  std::optional<int32_t> FindStorage(std::string_view name) const;  // index into storage
  // Device types that occur in the cluster, in catalog order, with their device counts.
  std::vector<std::pair<DeviceTypeId, int32_t>> DeviceTypeCounts() const;

  // Rebuilds the name indexes; call after filling nodes and racks by hand.
  void Reindex();

 private:
  std::unordered_map<std::string, int32_t> node_index_;
  std::unordered_map<std::string, int32_t> rack_index_;
};

// Appends `node` with one device per entry of `types`, in that order (first_device and
// device_count are set here; its islands and PCIe switches, if any, name those positions):
// a node that joined a running cluster. Ids of existing nodes and devices do not change. The
// caller checks that the name is new and the rack, if any, exists.
NodeId AddNode(Cluster& cluster, Node node, const std::vector<DeviceTypeId>& types);

// The cluster made of `nodes` only (in that order; ids renumbered, racks kept with their
// remaining nodes, catalog and links as they were): what a planner may use of a live cluster.
Cluster SubCluster(const Cluster& cluster, const std::vector<NodeId>& nodes);

}  // namespace hetsched::model
