#include "plan/model_partition_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "cost/roofline.h"
#include "cost/transfer.h"

namespace hetsched::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The type --only-type names, nullopt when it is empty; NotFound (listing the cluster's types)
// for a name the catalog does not know.
util::Result<std::optional<model::DeviceTypeId>> OnlyType(const model::Cluster& cluster,
                                                          const std::string& only_type) {
  if (only_type.empty()) return std::optional<model::DeviceTypeId>();
  std::optional<model::DeviceTypeId> only = cluster.catalog.FindId(only_type);
  if (!only) {
    std::string present;
    for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
      present += (present.empty() ? "" : ", ") + cluster.catalog.Get(id).name;
    }
    return util::Status::NotFound(
        fmt::format("unknown device type '{}' (the cluster has: {})", only_type, present));
  }
  return only;
}

// The slowest link between the first device of a group and the others: its bandwidth (0 for a
// group of one) and its latency.
std::pair<double, double> GroupLinks(const model::Topology& topology,
                                     const std::vector<model::DeviceId>& devs) {
  double bw = kInf, lat = 0;
  for (size_t k = 1; k < devs.size(); ++k) {
    const model::Path p = topology.Between(devs[0], devs[k]);
    bw = std::min(bw, p.bandwidth);
    lat = std::max(lat, p.latency_s);
  }
  if (devs.size() == 1) bw = 0;
  return {bw, lat};
}

// A class (without its groups) of `group_size` devices of `type` in `node`, linked inside the
// group at `intra` (bandwidth, latency).
DeviceClass NewClass(const model::DeviceType& t, model::DeviceTypeId type, const model::Node& node,
                     int32_t group_size, int32_t groups_per_node, std::pair<double, double> intra,
                     model::Precision precision, double memory_reserve) {
  DeviceClass c;
  c.type = type;
  c.type_name = t.name;
  c.group_size = group_size;
  c.groups_per_node = groups_per_node;
  c.intra_bandwidth = intra.first;
  c.intra_latency_s = intra.second;
  c.nic_bandwidth = node.nic_bandwidth;
  c.nic_latency_s = node.nic_latency_s;
  c.flops_per_s = cost::EffectiveFlops(precision, t);
  c.memory_bandwidth = t.memory_bandwidth;
  c.raw_memory_bytes = t.memory_bytes;
  c.memory_bytes =
      static_cast<uint64_t>(static_cast<double>(t.memory_bytes) * (1.0 - memory_reserve));
  return c;
}

// A stage's output activations (and, training, their gradients back) to the next stage: inside
// the group, or over the NICs of the nodes the stage spans.
double NextStageSeconds(const DeviceClass& c, double bytes, int32_t devices, NextLink next,
                        double directions) {
  const double t =
      next == NextLink::kSameGroup
          ? cost::TransferSeconds(bytes, c.intra_bandwidth, c.intra_latency_s)
          : cost::TransferSeconds(bytes, c.NodesFor(devices) * c.nic_bandwidth, c.nic_latency_s);
  return directions * t;
}

// The data-parallel all-reduce of one replica's `grad_bytes` among the `dp` replicas of a stage
// of `devices` devices: a ring inside the group, or hierarchical when the stage spans groups.
double GradientAllReduceSeconds(const DeviceClass& c, double grad_bytes, int32_t devices,
                                int32_t tp, int32_t dp) {
  if (devices <= c.group_size) {
    return cost::RingAllReduceSeconds(grad_bytes / tp, dp, c.intra_bandwidth, c.intra_latency_s);
  }
  // Hierarchical: reduce inside each group, then a ring among the nodes on their NICs.
  const int32_t in_group = c.group_size / tp;
  const int32_t nodes = c.NodesFor(devices);
  return cost::RingAllReduceSeconds(grad_bytes / tp, in_group, c.intra_bandwidth,
                                    c.intra_latency_s) +
         cost::RingAllReduceSeconds(grad_bytes, nodes, c.nic_bandwidth, c.nic_latency_s);
}

}  // namespace

std::vector<int32_t> DeviceClass::StageSizes() const {
  std::vector<int32_t> out;
  for (int32_t d = 1; d < group_size; d *= 2) {
    if (group_size % d == 0) out.push_back(d);
  }
  // Whole groups: 1, 2, 3, 4, 6, 8, 12, 16, 24, ... (powers of two and 1.5x them), then all.
  const int32_t n = static_cast<int32_t>(groups.size());
  for (int32_t p = 1; p <= n; p *= 2) {
    out.push_back(p * group_size);
    if (p >= 2 && p + p / 2 <= n) out.push_back((p + p / 2) * group_size);
  }
  if (n > 0 && out.back() != n * group_size) out.push_back(n * group_size);
  return out;
}

