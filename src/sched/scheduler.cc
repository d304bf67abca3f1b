#include "sched/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <queue>

#include "sched/placement.h"

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;
using model::JobId;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

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
}  // namespace

util::Result<std::unique_ptr<Scheduler>> Scheduler::Create(const model::Cluster& cluster,
                                                           const model::ThroughputProfile* profile,
                                                           std::string_view policy,
                                                           const SchedulerOptions& options) {
  ASSIGN_OR_RETURN(auto p, MakePolicy(policy, options.tuning));
  ASSIGN_OR_RETURN(auto filters, MakeFilters(options.filters));
  ASSIGN_OR_RETURN(auto scorers, MakeScorers(options.scorers));
  if (options.space_sharing && (profile == nullptr || profile->empty())) {
    return util::Status::InvalidArgument(
        "space sharing needs a throughput profile with pair (co-located) entries; none given");
  }
  if (!(options.space_sharing_min_gain >= 0)) {
    return util::Status::InvalidArgument(fmt::format(
        "space sharing min gain {}: expected a number >= 0", options.space_sharing_min_gain));
  }
  return std::unique_ptr<Scheduler>(new Scheduler(cluster, profile, std::move(p),
                                                  std::move(filters), std::move(scorers), options));
}

Scheduler::Scheduler(const model::Cluster& cluster, const model::ThroughputProfile* profile,
                     std::unique_ptr<Policy> policy, std::vector<std::unique_ptr<Filter>> filters,
                     ScorerSet scorers, const SchedulerOptions& options)
    : cluster_(cluster),
      profile_(profile),
      policy_(std::move(policy)),
      filters_(std::move(filters)),
      scorers_(std::move(scorers)),
      options_(options),
      state_(cluster),
      owner_(cluster.devices.size(), -1) {
  allocator_ = dynamic_cast<const AllocationPolicy*>(policy_.get());
  if (allocator_ != nullptr) lp_solver_ = options_.lp_solver ? options_.lp_solver : MakeClpSolver();
  // Vendors as small ids: SameVendor runs in the type-scoring loops.
  std::map<std::string, int32_t> vendors;
  for (size_t t = 0; t < cluster.catalog.size(); ++t) {
    const std::string& v = cluster.catalog.Get(DeviceTypeId(static_cast<int32_t>(t))).vendor;
    vendor_of_type_.push_back(
        vendors.emplace(v, static_cast<int32_t>(vendors.size())).first->second);
  }
}

Scheduler::QueueKey Scheduler::KeyOf(const JobRecord& r, double now_s) const {
  return {policy_->Key(r, now_s, belief_), r.job->arrival_s, r.seq, r.job->id.value()};
}

void Scheduler::Enqueue(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  r.phase = JobPhase::kQueued;
  r.queued_since_s = now_s;
  pos_[id] = static_cast<int32_t>(queue_.size());
  queue_.push_back(id);
  queue_key_[id] = KeyOf(r, 0);
  sorted_queue_.insert(queue_key_[id]);
}

void Scheduler::Dequeue(int32_t id) {
  const int32_t p = pos_[id];
  queue_[p] = queue_.back();
  pos_[queue_[p]] = p;
  queue_.pop_back();
  // The key it was filed under (its belief may have moved since only through RefreshBelief,
  // which re-files every queued job).
  sorted_queue_.erase(queue_key_[id]);
}

void Scheduler::AddRunning(int32_t id) {
  pos_[id] = static_cast<int32_t>(running_.size());
  running_.push_back(id);
}

void Scheduler::RemoveRunning(int32_t id) {
  if (options_.space_sharing) UnindexSolo(id);
  const int32_t p = pos_[id];
  running_[p] = running_.back();
  pos_[running_[p]] = p;
  running_.pop_back();
}

Admission Scheduler::Submit(const model::Job& job, double now_s,
                            std::optional<SizeEstimate> estimate) {
  const int32_t id = job.id.value();
  assert(id >= 0);
  // A slot is reused only once its job ended (the daemon's JobSlots hands out freed ids).
  assert(!Known(job.id) || records_[id].phase == JobPhase::kDone);
  if (Known(job.id)) lp_slot_reused_ = true;
  if (static_cast<size_t>(id) >= records_.size()) {
    records_.resize(id + 1);
    pinned_.resize(id + 1);
    pos_.resize(id + 1, -1);
    queue_key_.resize(id + 1);
    hints_.resize(id + 1);
  }
  if (options_.space_sharing) {
    if (job_type_of_.size() <= static_cast<size_t>(id)) job_type_of_.resize(id + 1, -1);
    job_type_of_[id] = -1;
    if (!job.job_type.empty()) {
      job_type_of_[id] =
          job_type_index_.emplace(job.job_type, static_cast<int32_t>(job_type_index_.size()))
              .first->second;
    }
  }
  const int32_t types = state_.type_count();
  JobRecord r;
  r.speed.assign(types, 0);
  r.allowed.assign(types, 0);
  r.incompatible.assign(types, 0);
  std::vector<int32_t> count(types, 0);
  if (!job.pinned_devices.empty()) {
    auto pinned = ResolvePinned(cluster_, job);
    if (!pinned.ok()) return {false, pinned.status().message()};
    for (DeviceId d : *pinned) count[cluster_.device(d).type.value()]++;
    pinned_[id] = std::move(pinned).value();
  } else {
    for (int32_t t = 0; t < types; ++t) count[t] = state_.TotalOfType(DeviceTypeId(t));
  }
  const int32_t gang = std::max(1, job.gang_size);
  std::vector<std::string> reasons;
  for (int32_t t = 0; t < types; ++t) {
    if (count[t] == 0) continue;
    const model::DeviceType& dt = cluster_.catalog.Get(DeviceTypeId(t));
    bool incompatible = false;
    std::string why;
    for (const auto& f : filters_) {
      auto rejected = f->Reject(job, dt);
      if (!rejected) continue;
      if (options_.ignore_compat && f->name() == "compat") {
        incompatible = true;
        continue;
      }
      why = *rejected;
      break;
    }
    if (!why.empty()) {
      reasons.push_back(why);
      continue;
    }
    const auto speed = GangSpeed(job, dt, profile_);
    if (!incompatible && (!speed || *speed <= 0)) {
      reasons.push_back(fmt::format("no throughput known for '{}' at {} worker(s) on {}",
                                    job.job_type, gang, dt.name));
      continue;
    }
    if (count[t] < gang) {
      reasons.push_back(fmt::format("{} has {} device(s){}, the gang needs {}", dt.name, count[t],
                                    pinned_[id].empty() ? "" : " among the pinned ones", gang));
      continue;
    }
    r.allowed[t] = 1;
    r.incompatible[t] = incompatible ? 1 : 0;
    r.speed[t] = speed.value_or(0);
  }
  if (std::find(r.allowed.begin(), r.allowed.end(), 1) == r.allowed.end()) {
    std::string all;
    for (const auto& s : reasons) all += (all.empty() ? "" : "; ") + s;
    if (all.empty()) all = "the cluster has no devices";
    pinned_[id].clear();
    return {false, fmt::format("no device in the cluster can run it: {}", all)};
  }
  for (int32_t t = 0; t < types; ++t) {
    if (r.allowed[t] && !r.incompatible[t]) r.best_speed = std::max(r.best_speed, r.speed[t]);
  }
  r.ref_speed = r.best_speed;
  // The scheduler's copy: everything the user declared, not the true size.
  auto copy = std::make_unique<model::Job>(job);
  copy->work = 0;
  // Gavel's SLO is declared as a multiple of the job's duration: the trace states it, so the
  // deadline it implies is an input like any other.
  if (job.slo_factor && !job.deadline_s && r.best_speed > 0) {
    copy->deadline_s = job.arrival_s + *job.slo_factor * job.work / r.best_speed;
  }
  r.job = std::move(copy);
  if (estimate && estimate->work > 0) {
    r.estimated_work = estimate->work;
    r.estimate_source = estimate->source;
  } else if (options_.declared_estimates && job.estimate_s) {
    r.estimated_work = *job.estimate_s * r.ref_speed;
    r.estimate_source = EstimateSource::kUser;
  } else if (options_.declared_estimates && job.time_limit_s) {
    r.estimated_work = *job.time_limit_s * r.ref_speed;
    r.estimate_source = EstimateSource::kTimeLimit;
  } else if (options_.history_estimates) {
    if (auto mean_s = belief_.HistoryMean(job.job_type, job.gang_size)) {
      r.estimated_work = *mean_s * r.ref_speed;
      r.estimate_source = EstimateSource::kHistory;
    }
  }
  if (allocator_ != nullptr) {
    // Only the job's own estimate can say it cannot make its deadline.
    const double expected = r.estimated_work > 0 ? RemainingWork(r, now_s) : 0;
    if (auto why = allocator_->RejectAtSubmit(r, now_s, expected)) {
      pinned_[id].clear();
      return {false, *why};
    }
  }
  r.submitted = true;
  r.seq = next_seq_++;
  records_[id] = std::move(r);
  hints_[id] = HintsFor(cluster_, job.data_location);
  for (DeviceId d : pinned_[id]) state_.Reserve(d);
  Enqueue(id, now_s);
  return {true, ""};
}

