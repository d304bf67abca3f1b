#include "k8s/replay.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>

#include "sched/filters.h"

namespace hetsched::svc::k8s {
namespace {

using Json = nlohmann::json;

struct PodClass {
  const char* kind;
  double share;
  const char* resource;
  int32_t count;
  double cpu;
  const char* stacks;
  const char* memory;
  std::map<std::string, double> speed;  // relative to the first entry's 1
  double min_s, max_s;                  // run time on the fastest type
};

// Speeds between types follow the catalog's peaks: fp16 for training (a T4's 65 TFLOPS
// against an A100's 312), memory bandwidth for batch inference (320 GB/s against 2,039).
const std::vector<PodClass>& Classes() {
  static const std::vector<PodClass> classes = {
      {"llm-train",
       0.10,
       "nvidia.com/gpu",
       8,
       64,
       "cuda>=12.2",
       "60Gi",
       {{"a100-80g", 1}, {"t4", 0.21}},
       2 * 3600.,
       8 * 3600.},
      {"cv-train",
       0.25,
       "nvidia.com/gpu",
       4,
       32,
       "cuda>=11.8",
       "12Gi",
       {{"a100-80g", 1}, {"t4", 0.21}},
       1200.,
       7200.},
      {"batch-infer",
       0.30,
       "nvidia.com/gpu",
       1,
       8,
       "cuda>=12.0",
       "8Gi",
       {{"a100-80g", 1}, {"t4", 0.157}},
       300.,
       1800.},
      {"rocm-train",
       0.12,
       "amd.com/gpu",
       8,
       64,
       "rocm>=6.0",
       "",
       {{"mi250x", 1}},
       3600.,
       4 * 3600.},
      {"npu-train",
       0.08,
       "huawei.com/Ascend910",
       8,
       64,
       "cann>=8.0",
       "",
       {{"ascend-910b", 1}},
       3600.,
       4 * 3600.},
      {"etl", 0.15, "", 0, 16, "", "", {{"xeon-8380", 1}}, 600., 3600.},
  };
  return classes;
}

Json PodJson(const ReplayPod& pod, int32_t attempt, const std::string& node) {
  Json limits = Json::object();
  if (!pod.resource.empty()) limits[pod.resource] = std::to_string(pod.count);
  Json pj = {{"metadata",
              {{"name", pod.name + "-" + std::to_string(attempt)},
               {"namespace", "replay"},
               {"uid", pod.name + "-" + std::to_string(attempt)},
               {"annotations", pod.annotations}}},
             {"spec",
              {{"containers",
                {{{"name", "main"},
                  {"resources",
                   {{"requests", {{"cpu", fmt::format("{}", pod.cpu)}}}, {"limits", limits}}}}}}}},
             {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (!node.empty()) pj["spec"]["nodeName"] = node;
  return pj;
}

struct NodeState {
  NodeInfo info;
  double free_devices = 0;
  double cpu = 0, free_cpu = 0;
  int32_t pods = 0;
  double occupied_since = 0;
  double excess_w = 0;  // per busy device (or the whole CPU node at full load)
};

}  // namespace

std::vector<ReplayPod> GeneratePods(int32_t count, double mean_interarrival_s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.0 / mean_interarrival_s);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<ReplayPod> pods;
  double t = 0;
  for (int32_t i = 0; i < count; ++i) {
    t += gap(rng);
    double pick = unit(rng);
    const PodClass* c = &Classes().back();
    for (const PodClass& k : Classes()) {
      if (pick < k.share) {
        c = &k;
        break;
      }
      pick -= k.share;
    }
    ReplayPod p;
    p.name = fmt::format("{}-{:04d}", c->kind, i);
    p.kind = c->kind;
    p.arrival_s = t;
    p.resource = c->resource;
    p.count = c->count;
    p.cpu = c->cpu;
    // Log-uniform run time on the fastest type: many short pods, a few long ones.
    const double run_s = c->min_s * std::pow(c->max_s / c->min_s, unit(rng));
    p.speed = c->speed;
    p.work = run_s;  // steps at 1 step/s on the fastest type
    if (*c->stacks) p.annotations["hetsched.io/stacks"] = c->stacks;
    if (*c->memory) p.annotations["hetsched.io/memory-per-device"] = c->memory;
    std::string table;
    for (const auto& [type, s] : c->speed)
      table += fmt::format("{}{}={}", table.empty() ? "" : ",", type, s);
    p.annotations["hetsched.io/throughput"] = table;
    pods.push_back(std::move(p));
  }
  return pods;
}

namespace {

// One run of the replay: the nodes' state, the event queue and what it counts.
class ReplayRun {
 public:
  ReplayRun(const std::vector<ReplayPod>& pods, const ReplayOptions& options)
      : pods_(pods), options_(options), rng_(options.seed) {
    truth_.push_back(sched::MakeCompatFilter());
    truth_.push_back(sched::MakeMemoryFilter());
  }

