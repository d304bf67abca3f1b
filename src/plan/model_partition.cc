#include "plan/model_partition.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

#include "model/topology.h"

namespace hetsched::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Up to this many device classes, a class may serve several non-adjacent blocks of stages.
constexpr int32_t kMaxRepeatClasses = 2;
// In a class of more groups than this, a stage smaller than a group takes a whole group (no
// two stages share one), so devices used per class are counted in whole groups: this keeps the
// per-state lists of partial plans short on large clusters. Small classes pack exactly.
constexpr size_t kMaxPackedGroups = 4;
// Stages needed for a prefix no stage can hold (one layer is too slow for the bound).
constexpr int32_t kNeverFits = 1 << 20;
// Lower bounds are scaled by this before pruning, so rounding never lifts one above the value.
constexpr double kBelow = 1 - 1e-9;
// Most bounds one ordering's scan tries (r^4096 = 5.8e17 for r = 1.01).
constexpr int64_t kMaxScanBounds = 4096;

// One partial solution: the suffix [i, L) of the model covered by s stages, the classes after
// the current one finished, used[slot] devices of the current class taken (one slot per class
// when a class may come back in a later block, else slot 0 for the current block's class).
constexpr int kSlots = 4;
struct Entry {
  std::array<int32_t, kSlots> used{};
  int32_t last_cls = -1;   // class of the suffix's first stage where packing needs it, else -1
  int32_t stages = 0;      // stages in the suffix
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
  double objective = kInf;    // the least value of the DP's objective (see DpMode)
  std::vector<Entry> stages;  // pipeline order
};

// What a DP run minimizes. kStep: the sum of stage latency + tail (the plan search; the plan
// returned is the best by exact step time among the finished candidates). The others give
// lower bounds for the search: each stage counts the least latency (or tail) of the
// configurations that fit and the host pool is unlimited (a relaxation, so their minima are at
// most those of any plan kStep can return under the same bound); kBottleneck: the slowest
// stage; kLatencySum: the sum of stage latencies; kTail: the largest per-step tail.
enum class DpMode { kStep, kBottleneck, kLatencySum, kTail };

class Search {
 public:
  Search(const model::ModelSpec& spec, const std::vector<DeviceClass>& classes,
         const HostPool& pool, const ModelPartitionOptions& options)
      : spec_(spec), classes_(classes), pool_(pool), options_(options) {
    layers_ = static_cast<int32_t>(spec.layers.size());
    max_stages_ = std::max(1, std::min(options.max_stages, layers_));
    for (const DeviceClass& c : classes) {
      size_offset_.push_back(total_sizes_);
      sizes_.push_back(c.StageSizes());
      total_sizes_ += static_cast<int32_t>(sizes_.back().size());
    }
    repeat_ = static_cast<int32_t>(classes.size()) <= kMaxRepeatClasses;
    for (const DeviceClass& c : classes) class_rate_.push_back(c.flops_per_s);
    flops_prefix_.assign(layers_ + 1, 0.0);
    for (int32_t l = 0; l < layers_; ++l) {
      flops_prefix_[l + 1] = flops_prefix_[l] + spec.layers[l].fwd_flops;
    }
  }

