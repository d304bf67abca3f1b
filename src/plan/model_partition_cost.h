// The cost model behind model partitioning: device classes (identical groups of accelerators,
// e.g. "one node's 8 A100s"), the CPU-server host-memory pool, and the time and memory of one
// pipeline stage. Shared by the dynamic-programming planner and the exhaustive oracle. The
// times themselves (roofline compute, transfers, ring all-reduces) come from cost/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/model_spec.h"
#include "model/topology.h"

namespace hetsched::plan {

// Identical device groups: same device type, group size and links. A group is the devices of
// one type inside one NVLink/xGMI/HCCS island of a node (or, without an island, all devices of
// that type in the node). Tensor parallelism stays inside a group.
struct DeviceClass {
  model::DeviceTypeId type;
  std::string type_name;
  int32_t group_size = 0;
  int32_t groups_per_node = 1;  // groups of this class sharing one node (and its NIC)
  double intra_bandwidth = 0;   // bytes/s between two devices of a group (bottleneck)
  double intra_latency_s = 0;
  double nic_bandwidth = 0;  // bytes/s per node
  double nic_latency_s = 0;
  double flops_per_s = 0;       // per device at the model's precision: cost::EffectiveFlops
  double memory_bandwidth = 0;  // bytes/s per device
  uint64_t memory_bytes = 0;    // usable bytes per device (after the reserve)
  uint64_t raw_memory_bytes = 0;
  // Devices of each group, in cluster order; groups.size() groups of group_size devices.
  std::vector<std::vector<model::DeviceId>> groups;

  int32_t devices() const { return group_size * static_cast<int32_t>(groups.size()); }
  // Stage sizes this class offers: powers of two below the group size that divide it, then
  // 1, 2, 3, 4, 6, 8, 12, 16, 24 ... whole groups (powers of two and 1.5x them) and all groups.
  // Ascending; O(log groups) sizes keep the search fast on large classes.
  std::vector<int32_t> StageSizes() const;
  // Nodes (NICs) a stage of `devices` devices spans.
  int32_t NodesFor(int32_t devices) const;
};

// Host memory of CPU servers (nodes without accelerators) that may hold optimizer state or
// embedding tables, reached over the network.
struct HostPool {
  uint64_t bytes = 0;        // usable
  double nic_bandwidth = 0;  // summed over the pool's nodes
  double nic_latency_s = 0;  // largest of the pool's nodes
  double memory_bandwidth =
      0;  // summed over the pool's CPU sockets (the optimizer update runs there)
  int32_t nodes = 0;
  bool usable() const { return bytes > 0 && nic_bandwidth > 0 && memory_bandwidth > 0; }
};

struct ClassOptions {
  // Only devices of this type (catalog name or alias); empty = every accelerator.
  std::string only_type;
  double memory_reserve = 0.10;  // fraction of each device's memory kept for workspace
};

// Groups the cluster's accelerators (kind != cpu) into classes; CPU-only nodes form the pool.
// InvalidArgument when the cluster has no accelerator; NotFound for an unknown only_type.
util::Result<std::vector<DeviceClass>> BuildDeviceClasses(const model::Cluster& cluster,
                                                          const model::Topology& topology,
                                                          model::Precision precision,
                                                          const ClassOptions& options);
HostPool BuildHostPool(const model::Cluster& cluster, double memory_reserve);

// Where a stage sends its output activations (and receives their gradients).
enum class NextLink { kNone, kSameGroup, kNetwork };

enum OffloadFlags : uint8_t { kOffloadNone = 0, kOffloadOptimizer = 1, kOffloadEmbedding = 2 };

// Per-device memory of a stage, bytes.
struct StageMemory {
  uint64_t weights = 0;
  uint64_t gradients = 0;
  uint64_t optimizer = 0;
  uint64_t activations = 0;
  uint64_t total() const { return weights + gradients + optimizer + activations; }
};

struct StageCost {
  bool feasible = false;
  int32_t tp = 1;
  int32_t dp = 1;
  int32_t samples_per_replica = 0;
  uint8_t offload = kOffloadNone;
  double compute_s = 0;     // per micro-batch, forward + backward
  double tp_comm_s = 0;     // per micro-batch
  double p2p_s = 0;         // per micro-batch, to the next stage and back
  double latency_s = 0;     // compute + tp_comm + p2p: the stage's time per micro-batch
  double allreduce_s = 0;   // per step, data-parallel gradient all-reduce
  double offload_s = 0;     // per step (optimizer) plus per micro-batch (embedding) transfers
  double tail_s = 0;        // per step: allreduce + optimizer offload
  uint64_t host_bytes = 0;  // CPU-server memory this stage occupies
  StageMemory memory;       // per device
};

// Stage time and memory for one model and micro-batch size. Construction is O(layers); each
// Evaluate is O(tensor-parallel degrees x offload choices), independent of the layer count.
class StageCostModel {
 public:
  StageCostModel(const model::ModelSpec& spec, const std::vector<DeviceClass>& classes,
                 const HostPool& pool, int64_t micro_batch, bool allow_offload);