  util::Status Setup(const std::vector<Node>& nodes);
  util::Result<ReplayResult> Run();

 private:
  // An arrival or a retry (node -1: the pod becomes pending), or an end (ok or a failed start).
  struct Event {
    double t;
    int64_t seq;
    int32_t pod;
    int32_t node;
    bool ok;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.t != b.t ? a.t > b.t : a.seq > b.seq;
    }
  };

  void AddNode(const Node& n, NodeInfo info);  // a node the run places pods on
  // Nodes where kube-scheduler's resource fit lets the pod run now.
  std::vector<int32_t> Feasible(const ReplayPod& pod) const;
  // The extender's filter on `*feasible` (those it refuses are dropped) and its prioritize
  // score of each node left, weighed as kube-scheduler weighs it.
  util::Result<std::vector<double>> AskExtender(int32_t i, std::vector<int32_t>* feasible);
  // LeastAllocated over CPU, 0..100, plus the extender's weighted score; ties at random.
  int32_t Pick(const ReplayPod& pod, const std::vector<int32_t>& feasible,
               const std::vector<double>& score);
  // Binds pod `i` to node `n` and queues its end: when it completes, or when its start fails
  // because its image cannot run there.
  util::Status Start(int32_t i, int32_t n);
  util::Status SchedulePending();
  void End(const Event& e);  // frees the node; a failed start is made again after a back-off

