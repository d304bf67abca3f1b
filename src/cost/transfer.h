// Time to move data between devices along a topology path: point-to-point transfers and ring
// all-reduce (gradient synchronization) over a group of workers.
#pragma once

#include <cstdint>
#include <vector>

#include "model/topology.h"

namespace hetsched::cost {

// latency_s + bytes / bandwidth over one link given by its figures (bytes/s, seconds), for
// callers that describe links without a model::Path (plan/'s device classes) or move a
// fractional share of a buffer. 0 for bytes <= 0; +infinity when bytes > 0 and bandwidth <= 0.
double TransferSeconds(double bytes, double bandwidth, double latency_s);

// latency + bytes / bandwidth along `path`. 0 for 0 bytes or a kSameDevice path (data that
// stays put costs nothing); +infinity when bytes > 0 and the path has no bandwidth.
double TransferSeconds(const model::Path& path, uint64_t bytes);

// Bytes each of `workers` workers sends (and receives) in a ring all-reduce of a `bytes` buffer:
// 2(n-1)/n x bytes, reduce-scatter then all-gather, each n-1 steps of bytes/n (Patarasuk and
// Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009;
// Thakur, Rabenseifner and Gropp, "Optimization of collective communication operations in
// MPICH", IJHPCA 2005). 0 for n <= 1.
double RingAllReduceBytesPerWorker(double bytes, int workers);

// The same summed over the whole ring: 2(n-1) x bytes (workers x the above, without the
// rounding of dividing by n first). 0 for n <= 1.
double RingAllReduceBytesTotal(double bytes, int workers);

// `count` ring all-reduces among `workers` workers over links of `bandwidth` bytes/s and
// `latency_s`, each worker's buffers summing to `bytes`: 2(n-1)/n x bytes / bandwidth +
// count x 2(n-1) x latency (the bandwidth term depends only on the total; each all-reduce pays
// the latency of its 2(n-1) steps). `count` is a number of all-reduces, summed as a double by
// callers that add them up over layers. 0 for n <= 1 or bytes <= 0; +infinity when bytes > 0
// and bandwidth <= 0.
double RingAllReduceSeconds(double bytes, int workers, double bandwidth, double latency_s,
                            double count = 1);

// Ring all-reduce of `bytes` (each worker's buffer) over `workers` workers whose slowest ring
// hop is `bottleneck`: the above with its bandwidth and latency, one all-reduce. 0 for n <= 1,
// 0 bytes or a kSameDevice bottleneck; +infinity when bytes > 0 and the bottleneck has no
// bandwidth.
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