std::optional<JobId> Scheduler::JobOn(DeviceId device) const {
  const int32_t o = owner_[device.value()];
  if (o < 0) return std::nullopt;
  return JobId(o);
}

bool Scheduler::HasAllowedType(JobId job) const {
  const auto& a = records_[job.value()].allowed;
  return std::find(a.begin(), a.end(), 1) != a.end();
}

bool Scheduler::SameVendor(DeviceTypeId a, DeviceTypeId b) const {
  return vendor_of_type_[a.value()] == vendor_of_type_[b.value()];
}

double Scheduler::NewWorkShare(const JobRecord& r, DeviceTypeId type) const {
  if (r.job->portable_checkpoint || !r.type.valid() || SameVendor(r.type, type)) return 1;
  const double done = r.DoneAt(decision_s_);
  if (done <= 0) return 1;
  // Its checkpoint does not load there: it would redo the work done so far. While devices of
  // its own vendor are up for it, it waits for them (time sharing would otherwise restart it
  // at every turn); when none are left, only the share of the work that is new counts.
  const int32_t gang = std::max(1, r.job->gang_size);
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (r.allowed[t] && !r.incompatible[t] && SameVendor(r.type, DeviceTypeId(t)) &&
        state_.UpOfType(DeviceTypeId(t)) >= gang) {
      return 0;
    }
  }
  const double remaining = RemainingWork(r, decision_s_);
  return remaining > 0 ? remaining / (remaining + done) : 0;
}

double Scheduler::ScoreOf(const JobRecord& r, DeviceTypeId type) const {
  return scorers_.Score(r, type, cluster_.catalog) * NewWorkShare(r, type);
}

int32_t Scheduler::TotalFree() const {
  int32_t total = 0;
  for (int32_t t = 0; t < state_.type_count(); ++t) total += state_.FreeOfType(DeviceTypeId(t));
  return total;
}

std::vector<DeviceTypeId> Scheduler::TypePreference(const JobRecord& r, TypeChoice choice,
                                                    const std::vector<int32_t>& capacity) const {
  const int32_t gang = std::max(1, r.job->gang_size);
  const bool pinned = !pinned_[r.job->id.value()].empty();
  std::vector<std::pair<double, int32_t>> cands;  // (score, type)
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (!r.allowed[t] || (!pinned && capacity[t] < gang)) continue;
    if (NewWorkShare(r, DeviceTypeId(t)) <= 0) continue;  // it waits for its own vendor
    const double score = choice == TypeChoice::kAgnostic ? 0 : ScoreOf(r, DeviceTypeId(t));
    cands.push_back({score, t});
  }
  std::sort(cands.begin(), cands.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    if (capacity[a.second] != capacity[b.second]) return capacity[a.second] > capacity[b.second];
    return a.second < b.second;
  });
  std::vector<DeviceTypeId> out;
  out.reserve(cands.size());
  for (const auto& c : cands) out.emplace_back(c.second);
  return out;
}

int32_t Scheduler::BestType(const JobRecord& r, TypeChoice choice,
                            const std::vector<int32_t>& capacity) const {
  const int32_t gang = std::max(1, r.job->gang_size);
  const bool pinned = !pinned_[r.job->id.value()].empty();
  int32_t best = -1;
  double best_score = 0;
  // TypePreference's order (higher score, then more capacity, then lower id) as one linear
  // pass: types are visited by increasing id, so a full tie keeps the earlier one.
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (!r.allowed[t] || (!pinned && capacity[t] < gang)) continue;
    if (NewWorkShare(r, DeviceTypeId(t)) <= 0) continue;  // it waits for its own vendor
    const double score = choice == TypeChoice::kAgnostic ? 0 : ScoreOf(r, DeviceTypeId(t));
    if (best < 0 || score > best_score || (score == best_score && capacity[t] > capacity[best])) {
      best = t;
      best_score = score;
    }
  }
  return best;
}

std::optional<std::vector<DeviceId>> Scheduler::PlaceOn(const JobRecord& r,
                                                        DeviceTypeId type) const {
  const int32_t id = r.job->id.value();
  const int32_t gang = std::max(1, r.job->gang_size);
  if (pinned_[id].empty()) return PlaceGang(state_, type, gang, hints_[id]);
  std::vector<DeviceId> out;
  for (DeviceId d : pinned_[id]) {
    if (static_cast<int32_t>(out.size()) == gang) break;
    if (cluster_.device(d).type == type && state_.IsFree(d) && state_.IsUp(d)) out.push_back(d);
  }
  if (static_cast<int32_t>(out.size()) < gang) return std::nullopt;
  return out;
}

bool Scheduler::MarkRunning(int32_t id, DeviceTypeId type, std::vector<DeviceId> devices,
                            double rate, double now_s) {
  JobRecord& r = records_[id];
  Dequeue(id);
  const bool resumed = r.first_start_s >= 0;
  if (!resumed) r.first_start_s = now_s;
  r.phase = JobPhase::kRunning;
  r.type = type;
  r.devices = std::move(devices);
  r.rate = rate;
  r.progress_since_s = now_s;
  r.service_since_s = now_s;
  AddRunning(id);
  return resumed;
}

