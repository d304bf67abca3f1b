#include "plan/model_partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include "model/topology.h"
#include "util/units.h"

namespace hetsched::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Up to this many device classes, a class may serve several non-adjacent blocks of stages.
constexpr int32_t kMaxRepeatClasses = 2;
// In a class of more groups than this, a stage smaller than a group takes a whole group (no
// two stages share one), so devices used per class are counted in whole groups: this keeps the
// per-state lists of partial plans short on large clusters. Small classes pack exactly.
constexpr size_t kMaxPackedGroups = 4;

// One partial solution: the suffix [i, L) of the model covered by s stages, the classes after
// the current one finished, used[slot] devices of the current class taken (one slot per class
// when a class may come back in a later block, else slot 0 for the current block's class).
constexpr int kSlots = 4;
struct Entry {
  std::array<int32_t, kSlots> used{};
  int32_t last_cls = -1;   // class of the suffix's first stage where packing needs it, else -1
  double value = 0;        // what the DP minimizes: sum over stages of latency + tail
  double sum_latency = 0;  // for the exact objective of the finished plan
  double max_latency = 0;
  double max_tail = 0;
  uint64_t host_bytes = 0;
  int32_t parent = -1;
  // The stage this entry added (devices == 0: a class switch, no stage).
  int32_t first = 0, last = 0, devices = 0, offset = 0, cls = -1, in_flight = 0;
  NextLink next = NextLink::kNone;
};

struct Candidate {
  double step_s = kInf;
  int64_t micro_batch = 0;
  double max_latency = kInf;  // the bound the DP ran with
  double bottleneck = kInf;   // the plan's slowest stage
  std::vector<Entry> stages;  // pipeline order
};

class Search {
 public:
  Search(const model::ModelSpec& spec, const std::vector<DeviceClass>& classes,
         const HostPool& pool, const ModelPartitionOptions& options)
      : spec_(spec), classes_(classes), pool_(pool), options_(options) {
    layers_ = static_cast<int32_t>(spec.layers.size());
    max_stages_ = std::max(1, std::min(options.max_stages, layers_));
    for (const DeviceClass& c : classes) sizes_.push_back(c.StageSizes());
    repeat_ = static_cast<int32_t>(classes.size()) <= kMaxRepeatClasses;
  }

  // Runs the whole search; best() holds the result (step_s infinite when nothing fits).
  void Run() {
    for (int64_t mb : MicroBatchCandidates(spec_.setup.global_batch, spec_.setup.micro_batch)) {
      StageCostModel cost(spec_, classes_, pool_, mb, options_.allow_offload);
      cost_ = &cost;
      for (const std::vector<int32_t>& order : Orderings()) SearchOrder(order, mb);
      cost_ = nullptr;
    }
  }

  const Candidate& best() const { return best_; }
  int64_t runs() const { return runs_; }

 private:
  std::vector<std::vector<int32_t>> Orderings() const {
    const int32_t k = static_cast<int32_t>(classes_.size());
    std::vector<int32_t> base(k);
    std::iota(base.begin(), base.end(), 0);
    std::vector<std::vector<int32_t>> out;
    if (k <= kMaxRepeatClasses) {
      // Few classes: block sequences of length 2k with no class twice in a row (blocks may be
      // empty), so a class can serve non-adjacent parts of the pipeline.
      const int32_t length = k == 1 ? 1 : 2 * k;
      std::vector<int32_t> seq(length, 0);
      std::function<void(int32_t)> gen = [&](int32_t pos) {
        if (pos == length) {
          out.push_back(seq);
          return;
        }
        for (int32_t c = 0; c < k; ++c) {
          if (pos > 0 && seq[pos - 1] == c) continue;
          seq[pos] = c;
          gen(pos + 1);
        }
      };
      gen(0);
      return out;
    }
    if (k <= options_.max_classes_all_orders) {
      do out.push_back(base);
      while (std::next_permutation(base.begin(), base.end()));
      return out;
    }
    // Too many classes for every permutation: orders by memory per device (early stages hold
    // the most activations under 1F1B), by class throughput, both reversed, and every order one
    // adjacent swap away from the memory order.
    std::set<std::vector<int32_t>> seen;
    auto add = [&](std::vector<int32_t> o) {
      if (seen.insert(o).second) out.push_back(std::move(o));
    };
    auto by = [&](auto key) {
      std::vector<int32_t> o = base;
      std::stable_sort(o.begin(), o.end(), [&](int32_t a, int32_t b) { return key(a) > key(b); });
      return o;
    };
    const auto mem = by([&](int32_t c) { return static_cast<double>(classes_[c].memory_bytes); });
    const auto speed = by([&](int32_t c) {
      return classes_[c].peak_flops * classes_[c].efficiency * classes_[c].devices();
    });
    for (const auto& o : {mem, speed}) {
      add(o);
      add(std::vector<int32_t>(o.rbegin(), o.rend()));
    }
    for (int32_t i = 0; i + 1 < k; ++i) {
      std::vector<int32_t> o = mem;
      std::swap(o[i], o[i + 1]);
      add(o);
    }
    return out;
  }

