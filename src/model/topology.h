// Topology: the path between any two devices (or nodes) of a cluster, in O(1) per query.
// The transfer time of B bytes is latency + B / bottleneck bandwidth along the path.
// Per-node and per-rack values are precomputed; no graph search happens per query.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/cluster.h"

namespace hetsched::model {

// Ordered from closest to farthest.
enum class Distance { kSameDevice, kIsland, kPcieSwitch, kNode, kRack, kNetwork };
std::string_view DistanceName(Distance distance);

struct Path {
  Distance distance = Distance::kSameDevice;
  double bandwidth = 0;  // bytes/s at the bottleneck; infinity for kSameDevice
  double latency_s = 0;  // summed over the hops
  double TransferSeconds(uint64_t bytes) const;
};

class Topology {
 public:
  // Keeps a reference: `cluster` must outlive the topology.
  explicit Topology(const Cluster& cluster);

  Path Between(DeviceId a, DeviceId b) const;
  Path BetweenNodes(NodeId a, NodeId b) const;  // host to host (e.g. CPU memory offload)
  double TransferSeconds(DeviceId a, DeviceId b, uint64_t bytes) const {
    return Between(a, b).TransferSeconds(bytes);
  }
  Distance DistanceBetween(DeviceId a, DeviceId b) const { return Between(a, b).distance; }

 private:
  const Cluster& cluster_;
};

}  // namespace hetsched::model