  // One (tensor-parallel degree, offload) choice for a stage, before the in-flight count is
  // known: its memory is static_bytes + in_flight * activation_bytes per device.
  struct Config {
    double latency_s = 0;
    double tail_s = 0;
    uint64_t static_bytes = 0;
    uint64_t activation_bytes = 0;  // one micro-batch
    uint64_t host_bytes = 0;
    int32_t tp = 1;
    uint8_t offload = kOffloadNone;
  };
  static constexpr int kMaxConfigs = 64;
  // Every configuration of layers [first, last) on `devices` devices of class `cls` whose static
  // memory fits, into out[0..n); returns n. O(tensor-parallel degrees x offload choices).
  int Configs(int32_t cls, int32_t first, int32_t last, int32_t devices, NextLink next,
              Config* out) const;
  // The configuration Evaluate would choose among `configs` for `in_flight` micro-batches and a
  // latency bound: the least latency + tail among those that fit without offload, else among
  // all. Returns its index or -1.
  int Pick(int32_t cls, const Config* configs, int n, int32_t in_flight,
           double max_latency_s) const;

  // Cheapest configuration (tensor-parallel degree, offload) of layers [first, last) on
  // `devices` devices of class `cls` that holds `in_flight` micro-batches of activations.
  // The one Pick chooses (no offload when that fits, then the least latency + tail); infeasible
  // when none fits in memory or every one is slower than `max_latency_s`.
  StageCost Evaluate(int32_t cls, int32_t first, int32_t last, int32_t devices, int32_t in_flight,
                     NextLink next, double max_latency_s) const;

  // One fixed configuration, no latency bound; infeasible when it does not fit in memory.
  StageCost EvaluateConfig(int32_t cls, int32_t first, int32_t last, int32_t devices, int32_t tp,
                           uint8_t offload, int32_t in_flight, NextLink next) const {
    return EvaluateOne(classes_[cls], first, last, devices, tp, offload, in_flight, next);
  }
  bool offload_allowed() const { return allow_offload_; }

  int64_t micro_batch() const { return micro_batch_; }
  int64_t micro_batches() const { return micro_batches_; }
  int32_t layers() const { return static_cast<int32_t>(flops_.size()) - 1; }
  // 1F1B: stage p of S (0-based) holds min(S - p, B) micro-batches; inference holds one.
  int32_t InFlight(int32_t stages_from_end) const;

 private:
  StageCost EvaluateOne(const DeviceClass& c, int32_t first, int32_t last, int32_t devices,
                        int32_t tp, uint8_t offload, int32_t in_flight, NextLink next) const;

  const model::ModelSpec& spec_;
  const std::vector<DeviceClass>& classes_;
  HostPool pool_;
  int64_t micro_batch_;
  int64_t micro_batches_;
  bool allow_offload_;
  bool training_;
  double weight_bytes_, grad_bytes_, optimizer_bytes_;  // per parameter
  // Prefix sums over layers (index i = layers [0, i)).
  std::vector<double> flops_;         // forward FLOPs per sample
  std::vector<double> params_;        // parameter count (tied copies included: held on device)
  std::vector<double> embed_params_;  // parameters of embedding layers
  std::vector<double>
      weight_traffic_;             // bytes read per sample pass from memory (non-embedding weights)
  std::vector<double> act_;        // activation bytes per sample
  std::vector<double> tp_bytes_;   // sum of tp_allreduces * output_bytes per sample
  std::vector<double> tp_count_;   // sum of tp_allreduces
  std::vector<double> embed_out_;  // output bytes per sample of embedding layers
};

// Step time of a pipeline whose stages have per-micro-batch latencies `latency` and per-step
// tails `tail` with B micro-batches (Alpa's objective plus the slowest tail):
// sum(latency) + (B - 1) * max(latency) + max(tail).
double PipelineStepSeconds(const std::vector<double>& latency, const std::vector<double>& tail,
                           int64_t micro_batches);

// Largest micro-batch the planner tries on its own (sequences); a user may ask for more.
inline constexpr int64_t kMaxMicroBatch = 64;
// Micro-batch sizes to try: `fixed` if non-zero, else the powers of two up to kMaxMicroBatch
// dividing the batch.
std::vector<int64_t> MicroBatchCandidates(int64_t global_batch, int64_t fixed);

}  // namespace hetsched::plan