  // Lower bound on the bottleneck latency: one micro-batch's work spread over every device.
  double LatencyLowerBound(int64_t mb) const {
    double flops = 0;
    for (const model::LayerSpec& l : spec_.layers) flops += l.fwd_flops;
    flops *= (spec_.training() ? 3.0 : 1.0) * static_cast<double>(mb);
    double rate = 0;
    for (const DeviceClass& c : classes_) rate += c.devices() * c.peak_flops * c.efficiency;
    return std::max(flops / rate, 1e-9);
  }

  void SearchOrder(const std::vector<int32_t>& order, int64_t mb) {
    // Every plan takes at least B x its slowest stage (sum >= max), so a plan better than the
    // best so far has its bottleneck below best / B.
    const double b = static_cast<double>(cost_->micro_batches());
    double hi = std::isfinite(best_.step_s) ? best_.step_s / b : kInf;
    Candidate top = RunDp(order, mb, hi, /*prune=*/false);
    if (!std::isfinite(top.step_s)) return;
    Offer(top);
    hi = top.bottleneck;
    // Smallest feasible bottleneck on the grid lo * r^k (feasibility grows with the bound).
    const double lo = LatencyLowerBound(mb);
    const double r = options_.latency_grid;
    int64_t kl = 0;
    int64_t kh = static_cast<int64_t>(std::ceil(std::log(std::max(hi / lo, 1.0)) / std::log(r)));
    while (kl < kh) {
      const int64_t mid = (kl + kh) / 2;
      Candidate c = RunDp(order, mb, lo * std::pow(r, static_cast<double>(mid)), false);
      if (std::isfinite(c.step_s)) {
        Offer(c);
        kh = mid;
      } else {
        kl = mid + 1;
      }
    }
    // Larger bounds trade a slower bottleneck for a smaller sum. A new plan at bound r^k has
    // its bottleneck above r^(k-1), so it takes more than B r^(k-1): stop when that is no
    // better than the best plan (Alpa's early stop).
    for (int64_t k = kl + 1, step = 0; step < 512; ++k, ++step) {
      const double bound = lo * std::pow(r, static_cast<double>(k));
      if (b * bound / r >= best_.step_s) break;
      Candidate c = RunDp(order, mb, bound, /*prune=*/true);
      if (std::isfinite(c.step_s)) Offer(c);
    }
  }

  void Offer(const Candidate& c) {
    if (c.step_s < best_.step_s * (1 - 1e-12)) best_ = c;
  }

  int32_t StateIndex(int32_t i, int32_t s, int32_t k, int32_t kcount) const {
    return (i * (max_stages_ + 1) + s) * kcount + k;
  }

  static bool Covers(const Entry& a, const Entry& b) {  // a at least as good as b
    if (a.last_cls != b.last_cls || a.value > b.value) return false;
    for (int i = 0; i < kSlots; ++i) {
      if (a.used[i] > b.used[i]) return false;
    }
    return true;
  }

