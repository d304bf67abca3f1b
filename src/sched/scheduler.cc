#include "sched/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "model/compatibility.h"
#include "sched/allocation_strategy.h"
#include "sched/elastic.h"
#include "sched/preemptive_strategy.h"
#include "sched/queue_order_strategy.h"
#include "sched/scheduler_core.h"
#include "sched/space_sharing.h"
#include "sched/strategy.h"

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;
using model::JobId;

namespace {
// Per device type: workers of `job` its `pinned` devices hold at once, each node's host
// holding at most model::HostWorkersFit of them.
std::vector<int32_t> PinnedHostedWorkers(const model::Cluster& cluster, const model::Job& job,
                                         const std::vector<DeviceId>& pinned) {
  std::map<std::pair<int32_t, int32_t>, int32_t> per_node;  // (node, type) -> pinned devices
  for (DeviceId d : pinned) {
    per_node[{cluster.device(d).node.value(), cluster.device(d).type.value()}]++;
  }
  std::vector<int32_t> out(cluster.catalog.size(), 0);
  for (const auto& [key, devices] : per_node) {
    const int32_t fit = model::HostWorkersFit(cluster.node(model::NodeId(key.first)), job);
    out[key.second] += std::min(devices, fit);
  }
  return out;
}

// Resolves Job::pinned_devices ("node/index" or "node") to device ids.
util::Result<std::vector<DeviceId>> ResolvePinned(const model::Cluster& cluster,
                                                  const model::Job& job) {
  std::vector<DeviceId> out;
  for (const std::string& spec : job.pinned_devices) {
    const size_t slash = spec.find('/');
    const std::string node_name = spec.substr(0, slash);
    auto node = cluster.FindNode(node_name);
    if (!node) {
      return util::Status::InvalidArgument(
          fmt::format("pinned device '{}': no node '{}' in the cluster", spec, node_name));
    }
    const model::Node& n = cluster.node(*node);
    if (slash == std::string::npos) {
      for (int32_t i = 0; i < n.device_count; ++i) out.push_back(cluster.device_of(*node, i));
      continue;
    }
    int32_t index = -1;
    try {
      size_t used = 0;
      index = std::stoi(spec.substr(slash + 1), &used);
      if (used != spec.size() - slash - 1) index = -1;
    } catch (const std::exception&) {
      index = -1;
    }
    if (index < 0 || index >= n.device_count) {
      return util::Status::InvalidArgument(fmt::format(
          "pinned device '{}': node '{}' has devices 0..{}", spec, node_name, n.device_count - 1));
    }
    out.push_back(cluster.device_of(*node, index));
  }
  return out;
}

// What admission finds out about each device type for one job before its speeds: how many
// devices it may use, how many of its workers their hosts hold, whether a filter rejects it.
struct TypeReach {
  TypeReach(const model::Cluster& c, const model::Job& j) : cluster(c), job(j) {}

  const model::Cluster& cluster;
  const model::Job& job;
  bool pinned = false;          // `count` is of the job's pinned devices
  std::vector<int32_t> count;   // devices of the type the job may use
  std::vector<int32_t> hosted;  // with a host request: workers the nodes hold at once
  std::vector<char> filtered;   // a filter rejects the type