Placement Scheduler::Start(int32_t id, DeviceTypeId type, std::vector<DeviceId> devices,
                           double now_s, bool migrated) {
  JobRecord& r = records_[id];
  const bool restarted = r.first_start_s >= 0 && r.done_work > 0 && !r.job->portable_checkpoint &&
                         r.type.valid() && !SameVendor(r.type, type);
  migrated = migrated || r.migrating;
  r.migrating = false;
  const double rate = r.incompatible[type.value()] ? 0 : r.speed[type.value()];
  const bool resumed = MarkRunning(id, type, std::move(devices), rate, now_s);
  if (restarted) r.done_work = 0;  // after it left the queue: its key depends on the work done
  state_.Allocate(r.devices);
  for (DeviceId d : r.devices) owner_[d.value()] = id;
  if (CanShare(r) && !r.incompatible[type.value()]) IndexSolo(id);
  Placement p{JobId(id), type, r.devices, resumed, migrated, JobId()};
  p.restarted = restarted;
  return p;
}

util::Status Scheduler::Adopt(JobId job, const std::vector<DeviceId>& devices, double done_work,
                              double now_s) {
  if (!Known(job) || records_[job.value()].phase != JobPhase::kQueued) {
    return util::Status::InvalidArgument(fmt::format("job {} is not queued", job.value()));
  }
  JobRecord& r = records_[job.value()];
  if (devices.size() != static_cast<size_t>(std::max(1, r.job->gang_size))) {
    return util::Status::InvalidArgument(fmt::format("'{}' needs {} device(s), not {}", r.job->name,
                                                     r.job->gang_size, devices.size()));
  }
  const DeviceTypeId type = cluster_.device(devices.front()).type;
  for (DeviceId d : devices) {
    if (d.value() < 0 || static_cast<size_t>(d.value()) >= cluster_.devices.size() ||
        cluster_.device(d).type != type || !state_.IsFree(d)) {
      return util::Status::InvalidArgument(fmt::format(
          "'{}': device {} is not a free device of its gang's type", r.job->name, d.value()));
    }
  }
  if (!r.allowed[type.value()]) {
    return util::Status::InvalidArgument(
        fmt::format("'{}' may not run on {}", r.job->name, cluster_.catalog.Get(type).name));
  }
  r.done_work = done_work;
  Start(job.value(), type, devices, now_s, false);
  return util::Status::Ok();
}

void Scheduler::Leave(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  r.done_work = r.DoneAt(now_s);
  r.attained_s = r.AttainedAt(now_s);
  r.attained_norm_s = r.AttainedNormAt(now_s);
  LeaveDevices(id, now_s);
  r.rate = 0;
  RemoveRunning(id);
}

void Scheduler::Stop(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  const bool holds = !r.guest;
  Leave(id, now_s);
  if (options_.stop_holds_devices && holds) {
    // LeaveDevices released them (or handed them to a guest, which StopGuestOf prevents for
    // preemptions): hold them again until the checkpoint is written.
    state_.Allocate(r.devices);
    for (DeviceId d : r.devices) owner_[d.value()] = id;
    r.phase = JobPhase::kStopping;
    return;
  }
  r.devices.clear();
  Enqueue(id, now_s);
}

void Scheduler::Stopped(JobId job, double now_s) {
  const int32_t id = job.value();
  JobRecord& r = records_[id];
  if (r.phase != JobPhase::kStopping) return;
  state_.Release(r.devices);
  for (DeviceId d : r.devices) owner_[d.value()] = -1;
  r.devices.clear();
  Enqueue(id, now_s);
}

double Scheduler::RemainingWork(const JobRecord& r, double now_s) const {
  return belief_.ExpectedRemaining(r, now_s) * r.ref_speed;
}

double Scheduler::BackfillRemainingWork(const JobRecord& r, double now_s) const {
  // With no estimate and no learned sizes the belief's guess (as long again as it has run) is
  // 0 for a job that just started: EASY would take it for one that ends at once.
  if (r.estimated_work <= 0 && !belief_.sizes_known()) return kInf;
  return RemainingWork(r, now_s);
}

double Scheduler::ExpectedRemainingWork(JobId job, double now_s) const {
  return RemainingWork(records_[job.value()], now_s);
}

bool Scheduler::HasWork() const {
  if (!queue_.empty() || !guests_.empty()) return true;
  if (running_.empty() || !(allocator_ != nullptr || policy_->preemptive())) return false;
  return TotalFree() > 0;
}

void Scheduler::RefreshBelief(double now_s) {
  if (now_s - last_refresh_s_ < options_.preempt_interval_s) return;
  last_refresh_s_ = now_s;
  if (!belief_.Refresh() || !policy_->key_uses_belief()) return;
  sorted_queue_.clear();
  for (int32_t id : queue_) {
    queue_key_[id] = KeyOf(records_[id], 0);
    sorted_queue_.insert(queue_key_[id]);
  }
}

void Scheduler::SetProgress(JobId job, double rate, double since_s) {
  JobRecord& r = records_[job.value()];
  r.rate = rate;
  r.progress_since_s = since_s;
}

void Scheduler::Finish(JobId job, double now_s) {
  JobRecord& r = records_[job.value()];
  if (r.phase == JobPhase::kRunning) {
    Leave(job.value(), now_s);
    belief_.Observe(r);
  } else if (r.phase == JobPhase::kQueued) {
    Dequeue(job.value());
  } else if (r.phase == JobPhase::kStopping) {
    Stopped(job, now_s);
    Dequeue(job.value());
  }
  r.devices.clear();
  r.phase = JobPhase::kDone;
  r.job.reset();
  hints_[job.value()] = {};
  for (DeviceId d : pinned_[job.value()]) state_.Unreserve(d);
  pinned_[job.value()].clear();
  // The slot may be reused by another job (JobSlots): nothing of this one may carry over.
  if (static_cast<size_t>(job.value()) < lp_present_.size()) {
    const size_t types = state_.type_count();
    lp_present_[job.value()] = 0;
    std::fill_n(lp_share_.begin() + job.value() * types, types, 0.0);
    std::fill_n(lp_received_.begin() + job.value() * types, types, 0.0);
  }
}

void Scheduler::Requeue(JobId job, double now_s, double done_work,
                        std::optional<DeviceTypeId> exclude_type) {
  const int32_t id = job.value();
  JobRecord& r = records_[id];
  if (r.phase == JobPhase::kRunning) {
    Leave(id, now_s);
    r.devices.clear();
  } else if (r.phase == JobPhase::kStopping) {
    Stopped(job, now_s);
    Dequeue(id);
  } else if (r.phase == JobPhase::kQueued) {
    Dequeue(id);
  } else {
    return;
  }
  r.done_work = done_work;
  r.migrating = false;
  if (exclude_type) {
    r.allowed[exclude_type->value()] = 0;
    r.best_speed = 0;
    for (size_t t = 0; t < r.allowed.size(); ++t) {
      if (r.allowed[t] && !r.incompatible[t]) r.best_speed = std::max(r.best_speed, r.speed[t]);
    }
  }
  Enqueue(id, now_s);
}