  // Pareto insert on (devices used, value): keeps entries no other entry beats on all.
  void Insert(std::vector<int32_t>& list, const Entry& e) {
    for (int32_t idx : list) {
      if (Covers(pool_entries_[idx], e)) return;
    }
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](int32_t idx) { return Covers(e, pool_entries_[idx]); }),
               list.end());
    list.push_back(static_cast<int32_t>(pool_entries_.size()));
    pool_entries_.push_back(e);
  }

  // Min sum of stage costs with every stage latency <= bound, classes in `order` (pipeline
  // order, each used by a contiguous block of stages, possibly empty). Returns the plan with
  // its exact step time, or an infinite step time when nothing fits.
  // With `prune`, partial plans that cannot beat the best plan so far are dropped: faster, but
  // then "nothing found" no longer means "infeasible" (Pareto dominance can drop the entry that
  // would have won), so the binary search runs without it.
  Candidate RunDp(const std::vector<int32_t>& order, int64_t mb, double bound, bool prune) {
    ++runs_;
    const int32_t kcount = static_cast<int32_t>(order.size());
    const int64_t b = cost_->micro_batches();
    const double bmul = static_cast<double>(b - 1);
    // Keep the lists' capacity from run to run: a search makes thousands of runs.
    states_.resize(static_cast<size_t>(layers_ + 1) * (max_stages_ + 1) * kcount);
    for (std::vector<int32_t>& list : states_) list.clear();
    pool_entries_.clear();
    Entry root;
    Insert(states_[StateIndex(layers_, 0, kcount - 1, kcount)], root);
    Candidate out;
    out.micro_batch = mb;
    out.max_latency = bound;
    int32_t best_end = -1;
    double best_step = prune && std::isfinite(best_.step_s) ? best_.step_s : kInf;
    const double prune_at = best_step;

    using Config = StageCostModel::Config;
    Config cheap_cfg[StageCostModel::kMaxConfigs], net_cfg[StageCostModel::kMaxConfigs];
    for (int32_t i = layers_; i >= 0; --i) {
      for (int32_t k = kcount - 1; k >= 0; --k) {
        const int32_t cls = order[k];
        const DeviceClass& c = classes_[cls];
        const int32_t g = c.group_size;
        const bool packs = c.groups.size() <= kMaxPackedGroups;
        int32_t s_min = -1;  // fewest stages among this state's non-empty lists
        for (int32_t s = 0; s <= max_stages_; ++s) {
          const std::vector<int32_t>& list = states_[StateIndex(i, s, k, kcount)];
          if (list.empty()) continue;
          if (s_min < 0) s_min = s;
          if (i == 0) {
            for (int32_t idx : list) {
              const Entry& e = pool_entries_[idx];
              const double step = e.sum_latency + bmul * e.max_latency + e.max_tail;
              if (step < best_step) {
                best_step = step;
                best_end = idx;
              }
            }
          } else if (k > 0) {  // close this class's block; the next one starts empty
            // Insert writes to another state's list, so this one can be read in place.
            for (int32_t idx : list) {
              Entry e = pool_entries_[idx];
              e.parent = idx;
              if (!repeat_) {
                // The next block is another class and starts with no device used, so nothing
                // packs after this stage: forgetting its class lets equal entries merge.
                e.used[0] = 0;
                e.last_cls = -1;
              }
              e.devices = 0;
              Insert(states_[StateIndex(i, s, k - 1, kcount)], e);
            }
          }
        }
        if (i == 0 || s_min < 0 || s_min >= max_stages_) continue;
        for (int32_t d : sizes_[cls]) {
          if (d > c.devices()) break;
          // Only a stage smaller than a group can share one with the next stage.
          const NextLink cheap = i == layers_ ? NextLink::kNone
                                 : d < g      ? NextLink::kSameGroup
                                              : NextLink::kNetwork;
          for (int32_t j = i - 1; j >= 0; --j) {
            // The configurations do not depend on the stage count; compute them once for all s.
            const int n_cheap = cost_->Configs(cls, j, i, d, cheap, cheap_cfg);
            // Cheapest link and fewest micro-batches in flight: if even that does not fit,
            // more layers will not either.
            if (cost_->Pick(cls, cheap_cfg, n_cheap, cost_->InFlight(s_min + 1), bound) < 0) break;
            int n_net = -1;
            for (int32_t s = s_min; s < max_stages_; ++s) {
              const int32_t sidx = StateIndex(i, s, k, kcount);
              if (states_[sidx].empty()) continue;
              const int32_t in_flight = cost_->InFlight(s + 1);
              const int pick_cheap = cost_->Pick(cls, cheap_cfg, n_cheap, in_flight, bound);
              if (pick_cheap < 0) continue;
              int pick_net = -2;  // not computed yet
              // Insert only writes to states of fewer layers (j < i): read this list in place.
              for (int32_t idx : states_[sidx]) {
                const Entry e = pool_entries_[idx];  // Insert may reallocate the pool
                // Pack: a sub-group stage fills the current group when it fits there.
                int32_t offset;
                bool same_group = false;
                const int slot = repeat_ ? cls : 0;
                const int32_t used = e.used[slot];
                const int32_t rem = used % g;
                if (d < g && rem != 0 && d <= g - rem && packs) {
                  offset = used;
                  // Next to the stage it packs after only if that stage is the next one.
                  same_group = e.last_cls == cls;
                } else {
                  offset = (used + g - 1) / g * g;
                }
                if (offset + d > c.devices()) continue;
                NextLink link = NextLink::kNone;
                if (i < layers_) link = same_group ? NextLink::kSameGroup : NextLink::kNetwork;
                const Config* cfg = &cheap_cfg[pick_cheap];
                if (link != cheap) {
                  if (n_net < 0) n_net = cost_->Configs(cls, j, i, d, link, net_cfg);
                  if (pick_net == -2) pick_net = cost_->Pick(cls, net_cfg, n_net, in_flight, bound);
                  if (pick_net < 0) continue;
                  cfg = &net_cfg[pick_net];
                }
                Entry n;
                n.used = e.used;
                n.used[slot] = packs ? offset + d : (offset + d + g - 1) / g * g;
                // Only packing reads last_cls; without it, entries that differ only there merge.
                n.last_cls = packs ? cls : -1;
                n.value = e.value + cfg->latency_s + cfg->tail_s;
                n.sum_latency = e.sum_latency + cfg->latency_s;
                n.max_latency = std::max(e.max_latency, cfg->latency_s);
                n.max_tail = std::max(e.max_tail, cfg->tail_s);
                n.host_bytes = e.host_bytes + cfg->host_bytes;
                if (n.host_bytes > pool_.bytes) continue;
                if (n.sum_latency + bmul * n.max_latency + n.max_tail >= prune_at) continue;
                n.parent = idx;
                n.first = j, n.last = i, n.devices = d, n.offset = offset, n.cls = cls;
                n.in_flight = in_flight;
                n.next = link;
                Insert(states_[StateIndex(j, s + 1, k, kcount)], n);
              }
            }
          }
        }
      }
    }
    if (best_end < 0) return out;
    out.step_s = best_step;
    for (int32_t idx = best_end; idx >= 0; idx = pool_entries_[idx].parent) {
      if (pool_entries_[idx].devices > 0) out.stages.push_back(pool_entries_[idx]);
    }
    // Walking parents from layer 0 yields stages in pipeline order already.
    out.bottleneck = pool_entries_[best_end].max_latency;
    return out;
  }

  const model::ModelSpec& spec_;
  const std::vector<DeviceClass>& classes_;
  const HostPool& pool_;
  const ModelPartitionOptions& options_;
  int32_t layers_ = 0;
  int32_t max_stages_ = 1;
  bool repeat_ = false;  // classes may come back in later blocks (one used-slot per class)
  std::vector<std::vector<int32_t>> sizes_;
  const StageCostModel* cost_ = nullptr;
  std::vector<std::vector<int32_t>> states_;
  std::vector<Entry> pool_entries_;
  Candidate best_;
  int64_t runs_ = 0;
};