  // The types where `gang` workers fit and `speed_on` knows a speed: speed and allowed per
  // type; why not on the others into `why_not` (when non-null). `incompatible`: types the compat
  // filter would reject, allowed without a speed (SchedulerOptions::ignore_compat).
  template <typename SpeedOn>
  void Rate(int32_t gang, const SpeedOn& speed_on, const std::vector<char>& incompatible,
            std::vector<double>& speed, std::vector<char>& allowed,
            std::vector<std::string>* why_not) const {
    const int32_t types = static_cast<int32_t>(count.size());
    speed.assign(types, 0);
    allowed.assign(types, 0);
    for (int32_t t = 0; t < types; ++t) {
      if (count[t] == 0 || filtered[t]) continue;
      const model::DeviceType& dt = cluster.catalog.Get(DeviceTypeId(t));
      const std::optional<double> s = speed_on(dt);
      std::string why;
      if (!incompatible[t] && (!s || *s <= 0)) {
        why = fmt::format("no throughput known for '{}' at {} worker(s) on {}", job.job_type, gang,
                          dt.name);
      } else if (count[t] < gang) {
        why = fmt::format("{} has {} device(s){}, the gang needs {}", dt.name, count[t],
                          pinned ? " among the pinned ones" : "", gang);
      } else if (!hosted.empty() && hosted[t] < gang) {
        why = fmt::format("the nodes with {} hold {} worker(s) with {} each{}, the gang needs {}",
                          dt.name, hosted[t], model::DescribeHostRequest(job),
                          pinned ? " on the pinned devices" : "", gang);
      }
      if (!why.empty()) {
        if (why_not != nullptr) why_not->push_back(why);
        continue;
      }
      allowed[t] = 1;
      speed[t] = s.value_or(0);
    }
  }
};

// Runs the filters on each type `reach` counts devices of: sets reach.filtered where one
// rejects it, with the reason in `reasons`; under `ignore_compat` the compat filter only marks
// the type in `incompatible`. The filters read the job's stacks and memory per worker, not its
// size: one verdict per type for every size an elastic job may take.
void FilterTypes(const std::vector<std::unique_ptr<Filter>>& filters, bool ignore_compat,
                 TypeReach& reach, std::vector<char>& incompatible,
                 std::vector<std::string>& reasons) {
  const int32_t types = static_cast<int32_t>(reach.count.size());
  reach.filtered.assign(types, 1);
  for (int32_t t = 0; t < types; ++t) {
    if (reach.count[t] == 0) continue;
    const model::DeviceType& dt = reach.cluster.catalog.Get(DeviceTypeId(t));
    std::string why;
    for (const auto& f : filters) {
      auto rejected = f->Reject(reach.job, dt);
      if (!rejected) continue;
      if (ignore_compat && f->name() == "compat") {
        incompatible[t] = 1;
        continue;
      }
      why = *rejected;
      break;
    }
    if (why.empty()) {
      reach.filtered[t] = 0;
    } else {
      reasons.push_back(why);
    }
  }
}

// The speed and allowed types of `r` for its job; an `elastic` one gets a size option for each
// of its candidate sizes that runs somewhere and starts as large as it may be (SizeQueued fits
// it to what is free). Why the job cannot run on the other types (at its smallest size) goes
// into `reasons`.
void RateSizes(const TypeReach& reach, bool elastic, const model::ThroughputProfile* profile,
               JobRecord& r, std::vector<std::string>& reasons) {
  const model::Job& job = reach.job;
  if (!elastic) {
    reach.Rate(
        std::max(1, job.gang_size),
        [&](const model::DeviceType& dt) { return GangSpeed(job, dt, profile); }, r.incompatible,
        r.speed, r.allowed, &reasons);
    return;
  }
  const std::vector<int32_t> candidates = CandidateSizes(job);
  for (int32_t workers : candidates) {
    JobRecord::SizeOption o;
    o.workers = workers;
    reach.Rate(
        workers,
        [&](const model::DeviceType& dt) { return SpeedAtSize(job, workers, dt, profile); },
        r.incompatible, o.speed, o.allowed, workers == candidates.front() ? &reasons : nullptr);
    if (std::find(o.allowed.begin(), o.allowed.end(), 1) != o.allowed.end()) {
      r.sizes.push_back(std::move(o));
    }
  }
  if (!r.sizes.empty()) {
    r.speed = r.sizes.back().speed;
    r.allowed = r.sizes.back().allowed;
    r.size_cap = r.sizes.back().workers;
  }
}

// The fastest speed of `r` on a type it may use and runs on, at any of its sizes.
double BestSpeed(const JobRecord& r) {
  double best = 0;
  for (size_t t = 0; t < r.allowed.size(); ++t) {
    if (r.allowed[t] && !r.incompatible[t]) best = std::max(best, r.speed[t]);
    for (const JobRecord::SizeOption& o : r.sizes) {
      if (o.allowed[t] && !r.incompatible[t]) best = std::max(best, o.speed[t]);
    }
  }
  return best;
}

// The scheduler's copy of `job`: everything the user declared, not the true size. `shared`
// (`job` itself, or null) serves as it is when there is nothing to change.
std::shared_ptr<const model::Job> ScheduledCopy(const model::Job& job, const JobRecord& r,
                                                std::shared_ptr<const model::Job> shared) {
  const bool resized = !r.sizes.empty() && job.gang_size != r.sizes.back().workers;
  const bool slo_deadline = job.slo_factor && !job.deadline_s && r.best_speed > 0;
  if (shared != nullptr && job.work == 0 && !resized && !slo_deadline) return shared;
  auto copy = std::make_shared<model::Job>(job);
  copy->work = 0;
  if (!r.sizes.empty()) copy->gang_size = r.sizes.back().workers;
  // Gavel's SLO is declared as a multiple of the job's duration: the trace states it, so the
  // deadline it implies is an input like any other.
  if (job.slo_factor && !job.deadline_s && r.best_speed > 0) {
    copy->deadline_s = job.arrival_s + *job.slo_factor * job.work / r.best_speed;
  }
  return copy;
}

// The size estimate of `r` (see Scheduler::Submit): the driver's, else what the job declares
// (when options.declared_estimates), else the history mean (options.history_estimates).
void SetEstimate(const model::Job& job, const std::optional<SizeEstimate>& estimate,
                 const SchedulerOptions& options, const SizeBelief& belief, JobRecord& r) {
  if (estimate && estimate->work > 0) {
    r.estimated_work = estimate->work;
    r.estimate_source = estimate->source;
  } else if (options.declared_estimates && job.estimate_s) {
    r.estimated_work = *job.estimate_s * r.ref_speed;
    r.estimate_source = EstimateSource::kUser;
  } else if (options.declared_estimates && job.time_limit_s) {
    r.estimated_work = *job.time_limit_s * r.ref_speed;
    r.estimate_source = EstimateSource::kTimeLimit;
  } else if (options.history_estimates) {
    if (auto mean_s = belief.HistoryMean(job.job_type, job.gang_size)) {
      r.estimated_work = *mean_s * r.ref_speed;
      r.estimate_source = EstimateSource::kHistory;
    }
  }
}
}  // namespace