  // Runs the whole search; best() holds the result (step_s infinite when nothing fits).
  void Run() {
    // Largest micro-batches first: they usually give the best plans on large clusters (short
    // bubbles, room for data parallelism), so the bound below skips most smaller ones.
    std::vector<int64_t> mbs =
        MicroBatchCandidates(spec_.setup.global_batch, spec_.setup.micro_batch);
    std::sort(mbs.rbegin(), mbs.rend());
    // A probe first: for every micro-batch size, the first ordering up to its first scan bound.
    // The scan's first bound usually finds a plan close to that size's best, and the full search
    // below prunes (partial plans, scan bounds, whole orderings) against the best so far: a good
    // plan known early saves most of the work of the sizes searched before the winning one.
    probing_ = true;
    for (int64_t mb : mbs) SearchMicroBatch(mb);
    probing_ = false;
    for (int64_t mb : mbs) SearchMicroBatch(mb);
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
    const auto speed =
        by([&](int32_t c) { return classes_[c].flops_per_s * classes_[c].devices(); });
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

  // Lower bound on the slowest stage's latency with micro-batch `mb`: a stage of class c runs
  // at most min(devices, mb x group size) devices (tensor parallelism stays in a group, data
  // parallelism is at most mb), and a pipeline has at most max_stages_ stages; if every stage
  // took at most M, the work 3 x FLOPs x mb would be at most M x the summed rate of the fastest
  // such set of stages. The stages of a class are best filled whole, so taking the largest
  // per-stage rates first (greedily) gives that set.
  double BottleneckLowerBound(int64_t mb) const {
    std::vector<double> slots;
    for (const DeviceClass& c : classes_) {
      const double rate = c.flops_per_s;
      const int64_t cap = std::min<int64_t>(c.devices(), mb * c.group_size);
      if (cap <= 0) continue;
      const int64_t full = std::min<int64_t>(c.devices() / cap, max_stages_);
      for (int64_t i = 0; i < full; ++i) slots.push_back(static_cast<double>(cap) * rate);
      if (c.devices() % cap != 0) slots.push_back(static_cast<double>(c.devices() % cap) * rate);
    }
    std::sort(slots.rbegin(), slots.rend());
    if (slots.size() > static_cast<size_t>(max_stages_)) slots.resize(max_stages_);
    double rate = 0;
    for (double r : slots) rate += r;
    double flops = 0;
    for (const model::LayerSpec& l : spec_.layers) flops += l.fwd_flops;
    flops *= (spec_.training() ? 3.0 : 1.0) * static_cast<double>(mb);
    return rate > 0 ? flops / rate : kInf;
  }

  void SearchMicroBatch(int64_t mb) {
    const double b = static_cast<double>(spec_.setup.global_batch / mb);
    bottleneck_lb_ = BottleneckLowerBound(mb);
    if (b * bottleneck_lb_ >= best_.step_s) return;  // no plan can beat the best
    StageCostModel cost(spec_, classes_, pool_, mb, options_.allow_offload);
    cost_ = &cost;
    ResetConfigCache();
    const std::vector<std::vector<int32_t>> orders = Orderings();
    if (probing_) {
      SearchOrder(orders.front(), mb, /*max_bounds=*/1);
    } else {
      for (const std::vector<int32_t>& order : orders) SearchOrder(order, mb, kMaxScanBounds);
    }
    cost_ = nullptr;
  }

  // Searches one ordering of the classes, trying at most `max_bounds` bounds in the scan.
  void SearchOrder(const std::vector<int32_t>& order, int64_t mb, int64_t max_bounds) {
    // Every plan takes at least B x its slowest stage (sum >= max), so a plan better than the
    // best so far has its bottleneck below best / B.
    const double b = static_cast<double>(cost_->micro_batches());
    // The full search bounds its first run with its own best (not the probe's): the runs below
    // bound their range by that run's plan, and a tighter first run narrows the range.
    const double own = probing_ ? best_.step_s : search_best_;
    const double hi = std::isfinite(own) ? own / b : kInf;
    Candidate top = RunDp(order, mb, hi, DpMode::kStep, /*prune=*/false);
    if (!std::isfinite(top.step_s)) return;  // nothing of this order fits under hi
    Offer(top);
    // Bounds at or above the top plan's bottleneck find plans of the same value.
    const double t_max = top.bottleneck;
    // Lower bounds over the plans with a bottleneck up to t_max (each stage at its fastest, or
    // lowest-tail, configuration that fits; host memory unlimited): the least latency sum, the
    // least largest tail and the least bottleneck. Each narrows the next: a plan that beats the
    // best has its bottleneck under (best - sum_min) / (B - 1), its largest tail under
    // best - sum_min - (B - 1) BottleneckLowerBound, and then its bottleneck under
    // (best - sum_min - tail_min) / (B - 1). When one finds nothing, nothing here can beat the
    // best. Whenever the scan below runs, t_min is the least bottleneck under t_cap (the tighter
    // bound only cuts off orderings that cannot win), so the scan's bounds are those of t_cap.
    const double sum_min = RunDp(order, mb, t_max, DpMode::kLatencySum, false).objective;
    if (!std::isfinite(sum_min)) return;
    const double t_cap = std::min(t_max, (best_.step_s - sum_min) / (b - 1));
    const double tail_min = RunDp(order, mb, t_cap, DpMode::kTail, false,
                                  best_.step_s - sum_min - (b - 1) * bottleneck_lb_)
                                .objective;
    if (!std::isfinite(tail_min)) return;
    const double t_min =
        RunDp(order, mb, std::min(t_cap, (best_.step_s - sum_min - tail_min) / (b - 1)),
              DpMode::kBottleneck, false)
            .objective;
    if (!std::isfinite(t_min)) return;
    // Bounds t_min r^k, k = 0, 1, ...: larger bounds trade a slower bottleneck for a smaller
    // sum. A plan first found at bound t (k > 0) has its bottleneck above t / r, so it takes
    // more than sum_min + (B - 1) t / r + tail_min: stop when that is no better than the best
    // plan (Alpa's early stop, with the latency sum and the tail bounded as well).
    const double r = options_.latency_grid;
    for (int64_t k = 0; k < max_bounds; ++k) {
      const double bound = t_min * std::pow(r, static_cast<double>(k));
      if (bound >= t_max || (k > 0 && !(bound > 0))) break;
      const double bottleneck_lb = k == 0 ? t_min : bound / r;
      if (sum_min + (b - 1) * bottleneck_lb + tail_min >= best_.step_s) break;
      Candidate c = RunDp(order, mb, bound, DpMode::kStep, /*prune=*/true);
      if (std::isfinite(c.step_s)) Offer(c);
    }
  }

  // The fastest configuration that fits `in_flight` micro-batches within the bound (lower
  // bounds: any configuration Pick may choose under this bound is at least as slow).
  int PickFastest(int32_t cls, const StageCostModel::Config* configs, int n, int32_t in_flight,
                  double bound) const {
    const uint64_t cap = classes_[cls].memory_bytes;
    int best = -1;
    for (int i = 0; i < n; ++i) {
      const StageCostModel::Config& k = configs[i];
      if (k.latency_s > bound) continue;
      if (k.static_bytes + static_cast<uint64_t>(in_flight) * k.activation_bytes > cap) continue;
      if (best < 0 || k.latency_s < configs[best].latency_s) best = i;
    }
    return best;
  }

  // The least tail among the configurations that fit `in_flight` micro-batches within the bound.
  double MinTail(int32_t cls, const StageCostModel::Config* configs, int n, int32_t in_flight,
                 double bound) const {
    const uint64_t cap = classes_[cls].memory_bytes;
    double best = kInf;
    for (int i = 0; i < n; ++i) {
      const StageCostModel::Config& k = configs[i];
      if (k.latency_s > bound) continue;
      if (k.static_bytes + static_cast<uint64_t>(in_flight) * k.activation_bytes > cap) continue;
      best = std::min(best, k.tail_s);
    }
    return best;
  }

  // Lower bounds on the prefix [0, j) a partial plan (a suffix) still has to cover, for pruning
  // the suffix A*-style. A stage of class c with d devices computes passes x mb x its forward
  // FLOPs per sample at no more than d x rate_c (data parallelism is at most mb, tensor
  // parallelism stays in a group, so d <= min(devices, mb x group size)), hence
  //  - each stage takes at least its work W_s = passes x mb x FLOPs_s over its rate;
  //  - the prefix's stages together have at most the rate of the devices still free, R_free,
  //    so the slowest takes at least W / R_free and their sum at least W / min(R_free, R_max),
  //    R_max the fastest single stage of classes order[0..k];
  //  - under a bound t a stage holds at most t x R_max / (passes x mb) FLOPs, and the greedy
  //    split from the right gives the fewest stages for that cap (need_).
  // PrepareBounds fills the per-run tables for `order`, `mb` and the run's `bound`.
  void PrepareBounds(const std::vector<int32_t>& order, int64_t mb, double bound) {
    const int32_t n = layers_ + 1;
    const size_t kcount = order.size();
    need_.assign(kcount * static_cast<size_t>(n), 0);
    stage_rate_.assign(kcount, 0);
    free_rate_before_.assign(kcount + 1, 0);
    work_per_flop_ = (spec_.training() ? 3.0 : 1.0) * static_cast<double>(mb);
    double rate = 0;
    for (size_t k = 0; k < kcount; ++k) {
      const DeviceClass& c = classes_[order[k]];
      const int64_t devices = std::min<int64_t>(c.devices(), mb * c.group_size);
      rate = std::max(rate, static_cast<double>(devices) * class_rate_[order[k]]);
      stage_rate_[k] = rate;
      free_rate_before_[k + 1] = free_rate_before_[k] + c.devices() * class_rate_[order[k]];
      // The margin keeps rounding from declaring a stage the cost model accepts too large.
      const double cap = std::isfinite(bound) ? bound * rate / work_per_flop_ * (1 + 1e-9) : kInf;
      int32_t* need = need_.data() + k * n;
      int32_t from = 0;  // the first layer of the longest last stage covering [from, j)
      for (int32_t j = 1; j < n; ++j) {
        while (from < j && flops_prefix_[j] - flops_prefix_[from] > cap) ++from;
        need[j] = from == j ? kNeverFits : need[from] + 1;
      }
    }
  }

  // For a partial plan `e` in state (j, k): lower bounds on the slowest stage (returned) and on
  // the latency sum (*sum) of any prefix [0, j) that completes it (see PrepareBounds). Both 0
  // for j = 0; infinite when no devices or stages are left for a non-empty prefix.
  double PrefixBounds(const std::vector<int32_t>& order, int32_t k, int32_t j, const Entry& e,
                      double* sum) const {
    *sum = 0;
    if (j == 0) return 0;
    const double free_rate = repeat_ ? FreeRateWithRepeats(order, k, e)
                                     : free_rate_before_[k + 1] - e.used[0] * class_rate_[order[k]];
    const int32_t left = max_stages_ - e.stages;
    if (!(free_rate > 0) || left <= 0) return kInf;
    const double work = work_per_flop_ * flops_prefix_[j];
    *sum = work / std::min(free_rate, stage_rate_[k]);
    return work / std::min(free_rate, left * stage_rate_[k]);
  }

  // The rate of the devices of classes order[0..k] that `e` leaves free when a class may come
  // back in a later block (each class counted once, less what e uses of it).
  double FreeRateWithRepeats(const std::vector<int32_t>& order, int32_t k, const Entry& e) const {
    double rate = 0;
    std::array<bool, kSlots> seen{};
    for (int32_t q = 0; q <= k; ++q) {
      const int32_t cls = order[q];
      if (seen[cls]) continue;
      seen[cls] = true;
      rate += (classes_[cls].devices() - e.used[cls]) * class_rate_[cls];
    }
    return rate;
  }

  void Offer(const Candidate& c) {
    if (c.step_s < best_.step_s * (1 - 1e-12)) best_ = c;
    if (!probing_) search_best_ = std::min(search_best_, c.step_s);
  }

  int32_t StateIndex(int32_t i, int32_t k, int32_t kcount) const { return i * kcount + k; }

  // One slot per (class and stage size, layers [j, i) with j < i, link): a triangle per size.
  size_t CacheSlots() const {
    const size_t n = static_cast<size_t>(layers_);
    return static_cast<size_t>(total_sizes_) * (n * (n + 1) / 2) * 2;
  }

  void ResetConfigCache() {
    const size_t slots = CacheSlots();
    cache_configs_.clear();
    // Up to 16M slots (128 MB of index); beyond that the configurations are recomputed.
    if (slots > (size_t{1} << 24)) {
      cache_slots_.clear();
      return;
    }
    cache_slots_.assign(slots, CacheSlot{});
  }

  // The configurations of layers [j, i) on `devices` (the size_index-th size of class `cls`)
  // with `link` to the next stage: *out points to them (valid until the next call); returns
  // their number.
  int Configs(int32_t cls, int32_t size_index, int32_t devices, int32_t j, int32_t i, NextLink link,
              StageCostModel::Config* scratch, const StageCostModel::Config** out) {
    *out = scratch;
    if (cache_slots_.empty()) return cost_->Configs(cls, j, i, devices, link, scratch);
    const size_t n = static_cast<size_t>(layers_);
    const size_t triangle = static_cast<size_t>(i) * static_cast<size_t>(i - 1) / 2;
    // kNone only occurs for the last stage (i == layers), where it is the only link.
    const size_t slot = ((static_cast<size_t>(size_offset_[cls] + size_index) * (n * (n + 1) / 2) +
                          triangle + static_cast<size_t>(j))
                         << 1) +
                        (link == NextLink::kNetwork ? 1 : 0);
    CacheSlot& cs = cache_slots_[slot];
    if (cs.start < 0) {
      const int count = cost_->Configs(cls, j, i, devices, link, scratch);
      cs.start = static_cast<int32_t>(cache_configs_.size());
      cs.count = count;
      cache_configs_.insert(cache_configs_.end(), scratch, scratch + count);
      return count;
    }
    *out = cache_configs_.data() + cs.start;
    return cs.count;
  }

  static bool Covers(const Entry& a, const Entry& b) {  // a at least as good as b
    if (a.last_cls != b.last_cls || a.value > b.value || a.stages > b.stages) return false;
    for (int i = 0; i < kSlots; ++i) {
      if (a.used[i] > b.used[i]) return false;
    }
    return true;
  }

  // Pareto insert on (stages, devices used, value): keeps entries no other entry beats on all.
  // Fewer stages in the suffix are never worse: the stages before it then hold fewer
  // micro-batches in flight (1F1B) and more stages remain. The list is sorted by value, so only
  // entries of at most e's value can cover e, and e can only cover those of at least its value.
  void Insert(std::vector<int32_t>& list, const Entry& e) {
    const size_t n = list.size();
    size_t pos = 0;  // first entry of a larger value
    for (; pos < n; ++pos) {
      const Entry& a = pool_entries_[list[pos]];
      if (a.value > e.value) break;
      if (Covers(a, e)) return;
    }
    // e covers only entries of at least its value: those of equal value just before pos and
    // every one from pos on. Drop them, keeping the order, and insert e at pos.
    size_t first = pos;
    while (first > 0 && pool_entries_[list[first - 1]].value == e.value) --first;
    size_t kept = first, at = n;
    for (size_t r = first; r < n; ++r) {
      if (r == pos) at = kept;
      if (!Covers(e, pool_entries_[list[r]])) list[kept++] = list[r];
    }
    if (pos == n) at = kept;
    list.resize(kept);
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(at),
                static_cast<int32_t>(pool_entries_.size()));
    pool_entries_.push_back(e);
  }

