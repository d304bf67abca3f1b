// Model partitioning: cut a model's layer chain into pipeline stages and give each stage a group
// of devices (tensor- and data-parallel inside it), across device types and vendors, minimizing
// the time per training step. Dynamic programming over layers and device groups (Alpa, Metis).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/model_spec.h"
#include "plan/model_partition_cost.h"
#include "util/status.h"

namespace hetsched::plan {

struct ModelPartitionOptions {
  std::string only_type;         // restrict to one device type ("" = all accelerators)
  double memory_reserve = 0.10;  // fraction of device and host memory kept free
  bool allow_offload = true;     // optimizer state / embeddings in CPU-server memory
  int32_t max_stages = 16;       // pipeline depth limit
  // Candidate bottleneck latencies are spaced by this ratio; the plan found is within this
  // factor of the best plan of the search space (see docs/model-partitioning.md).
  double latency_grid = 1.01;
  // With more device classes than this, a fixed set of class orderings is tried instead of all
  // permutations (see docs/model-partitioning.md).
  int32_t max_classes_all_orders = 4;
};

struct StagePlan {
  int32_t first_layer = 0;  // layers [first_layer, last_layer)
  int32_t last_layer = 0;
  std::string first_layer_name, last_layer_name;
  int32_t device_class = 0;
  std::string device_type;
  std::vector<model::DeviceId> devices;
  std::vector<std::string> nodes;        // distinct node names, in order
  NextLink next_link = NextLink::kNone;  // how it reaches the next stage
  int32_t in_flight = 0;                 // micro-batches whose activations the stage holds (1F1B)
  uint64_t memory_capacity = 0;          // usable bytes per device
  StageCost cost;
};

// Bytes moved per training step over one kind of link.
struct LinkTraffic {
  std::string from;  // "stage 0", "host pool"
  std::string to;
  std::string kind;  // "pipeline", "tensor-parallel", "data-parallel", "offload"
  std::string link;  // "island", "network"
  uint64_t bytes_per_step = 0;
  double seconds_per_step = 0;
};

struct ModelPlan {
  std::string model;
  bool training = true;
  int64_t global_batch = 0;
  int64_t micro_batch = 0;
  int64_t micro_batches = 0;
  int64_t seq_len = 0;
  std::vector<StagePlan> stages;
  std::vector<LinkTraffic> links;
  double step_s = 0;    // time per training step (or per batch, for inference)
  double bubble_s = 0;  // pipeline fill and drain: sum(latency) - max(latency)
  double tail_s = 0;    // slowest per-step tail (gradient all-reduce, optimizer offload)
  double tokens_per_s = 0;
  uint64_t host_bytes = 0;  // CPU-server memory used by offload
  int32_t devices_used = 0;
  // Search statistics.
  int64_t dp_runs = 0;
};

// Plans `spec` on `cluster`. Infeasible (with the reason: memory needed vs. available) when
// nothing fits; InvalidArgument for a cluster without accelerators or a bad model;
// NotFound for an unknown --only-type.
util::Result<ModelPlan> PlanModelPartition(const model::ModelSpec& spec,
                                           const model::Cluster& cluster,
                                           const ModelPartitionOptions& options);

// Adds device `id` to `stage`, and its node to stage.nodes when it differs from the last one.
void AddStageDevice(const model::Cluster& cluster, model::DeviceId id, StagePlan& stage);

// Fills step time, links and the other derived fields of `plan` from its stages. Used by the
// planner and the exhaustive oracle so both report the same numbers.
void FinishPlan(const model::ModelSpec& spec, const std::vector<DeviceClass>& classes,
                ModelPlan& plan);

// Why nothing fits: memory the model needs at the least versus what the accelerators (and the
// CPU-server pool) hold. Always an Infeasible status.
util::Status ExplainInfeasible(const model::ModelSpec& spec, const model::Cluster& cluster,
                               const std::vector<DeviceClass>& classes, const HostPool& pool,
                               const ModelPartitionOptions& options);

}  // namespace hetsched::plan