util::Result<std::unique_ptr<Scheduler>> Scheduler::Create(const model::Cluster& cluster,
                                                           const model::ThroughputProfile* profile,
                                                           std::string_view policy,
                                                           const SchedulerOptions& options) {
  ASSIGN_OR_RETURN(auto p, MakePolicy(policy, options.tuning));
  ASSIGN_OR_RETURN(auto filters, MakeFilters(options.filters));
  ASSIGN_OR_RETURN(auto scorers, MakeScorers(options.scorers));
  ASSIGN_OR_RETURN(PreemptionPrice price, PreemptionPrice::FromOptions(options));
  if (options.space_sharing && (profile == nullptr || profile->empty())) {
    return util::Status::InvalidArgument(
        "space sharing needs a throughput profile with pair (co-located) entries; none given");
  }
  if (!(options.space_sharing_min_gain >= 0)) {
    return util::Status::InvalidArgument(fmt::format(
        "space sharing min gain {}: expected a number >= 0", options.space_sharing_min_gain));
  }
  if (options.tenants && dynamic_cast<const AllocationPolicy*>(p.get()) != nullptr) {
    return util::Status::InvalidArgument(fmt::format(
        "tenants: policy {} plans an LP allocation without tenants; use a preemptive or "
        "queue-order policy (default, srpt-het, las-het, fifo-het, ...)",
        policy));
  }
  auto core = std::make_unique<SchedulerCore>(cluster, profile, std::move(p), std::move(scorers),
                                              options, price);
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(core), std::move(filters)));
}