int32_t DeviceClass::NodesFor(int32_t devices) const {
  const int32_t groups_used = (devices + group_size - 1) / group_size;
  return (groups_used + groups_per_node - 1) / groups_per_node;
}

util::Result<std::vector<DeviceClass>> BuildDeviceClasses(const model::Cluster& cluster,
                                                          const model::Topology& topology,
                                                          model::Precision precision,
                                                          const ClassOptions& options) {
  ASSIGN_OR_RETURN(const std::optional<model::DeviceTypeId> only,
                   OnlyType(cluster, options.only_type));
  bool any_accelerator = false;
  // Key: type, group size, groups in the node, and the links; value: class index.
  using Key = std::tuple<int32_t, int32_t, int32_t, double, double, double, double>;
  std::map<Key, size_t> index;
  std::vector<DeviceClass> classes;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const model::Node& node = cluster.nodes[n];
    // Groups of this node: (type, island or -1) -> devices.
    std::map<std::pair<int32_t, int32_t>, std::vector<model::DeviceId>> groups;
    for (int32_t i = 0; i < node.device_count; ++i) {
      const model::DeviceId id = cluster.device_of(model::NodeId(static_cast<int32_t>(n)), i);
      const model::Device& d = cluster.device(id);
      if (cluster.catalog.Get(d.type).kind == model::DeviceKind::kCpu) continue;
      any_accelerator = true;
      if (only && d.type != *only) continue;
      groups[{d.type.value(), d.island}].push_back(id);
    }
    std::map<int32_t, int32_t> per_type;
    for (const auto& [key, devs] : groups) ++per_type[key.first];
    for (const auto& [key, devs] : groups) {
      const auto [bw, lat] = GroupLinks(topology, devs);
      const Key k{key.first,
                  static_cast<int32_t>(devs.size()),
                  per_type[key.first],
                  bw,
                  lat,
                  node.nic_bandwidth,
                  node.nic_latency_s};
      auto it = index.find(k);
      if (it == index.end()) {
        const model::DeviceTypeId type(key.first);
        it = index.emplace(k, classes.size()).first;
        classes.push_back(NewClass(cluster.catalog.Get(type), type, node,
                                   static_cast<int32_t>(devs.size()), per_type[key.first],
                                   {bw, lat}, precision, options.memory_reserve));
      }
      classes[it->second].groups.push_back(devs);
    }
  }
  if (!any_accelerator) {
    return util::Status::InvalidArgument(fmt::format(
        "cluster '{}' has no accelerator (GPU, NPU or ASIC); model partitioning places layers on "
        "accelerators and uses CPU servers only for host memory",
        cluster.name));
  }
  if (classes.empty()) {
    return util::Status::InvalidArgument(fmt::format("cluster '{}' has no accelerator of type '{}'",
                                                     cluster.name, options.only_type));
  }
  return classes;
}

HostPool BuildHostPool(const model::Cluster& cluster, double memory_reserve) {
  HostPool pool;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const model::Node& node = cluster.nodes[n];
    bool accelerator = false;
    double membw = 0;
    for (int32_t i = 0; i < node.device_count; ++i) {
      const model::DeviceType& t =
          cluster.type_of(cluster.device_of(model::NodeId(static_cast<int32_t>(n)), i));
      if (t.kind != model::DeviceKind::kCpu)
        accelerator = true;
      else
        membw += t.memory_bandwidth;
    }
    if (accelerator || node.host_memory_bytes == 0) continue;
    pool.bytes +=
        static_cast<uint64_t>(static_cast<double>(node.host_memory_bytes) * (1.0 - memory_reserve));
    pool.nic_bandwidth += node.nic_bandwidth;
    pool.nic_latency_s = std::max(pool.nic_latency_s, node.nic_latency_s);
    pool.memory_bandwidth += membw;
    ++pool.nodes;
  }
  return pool;
}

