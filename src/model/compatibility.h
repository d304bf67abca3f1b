// Compatibility: which device types of a cluster can ever run a job (software stack, memory
// per worker, enough devices for the gang) and, when none can, a sentence saying why.
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"

namespace hetsched::model {

// Devices a job needs at once: its gang size, or min_workers for an elastic job
// (max_workers > min_workers).
int32_t WorkersNeeded(const Job& job);

// True when devices of `type` can host one worker of `job`: a stack the job accepts and at
// least memory_per_worker of device memory. A job that lists no stacks accepts any device.
bool TypeRunsJob(const DeviceType& type, const Job& job);

// Device types present in the cluster (catalog order) that can run `job` on devices of that
// one type: TypeRunsJob and at least WorkersNeeded devices of the type in the whole cluster.
// O(types in the cluster x stacks).
std::vector<DeviceTypeId> CompatibleTypes(const Cluster& cluster, const Job& job);

// Empty when CompatibleTypes is non-empty; otherwise why nothing fits, naming the first
// unmet need: "needs cuda>=12.0; the cluster has cuda only up to 11.4 (k80)",
// "needs 96 GiB per worker; the largest compatible device has 80 GiB (a100-80g)",
// "needs 16 devices of one type at once; at most 8 compatible devices of a type (a100-80g)".
std::string WhyNoDeviceFits(const Cluster& cluster, const Job& job);

}  // namespace hetsched::model