Scheduler::Scheduler(std::unique_ptr<SchedulerCore> core,
                     std::vector<std::unique_ptr<Filter>> filters)
    : core_(std::move(core)), filters_(std::move(filters)) {
  // The policy picks its family; allocation policies are preemptive too.
  if (auto* lp = dynamic_cast<const AllocationPolicy*>(&core_->policy())) {
    auto strategy = std::make_unique<AllocationStrategy>(*core_, *lp);
    allocation_ = strategy.get();
    strategy_ = std::move(strategy);
  } else if (core_->policy().preemptive()) {
    auto strategy = std::make_unique<PreemptiveStrategy>(*core_);
    preemptive_ = strategy.get();
    strategy_ = std::move(strategy);
  } else {
    strategy_ = std::make_unique<QueueOrderStrategy>(*core_);
  }
  if (core_->options().space_sharing) {
    sharing_ = std::make_unique<SpaceSharing>(*core_, core_->options().space_sharing_min_gain);
    core_->set_sharing(sharing_.get());
  }
  if (core_->options().elastic && allocation_ == nullptr) {
    elastic_ = std::make_unique<ElasticResizer>(*core_);
  }
}

Scheduler::~Scheduler() = default;

Admission Scheduler::Submit(const model::Job& job, double now_s,
                            std::optional<SizeEstimate> estimate) {
  return Admit(job, nullptr, now_s, estimate);
}

Admission Scheduler::Submit(std::shared_ptr<const model::Job> job, double now_s,
                            std::optional<SizeEstimate> estimate) {
  const model::Job& read = *job;
  return Admit(read, std::move(job), now_s, estimate);
}

Admission Scheduler::Admit(const model::Job& job, std::shared_ptr<const model::Job> shared,
                           double now_s, std::optional<SizeEstimate> estimate) {
  const int32_t id = job.id.value();
  assert(id >= 0);
  // A slot is reused only once its job ended (the daemon's JobSlots hands out freed ids).
  assert(!Known(job.id) || core_->record(id).phase == JobPhase::kDone);
  if (Known(job.id)) strategy_->OnSlotReused(id);
  core_->Grow(id);
  if (sharing_) sharing_->OnSubmit(id, job);
  const model::Cluster& cluster = core_->cluster();
  const ClusterState& state = core_->state();
  const SchedulerOptions& options = core_->options();
  const int32_t types = state.type_count();
  JobRecord r;
  r.speed.assign(types, 0);
  r.allowed.assign(types, 0);
  r.incompatible.assign(types, 0);
  TypeReach reach(cluster, job);
  reach.count.assign(types, 0);
  std::vector<DeviceId> pinned;
  if (!job.pinned_devices.empty()) {
    auto resolved = ResolvePinned(cluster, job);
    if (!resolved.ok()) return {false, resolved.status().message()};
    pinned = std::move(resolved).value();
    reach.pinned = !pinned.empty();
    for (DeviceId d : pinned) reach.count[cluster.device(d).type.value()]++;
  } else {
    for (int32_t t = 0; t < types; ++t) reach.count[t] = state.TotalOfType(DeviceTypeId(t));
  }
  if (!job.data_location.empty() && !cluster.FindNode(job.data_location) &&
      !cluster.FindRack(job.data_location) && !cluster.FindStorage(job.data_location)) {
    return {false, fmt::format("data location '{}': no node, rack or storage of that name",
                               job.data_location)};
  }
  if (model::AsksForHost(job)) {
    reach.hosted = pinned.empty() ? HostedWorkers(job) : PinnedHostedWorkers(cluster, job, pinned);
  }
  std::vector<std::string> reasons;
  FilterTypes(filters_, options.ignore_compat, reach, r.incompatible, reasons);
  const bool elastic = elastic_ != nullptr && job.min_workers < job.max_workers && pinned.empty();
  RateSizes(reach, elastic, core_->profile(), r, reasons);
  if (std::find(r.allowed.begin(), r.allowed.end(), 1) == r.allowed.end()) {
    std::string all;
    for (const auto& s : reasons) all += (all.empty() ? "" : "; ") + s;
    if (all.empty()) all = "the cluster has no devices";
    return {false, fmt::format("no device in the cluster can run it: {}", all)};
  }
  r.best_speed = BestSpeed(r);
  r.ref_speed = r.best_speed;
  r.job = ScheduledCopy(job, r, std::move(shared));
  SetEstimate(job, estimate, options, core_->belief(), r);
  if (auto why = strategy_->RejectAtSubmit(r, now_s)) return {false, *why};
  r.submitted = true;
  r.seq = next_seq_++;
  if (!r.sizes.empty()) elastic_->OnAdmitted();
  core_->Admit(id, std::move(r), std::move(pinned), now_s);
  return {true, ""};
}

