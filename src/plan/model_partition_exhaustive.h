// Exhaustive oracle for model partitioning: tries every split of the layers into stages and
// every (device class, size, tensor-parallel degree, offload) per stage. Exponential; for tests
// on tiny cases only (a few layers, a few device groups).
#pragma once

#include "model/cluster.h"
#include "model/model_spec.h"
#include "plan/model_partition.h"
#include "util/status.h"

namespace hetsched::plan {

// Same search space as PlanModelPartition except that classes need not form contiguous blocks
// and every per-stage choice is enumerated; same cost model and objective. Rejects models of
// more than 10 layers (InvalidArgument); Infeasible when nothing fits.
util::Result<ModelPlan> PlanModelPartitionExhaustive(const model::ModelSpec& spec,
                                                     const model::Cluster& cluster,
                                                     const ModelPartitionOptions& options);

}  // namespace hetsched::plan