void Scheduler::Drop(JobId job, double now_s) { Finish(job, now_s); }

std::pair<double, int32_t> Scheduler::ShadowTime(DeviceTypeId type, int32_t gang,
                                                 double now_s) const {
  int32_t free = state_.FreeOfType(type);
  if (free >= gang) return {now_s, free - gang};
  std::vector<std::pair<double, int32_t>> ends;
  for (int32_t id : running_) {
    const JobRecord& r = records_[id];
    if (r.type != type || r.guest) continue;  // a guest frees no devices
    const double left = BackfillRemainingWork(r, now_s);
    const double end = r.rate > 0 ? std::max(now_s, r.progress_since_s) + left / r.rate : kInf;
    ends.push_back({end, static_cast<int32_t>(r.devices.size())});
  }
  std::sort(ends.begin(), ends.end());
  for (const auto& [end, n] : ends) {
    free += n;
    if (free >= gang) return {end, free - gang};
  }
  return {kInf, 0};
}

void Scheduler::DecideQueueOrder(double now_s, bool fill, Decision& out) {
  constexpr int32_t kFillScan = 256;
  const TypeChoice choice = policy_->type_choice() == TypeChoice::kAgnostic ? TypeChoice::kAgnostic
                                                                            : TypeChoice::kFastest;
  const bool backfill = !fill && policy_->blocking() == Blocking::kBackfill;
  int32_t free_total = TotalFree();
  std::vector<int32_t> free(state_.type_count());
  bool head_blocked = false;
  DeviceTypeId reserved_type;
  double shadow = kInf;
  int32_t extra = 0;
  int32_t misses = 0;
  // The sorted index is walked directly; Start erases only the current element.
  auto next = sorted_queue_.begin();
  while (free_total > 0 && next != sorted_queue_.end()) {
    const int32_t id = std::get<3>(*next);
    ++next;
    const JobRecord& r = records_[id];
    for (int32_t t = 0; t < state_.type_count(); ++t) free[t] = state_.FreeOfType(DeviceTypeId(t));
    std::optional<std::pair<DeviceTypeId, std::vector<DeviceId>>> chosen;
    for (DeviceTypeId t : TypePreference(r, choice, free)) {
      if (auto devs = PlaceOn(r, t)) {
        chosen.emplace(t, std::move(*devs));
        break;
      }
    }
    const int32_t gang = std::max(1, r.job->gang_size);
    if (!chosen) {
      if (fill) {
        if (++misses >= kFillScan) break;
        continue;
      }
      if (!backfill) break;
      if (!head_blocked) {
        head_blocked = true;
        // The head's reservation: the allowed type where it could start soonest.
        for (int32_t t = 0; t < state_.type_count(); ++t) {
          if (!r.allowed[t]) continue;
          const auto [when, spare] = ShadowTime(DeviceTypeId(t), gang, now_s);
          if (when < shadow) {
            shadow = when;
            extra = spare;
            reserved_type = DeviceTypeId(t);
          }
        }
      }
      continue;
    }
    if (head_blocked && chosen->first == reserved_type) {
      const double speed = r.speed[reserved_type.value()];
      const double end = speed > 0 ? now_s + BackfillRemainingWork(r, now_s) / speed : kInf;
      if (end > shadow) {
        if (gang > extra) continue;  // would delay the head's reservation
        extra -= gang;
      }
    }
    out.placed.push_back(Start(id, chosen->first, std::move(chosen->second), now_s, false));
    free_total -= gang;
  }
}

std::vector<int32_t> Scheduler::AssignByRegret(const std::vector<int32_t>& jobs,
                                               std::vector<int32_t> capacity, double now_s) const {
  (void)now_s;
  const int32_t types = state_.type_count();
  const size_t n = jobs.size();
  std::vector<int32_t> result(n, -1);
  struct Item {
    double regret;
    int32_t index;
    int32_t type;
  };
  // Each job's value per type (score plus stickiness), computed once: the heap re-evaluates
  // jobs whenever a type fills, and scoring is the costly part. NaN marks a disallowed type.
  std::vector<double> value(n * types);
  std::vector<int32_t> gangs(n);
  for (size_t i = 0; i < n; ++i) {
    const JobRecord& r = records_[jobs[i]];
    gangs[i] = std::max(1, r.job->gang_size);
    for (int32_t t = 0; t < types; ++t) {
      double v = std::numeric_limits<double>::quiet_NaN();
      if (r.allowed[t] && NewWorkShare(r, DeviceTypeId(t)) > 0) {
        v = ScoreOf(r, DeviceTypeId(t));
        if (r.phase == JobPhase::kRunning && r.type.value() == t) v += options_.stickiness;
      }
      value[i * types + t] = v;
    }
  }
  const auto evaluate = [&](size_t i) {
    const int32_t gang = gangs[i];
    const double* row = &value[i * types];
    double v1 = -1, v2 = 0;
    int32_t t1 = -1;
    for (int32_t t = 0; t < types; ++t) {
      if (std::isnan(row[t]) || capacity[t] < gang) continue;
      const double v = row[t];
      if (v > v1) {
        v2 = std::max(v2, v1);
        v1 = v;
        t1 = t;
      } else {
        v2 = std::max(v2, v);
      }
    }
    return Item{v1 - v2, static_cast<int32_t>(i), t1};
  };
  const auto cmp = [](const Item& a, const Item& b) {
    if (a.regret != b.regret) return a.regret < b.regret;
    return a.index > b.index;  // earlier in policy order first
  };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
  for (size_t i = 0; i < n; ++i) {
    Item it = evaluate(i);
    if (it.type >= 0) heap.push(it);
  }
  while (!heap.empty()) {
    const Item top = heap.top();
    heap.pop();
    const Item now = evaluate(top.index);
    if (now.type < 0) continue;
    if (now.type != top.type || now.regret < top.regret - 1e-12) {
      heap.push(now);  // stale: a type filled up since it was scored
      continue;
    }
    result[top.index] = now.type;
    capacity[now.type] -= gangs[top.index];
  }
  return result;
}