StageCostModel::StageCostModel(const model::ModelSpec& spec,
                               const std::vector<DeviceClass>& classes, const HostPool& pool,
                               int64_t micro_batch, bool allow_offload)
    : spec_(spec),
      classes_(classes),
      pool_(pool),
      micro_batch_(micro_batch),
      micro_batches_(spec.setup.global_batch / micro_batch),
      allow_offload_(allow_offload && pool.usable()),
      training_(spec.training()),
      weight_bytes_(spec.WeightBytesPerParam()),
      grad_bytes_(spec.GradBytesPerParam()),
      optimizer_bytes_(spec.OptimizerBytesPerParam()) {
  const size_t n = spec.layers.size();
  for (auto* v : {&flops_, &params_, &embed_params_, &weight_traffic_, &act_, &tp_bytes_,
                  &tp_count_, &embed_out_}) {
    v->assign(n + 1, 0.0);
  }
  const double wb = spec.WeightBytesPerParam();
  for (size_t i = 0; i < n; ++i) {
    const model::LayerSpec& l = spec.layers[i];
    const bool embedding = l.kind == model::LayerKind::kEmbedding;
    flops_[i + 1] = flops_[i] + l.fwd_flops;
    params_[i + 1] = params_[i] + static_cast<double>(l.parameters);
    embed_params_[i + 1] = embed_params_[i] + (embedding ? static_cast<double>(l.parameters) : 0);
    // A lookup touches the rows it reads, not the table; other layers stream their weights.
    weight_traffic_[i + 1] = weight_traffic_[i] + (embedding ? 0 : wb * l.parameters);
    act_[i + 1] = act_[i] + static_cast<double>(l.activation_bytes);
    tp_bytes_[i + 1] = tp_bytes_[i] + l.tp_allreduces * static_cast<double>(l.output_bytes);
    tp_count_[i + 1] = tp_count_[i] + l.tp_allreduces;
    embed_out_[i + 1] = embed_out_[i] + (embedding ? static_cast<double>(l.output_bytes) : 0);
  }
}

int32_t StageCostModel::InFlight(int32_t stages_from_end) const {
  if (!training_) return 1;
  return static_cast<int32_t>(std::min<int64_t>(stages_from_end, micro_batches_));
}

StageCost StageCostModel::EvaluateOne(const DeviceClass& c, int32_t first, int32_t last,
                                      int32_t devices, int32_t tp, uint8_t offload,
                                      int32_t in_flight, NextLink next) const {
  StageCost out;
  out.tp = tp;
  out.dp = devices / tp;
  out.offload = offload;
  if (out.dp > micro_batch_) return out;  // idle replicas: never better than a smaller stage
  const int64_t b = (micro_batch_ + out.dp - 1) / out.dp;
  out.samples_per_replica = static_cast<int32_t>(b);
  const double passes = training_ ? 3.0 : 1.0;  // backward = 2x forward
  const double params = params_[last] - params_[first];
  const double embed_params = embed_params_[last] - embed_params_[first];
  const bool offload_embed = (offload & kOffloadEmbedding) != 0;
  const bool offload_opt = (offload & kOffloadOptimizer) != 0;

  // Memory per device.
  const double on_device = params - (offload_embed ? embed_params : 0);
  out.memory.weights = static_cast<uint64_t>(on_device * weight_bytes_ / tp);
  out.memory.gradients = static_cast<uint64_t>(on_device * grad_bytes_ / tp);
  out.memory.optimizer = offload_opt ? 0 : static_cast<uint64_t>(on_device * optimizer_bytes_ / tp);
  out.memory.activations =
      static_cast<uint64_t>(in_flight) *
      static_cast<uint64_t>(static_cast<double>(b) * (act_[last] - act_[first]) / tp);
  if (out.memory.total() > c.memory_bytes) return out;

  // Time per micro-batch: roofline of compute and weight streaming, per replica.
  const double flops = passes * static_cast<double>(b) * (flops_[last] - flops_[first]) / tp;
  const double traffic = passes * (weight_traffic_[last] - weight_traffic_[first]) / tp;
  out.compute_s = cost::RooflineSeconds(flops, traffic, c.flops_per_s, c.memory_bandwidth);
  if (tp > 1) {
    const double per_pass = training_ ? 1.0 : 0.5;  // tp_allreduces counts forward + backward
    // One ring all-reduce per tp_allreduces of each layer, of its output for the replica's
    // samples.
    out.tp_comm_s =
        per_pass * cost::RingAllReduceSeconds(
                       static_cast<double>(b) * (tp_bytes_[last] - tp_bytes_[first]), tp,
                       c.intra_bandwidth, c.intra_latency_s, tp_count_[last] - tp_count_[first]);
  }
  const double directions = training_ ? 2.0 : 1.0;  // activations forward, gradients back
  if (next != NextLink::kNone && last > 0) {
    const double bytes = static_cast<double>(micro_batch_) * spec_.layers[last - 1].output_bytes;
    out.p2p_s = NextStageSeconds(c, bytes, devices, next, directions);
  }
  const double node_bw = c.NodesFor(devices) * c.nic_bandwidth;
  if (offload_embed && embed_params > 0) {
    // The lookup happens on the CPU servers; activations come in, their gradients go back.
    const double bytes = static_cast<double>(micro_batch_) * (embed_out_[last] - embed_out_[first]);
    out.offload_s +=
        directions *
        cost::TransferSeconds(bytes, std::min(node_bw, pool_.nic_bandwidth), pool_.nic_latency_s);
    out.host_bytes +=
        static_cast<uint64_t>(embed_params * (weight_bytes_ + grad_bytes_ + optimizer_bytes_));
  }
  out.latency_s = out.compute_s + out.tp_comm_s + out.p2p_s + out.offload_s;

  if (training_ && out.dp > 1) {
    const double grad_bytes = on_device * grad_bytes_;  // one replica's gradients
    out.allreduce_s = GradientAllReduceSeconds(c, grad_bytes, devices, tp, out.dp);
  }
  double tail_offload = 0;
  if (offload_opt && training_ && on_device > 0) {
    // ZeRO-Offload style: gradients go to the CPU servers, updated weights come back, and the
    // CPUs stream the optimizer state (read and write) once per step.
    const double bytes = on_device * (grad_bytes_ + weight_bytes_);
    tail_offload =
        cost::TransferSeconds(bytes, std::min(node_bw, pool_.nic_bandwidth), pool_.nic_latency_s) +
        cost::MemorySeconds(2.0 * on_device * optimizer_bytes_, pool_.memory_bandwidth);
    out.host_bytes += static_cast<uint64_t>(on_device * optimizer_bytes_);
  }
  out.offload_s += tail_offload;
  out.tail_s = out.allreduce_s + tail_offload;
  out.feasible = std::isfinite(out.latency_s) && std::isfinite(out.tail_s);
  return out;
}

