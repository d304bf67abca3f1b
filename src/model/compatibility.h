// Compatibility: which device types of a cluster can ever run a job (software stack, memory
// per worker, enough devices for the gang, host cores and memory on their nodes) and, when none
// can, a sentence saying why.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"

namespace hetsched::model {

// Devices a job needs at once: its gang size, or for an elastic job (`elastic: {min, max}`)
// its minimum, the smallest size the scheduler may run it at (sched/elastic.h; under the LP
// policies and `simulate --no-elastic` it runs at its gang size).
int32_t WorkersNeeded(const Job& job);

// True when devices of `type` can host one worker of `job`: a stack the job accepts and at
// least memory_per_worker of device memory. A job that lists no stacks accepts any device.
bool TypeRunsJob(const DeviceType& type, const Job& job);

// No bound: what HostWorkersFit returns when the host request binds nothing.
inline constexpr int32_t kAnyWorkers = std::numeric_limits<int32_t>::max();

// True when the job reserves host cores or host memory per worker (Job::cores_per_worker,
// host_memory_per_worker).
bool AsksForHost(const Job& job);

// Workers asking `cores` and `memory` bytes of host memory each that fit in `free_cores` and
// `free_memory` of `node`. A resource the node does not model (Node::cores or
// host_memory_bytes 0: unlimited) or the worker does not ask for (0) sets no bound;
// kAnyWorkers when nothing binds. O(1).
int32_t HostWorkersFit(const Node& node, int32_t free_cores, uint64_t free_memory, int32_t cores,
                       uint64_t memory);
// The same for `job` on an empty `node` (all its cores and host memory free).
int32_t HostWorkersFit(const Node& node, const Job& job);

// Per device type (catalog id; sized to the catalog): the workers of `job` that devices of the
// type hold at once, each node counting min(its devices of the type, HostWorkersFit(node,
// job)). Nodes whose `left_out[node]` is set count nothing (an empty vector leaves none out).
// O(devices).
std::vector<int32_t> HostedWorkersByType(const Cluster& cluster, const Job& job,
                                         const std::vector<char>& left_out = {});

// "16 cores and 64 GiB of host memory", "1 core", "64 GiB of host memory": a worker's host
// request in words; empty when it asks for nothing.
std::string DescribeHostRequest(const Job& job);

// Device types present in the cluster (catalog order) that can run `job` on devices of that
// one type: TypeRunsJob and at least WorkersNeeded workers of the job on devices of the type at
// once, each node holding at most as many as its host cores and memory allow (HostWorkersFit).
// O(types in the cluster x stacks), plus O(devices) for a job that AsksForHost.
std::vector<DeviceTypeId> CompatibleTypes(const Cluster& cluster, const Job& job);

// Empty when CompatibleTypes is non-empty; otherwise why nothing fits, naming the first
// unmet need: "needs cuda>=12.0; the cluster has cuda only up to 11.4 (k80)",
// "needs 96 GiB per worker; the largest compatible device has 80 GiB (a100-80g)",
// "needs 16 devices of one type at once; at most 8 compatible devices of a type (a100-80g)",
// "needs 64 cores per worker; a node with a compatible device has at most 48 (cpu-01)",
// "needs 8 workers at once with 16 cores and 64 GiB of host memory each; the nodes with
// compatible devices hold at most 4 such workers (xeon-8380)".
std::string WhyNoDeviceFits(const Cluster& cluster, const Job& job);

}  // namespace hetsched::model