  const std::vector<ReplayPod>& pods_;
  const ReplayOptions& options_;
  model::DeviceCatalog catalog_;
  std::unique_ptr<Extender> extender_;
  std::vector<NodeState> state_;
  std::vector<std::unique_ptr<sched::Filter>> truth_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  int64_t seq_ = 0;
  std::vector<int32_t> attempts_;
  std::vector<int32_t> pending_;  // pod indexes, in arrival order
  std::vector<double> jct_;
  std::mt19937_64 rng_;
  double now_ = 0;
  ReplayResult result_;
};

// Describes the list's nodes. A node hetsched cannot describe is left out (its devices' speed
// and power are unknown), but one whose product maps to no catalog type stops the run: a
// mapping fixes that, and leaving a new model out would skew the comparison unseen.
util::Status ReplayRun::Setup(const std::vector<Node>& nodes) {
  ExtenderOptions eo = options_.extender;
  eo.node_cache = true;
  eo.clock = [] { return 0.0; };  // pod groups are not replayed
  catalog_ = eo.catalog;
  ASSIGN_OR_RETURN(extender_, Extender::Create(eo));
  if (nodes.empty()) return util::Status::InvalidArgument("the node list holds no nodes");
  std::vector<Node> kept;
  std::vector<std::string> unmapped;  // "node ('product')"
  std::string first_unmapped;
  for (const Node& n : nodes) {
    NodeInfo info = DescribeNode(n, eo.mapping, catalog_);
    if (!info.unmapped_product.empty()) {
      if (unmapped.empty()) first_unmapped = info.unmapped_product;
      unmapped.push_back(fmt::format("{} ('{}')", n.name, info.unmapped_product));
    } else if (!info.problem.empty()) {
      result_.left_out.emplace_back(n.name, info.problem);
    } else {
      AddNode(n, std::move(info));
      kept.push_back(n);
    }
  }
  if (!unmapped.empty()) {
    return util::Status::InvalidArgument(fmt::format(
        "the devices of node{} {} map to no catalog type: map each product to a catalog type "
        "under kubernetes.device_types in the config ('{}': TYPE; `hetsched catalog` lists the "
        "types)",
        unmapped.size() > 1 ? "s" : "", fmt::join(unmapped, ", "), first_unmapped));
  }
  if (std::none_of(state_.begin(), state_.end(),
                   [](const NodeState& s) { return s.info.schedulable; })) {
    return util::Status::InvalidArgument(fmt::format(
        "none of the {} nodes can take a pod: {} left out (hetsched cannot describe them), {} "
        "cordoned or not ready",
        nodes.size(), result_.left_out.size(), state_.size()));
  }
  extender_->ReplaceNodes(kept);
  extender_->ReplacePods({});
  extender_->SetSynced(true);
  result_.pods = static_cast<int64_t>(pods_.size());
  result_.nodes = static_cast<int32_t>(state_.size());
  return util::Status::Ok();
}

void ReplayRun::AddNode(const Node& n, NodeInfo info) {
  NodeState s;
  s.info = std::move(info);
  s.free_devices = s.info.accelerators;
  auto cpu = n.allocatable.find("cpu");
  s.cpu = s.free_cpu = cpu == n.allocatable.end() ? 0 : cpu->second;
  const model::DeviceType& d = s.info.device;
  // A GPU node: its devices idle or busy, its host CPUs in the base; a CPU node: two
  // sockets of its CPU type, busy in proportion to the cores its pods hold.
  const int32_t devices = s.info.resource.empty() ? 2 : s.info.accelerators;
  s.excess_w = (d.peak_watts - d.idle_watts) * (s.info.resource.empty() ? 2 : 1);
  result_.idle_w += options_.node_base_w + devices * d.idle_watts;
  state_.push_back(std::move(s));
}

std::vector<int32_t> ReplayRun::Feasible(const ReplayPod& pod) const {
  std::vector<int32_t> feasible;
  for (size_t n = 0; n < state_.size(); ++n) {
    const NodeState& s = state_[n];
    if (!s.info.schedulable || s.free_cpu < pod.cpu) continue;
    if (!pod.resource.empty() && (s.info.resource != pod.resource || s.free_devices < pod.count)) {
      continue;
    }
    feasible.push_back(static_cast<int32_t>(n));
  }
  return feasible;
}

util::Result<std::vector<double>> ReplayRun::AskExtender(int32_t i,
                                                         std::vector<int32_t>* feasible) {
  const Json pod = PodJson(pods_[i], attempts_[i], "");
  Json names = Json::array();
  for (int32_t n : *feasible) names.push_back(state_[n].info.name);
  const ExtenderReply filtered =
      extender_->Filter(Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump());
  if (filtered.status != 200) return util::Status::Internal(filtered.body);
  const Json passed = Json::parse(filtered.body)["NodeNames"];
  std::vector<int32_t> kept;
  for (int32_t n : *feasible) {
    if (std::find(passed.begin(), passed.end(), state_[n].info.name) != passed.end()) {
      kept.push_back(n);
    }
  }
  *feasible = kept;
  std::vector<double> score(feasible->size(), 0);
  if (feasible->size() <= 1) return score;  // kube-scheduler skips prioritize with one node left
  Json kept_names = Json::array();
  for (int32_t n : *feasible) kept_names.push_back(state_[n].info.name);
  const ExtenderReply scored = extender_->Prioritize(
      Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", kept_names}}.dump());
  if (scored.status != 200) return util::Status::Internal(scored.body);
  const Json list = Json::parse(scored.body);
  for (size_t k = 0; k < feasible->size(); ++k) {
    score[k] = options_.extender_weight * 10 * list[k]["Score"].get<double>();
  }
  return score;
}

int32_t ReplayRun::Pick(const ReplayPod& pod, const std::vector<int32_t>& feasible,
                        const std::vector<double>& score) {
  double best = -1;
  std::vector<int32_t> ties;
  for (size_t k = 0; k < feasible.size(); ++k) {
    const NodeState& s = state_[feasible[k]];
    const double total = (s.free_cpu - pod.cpu) / std::max(1.0, s.cpu) * 100 + score[k];
    if (total > best + 1e-9) {
      best = total;
      ties.clear();
    }
    if (std::abs(total - best) <= 1e-9) ties.push_back(feasible[k]);
  }
  return ties[std::uniform_int_distribution<size_t>(0, ties.size() - 1)(rng_)];
}

util::Status ReplayRun::Start(int32_t i, int32_t n) {
  const ReplayPod& pod = pods_[i];
  NodeState& s = state_[n];
  s.free_devices -= pod.count;
  s.free_cpu -= pod.cpu;
  if (s.pods++ == 0) s.occupied_since = now_;
  ASSIGN_OR_RETURN(const Pod bound, ParsePod(PodJson(pod, attempts_[i], s.info.name).dump()));
  if (options_.use_extender) extender_->UpsertPod(bound);
  result_.placed_by_type[s.info.device.name]++;
  // The truth: does the pod's image run on this node's devices?
  ASSIGN_OR_RETURN(PodNeeds needs, NeedsOf(bound, catalog_));
  bool runs = true;
  if (!pod.resource.empty()) {
    for (const auto& f : truth_) runs = runs && !f->Reject(needs.job, s.info.device);
  }
  // A CPU pod runs on any node's CPUs at its one speed; an accelerator pod at its device's.
  auto speed = pod.resource.empty() ? pod.speed.begin() : pod.speed.find(s.info.device.name);
  if (speed == pod.speed.end() || speed->second <= 0) runs = false;
  const double held_s = runs ? options_.startup_s + pod.work / speed->second : options_.startup_s;
  // A CPU pod on an accelerator node runs on the host CPUs the node's base draw stands
  // for: no device of its turns busy.
  const double share = !pod.resource.empty()     ? pod.count
                       : s.info.resource.empty() ? pod.cpu / std::max(1.0, s.cpu)
                                                 : 0;
  result_.busy_device_s_excess_j += share * s.excess_w * held_s;
  if (!runs) {
    result_.failed_starts++;
    result_.wasted_device_h += pod.count * options_.startup_s / 3600;
  }
  events_.push({now_ + held_s, seq_++, i, n, runs});
  return util::Status::Ok();
}

util::Status ReplayRun::SchedulePending() {
  std::vector<int32_t> still;
  for (int32_t i : pending_) {
    std::vector<int32_t> feasible = Feasible(pods_[i]);
    std::vector<double> score(feasible.size(), 0);
    if (!feasible.empty() && options_.use_extender) {
      ASSIGN_OR_RETURN(score, AskExtender(i, &feasible));
    }
    if (feasible.empty()) {
      still.push_back(i);
      continue;
    }
    RETURN_IF_ERROR(Start(i, Pick(pods_[i], feasible, score)));
  }
  pending_ = std::move(still);
  return util::Status::Ok();
}

void ReplayRun::End(const Event& e) {
  const ReplayPod& pod = pods_[e.pod];
  NodeState& s = state_[e.node];
  s.free_devices += pod.count;
  s.free_cpu += pod.cpu;
  if (--s.pods == 0) result_.occupied_node_s += now_ - s.occupied_since;
  if (options_.use_extender) {
    auto parsed = ParsePod(PodJson(pod, attempts_[e.pod], s.info.name).dump());
    if (parsed.ok()) extender_->DeletePod(*parsed);
  }
  result_.makespan_s = std::max(result_.makespan_s, now_);
  if (e.ok) {
    result_.completed++;
    jct_.push_back(now_ - pod.arrival_s);
    result_.jct_by_pod[e.pod] = now_ - pod.arrival_s;
  } else if (++attempts_[e.pod] > options_.backoff_limit) {
    result_.failed_jobs++;
  } else {
    // The Job controller's back-off: 10 s doubling, at most 6 minutes.
    const double backoff = std::min(360.0, 10 * std::pow(2.0, attempts_[e.pod] - 1));
    events_.push({now_ + backoff, seq_++, e.pod, -1, true});
  }
}

util::Result<ReplayResult> ReplayRun::Run() {
  for (size_t i = 0; i < pods_.size(); ++i) {
    events_.push({pods_[i].arrival_s, seq_++, static_cast<int32_t>(i), -1, true});
  }
  attempts_.assign(pods_.size(), 0);
  result_.jct_by_pod.assign(pods_.size(), -1);
  while (!events_.empty()) {
    now_ = events_.top().t;
    while (!events_.empty() && events_.top().t <= now_) {
      const Event e = events_.top();
      events_.pop();
      if (e.node < 0) {
        pending_.push_back(e.pod);
      } else {
        End(e);
      }
    }
    RETURN_IF_ERROR(SchedulePending());
  }
  result_.never_placed = static_cast<int64_t>(pending_.size());
  if (!jct_.empty()) {
    double sum = 0;
    for (double j : jct_) sum += j;
    result_.avg_jct_s = sum / jct_.size();
    std::sort(jct_.begin(), jct_.end());
    result_.p99_jct_s = jct_[std::min(jct_.size() - 1, static_cast<size_t>(0.99 * jct_.size()))];
  }
  return result_;
}

}  // namespace

util::Result<ReplayResult> Replay(const std::vector<Node>& nodes,
                                  const std::vector<ReplayPod>& pods,
                                  const ReplayOptions& options) {
  ReplayRun run(pods, options);
  RETURN_IF_ERROR(run.Setup(nodes));
  return run.Run();
}

}  // namespace hetsched::svc::k8s