Decision Scheduler::Decide(double now_s) {
  Decision out;
  core_->BeginDecision(now_s);
  if (elastic_) elastic_->SizeQueued();
  if (!core_->queue().empty()) {
    strategy_->Decide(now_s, out);
  } else if (HasWork()) {
    strategy_->Upgrade(now_s, out);
  }
  // Resized jobs restart at their new size in this same decision, unless they keep their
  // devices while their checkpoint is written (stop_holds_devices): then once it is. Elastic
  // jobs the strategy stopped, or left waiting for a size that no longer fits, may take the
  // free devices at a smaller size.
  if (elastic_) {
    elastic_->Resize(now_s, out);
    if (!core_->queue().empty() && core_->TotalFree() > 0) {
      elastic_->SizeQueued();
      strategy_->Fill(now_s, out);
    }
  }
  if (sharing_) sharing_->Decide(now_s, out);
  return out;
}

util::Result<Decision> Scheduler::PreemptNow(model::JobId job, double now_s) {
  if (!Known(job)) return util::Status::InvalidArgument("no such job");
  const JobRecord& r = core_->record(job.value());
  if (r.phase != JobPhase::kRunning || !r.job->preemptible) {
    return util::Status::InvalidArgument("not a running preemptible job");
  }
  Decision out;
  core_->Preempt(job.value(), now_s, out);
  return out;
}

bool Scheduler::HasWork() const {
  if (!core_->queue().empty() || guests() > 0) return true;
  if (elastic_ && elastic_->MayGrow()) return true;
  if (core_->running().empty() || !core_->policy().preemptive()) return false;
  return core_->TotalFree() > 0;
}

double Scheduler::NextDecisionDue() const {
  if (core_->running().empty()) return std::numeric_limits<double>::infinity();
  const bool queued = !core_->queue().empty();
  if (!queued && !HasWork()) return std::numeric_limits<double>::infinity();
  return strategy_->NextReallocationAt(queued);
}

// ---- Events from the driver ------------------------------------------------------------------

void Scheduler::SetProgress(JobId job, double rate, double since_s) {
  JobRecord& r = core_->record(job.value());
  // The work done at the old rate up to the switch is kept.
  if (since_s > r.progress_since_s) r.done_work = r.DoneAt(since_s);
  r.rate = rate;
  r.progress_since_s = since_s;
  core_->NoteRunningChanged(job.value());
}

void Scheduler::Finish(JobId job, double now_s) { Leave(job, now_s, /*completed=*/true); }

// A dropped job (failed, cancelled) says nothing about how big jobs are: not learned from.
void Scheduler::Drop(JobId job, double now_s) { Leave(job, now_s, /*completed=*/false); }

void Scheduler::Leave(JobId job, double now_s, bool completed) {
  const int32_t id = job.value();
  JobRecord& r = core_->record(id);
  if (!r.sizes.empty()) elastic_->OnLeft();
  if (r.phase == JobPhase::kRunning) {
    core_->Leave(id, now_s);
    if (completed) core_->belief().Observe(r);
  } else if (r.phase == JobPhase::kQueued) {
    core_->Dequeue(id);
  } else if (r.phase == JobPhase::kStopping) {
    Stopped(job, now_s);
    core_->Dequeue(id);
  }
  core_->Retire(id);
  strategy_->OnJobLeft(id);
}

void Scheduler::Stopped(JobId job, double now_s) {
  const int32_t id = job.value();
  JobRecord& r = core_->record(id);
  if (r.phase != JobPhase::kStopping) return;
  core_->Release(id, r.devices);
  r.devices.clear();
  core_->Enqueue(id, now_s);
}

