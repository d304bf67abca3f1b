// What a model plan reports, shared by the planner (model_partition.cc) and the exhaustive
// oracle (model_partition_exhaustive.cc): the devices of each stage, the derived fields of a
// finished plan (step time, bubble, link traffic) and, when nothing fits, why.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cost/transfer.h"
#include "plan/model_partition.h"
#include "util/units.h"

namespace hetsched::plan {
namespace {

std::string Bytes(double b) { return util::FormatBytes(static_cast<uint64_t>(std::max(0.0, b))); }

// The traffic of stage `p` of `plan` per step: to the next stage (pipeline), inside its
// tensor-parallel groups, in its data-parallel gradient all-reduce and to the host pool
// (offload). A link appears only where the stage uses it.
std::vector<LinkTraffic> StageLinks(const model::ModelSpec& spec, const DeviceClass& dc,
                                    const ModelPlan& plan, size_t p) {
  std::vector<LinkTraffic> links;
  const StagePlan& st = plan.stages[p];
  const StageCost& c = st.cost;
  const double directions = plan.training ? 2.0 : 1.0;
  const double steps = static_cast<double>(plan.micro_batches);
  const std::string name = fmt::format("stage {}", p);
  if (p + 1 < plan.stages.size()) {
    LinkTraffic l{name,       fmt::format("stage {}", p + 1),
                  "pipeline", st.next_link == NextLink::kSameGroup ? "island" : "network",
                  0,          steps * c.p2p_s};
    l.bytes_per_step = static_cast<uint64_t>(directions * steps * plan.micro_batch *
                                             spec.layers[st.last_layer - 1].output_bytes);
    links.push_back(l);
  }
  if (c.tp > 1) {
    double tp_bytes = 0;
    for (int32_t i = st.first_layer; i < st.last_layer; ++i) {
      tp_bytes += spec.layers[i].tp_allreduces * static_cast<double>(spec.layers[i].output_bytes);
    }
    const double per_pass = plan.training ? 1.0 : 0.5;
    LinkTraffic l{name, name, "tensor-parallel", "island", 0, steps * c.tp_comm_s};
    // Bytes each device sends per step in its ring all-reduces.
    l.bytes_per_step = static_cast<uint64_t>(
        steps * per_pass *
        cost::RingAllReduceBytesPerWorker(c.samples_per_replica * tp_bytes, c.tp));
    links.push_back(l);
  }
  if (c.allreduce_s > 0) {
    const bool island = static_cast<int32_t>(st.devices.size()) <= dc.group_size;
    const double grads = static_cast<double>(c.memory.gradients) * c.tp;  // one replica
    const int32_t n = island ? c.dp : dc.NodesFor(static_cast<int32_t>(st.devices.size()));
    LinkTraffic l{name, name, "data-parallel", island ? "island" : "network", 0, c.allreduce_s};
    // Per device (island) or per node NIC (network) in the ring.
    l.bytes_per_step =
        static_cast<uint64_t>(cost::RingAllReduceBytesPerWorker(island ? grads / c.tp : grads, n));
    links.push_back(l);
  }
  if (c.offload != kOffloadNone) {
    LinkTraffic l{name, "host pool", "offload", "network", 0, c.offload_s};
    double bytes = 0;
    if (c.offload & kOffloadOptimizer) {
      bytes += static_cast<double>(c.memory.weights + c.memory.gradients) * c.tp;
    }
    if (c.offload & kOffloadEmbedding) {
      for (int32_t i = st.first_layer; i < st.last_layer; ++i) {
        if (spec.layers[i].kind == model::LayerKind::kEmbedding) {
          bytes += directions * steps * plan.micro_batch *
                   static_cast<double>(spec.layers[i].output_bytes);
        }
      }
    }
    l.bytes_per_step = static_cast<uint64_t>(bytes);
    links.push_back(l);
  }
  return links;
}

}  // namespace

void AddStageDevice(const model::Cluster& cluster, model::DeviceId id, StagePlan& stage) {
  stage.devices.push_back(id);
  const std::string& node = cluster.node(cluster.device(id).node).name;
  if (stage.nodes.empty() || stage.nodes.back() != node) stage.nodes.push_back(node);
}

void FinishPlan(const model::ModelSpec& spec, const std::vector<DeviceClass>& classes,
                ModelPlan& plan) {
  plan.model = spec.name;
  plan.training = spec.training();
  plan.global_batch = spec.setup.global_batch;
  plan.seq_len = spec.setup.seq_len;
  plan.micro_batches = spec.setup.global_batch / plan.micro_batch;
  std::vector<double> latency, tail;
  double sum = 0, max_latency = 0;
  plan.host_bytes = 0;
  plan.devices_used = 0;
  plan.links.clear();
  for (size_t p = 0; p < plan.stages.size(); ++p) {
    StagePlan& st = plan.stages[p];
    const StageCost& c = st.cost;
    latency.push_back(c.latency_s);
    tail.push_back(c.tail_s);
    sum += c.latency_s;
    max_latency = std::max(max_latency, c.latency_s);
    plan.host_bytes += c.host_bytes;
    plan.devices_used += static_cast<int32_t>(st.devices.size());
    const DeviceClass& dc = classes[st.device_class];
    st.memory_capacity = dc.memory_bytes;
    st.first_layer_name = spec.layers[st.first_layer].name;
    st.last_layer_name = spec.layers[st.last_layer - 1].name;
    for (LinkTraffic& l : StageLinks(spec, dc, plan, p)) plan.links.push_back(std::move(l));
  }
  plan.step_s = PipelineStepSeconds(latency, tail, plan.micro_batches);
  plan.bubble_s = sum - max_latency;
  plan.tail_s = tail.empty() ? 0 : *std::max_element(tail.begin(), tail.end());
  plan.tokens_per_s =
      static_cast<double>(plan.global_batch) * static_cast<double>(plan.seq_len) / plan.step_s;
}

util::Status ExplainInfeasible(const model::ModelSpec& spec, const model::Cluster& cluster,
                               const std::vector<DeviceClass>& classes, const HostPool& pool,
                               const ModelPartitionOptions& options) {
  double params = 0, act = 0, embed = 0;
  uint64_t largest_layer = 0;
  std::string largest_name;
  for (const model::LayerSpec& l : spec.layers) {
    params += static_cast<double>(l.parameters);
    act += static_cast<double>(l.activation_bytes);
    if (l.kind == model::LayerKind::kEmbedding) embed += static_cast<double>(l.parameters);
  }
  const double w = params * spec.WeightBytesPerParam();
  const double g = params * spec.GradBytesPerParam();
  const double o = params * spec.OptimizerBytesPerParam();
  const double need = w + g + o + act;  // one sample in flight: the least any plan needs
  double have = 0;
  std::string parts;
  double best_group = 0;
  std::string best_group_name;
  for (const DeviceClass& c : classes) {
    have += static_cast<double>(c.memory_bytes) * c.devices();
    parts += fmt::format("{}{} x {}", parts.empty() ? "" : ", ", c.devices(), c.type_name);
    const double group = static_cast<double>(c.memory_bytes) * c.group_size;
    if (group > best_group) {
      best_group = group;
      best_group_name = fmt::format("{} x {}", c.group_size, c.type_name);
    }
  }
  for (const model::LayerSpec& l : spec.layers) {
    const uint64_t bytes = l.parameters * (spec.WeightBytesPerParam() + spec.GradBytesPerParam() +
                                           spec.OptimizerBytesPerParam()) +
                           l.activation_bytes;
    if (bytes > largest_layer) {
      largest_layer = bytes;
      largest_name = l.name;
    }
  }
  const bool can_offload = options.allow_offload && pool.usable() && spec.training();
  const double offloadable =
      can_offload
          ? std::min<double>(o + embed * (spec.WeightBytesPerParam() + spec.GradBytesPerParam()),
                             static_cast<double>(pool.bytes))
          : 0;
  std::string msg = fmt::format(
      "{} ({}, {}, {}, batch {}, sequence {}) does not fit on cluster '{}': it needs at least {} "
      "of accelerator memory (weights {}, gradients {}, optimizer state {}, activations of one "
      "sample {})",
      spec.name, spec.training() ? "training" : "inference",
      model::OptimizerName(spec.setup.optimizer), model::PrecisionName(spec.setup.precision),
      spec.setup.global_batch, spec.setup.seq_len, cluster.name, Bytes(need - offloadable),
      Bytes(w), Bytes(g), Bytes(o), Bytes(act));
  if (can_offload) {
    msg += fmt::format(" after moving {} of optimizer state and embeddings to CPU-server memory",
                       Bytes(offloadable));
  }
  msg += fmt::format("; the {}accelerators have {} usable ({}, {:.0f}% of each device's memory)",
                     options.only_type.empty() ? "" : "selected ", Bytes(have), parts,
                     100.0 * (1.0 - options.memory_reserve));
  if (!can_offload && spec.training()) {
    msg += pool.usable() ? "; offload is disabled"
                         : "; there is no CPU-server host memory to offload to";
  } else if (can_offload) {
    msg += fmt::format("; the CPU-server pool has {}", Bytes(static_cast<double>(pool.bytes)));
  }
  if (need - offloadable <= have) {
    msg += fmt::format(
        ". The total would fit, but no split does: layer '{}' alone needs {} before tensor "
        "parallelism and the largest device group ({}) has {}, or the pipeline would need more "
        "than {} stages",
        largest_name, Bytes(static_cast<double>(largest_layer)), best_group_name, Bytes(best_group),
        options.max_stages);
  }
  return util::Status::Infeasible(msg);
}

}  // namespace hetsched::plan