void Scheduler::DecidePreemptive(double now_s, Decision& out) {
  const int32_t types = state_.type_count();
  const TypeChoice choice = policy_->type_choice();
  // free[t]: devices nobody holds; held[t]: devices of running preemptible jobs not yet
  // reached in the policy order (the ones reached last lose them first).
  std::vector<int32_t> free(types), held(types, 0);
  for (int32_t t = 0; t < types; ++t) free[t] = state_.FreeOfType(DeviceTypeId(t));
  // Reused between decisions: at scale these are megabytes, and fresh ones cost page faults.
  std::vector<QueueKey>& keys = keys_;
  keys.clear();
  keys.reserve(queue_.size() + running_.size());
  for (int32_t id : queue_) keys.push_back(KeyOf(records_[id], now_s));
  for (int32_t id : running_) {
    const JobRecord& r = records_[id];
    // Guests hold no devices and run on spare capacity: the reallocation does not see them.
    if (!r.job->preemptible || r.guest) continue;
    held[r.type.value()] += static_cast<int32_t>(r.devices.size());
    keys.push_back(KeyOf(r, now_s));
  }
  std::sort(keys.begin(), keys.end());
  std::vector<int32_t> initial(types);
  int32_t capacity_total = 0;
  for (int32_t t = 0; t < types; ++t) {
    initial[t] = free[t] + held[t];
    capacity_total += initial[t];
  }
  // Takes `gang` devices of type t, free ones first.
  const auto take = [&](int32_t t, int32_t gang) {
    const int32_t from_free = std::min(free[t], gang);
    free[t] -= from_free;
    held[t] -= gang - from_free;
    capacity_total -= gang;
  };

  // Which jobs run: walk the policy order while capacity lasts.
  std::vector<int32_t>& selected = selected_;
  std::vector<int32_t>& tentative = tentative_;
  selected.clear();
  tentative.clear();
  std::vector<int32_t> both(types);
  bool blocked = false;  // in_order_only: an earlier job did not fit; later queued jobs wait
  for (const auto& k : keys) {
    if (capacity_total <= 0) break;
    const int32_t id = std::get<3>(k);
    const JobRecord& r = records_[id];
    const int32_t gang = std::max(1, r.job->gang_size);
    if (blocked && r.phase != JobPhase::kRunning) continue;
    int32_t t = -1;
    if (r.phase == JobPhase::kRunning) {
      // It keeps its devices unless jobs ahead of it took them (then it competes like a queued
      // job; its devices stay in the held pool of the jobs behind it).
      const int32_t own = r.type.value();
      if (held[own] >= gang) {
        held[own] -= gang;
        capacity_total -= gang;
        t = own;
        if (choice == TypeChoice::kFastest) {
          const int32_t best = BestType(r, choice, free);
          // Greedy-fastest moves a running job to a free faster type only for a clear gain.
          if (best >= 0 && best != own &&
              ScoreOf(r, DeviceTypeId(best)) > ScoreOf(r, r.type) + options_.stickiness) {
            t = best;
            free[own] += gang;
            free[t] -= gang;
          }
        }
        selected.push_back(id);
        tentative.push_back(t);
        continue;
      }
    }
    // Agnostic: prefer devices nobody holds; aware: the best type, taking held devices if needed.
    int32_t best = -1;
    if (choice == TypeChoice::kAgnostic) best = BestType(r, choice, free);
    if (best < 0) {
      for (int32_t u = 0; u < types; ++u) both[u] = free[u] + held[u];
      best = BestType(r, choice == TypeChoice::kAgnostic ? choice : TypeChoice::kFastest, both);
    }
    if (best < 0) {
      // Head-of-line blocking, as the policy promises; running jobs behind keep their devices.
      if (policy_->in_order_only()) blocked = true;
      continue;
    }
    t = best;
    take(t, gang);
    selected.push_back(id);
    tentative.push_back(t);
  }
  std::vector<int32_t> assigned = tentative;
  if (choice == TypeChoice::kMaxThroughput) {
    assigned = AssignByRegret(selected, initial, now_s);
    // A job the regret pass could not fit keeps its tentative type if that still has room.
    std::vector<int32_t> left = initial;
    for (size_t i = 0; i < selected.size(); ++i) {
      if (assigned[i] >= 0) left[assigned[i]] -= records_[selected[i]].job->gang_size;
    }
    for (size_t i = 0; i < selected.size(); ++i) {
      const int32_t gang = std::max(1, records_[selected[i]].job->gang_size);
      if (assigned[i] < 0 && left[tentative[i]] >= gang) {
        assigned[i] = tentative[i];
        left[tentative[i]] -= gang;
      }
    }
  }

  // Preempt running jobs that lost their place or move to another type.
  if (scratch_.size() < records_.size()) scratch_.resize(records_.size(), -2);
  if (moved_flag_.size() < records_.size()) moved_flag_.resize(records_.size(), 0);
  for (size_t i = 0; i < selected.size(); ++i) scratch_[selected[i]] = assigned[i];
  std::vector<int32_t> moved;
  const std::vector<int32_t> running_now = running_;
  for (int32_t id : running_now) {
    const JobRecord& r = records_[id];
    if (!r.job->preemptible || r.guest || r.phase != JobPhase::kRunning) continue;
    if (scratch_[id] == r.type.value()) continue;
    StopGuestOf(id, now_s, out);
    Stop(id, now_s);
    records_[id].preemptions++;
    out.preempted.push_back(JobId(id));
    if (scratch_[id] >= 0) {
      moved.push_back(id);
      moved_flag_[id] = 1;
      // Still writing its checkpoint: it starts on its new type after Stopped.
      records_[id].migrating = records_[id].phase == JobPhase::kStopping;
    }
  }
  // Start the selected jobs that are not running, in policy order.
  for (size_t i = 0; i < selected.size(); ++i) {
    const int32_t id = selected[i];
    scratch_[id] = -2;
    const JobRecord& r = records_[id];
    // Running, still writing its checkpoint (kStopping), or not given a type.
    if (r.phase != JobPhase::kQueued || assigned[i] < 0) continue;
    const bool migrated = moved_flag_[id] != 0;
    std::optional<std::vector<DeviceId>> devs = PlaceOn(r, DeviceTypeId(assigned[i]));
    DeviceTypeId type(assigned[i]);
    if (!devs) {  // fragmentation: another type with room, in preference order
      std::vector<int32_t> free(types);
      for (int32_t t = 0; t < types; ++t) free[t] = state_.FreeOfType(DeviceTypeId(t));
      for (DeviceTypeId t : TypePreference(r, choice, free)) {
        if ((devs = PlaceOn(r, t))) {
          type = t;
          break;
        }
      }
    }
    if (devs) out.placed.push_back(Start(id, type, std::move(*devs), now_s, migrated));
  }
  for (int32_t id : moved) moved_flag_[id] = 0;
}

Decision Scheduler::Decide(double now_s) {
  Decision out;
  decision_s_ = now_s;
  RefreshBelief(now_s);
  const bool full_due = now_s - last_full_s_ >= options_.preempt_interval_s;
  if (queue_.empty()) {
    // Nobody waits, but running jobs may move up to faster devices that came free (as Gavel
    // re-solves every round), subject to the same stickiness; guests may move too.
    // Its own clock: a decision with nobody waiting must not delay the full decision the next
    // arrival may need.
    const bool upgrade_due =
        now_s - std::max(last_full_s_, last_upgrade_s_) >= options_.preempt_interval_s;
    if (upgrade_due && HasWork() && (allocator_ != nullptr || policy_->preemptive())) {
      last_upgrade_s_ = now_s;
      if (allocator_ != nullptr) {
        DecideAllocation(now_s, out);
      } else {
        DecidePreemptive(now_s, out);
      }
    }
    if (options_.space_sharing) DecidePairs(now_s, out);
    return out;
  }
  if (allocator_ != nullptr) {
    // Like the preemptive policies: shares are re-realized (which preempts) at most every
    // preempt interval; in between, queued jobs only fill free devices.
    if (full_due) {
      last_full_s_ = now_s;
      DecideAllocation(now_s, out);
    } else {
      DecideQueueOrder(now_s, true, out);
    }
  } else if (!policy_->preemptive()) {
    DecideQueueOrder(now_s, false, out);
  } else if (full_due) {
    last_full_s_ = now_s;
    DecidePreemptive(now_s, out);
    // Work conservation: devices the reallocation left free (a selected job that did not fit
    // where it was assigned, capacity counted for gangs that could not be placed) go to
    // queued jobs in policy order, as between reallocations.
    if (!queue_.empty()) DecideQueueOrder(now_s, !policy_->in_order_only(), out);
  } else {
    DecideQueueOrder(now_s, !policy_->in_order_only(), out);
  }
  if (options_.space_sharing) DecidePairs(now_s, out);
  return out;
}

