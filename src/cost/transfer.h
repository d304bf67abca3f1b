// Time to move data between devices along a topology path: point-to-point transfers and ring
// all-reduce (gradient synchronization) over a group of workers.
#pragma once

#include <cstdint>
#include <vector>

#include "model/topology.h"

namespace hetsched::cost {

// latency + bytes / bandwidth along `path`. 0 for 0 bytes or a kSameDevice path (data that
// stays put costs nothing); +infinity when bytes > 0 and the path has no bandwidth.
double TransferSeconds(const model::Path& path, uint64_t bytes);

// Ring all-reduce of `bytes` (each worker's buffer) over `workers` workers whose slowest ring
// hop is `bottleneck`: 2(n-1)/n x bytes / bandwidth + 2(n-1) x latency (reduce-scatter then
// all-gather, each n-1 steps of bytes/n). 0 for n <= 1 or 0 bytes; +infinity when bytes > 0
// and the bottleneck has no bandwidth.
double RingAllReduceSeconds(uint64_t bytes, int workers, const model::Path& bottleneck);

// Combines hops into one bottleneck path: the smallest bandwidth, the largest latency and the
// farthest distance class (they may come from different hops, which bounds a ring's time from
// above). kSameDevice hops are free and skipped; no other hop gives a kSameDevice path.
model::Path WorstOf(const std::vector<model::Path>& hops);

// The bottleneck of the ring devices[0] -> devices[1] -> ... -> devices[0]. O(n)
// topology queries.
inline model::Path RingBottleneck(const model::Topology& topology,
                                  const std::vector<model::DeviceId>& devices) {
  std::vector<model::Path> hops;
  if (devices.size() >= 2) {
    hops.reserve(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) {
      hops.push_back(topology.Between(devices[i], devices[(i + 1) % devices.size()]));
    }
  }
  return WorstOf(hops);
}

// RingAllReduceSeconds over the ring `devices` in the given order.
inline double RingAllReduceSeconds(const model::Topology& topology,
                                   const std::vector<model::DeviceId>& devices, uint64_t bytes) {
  return RingAllReduceSeconds(bytes, static_cast<int>(devices.size()),
                              RingBottleneck(topology, devices));
}

// Point-to-point transfer between two devices of a cluster.
inline double TransferSeconds(const model::Topology& topology, model::DeviceId from,
                              model::DeviceId to, uint64_t bytes) {
  return TransferSeconds(topology.Between(from, to), bytes);
}

}  // namespace hetsched::cost