  // kStep: min sum of stage costs with every stage latency <= bound, classes in `order`
  // (pipeline order, each used by a contiguous block of stages, possibly empty). Returns the
  // plan with its exact step time, or an infinite step time when nothing fits. The lower-bound
  // modes return their least value in `objective` (see DpMode).
  // With `prune`, partial plans that cannot beat the best plan so far are dropped: faster, but
  // then "nothing found" no longer means "infeasible" (Pareto dominance can drop the entry that
  // would have won), so the run that establishes feasibility runs without it. Partial plans
  // whose value reaches `value_cap` are dropped too.
  Candidate RunDp(const std::vector<int32_t>& order, int64_t mb, double bound, DpMode mode,
                  bool prune, double value_cap = kInf) {
    ++runs_;
    const int32_t kcount = static_cast<int32_t>(order.size());
    PrepareBounds(order, mb, bound);
    const int64_t b = cost_->micro_batches();
    const double bmul = static_cast<double>(b - 1);
    // Keep the lists' capacity from run to run: a search makes thousands of runs.
    states_.resize(static_cast<size_t>(layers_ + 1) * kcount);
    for (std::vector<int32_t>& list : states_) list.clear();
    pool_entries_.clear();
    Entry root;
    Insert(states_[StateIndex(layers_, kcount - 1, kcount)], root);
    Candidate out;
    out.micro_batch = mb;
    out.max_latency = bound;
    int32_t best_end = -1;
    const bool step_mode = mode == DpMode::kStep;
    double best_step = step_mode && prune && std::isfinite(best_.step_s) ? best_.step_s : kInf;
    const double prune_at = best_step;
    using Config = StageCostModel::Config;
    auto pick = [&](int32_t cls, const Config* configs, int n, int32_t in_flight) {
      return step_mode ? cost_->Pick(cls, configs, n, in_flight, bound)
                       : PickFastest(cls, configs, n, in_flight, bound);
    };

    Config cheap_buf[StageCostModel::kMaxConfigs], net_buf[StageCostModel::kMaxConfigs];
    // Pick results per stage count for the current (stage size, first layer): valid where
    // stamped with the current visit (no clearing per visit).
    struct Picked {
      int64_t cheap_at = -1, net_at = -1;
      int cheap = -1, net = -1;
    };
    std::vector<Picked> picked(max_stages_ + 1);
    int64_t visit = 0;
    std::vector<int32_t> in_flight_of(max_stages_ + 1);  // by stages from the end, 1-based
    for (int32_t q = 1; q <= max_stages_; ++q) in_flight_of[q] = cost_->InFlight(q);
    for (int32_t i = layers_; i >= 0; --i) {
      for (int32_t k = kcount - 1; k >= 0; --k) {
        const int32_t cls = order[k];
        const DeviceClass& c = classes_[cls];
        const int32_t g = c.group_size;
        const bool packs = c.groups.size() <= kMaxPackedGroups;
        const std::vector<int32_t>& list = states_[StateIndex(i, k, kcount)];
        if (list.empty()) continue;
        const int32_t* need = need_.data() + static_cast<size_t>(k) * (layers_ + 1);
        int32_t s_min = max_stages_ + 1;  // fewest stages among this state's entries
        for (int32_t idx : list) s_min = std::min(s_min, pool_entries_[idx].stages);
        if (i == 0) {
          for (int32_t idx : list) {
            const Entry& e = pool_entries_[idx];
            const double step =
                step_mode ? e.sum_latency + bmul * e.max_latency + e.max_tail : e.value;
            if (step < best_step) {
              best_step = step;
              best_end = idx;
            }
          }
          continue;
        }
        if (k > 0) {  // close this class's block; the next one starts empty
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
            double prefix_sum;
            if (need_[static_cast<size_t>(k - 1) * (layers_ + 1) + i] + e.stages > max_stages_ ||
                PrefixBounds(order, k - 1, i, e, &prefix_sum) * kBelow > bound) {
              continue;  // cannot finish (PrepareBounds)
            }
            Insert(states_[StateIndex(i, k - 1, kcount)], e);
          }
        }
        if (s_min >= max_stages_) continue;
        // At least as good as every entry of the list in each field the prefix bounds read, so
        // a stage range it cannot finish (or win) from, none can.
        Entry lead = pool_entries_[list.front()];
        for (int32_t idx : list) {
          const Entry& e = pool_entries_[idx];
          for (int q = 0; q < kSlots; ++q) lead.used[q] = std::min(lead.used[q], e.used[q]);
          lead.sum_latency = std::min(lead.sum_latency, e.sum_latency);
          lead.max_latency = std::min(lead.max_latency, e.max_latency);
          lead.max_tail = std::min(lead.max_tail, e.max_tail);
        }
        lead.stages = s_min + 1;
        const int slot = repeat_ ? cls : 0;
        for (int32_t size_index = 0; size_index < static_cast<int32_t>(sizes_[cls].size());
             ++size_index) {
          const int32_t d = sizes_[cls][size_index];
          if (d > c.devices()) break;
          // Only a stage smaller than a group can share one with the next stage.
          const NextLink cheap = i == layers_ ? NextLink::kNone
                                 : d < g      ? NextLink::kSameGroup
                                              : NextLink::kNetwork;
          // Stages of fewer layers leave a prefix that the stages and devices that remain cannot
          // finish, or not fast enough to beat the best plan (the bounds grow with j).
          Entry reach = lead;
          reach.used[slot] += d;
          auto hopeless = [&](int32_t j) {
            if (need[j] + s_min + 1 > max_stages_) return true;
            double prefix_sum;
            const double prefix_max = PrefixBounds(order, k, j, reach, &prefix_sum) * kBelow;
            return prefix_max > bound || reach.sum_latency + prefix_sum * kBelow +
                                                 bmul * std::max(reach.max_latency, prefix_max) +
                                                 reach.max_tail >=
                                             prune_at;
          };
          int32_t j_first = i - 1;
          while (j_first > 0 && hopeless(j_first)) --j_first;
          for (int32_t j = j_first; j >= 0; --j) {
            // The configurations do not depend on the stage count; compute them once for all.
            const Config* cheap_cfg = nullptr;
            const Config* net_cfg = nullptr;
            const int n_cheap = Configs(cls, size_index, d, j, i, cheap, cheap_buf, &cheap_cfg);
            // Cheapest link and fewest micro-batches in flight: if even that does not fit,
            // more layers will not either.
            if (pick(cls, cheap_cfg, n_cheap, in_flight_of[s_min + 1]) < 0) break;
            int n_net = -1;
            ++visit;
            // Insert only writes to states of fewer layers (j < i): read this list in place.
            for (int32_t idx : list) {
              // Insert may reallocate the pool: e is not read after it.
              const Entry& e = pool_entries_[idx];
              const int32_t s = e.stages;
              if (need[j] + s + 1 > max_stages_) continue;
              const int32_t in_flight = in_flight_of[s + 1];
              Picked& p = picked[s];
              if (p.cheap_at != visit) {
                p.cheap = pick(cls, cheap_cfg, n_cheap, in_flight);
                p.cheap_at = visit;
              }
              if (p.cheap < 0) continue;
              // Pack: a sub-group stage fills the current group when it fits there.
              int32_t offset;
              bool same_group = false;
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
              const Config* cfg = &cheap_cfg[p.cheap];
              if (link != cheap) {
                if (n_net < 0) {
                  // The cheap configurations move if the cache grows: copy them aside first.
                  if (cheap_cfg != cheap_buf) {
                    std::copy_n(cheap_cfg, n_cheap, cheap_buf);
                    cheap_cfg = cheap_buf;
                  }
                  n_net = Configs(cls, size_index, d, j, i, link, net_buf, &net_cfg);
                }
                if (p.net_at != visit) {
                  p.net = pick(cls, net_cfg, n_net, in_flight);
                  p.net_at = visit;
                }
                if (p.net < 0) continue;
                cfg = &net_cfg[p.net];
              }
              Entry n;
              n.used = e.used;
              n.used[slot] = packs ? offset + d : (offset + d + g - 1) / g * g;
              // Only packing reads last_cls; without it, entries that differ only there merge.
              n.last_cls = packs ? cls : -1;
              n.stages = s + 1;
              switch (mode) {
                case DpMode::kStep:
                  n.value = e.value + cfg->latency_s + cfg->tail_s;
                  break;
                case DpMode::kBottleneck:
                  n.value = std::max(e.value, cfg->latency_s);
                  break;
                case DpMode::kLatencySum:
                  n.value = e.value + cfg->latency_s;
                  break;
                case DpMode::kTail:
                  n.value =
                      std::max(e.value, MinTail(cls, link != cheap ? net_cfg : cheap_cfg,
                                                link != cheap ? n_net : n_cheap, in_flight, bound));
                  break;
              }
              n.sum_latency = e.sum_latency + cfg->latency_s;
              n.max_latency = std::max(e.max_latency, cfg->latency_s);
              n.max_tail = std::max(e.max_tail, cfg->tail_s);
              n.host_bytes = e.host_bytes + cfg->host_bytes;
              if (step_mode && n.host_bytes > pool_.bytes) continue;
              // Scaled down a little so rounding never makes a bound exceed the true value.
              double prefix_sum;
              const double prefix_max = PrefixBounds(order, k, j, n, &prefix_sum) * kBelow;
              if (prefix_max > bound) continue;  // cannot finish
              if (n.sum_latency + prefix_sum * kBelow + bmul * std::max(n.max_latency, prefix_max) +
                      n.max_tail >=
                  prune_at) {
                continue;
              }
              if (n.value >= value_cap) continue;
              n.parent = idx;
              n.first = j, n.last = i, n.devices = d, n.offset = offset, n.cls = cls;
              n.in_flight = in_flight;
              n.next = link;
              Insert(states_[StateIndex(j, k, kcount)], n);
            }
          }
        }
      }
    }
    if (best_end < 0) return out;
    out.objective = best_step;
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
  std::vector<int32_t> size_offset_;  // index of each class's first stage size
  int32_t total_sizes_ = 0;
  std::vector<double> class_rate_;    // FLOP/s of one device of each class
  std::vector<double> flops_prefix_;  // forward FLOPs per sample of layers [0, i)
  // Prefix bounds for the current run (PrepareBounds).
  std::vector<int32_t> need_;             // [k * (layers_ + 1) + j]: fewest stages for [0, j)
  std::vector<double> stage_rate_;        // [k]: fastest stage of classes order[0..k], FLOP/s
  std::vector<double> free_rate_before_;  // [k]: all devices of order[0..k) (no repeats), FLOP/s
  double work_per_flop_ = 0;              // passes x micro-batch
  double bottleneck_lb_ = 0;              // BottleneckLowerBound of the current micro-batch
  const StageCostModel* cost_ = nullptr;
  // Stage configurations per (class, stage size, layers [j, i), link to the next stage) for the
  // current micro-batch size: they do not depend on the bound, the order or the stage count,
  // and the runs of one micro-batch size ask for the same ones thousands of times.
  struct CacheSlot {
    int32_t start = -1;  // into cache_configs_; -1 = not computed yet
    int32_t count = 0;
  };
  std::vector<CacheSlot> cache_slots_;
  std::vector<StageCostModel::Config> cache_configs_;
  std::vector<std::vector<int32_t>> states_;
  std::vector<Entry> pool_entries_;
  Candidate best_;
  bool probing_ = false;
  double search_best_ = kInf;  // the best step time the full search (not the probe) found
  int64_t runs_ = 0;
};

}  // namespace

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