std::string Scheduler::WhyWaiting(JobId job, double now_s) const {
  const JobRecord& r = records_[job.value()];
  if (r.phase == JobPhase::kRunning) return "running";
  if (r.phase == JobPhase::kDone) return "finished";
  if (r.phase == JobPhase::kStopping) return "preempted: writing its checkpoint";
  const int32_t gang = std::max(1, r.job->gang_size);
  std::string types;
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (!r.allowed[t]) continue;
    if (!types.empty()) types += ", ";
    types += fmt::format("{} ({} free)", cluster_.catalog.Get(DeviceTypeId(t)).name,
                         state_.FreeOfType(DeviceTypeId(t)));
  }
  const QueueKey mine = KeyOf(r, now_s);
  size_t ahead = 0;
  for (int32_t id : queue_) {
    if (KeyOf(records_[id], now_s) < mine) ++ahead;
  }
  return fmt::format("needs {} device(s) of one type among: {}; {} queued job(s) ahead under {}",
                     gang, types, ahead, policy_->name());
}

// ---- Allocation policies ----------------------------------------------------------------------

double Scheduler::TargetShare(JobId job, DeviceTypeId type) const {
  const size_t i = static_cast<size_t>(job.value()) * state_.type_count() + type.value();
  return i < lp_share_.size() ? lp_share_[i] : 0;
}

void Scheduler::LogAllocation(std::string line) {
  if (lp_log_.size() >= kAllocationLogLines) lp_log_.erase(lp_log_.begin());
  lp_log_.push_back(std::move(line));
}