void Scheduler::Requeue(JobId job, double now_s, double done_work,
                        std::optional<DeviceTypeId> exclude_type) {
  const int32_t id = job.value();
  JobRecord& r = core_->record(id);
  if (r.phase == JobPhase::kRunning) {
    core_->Leave(id, now_s);
    r.devices.clear();
  } else if (r.phase == JobPhase::kStopping) {
    Stopped(job, now_s);
    core_->Dequeue(id);
  } else if (r.phase == JobPhase::kQueued) {
    core_->Dequeue(id);
  } else {
    return;
  }
  r.done_work = done_work;
  r.migrating = false;
  if (exclude_type) {
    r.allowed[exclude_type->value()] = 0;
    for (JobRecord::SizeOption& o : r.sizes) o.allowed[exclude_type->value()] = 0;
    r.best_speed = 0;
    for (size_t t = 0; t < r.allowed.size(); ++t) {
      if (r.allowed[t] && !r.incompatible[t]) r.best_speed = std::max(r.best_speed, r.speed[t]);
    }
  }
  core_->Enqueue(id, now_s);
}

util::Status Scheduler::Adopt(JobId job, const std::vector<DeviceId>& devices, double done_work,
                              double now_s) {
  if (!Known(job) || core_->record(job.value()).phase != JobPhase::kQueued) {
    return util::Status::InvalidArgument(fmt::format("job {} is not queued", job.value()));
  }
  JobRecord& r = core_->record(job.value());
  const model::Cluster& cluster = core_->cluster();
  // An elastic job may have run at any of its sizes.
  std::optional<size_t> size_option;
  for (size_t i = 0; i < r.sizes.size(); ++i) {
    if (static_cast<size_t>(r.sizes[i].workers) == devices.size()) size_option = i;
  }
  if (!size_option && devices.size() != static_cast<size_t>(std::max(1, r.job->gang_size))) {
    return util::Status::InvalidArgument(fmt::format("'{}' needs {} device(s), not {}", r.job->name,
                                                     r.job->gang_size, devices.size()));
  }
  const DeviceTypeId type = cluster.device(devices.front()).type;
  for (DeviceId d : devices) {
    if (d.value() < 0 || static_cast<size_t>(d.value()) >= cluster.devices.size() ||
        cluster.device(d).type != type || !core_->state().IsFree(d)) {
      return util::Status::InvalidArgument(fmt::format(
          "'{}': device {} is not a free device of its gang's type", r.job->name, d.value()));
    }
  }
  if (!core_->state().HostHolds(devices, HostRequestOf(*r.job))) {
    return util::Status::InvalidArgument(
        fmt::format("'{}': the nodes of its devices lack the free host cores or memory for {} "
                    "per worker",
                    r.job->name, model::DescribeHostRequest(*r.job)));
  }
  const std::vector<char>& allowed = size_option ? r.sizes[*size_option].allowed : r.allowed;
  if (!allowed[type.value()]) {
    return util::Status::InvalidArgument(
        fmt::format("'{}' may not run on {}", r.job->name, cluster.catalog.Get(type).name));
  }
  if (size_option && r.sizes[*size_option].workers != r.job->gang_size) {
    ApplySize(r, *size_option);
  }
  r.done_work = done_work;
  core_->Start(job.value(), type, devices, now_s, false);
  return util::Status::Ok();
}

JobHistory Scheduler::History(JobId job, double now_s) const {
  const JobRecord& r = core_->record(job.value());
  JobHistory h;
  h.attained_s = r.AttainedAt(now_s);
  h.attained_norm_s = r.AttainedNormAt(now_s);
  strategy_->ExportHistory(job.value(), now_s, h);
  return h;
}