std::string Bytes(double b) { return util::FormatBytes(static_cast<uint64_t>(std::max(0.0, b))); }

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
  const double directions = plan.training ? 2.0 : 1.0;
  const double steps = static_cast<double>(plan.micro_batches);
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
    const std::string name = fmt::format("stage {}", p);
    if (p + 1 < plan.stages.size()) {
      LinkTraffic l{name,       fmt::format("stage {}", p + 1),
                    "pipeline", st.next_link == NextLink::kSameGroup ? "island" : "network",
                    0,          steps * c.p2p_s};
      l.bytes_per_step = static_cast<uint64_t>(directions * steps * plan.micro_batch *
                                               spec.layers[st.last_layer - 1].output_bytes);
      plan.links.push_back(l);
    }
    if (c.tp > 1) {
      double tp_bytes = 0;
      for (int32_t i = st.first_layer; i < st.last_layer; ++i) {
        tp_bytes += spec.layers[i].tp_allreduces * static_cast<double>(spec.layers[i].output_bytes);
      }
      const double per_pass = plan.training ? 1.0 : 0.5;
      LinkTraffic l{name, name, "tensor-parallel", "island", 0, steps * c.tp_comm_s};
      // Bytes each device sends per step in its ring all-reduces.
      l.bytes_per_step = static_cast<uint64_t>(steps * per_pass * 2.0 * (c.tp - 1) / c.tp *
                                               c.samples_per_replica * tp_bytes);
      plan.links.push_back(l);
    }
    if (c.allreduce_s > 0) {
      const bool island = static_cast<int32_t>(st.devices.size()) <= dc.group_size;
      const double grads = static_cast<double>(c.memory.gradients) * c.tp;  // one replica
      const int32_t n = island ? c.dp : dc.NodesFor(static_cast<int32_t>(st.devices.size()));
      LinkTraffic l{name, name, "data-parallel", island ? "island" : "network", 0, c.allreduce_s};
      // Per device (island) or per node NIC (network) in the ring.
      l.bytes_per_step = static_cast<uint64_t>(2.0 * (n - 1) / n * (island ? grads / c.tp : grads));
      plan.links.push_back(l);
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
      plan.links.push_back(l);
    }
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