// Gavel's round-based mechanism (Narayanan et al., OSDI 2020, Section 5): the LP gives target
// shares X[j][t]; each decision ranks (job, type) pairs by X[j][t] / (the share of its active
// time job j has received on t) and grants gangs in that order, whole gangs only, each job on
// one type. Devices the ranking leaves idle go to the remaining jobs on their fastest type with
// room (work conservation, which Gavel's mechanism lacks). Placement is the usual topology-aware
// gang placement (PlaceOn). The LP is solved again only when the set of jobs or devices changed.
void Scheduler::DecideAllocation(double now_s, Decision& out) {
  const int32_t types = state_.type_count();
  const size_t n_rec = records_.size();
  if (lp_present_.size() < n_rec) {
    lp_present_.resize(n_rec, 0);
    lp_received_.resize(n_rec * types, 0);
    lp_share_.resize(n_rec * types, 0);
  }
  // Book the time since the last allocation decision: a running job has run on its type since
  // then, or since it started (fill decisions start jobs in between).
  if (lp_last_s_ >= 0 && now_s > lp_last_s_) {
    for (int32_t id : running_) {
      const JobRecord& r = records_[id];
      lp_received_[static_cast<size_t>(id) * types + r.type.value()] +=
          now_s - std::max(lp_last_s_, r.service_since_s);
    }
  }
  std::vector<int32_t> active, guests;
  std::vector<double> capacity(types);
  for (int32_t t = 0; t < types; ++t) capacity[t] = state_.UpOfType(DeviceTypeId(t));
  for (int32_t id : running_) {
    const JobRecord& r = records_[id];
    if (r.guest) {  // on spare capacity: not part of the allocation while it shares
      guests.push_back(id);
    } else if (r.job->preemptible) {
      active.push_back(id);
    } else {
      capacity[r.type.value()] -= static_cast<double>(r.devices.size());
    }
  }
  active.insert(active.end(), queue_.begin(), queue_.end());
  // In submission order: ids are slots a later job may reuse.
  std::sort(active.begin(), active.end(),
            [&](int32_t a, int32_t b) { return records_[a].seq < records_[b].seq; });
  for (const std::vector<int32_t>* ids : {&active, &guests}) {
    for (int32_t id : *ids) {
      const double since = lp_last_s_ >= 0 ? std::max(lp_last_s_, records_[id].job->arrival_s)
                                           : records_[id].job->arrival_s;
      lp_present_[id] += std::max(0.0, now_s - since);
    }
  }
  lp_last_s_ = now_s;

  if (active != lp_jobs_ || capacity != lp_capacity_ || lp_slot_reused_) {
    lp_slot_reused_ = false;
    AllocationProblem problem;
    problem.capacity = capacity;
    for (int32_t t = 0; t < types; ++t) {
      problem.price_per_hour.push_back(cluster_.catalog.Get(DeviceTypeId(t)).price_per_hour);
    }
    std::vector<int32_t> in_lp;  // ids of problem.jobs
    for (int32_t id : active) {
      const JobRecord& r = records_[id];
      AllocJob j;
      j.speed.assign(types, 0);
      bool any = false;
      for (int32_t t = 0; t < types; ++t) {
        if (r.allowed[t] && !r.incompatible[t] && r.speed[t] > 0) {
          j.speed[t] =
              (allocator_->agnostic() ? 1.0 : r.speed[t]) * NewWorkShare(r, DeviceTypeId(t));
        }
        any = any || j.speed[t] > 0;
      }
      if (!any) continue;  // runs nowhere it can progress: left to the fill pass
      j.name = r.job->name;
      j.gang = std::max(1, r.job->gang_size);
      j.weight = r.job->priority_weight > 0 ? r.job->priority_weight : 1;
      // Nothing known yet (no estimate, nothing run): at least a second on its best type, so
      // the LPs that divide by remaining work stay finite.
      j.remaining = std::max(RemainingWork(r, now_s), r.ref_speed);
      j.work = r.DoneAt(now_s) + j.remaining;
      j.elapsed_s = std::max(0.0, now_s - r.job->arrival_s);
      j.slo_rate = allocator_->SloRate(r, now_s, j.remaining);
      problem.jobs.push_back(std::move(j));
      in_lp.push_back(id);
    }
    auto solved =
        ComputeAllocation(problem, allocator_->objective(), *lp_solver_, options_.allocation);
    if (!solved.ok()) {
      ++lp_failures_;
      LogAllocation(fmt::format(
          "t={:.0f} s: {} allocation for {} job(s) failed ({}); keeping the last good allocation",
          now_s, policy_->name(), problem.jobs.size(), solved.status().message()));
    } else {
      lp_solves_ += solved->lps_solved;
      for (int32_t id : lp_jobs_) {
        std::fill_n(lp_share_.begin() + static_cast<size_t>(id) * types, types, 0.0);
      }
      for (size_t i = 0; i < in_lp.size(); ++i) {
        for (int32_t t = 0; t < types; ++t) {
          lp_share_[static_cast<size_t>(in_lp[i]) * types + t] = solved->At(i, t);
        }
      }
      for (int32_t i : solved->slo_missed) {
        LogAllocation(
            fmt::format("t={:.0f} s: min-cost: job '{}' cannot meet its SLO ({:.4g} "
                        "steps/s needed from now on)",
                        now_s, problem.jobs[i].name, problem.jobs[i].slo_rate));
      }
      lp_jobs_ = active;
      lp_capacity_ = capacity;
    }
  }

  // Grant whole gangs by priority = target share / received share.
  std::vector<int32_t> room(types);
  for (int32_t t = 0; t < types; ++t) room[t] = state_.FreeOfType(DeviceTypeId(t));
  for (int32_t id : running_) {
    const JobRecord& r = records_[id];
    if (r.job->preemptible && !r.guest) {
      room[r.type.value()] += static_cast<int32_t>(r.devices.size());
    }
  }
  struct Candidate {
    double priority;
    bool running_there;
    int32_t id;
    int32_t type;
  };
  std::vector<Candidate> cands;
  for (int32_t id : active) {
    const JobRecord& r = records_[id];
    const double present = lp_present_[id];
    for (int32_t t = 0; t < types; ++t) {
      const double share = lp_share_[static_cast<size_t>(id) * types + t];
      // Shares solved before the job made progress may point at another vendor's devices.
      if (share < 1e-6 || !r.allowed[t] || NewWorkShare(r, DeviceTypeId(t)) <= 0) continue;
      const double received = lp_received_[static_cast<size_t>(id) * types + t];
      // Never served there yet: ahead of everyone served, by share.
      const double priority =
          received > 1e-9 && present > 0 ? share * present / received : 1e12 * share;
      cands.push_back({priority, r.phase == JobPhase::kRunning && r.type.value() == t, id, t});
    }
  }
  std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.running_there != b.running_there) return a.running_there;
    return records_[a.id].seq < records_[b.id].seq;
  });
  std::vector<int32_t> choice(n_rec, -1);
  for (const Candidate& c : cands) {
    const int32_t gang = std::max(1, records_[c.id].job->gang_size);
    if (choice[c.id] >= 0 || room[c.type] < gang) continue;
    choice[c.id] = c.type;
    room[c.type] -= gang;
  }
  // Work conservation: running jobs first (no needless preemption), then by arrival.
  std::vector<int32_t> rest;
  for (int32_t id : active) {
    if (choice[id] < 0) rest.push_back(id);
  }
  std::stable_sort(rest.begin(), rest.end(), [&](int32_t a, int32_t b) {
    const bool ra = records_[a].phase == JobPhase::kRunning;
    const bool rb = records_[b].phase == JobPhase::kRunning;
    if (ra != rb) return ra;
    return records_[a].job->arrival_s < records_[b].job->arrival_s;
  });
  for (int32_t id : rest) {
    const JobRecord& r = records_[id];
    const int32_t gang = std::max(1, r.job->gang_size);
    int32_t best = -1;
    if (r.phase == JobPhase::kRunning && room[r.type.value()] >= gang) {
      best = r.type.value();  // stays where it is
    } else {
      for (int32_t t = 0; t < types; ++t) {
        const double useful = r.speed[t] * NewWorkShare(r, DeviceTypeId(t));
        if (r.allowed[t] && room[t] >= gang && useful > 0 &&
            (best < 0 || useful > r.speed[best] * NewWorkShare(r, DeviceTypeId(best)))) {
          best = t;
        }
      }
    }
    if (best < 0) continue;
    choice[id] = best;
    room[best] -= gang;
  }

  // Preempt what moves or stops, then start the chosen, largest gangs first (less fragmentation).
  std::vector<char> moved(n_rec, 0);
  const std::vector<int32_t> running_now = running_;
  for (int32_t id : running_now) {
    const JobRecord& r = records_[id];
    if (!r.job->preemptible || r.guest || r.phase != JobPhase::kRunning ||
        choice[id] == r.type.value()) {
      continue;
    }
    StopGuestOf(id, now_s, out);
    Stop(id, now_s);
    records_[id].preemptions++;
    out.preempted.push_back(JobId(id));
    if (choice[id] >= 0) {
      moved[id] = 1;
      records_[id].migrating = records_[id].phase == JobPhase::kStopping;
    }
  }
  std::vector<int32_t> starts;
  for (int32_t id : active) {
    if (choice[id] >= 0 && records_[id].phase == JobPhase::kQueued) starts.push_back(id);
  }
  std::stable_sort(starts.begin(), starts.end(), [&](int32_t a, int32_t b) {
    return records_[a].job->gang_size > records_[b].job->gang_size;
  });
  std::vector<int32_t> free(types);
  for (int32_t id : starts) {
    const JobRecord& r = records_[id];
    DeviceTypeId type(choice[id]);
    std::optional<std::vector<DeviceId>> devs = PlaceOn(r, type);
    if (!devs) {  // fragmentation or pinned devices: another type with room
      for (int32_t t = 0; t < types; ++t) free[t] = state_.FreeOfType(DeviceTypeId(t));
      for (DeviceTypeId t : TypePreference(r, TypeChoice::kMaxThroughput, free)) {
        if ((devs = PlaceOn(r, t))) {
          type = t;
          break;
        }
      }
    }
    if (!devs) continue;
    out.placed.push_back(Start(id, type, std::move(*devs), now_s, moved[id] != 0));
  }
}

// ---- Space sharing ---------------------------------------------------------------------------

double Scheduler::SpeedNow(JobId job) const {
  const JobRecord& r = records_[job.value()];
  return r.partner >= 0 ? r.pair_speed : r.speed[r.type.value()];
}

std::vector<JobId> Scheduler::TakeSpeedChanges() {
  std::vector<JobId> out;
  out.swap(speed_changes_);
  return out;
}

bool Scheduler::CanShare(const JobRecord& r) const {
  // Pinned jobs keep their fixed devices to themselves; a non-preemptible job's speed is a
  // promise a partner would break.
  const int32_t id = r.job->id.value();
  return options_.space_sharing && r.job->preemptible && pinned_[id].empty() &&
         static_cast<size_t>(id) < job_type_of_.size() && job_type_of_[id] >= 0;
}

std::tuple<int32_t, int32_t, int32_t> Scheduler::SoloKey(int32_t id) const {
  const JobRecord& r = records_[id];
  return {r.type.value(), std::max(1, r.job->gang_size), job_type_of_[id]};
}

void Scheduler::IndexSolo(int32_t id) { solo_[SoloKey(id)].insert(id); }

void Scheduler::UnindexSolo(int32_t id) {
  const JobRecord& r = records_[id];
  if (r.partner >= 0 || !CanShare(r)) return;  // never indexed
  auto it = solo_.find(SoloKey(id));
  if (it == solo_.end()) return;
  it->second.erase(id);
  if (it->second.empty()) solo_.erase(it);
}