void Scheduler::RestoreHistory(JobId job, const JobHistory& history, double now_s) {
  JobRecord& r = core_->record(job.value());
  // A queued job's place in the queue may depend on its service (LAS): re-keyed.
  const bool queued = r.phase == JobPhase::kQueued;
  const double queued_since = r.queued_since_s;
  if (queued) core_->Dequeue(job.value());
  // A running job books service from now (Adopt) on top of what it had.
  r.attained_s = history.attained_s;
  r.attained_norm_s = history.attained_norm_s;
  if (r.phase == JobPhase::kRunning) r.service_since_s = std::max(r.service_since_s, now_s);
  if (queued) {
    core_->Enqueue(job.value(), now_s);
    r.queued_since_s = queued_since;
  }
  strategy_->ImportHistory(job.value(), history);
}

std::string Scheduler::SaveBelief() const { return core_->belief().Save(); }

std::vector<TenantStanding> Scheduler::TenantStandings(double now_s) const {
  if (core_->tenants() == nullptr) return {};
  return core_->tenants()->Standing(core_->records(), core_->running(), now_s);
}

void Scheduler::RestoreTenantUsage(const std::map<std::string, double>& usage, double at_s) {
  if (core_->tenants() != nullptr) core_->tenants()->RestoreUsage(usage, at_s);
}

util::Status Scheduler::RestoreBelief(std::string_view saved) {
  return core_->belief().Restore(saved);
}

void Scheduler::AddNode(model::NodeId node) {
  core_->AddNode(node);
  hosted_cache_.clear();
}

const std::vector<int32_t>& Scheduler::HostedWorkers(const model::Job& job) {
  const std::pair<int32_t, uint64_t> key(job.cores_per_worker, job.host_memory_per_worker);
  if (auto it = hosted_cache_.find(key); it != hosted_cache_.end()) return it->second;
  // Distinct requests are few in real workloads; a flood of them only costs recomputing.
  if (hosted_cache_.size() >= kHostedCacheEntries) hosted_cache_.clear();
  const model::Cluster& cluster = core_->cluster();
  std::vector<char> removed(cluster.nodes.size(), 0);
  for (size_t n = 0; n < removed.size(); ++n) {
    removed[n] = core_->state().NodeRemoved(model::NodeId(static_cast<int32_t>(n))) ? 1 : 0;
  }
  return hosted_cache_.emplace(key, model::HostedWorkersByType(cluster, job, removed))
      .first->second;
}

util::Status Scheduler::RemoveNode(model::NodeId node) {
  const model::Node& n = core_->cluster().node(node);
  for (int32_t i = 0; i < n.device_count; ++i) {
    const DeviceId d(n.first_device.value() + i);
    if (core_->owner(d) >= 0) {
      return util::Status::InvalidArgument(fmt::format("node {}: job {} still runs there", n.name,
                                                       core_->record(core_->owner(d)).job->name));
    }
  }
  core_->state().RemoveNode(node);
  hosted_cache_.clear();
  return util::Status::Ok();
}

void Scheduler::SetDeviceDown(DeviceId device) { core_->state().SetDown(device); }
void Scheduler::SetDeviceUp(DeviceId device) { core_->state().SetUp(device); }
void Scheduler::SetNodeOn(model::NodeId node, bool on) { core_->state().SetNodeOn(node, on); }
void Scheduler::SetNodeDrained(model::NodeId node, bool drained) {
  core_->state().SetNodeDrained(node, drained);
}

// ---- Views -----------------------------------------------------------------------------------

double Scheduler::SpeedNow(JobId job) const {
  const JobRecord& r = core_->record(job.value());
  return r.partner >= 0 ? r.pair_speed : r.speed[r.type.value()];
}

std::vector<JobId> Scheduler::TakeSpeedChanges() {
  return sharing_ ? sharing_->TakeSpeedChanges() : std::vector<JobId>{};
}

std::optional<JobId> Scheduler::JobOn(DeviceId device) const {
  const int32_t o = core_->owner(device);
  if (o < 0) return std::nullopt;
  return JobId(o);
}

void Scheduler::Reserve(size_t jobs) { core_->Reserve(jobs); }

bool Scheduler::Known(JobId job) const {
  return job.value() >= 0 && static_cast<size_t>(job.value()) < core_->slots() &&
         core_->record(job.value()).submitted;
}

const SizeBelief& Scheduler::belief() const { return core_->belief(); }