util::Result<ModelPlan> PlanModelPartition(const model::ModelSpec& spec,
                                           const model::Cluster& cluster,
                                           const ModelPartitionOptions& options) {
  RETURN_IF_ERROR(spec.Validate());
  if (options.max_stages < 1) {
    return util::Status::InvalidArgument("max stages must be at least 1");
  }
  if (!(options.latency_grid > 1.0) ||
      !(options.memory_reserve >= 0 && options.memory_reserve < 1)) {
    return util::Status::InvalidArgument(
        "latency grid must exceed 1 and the memory reserve must be in [0, 1)");
  }
  model::Topology topology(cluster);
  ClassOptions copt{options.only_type, options.memory_reserve};
  ASSIGN_OR_RETURN(std::vector<DeviceClass> classes,
                   BuildDeviceClasses(cluster, topology, spec.setup.precision, copt));
  const HostPool pool = BuildHostPool(cluster, options.memory_reserve);
  Search search(spec, classes, pool, options);
  search.Run();
  const Candidate& best = search.best();
  if (!std::isfinite(best.step_s)) return ExplainInfeasible(spec, cluster, classes, pool, options);

  ModelPlan plan;
  plan.micro_batch = best.micro_batch;
  plan.dp_runs = search.runs();
  StageCostModel cost(spec, classes, pool, best.micro_batch, options.allow_offload);
  for (const Entry& e : best.stages) {
    StagePlan st;
    st.first_layer = e.first;
    st.last_layer = e.last;
    st.device_class = e.cls;
    const DeviceClass& c = classes[e.cls];
    st.device_type = c.type_name;
    st.in_flight = e.in_flight;
    st.next_link = e.next;
    st.cost =
        cost.Evaluate(e.cls, e.first, e.last, e.devices, e.in_flight, e.next, best.max_latency);
    // The DP packs devices from the last stage backwards; mirroring the positions (whole groups
    // map to whole groups) hands the first groups of a class to the earliest stages.
    for (int32_t k = e.offset + e.devices - 1; k >= e.offset; --k) {
      const int32_t d = c.devices() - 1 - k;
      const model::DeviceId id = c.groups[d / c.group_size][d % c.group_size];
      AddStageDevice(cluster, id, st);
    }
    plan.stages.push_back(std::move(st));
  }
  FinishPlan(spec, classes, plan);
  return plan;
}

}  // namespace hetsched::plan