std::optional<std::pair<double, double>> Scheduler::PairFactors(int32_t a, int32_t b,
                                                                DeviceTypeId type) {
  const model::Job& ja = *records_[a].job;
  const model::Job& jb = *records_[b].job;
  const int32_t gang = std::max(1, ja.gang_size);
  const auto key = std::make_tuple(job_type_of_[a], job_type_of_[b], gang, type.value());
  if (auto it = pair_cache_.find(key); it != pair_cache_.end()) return it->second;
  std::optional<std::pair<double, double>> out;
  const model::DeviceType& dt = cluster_.catalog.Get(type);
  std::vector<std::string> names = {dt.name};
  names.insert(names.end(), dt.aliases.begin(), dt.aliases.end());
  for (const std::string& name : names) {
    auto pair = profile_->Colocated(ja.job_type, gang, jb.job_type, gang, name);
    if (!pair) {
      if ((pair = profile_->Colocated(jb.job_type, gang, ja.job_type, gang, name))) {
        std::swap(pair->first, pair->second);
      }
    }
    const auto alone_a = profile_->Isolated(ja.job_type, gang, name);
    const auto alone_b = profile_->Isolated(jb.job_type, gang, name);
    if (!pair || !alone_a || !alone_b) continue;
    // Both must progress: Gavel's file marks pairs that do not fit together with zeros.
    if (*alone_a > 0 && *alone_b > 0 && pair->first > 0 && pair->second > 0) {
      out.emplace(pair->first / *alone_a, pair->second / *alone_b);
    }
    break;
  }
  pair_cache_.emplace(key, out);
  return out;
}

void Scheduler::Rebase(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  r.done_work = r.DoneAt(now_s);
  r.progress_since_s = std::max(now_s, r.progress_since_s);
  r.attained_s = r.AttainedAt(now_s);
  r.attained_norm_s = r.AttainedNormAt(now_s);
  r.service_since_s = now_s;
}

void Scheduler::LeaveDevices(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  const int32_t p = r.partner;
  if (p < 0) {
    state_.Release(r.devices);
    for (DeviceId d : r.devices) owner_[d.value()] = -1;
    return;
  }
  JobRecord& o = records_[p];
  Rebase(p, now_s);
  o.partner = -1;
  o.pair_speed = 0;
  o.rate = o.speed[o.type.value()];  // until the driver sets the real rate
  if (r.guest) {
    guests_.erase(id);
  } else {  // the guest stays and now holds the devices
    for (DeviceId d : r.devices) owner_[d.value()] = p;
    o.guest = false;
    guests_.erase(p);
  }
  r.partner = -1;
  r.guest = false;
  r.pair_speed = 0;
  if (CanShare(o)) IndexSolo(p);
  speed_changes_.push_back(JobId(p));
}

void Scheduler::StopGuestOf(int32_t host, double now_s, Decision& out) {
  const int32_t g = records_[host].partner;
  if (g < 0) return;
  Stop(g, now_s);
  records_[g].preemptions++;
  out.preempted.push_back(JobId(g));
}

Placement Scheduler::Join(int32_t id, int32_t host, double own_factor, double host_factor,
                          double now_s) {
  JobRecord& h = records_[host];
  const DeviceTypeId type = h.type;
  UnindexSolo(host);
  Rebase(host, now_s);
  h.partner = id;
  h.pair_speed = h.speed[type.value()] * host_factor;
  h.rate = h.pair_speed;  // until the driver sets the real rate
  speed_changes_.push_back(JobId(host));

  JobRecord& r = records_[id];
  r.partner = host;
  r.guest = true;
  r.pair_speed = r.speed[type.value()] * own_factor;
  const bool resumed = MarkRunning(id, type, h.devices, r.pair_speed, now_s);
  guests_.insert(id);
  return Placement{JobId(id), type, r.devices, resumed, false, JobId(host)};
}

void Scheduler::DecidePairs(double now_s, Decision& out) {
  // Bounds that keep a decision cheap at 100,000 queued jobs: queued jobs considered per
  // decision, and hosts of one kind checked for memory.
  constexpr int32_t kPairScan = 256;
  constexpr int32_t kHostScan = 16;
  const int32_t types = state_.type_count();
  // A guest that could run alone on free devices faster than in its pair moves there.
  if (!guests_.empty() && TotalFree() > 0) {
    std::vector<int32_t> candidates;
    for (int32_t id : guests_) {
      if (static_cast<int32_t>(candidates.size()) == kPairScan) break;
      candidates.push_back(id);
    }
    for (int32_t id : candidates) {
      const JobRecord& r = records_[id];
      const int32_t gang = std::max(1, r.job->gang_size);
      int32_t best = -1;
      for (int32_t t = 0; t < types; ++t) {
        if (!r.allowed[t] || r.incompatible[t] || state_.FreeOfType(DeviceTypeId(t)) < gang) {
          continue;
        }
        const double useful = r.speed[t] * NewWorkShare(r, DeviceTypeId(t));
        if (useful > r.pair_speed &&
            (best < 0 || useful > r.speed[best] * NewWorkShare(r, DeviceTypeId(best)))) {
          best = t;
        }
      }
      if (best < 0) continue;
      auto devs = PlaceOn(r, DeviceTypeId(best));
      if (!devs) continue;
      Stop(id, now_s);
      records_[id].preemptions++;
      out.preempted.push_back(JobId(id));
      out.placed.push_back(Start(id, DeviceTypeId(best), std::move(*devs), now_s, true));
    }
  }
  // Queued jobs in policy order each join the running job that makes the best pair.
  int32_t scanned = 0;
  auto next = sorted_queue_.begin();
  while (next != sorted_queue_.end() && scanned < kPairScan && !solo_.empty()) {
    const int32_t id = std::get<3>(*next);
    ++next;
    ++scanned;
    const JobRecord& r = records_[id];
    if (!CanShare(r)) continue;
    const int32_t gang = std::max(1, r.job->gang_size);
    const uint64_t mem = r.job->memory_per_worker;
    double best_score = 1 + options_.space_sharing_min_gain;
    int32_t best_host = -1;
    std::pair<double, double> best_factors;
    for (int32_t t = 0; t < types; ++t) {
      if (!r.allowed[t] || r.incompatible[t] || !(r.speed[t] > 0)) continue;
      const uint64_t device_mem = cluster_.catalog.Get(DeviceTypeId(t)).memory_bytes;
      for (auto it = solo_.lower_bound({t, gang, -1});
           it != solo_.end() && std::get<0>(it->first) == t && std::get<1>(it->first) == gang;
           ++it) {
        const auto factors = PairFactors(id, *it->second.begin(), DeviceTypeId(t));
        if (!factors || factors->first + factors->second <= best_score) continue;
        // Both workers' memory must fit on the device (unknown memory fits, as in the filter).
        int32_t host = -1, checked = 0;
        for (int32_t h : it->second) {
          if (++checked > kHostScan) break;
          const uint64_t other = records_[h].job->memory_per_worker;
          if (mem == 0 || other == 0 || device_mem == 0 || mem + other <= device_mem) {
            host = h;
            break;
          }
        }
        if (host < 0) continue;
        best_score = factors->first + factors->second;
        best_host = host;
        best_factors = *factors;
      }
    }
    if (best_host >= 0) {
      out.placed.push_back(Join(id, best_host, best_factors.first, best_factors.second, now_s));
    }
  }
}

}  // namespace hetsched::sched