double Scheduler::ExpectedRemainingWork(JobId job, double now_s) const {
  return core_->RemainingWork(core_->record(job.value()), now_s);
}

const JobRecord& Scheduler::record(JobId job) const { return core_->record(job.value()); }

bool Scheduler::HasAllowedType(JobId job) const {
  const auto& a = core_->record(job.value()).allowed;
  return std::find(a.begin(), a.end(), 1) != a.end();
}

std::string Scheduler::WhyWaiting(JobId job, double now_s) const {
  const JobRecord& r = core_->record(job.value());
  if (r.phase == JobPhase::kRunning) return "running";
  if (r.phase == JobPhase::kDone) return "finished";
  if (r.phase == JobPhase::kStopping) return "preempted: writing its checkpoint";
  const ClusterState& state = core_->state();
  const int32_t gang = std::max(1, r.job->gang_size);
  std::string types;
  for (int32_t t = 0; t < state.type_count(); ++t) {
    if (!r.allowed[t]) continue;
    if (!types.empty()) types += ", ";
    types += fmt::format("{} ({} free)", core_->cluster().catalog.Get(DeviceTypeId(t)).name,
                         state.FreeOfType(DeviceTypeId(t)));
  }
  // With a host request: the types whose free devices would do but whose nodes' free host cores
  // or memory would not, and which of the two is short.
  std::string host;
  const HostRequest request = HostRequestOf(*r.job);
  if (!request.empty()) {
    host = fmt::format(", each worker with {} on its node", model::DescribeHostRequest(*r.job));
    std::string short_of;
    for (int32_t t = 0; t < state.type_count(); ++t) {
      const DeviceTypeId type(t);
      if (!r.allowed[t] || (!core_->pinned(job.value()) && state.FreeOfType(type) < gang)) continue;
      if (core_->PlaceOn(r, type) || !core_->PlaceOn(r, type, HostRequest{})) continue;
      const bool cores = request.cores > 0 && !core_->PlaceOn(r, type, {request.cores, 0});
      const bool memory = request.memory > 0 && !core_->PlaceOn(r, type, {0, request.memory});
      const char* what = cores && memory ? "host cores and memory"
                         : cores         ? "host cores"
                         : memory        ? "host memory"
                                         : "host cores and memory together";
      short_of +=
          fmt::format("{}{} has the free devices but their nodes lack free {}",
                      short_of.empty() ? "" : ", ", core_->cluster().catalog.Get(type).name, what);
    }
    if (!short_of.empty()) host += "; waits for host resources: " + short_of;
  }
  const SchedulerCore::QueueKey mine = core_->KeyOf(r, now_s);
  size_t ahead = 0;
  for (int32_t id : core_->queue()) {
    if (core_->KeyOf(core_->record(id), now_s) < mine) ++ahead;
  }
  return fmt::format("needs {} device(s) of one type among: {}{}; {} queued job(s) ahead under {}",
                     gang, types, host, ahead, core_->policy().name());
}

size_t Scheduler::queued() const { return core_->queue().size(); }
const std::vector<int32_t>& Scheduler::queued_ids() const { return core_->queue(); }
size_t Scheduler::running() const { return core_->running().size(); }
size_t Scheduler::guests() const { return sharing_ ? sharing_->guest_count() : 0; }
const ClusterState& Scheduler::state() const { return core_->state(); }
const Policy& Scheduler::policy() const { return core_->policy(); }
const model::Cluster& Scheduler::cluster() const { return core_->cluster(); }

double Scheduler::TargetShare(JobId job, DeviceTypeId type) const {
  return allocation_ ? allocation_->TargetShare(job, type) : 0;
}

const std::vector<std::string>& Scheduler::allocation_log() const {
  static const std::vector<std::string> kNone;
  return allocation_ ? allocation_->log() : kNone;
}

int64_t Scheduler::allocation_failures() const {
  if (allocation_) return allocation_->failures();
  return preemptive_ ? preemptive_->plan_failures() : 0;
}
int64_t Scheduler::allocations_solved() const { return allocation_ ? allocation_->solves() : 0; }

}  // namespace hetsched::sched
