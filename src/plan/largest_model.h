// The largest model a cluster can train: tries presets from the largest down and returns the
// first one the model partitioner (plan/model_partition.h) can place, with its plan.
// Used by `hetsched plan model --max-model` and `hetsched demo`.
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/model_spec.h"
#include "plan/model_partition.h"
#include "util/status.h"

namespace hetsched::plan {

struct LargestModel {
  model::ModelSpec spec;
  ModelPlan plan;
  std::vector<std::string> too_big;  // larger presets that did not fit, largest first
};

// `presets` are preset names in increasing size (model::PresetsOfFamily, model::PresetNames).
// Infeasible when none fits, with the smallest preset's reason; an unknown preset, bad preset
// options or a cluster the partitioner rejects (no accelerators, unknown only_type) pass their
// own error through. Cost: one PlanModelPartition per preset tried.
util::Result<LargestModel> FindLargestModel(const std::vector<std::string>& presets,
                                            const model::PresetOptions& preset_options,
                                            const model::Cluster& cluster,
                                            const ModelPartitionOptions& options);

}  // namespace hetsched::plan