int StageCostModel::Configs(int32_t cls, int32_t first, int32_t last, int32_t devices,
                            NextLink next, Config* out) const {
  const DeviceClass& c = classes_[cls];
  const bool has_embedding = embed_params_[last] > embed_params_[first];
  const int32_t tp_max = std::min(devices, c.group_size);
  int n = 0;
  for (uint8_t offload = 0; offload < 4; ++offload) {
    if (offload != kOffloadNone && !allow_offload_) break;
    if ((offload & kOffloadEmbedding) && !has_embedding) continue;
    if ((offload & kOffloadOptimizer) && !training_) continue;
    for (int32_t tp = 1; tp <= tp_max && n < kMaxConfigs; tp *= 2) {
      if (devices % tp != 0 || c.group_size % tp != 0) continue;
      const StageCost s = EvaluateOne(c, first, last, devices, tp, offload, 0, next);
      if (!s.feasible) continue;
      Config& k = out[n++];
      k.latency_s = s.latency_s;
      k.tail_s = s.tail_s;
      k.static_bytes = s.memory.total();
      k.activation_bytes = static_cast<uint64_t>(static_cast<double>(s.samples_per_replica) *
                                                 (act_[last] - act_[first]) / tp);
      k.host_bytes = s.host_bytes;
      k.tp = tp;
      k.offload = offload;
    }
  }
  return n;
}

int StageCostModel::Pick(int32_t cls, const Config* configs, int n, int32_t in_flight,
                         double max_latency_s) const {
  const uint64_t cap = classes_[cls].memory_bytes;
  int best = -1;
  double best_cost = kInf;
  bool best_offloads = true;
  for (int i = 0; i < n; ++i) {
    const Config& k = configs[i];
    if (k.latency_s > max_latency_s) continue;
    if (k.static_bytes + static_cast<uint64_t>(in_flight) * k.activation_bytes > cap) continue;
    // Offloading only ever adds time: a configuration without it wins whenever one fits.
    const bool offloads = k.offload != kOffloadNone;
    const double cost = k.latency_s + k.tail_s;
    if (best < 0 || (best_offloads && !offloads) ||
        (offloads == best_offloads && cost < best_cost)) {
      best = i;
      best_cost = cost;
      best_offloads = offloads;
    }
  }
  return best;
}

StageCost StageCostModel::Evaluate(int32_t cls, int32_t first, int32_t last, int32_t devices,
                                   int32_t in_flight, NextLink next, double max_latency_s) const {
  Config configs[kMaxConfigs];
  const int n = Configs(cls, first, last, devices, next, configs);
  const int i = Pick(cls, configs, n, in_flight, max_latency_s);
  if (i < 0) return StageCost{};
  return EvaluateOne(classes_[cls], first, last, devices, configs[i].tp, configs[i].offload,
                     in_flight, next);
}

double PipelineStepSeconds(const std::vector<double>& latency, const std::vector<double>& tail,
                           int64_t micro_batches) {
  double sum = 0, max_latency = 0, max_tail = 0;
  for (double t : latency) {
    sum += t;
    max_latency = std::max(max_latency, t);
  }
  for (double t : tail) max_tail = std::max(max_tail, t);
  return sum + static_cast<double>(micro_batches - 1) * max_latency + max_tail;
}

std::vector<int64_t> MicroBatchCandidates(int64_t global_batch, int64_t fixed) {
  if (fixed > 0) return {fixed};
  std::vector<int64_t> out;
  for (int64_t m = 1; m <= std::min<int64_t>(global_batch, kMaxMicroBatch); m *= 2) {
    if (global_batch % m == 0) out.push_back(m);
  }
  return out;
}

}  // namespace hetsched::plan
