// Topology: the path between any two devices (or nodes) of a cluster, in O(1) per query.
// The transfer time of B bytes is latency + B / bottleneck bandwidth along the path.
// Per-node and per-rack values are precomputed; no graph search happens per query.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/cluster.h"

namespace hetsched::model {

// Ordered from closest to farthest.
enum class Distance { kSameDevice, kIsland, kPcieSwitch, kNode, kRack, kNetwork };
std::string_view DistanceName(Distance distance);  // "device", "island", "pcie", "node", ...

struct Path {
  Distance distance = Distance::kSameDevice;
  double bandwidth = 0;  // bytes/s at the bottleneck; infinity for kSameDevice
  double latency_s = 0;  // summed over the hops
  // latency + bytes / bandwidth; 0 for kSameDevice (nothing moves).
  double TransferSeconds(uint64_t bytes) const;
};

// The paths, by distance class (a and b are devices, or hosts for BetweenNodes):
//   same device   -> nothing moves.
//   same island   -> the island's bandwidth and latency.
//   same switch   -> the PCIe switch's bandwidth and latency (checked after islands).
//   same node     -> the node's host link.
//   same rack     -> min(NIC a, NIC b); latency NIC a + rack switch + NIC b.
//   other racks   -> min(NIC a, NIC b, uplink of rack a, uplink of rack b);
//                    latency NIC a + rack a + core + rack b + NIC b.
// Device-to-network transfers are assumed to use GPUDirect-style RDMA: the host link is not
// part of an inter-node path.
//
// Thread-safe for concurrent queries; immutable after construction. Memory: O(devices + nodes).
class Topology {
 public:
  // Keeps a reference: `cluster` must outlive the topology and must not change.
  explicit Topology(const Cluster& cluster);

  Path Between(DeviceId a, DeviceId b) const;
  // Host to host (e.g. CPU memory offload, checkpoint copies). The same node is kSameDevice.
  Path BetweenNodes(NodeId a, NodeId b) const;
  double TransferSeconds(DeviceId a, DeviceId b, uint64_t bytes) const {
    return Between(a, b).TransferSeconds(bytes);
  }
  Distance DistanceBetween(DeviceId a, DeviceId b) const { return Between(a, b).distance; }

  const Cluster& cluster() const { return cluster_; }

 private:
  // Flattened per-device and per-node facts so a query touches at most four small records.
  struct DeviceInfo {
    int32_t node;
    int32_t group;    // global island index, -1 if none
    int32_t pswitch;  // global PCIe switch index, -1 if none
  };
  struct NodeInfo {
    int32_t rack;
    double host_bandwidth, host_latency_s;
    double nic_bandwidth, nic_latency_s;
  };
  struct LinkInfo {
    double bandwidth, latency_s;
  };
  Path BetweenHosts(int32_t a, int32_t b) const;  // different nodes

  const Cluster& cluster_;
  std::vector<DeviceInfo> devices_;
  std::vector<NodeInfo> nodes_;
  std::vector<LinkInfo> islands_;
  std::vector<LinkInfo> switches_;
  std::vector<LinkInfo> racks_;  // uplink bandwidth, switch latency
};

}  // namespace hetsched::model
