#include "sched/scheduler_core.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;
using model::JobId;

SchedulerCore::SchedulerCore(const model::Cluster& cluster, const model::ThroughputProfile* profile,
                             std::unique_ptr<Policy> policy, ScorerSet scorers,
                             const SchedulerOptions& options, PreemptionPrice price)
    : cluster_(cluster),
      profile_(profile),
      policy_(std::move(policy)),
      keys_by_rank_(policy_->keys_by_rank()),
      scorers_(std::move(scorers)),
      options_(options),
      price_(price),
      state_(cluster),
      owner_(cluster.devices.size(), -1) {
  if (options.tenants) {
    // A grant counts until the tenants' turns are next re-dealt: a preemptive policy re-deals
    // them every preempt interval; the others re-deal nothing, and that interval, which they do
    // not use, must not move them (docs/simulator.md, "Tenants").
    const double grant_s =
        policy_->preemptive() ? options.preempt_interval_s : TenantShares::kGrantWithoutPreemptionS;
    tenants_ = std::make_unique<TenantShares>(*options.tenants, cluster, grant_s);
  }
  // Scores fixed per job (no state read), keys fixed in time (no time slicing, no belief).
  if (policy_->preemptive() && policy_->type_choice() == TypeChoice::kFastest &&
      !policy_->time_slices() && !policy_->key_uses_belief() && !scorers_.reads_state() &&
      !options.elastic && !options.space_sharing) {
    moves_ = std::make_unique<MoveCandidates>(state_.type_count());
  }
  // Vendors as small ids: SameVendor runs in the type-scoring loops.
  std::map<std::string, int32_t> vendors;
  for (size_t t = 0; t < cluster.catalog.size(); ++t) {
    const std::string& v = cluster.catalog.Get(DeviceTypeId(static_cast<int32_t>(t))).vendor;
    vendor_of_type_.push_back(
        vendors.emplace(v, static_cast<int32_t>(vendors.size())).first->second);
  }
}

void SchedulerCore::SetOwner(const std::vector<DeviceId>& devices, int32_t id) {
  for (DeviceId d : devices) owner_[d.value()] = id;
}

void SchedulerCore::Grow(int32_t id) {
  if (static_cast<size_t>(id) < records_.size()) return;
  records_.resize(id + 1);
  pinned_.resize(id + 1);
  pos_.resize(id + 1, -1);
  queue_key_.resize(id + 1);
  own_key_pos_.resize(id + 1, -1);
  queue_entry_.resize(id + 1);
  hints_.resize(id + 1);
  if (moves_) moves_->Grow(records_.size());
}

void SchedulerCore::Reserve(size_t jobs) {
  records_.reserve(jobs);
  pinned_.reserve(jobs);
  pos_.reserve(jobs);
  queue_key_.reserve(jobs);
  own_key_pos_.reserve(jobs);
  queue_entry_.reserve(jobs);
  hints_.reserve(jobs);
}

void SchedulerCore::Admit(int32_t id, JobRecord record, std::vector<DeviceId> pinned,
                          double now_s) {
  records_[id] = std::move(record);
  pinned_[id] = std::move(pinned);
  const model::Job& job = *records_[id].job;
  records_[id].id = id;
  records_[id].arrival_s = job.arrival_s;
  records_[id].preemptible = job.preemptible;
  records_[id].gang = std::max(1, job.gang_size);
  hints_[id] = job.data_bytes > 0 || !job.data_location.empty()
                   ? HintsFor(cluster_, job.data_location)
                   : PlacementHints{};
  for (DeviceId d : pinned_[id]) state_.Reserve(d);
  Enqueue(id, now_s);
  ++job_set_version_;
}

void SchedulerCore::Retire(int32_t id) {
  JobRecord& r = records_[id];
  r.devices.clear();
  r.phase = JobPhase::kDone;
  r.job.reset();
  for (JobRecord::SizeOption& o : r.sizes) o.job.reset();
  hints_[id] = {};
  for (DeviceId d : pinned_[id]) state_.Unreserve(d);
  pinned_[id].clear();
  ++job_set_version_;
}

SchedulerCore::QueueKey SchedulerCore::KeyOf(const JobRecord& r, double now_s) const {
  return {policy_->Key(r, now_s, belief_), r.arrival_s, r.seq, r.id};
}

void SchedulerCore::AddNode(model::NodeId node) {
  state_.AddNode(node);
  owner_.resize(cluster_.devices.size(), -1);
}

void SchedulerCore::Enqueue(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  r.phase = JobPhase::kQueued;
  r.queued_since_s = now_s;
  pos_[id] = static_cast<int32_t>(queue_.size());
  queue_.push_back(id);
  queue_key_[id] = KeyOf(r, 0);
  if (policy_->keys_by_rank() && SizeBelief::RanksAsNew(r)) {
    own_key_pos_[id] = -1;
  } else {
    own_key_pos_[id] = static_cast<int32_t>(own_key_queue_.size());
    own_key_queue_.push_back(id);
  }
  if (!sorted_queue_stale_) queue_entry_[id] = sorted_queue_.insert(queue_key_[id]).first;
  if (track_queue_changes_) queue_changes_.push_back(id);
}

void SchedulerCore::Dequeue(int32_t id) {
  const int32_t p = pos_[id];
  queue_[p] = queue_.back();
  pos_[queue_[p]] = p;
  queue_.pop_back();
  if (const int32_t own = own_key_pos_[id]; own >= 0) {
    own_key_queue_[own] = own_key_queue_.back();
    own_key_pos_[own_key_queue_[own]] = own;
    own_key_queue_.pop_back();
    own_key_pos_[id] = -1;
  }
  // A stale index is re-filed from the queue when read.
  if (!sorted_queue_stale_) sorted_queue_.erase(queue_entry_[id]);
  if (track_queue_changes_) queue_changes_.push_back(id);
}

void SchedulerCore::AddRunning(int32_t id) {
  pos_[id] = static_cast<int32_t>(running_.size());
  running_.push_back(id);
  if (moves_) FileMoveCandidate(id);
  NoteRunningChanged(id);
}

void SchedulerCore::FileMoveCandidate(int32_t id) {
  const JobRecord& r = records_[id];
  // A full decision leaves the jobs it may not stop where they are.
  if (!r.job->preemptible || !HoldsDevices(r)) return;
  // PreemptiveStrategy moves it to the best type with room when that scores more than its
  // own by the stickiness. ScoreOf there is at most the scorers' value (NewWorkShare <= 1),
  // and on its own type it is that value: a type failing this test with the scorers' value
  // fails it at every decision.
  const int32_t gang = std::max(1, r.job->gang_size);
  const double keep = ScoreOf(r, r.type) + options_.stickiness;
  std::vector<int32_t> gains;
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (t != r.type.value() && r.allowed[t] &&
        scorers_.Score(r, DeviceTypeId(t), cluster_.catalog) > keep) {
      gains.push_back(t);
    }
  }
  // BestType ignores room for a pinned job.
  const int32_t room = pinned(id) ? 0 : gang;
  moves_->Add(id, KeyOf(r, 0), std::move(gains), room,
              static_cast<int32_t>(r.devices.size()) - gang);
}

void SchedulerCore::RemoveRunning(int32_t id) {
  if (moves_) moves_->Remove(id);
  if (sharing_ != nullptr) sharing_->OnLeftRunning(id);
  const int32_t p = pos_[id];
  running_[p] = running_.back();
  pos_[running_[p]] = p;
  running_.pop_back();
  NoteRunningChanged(id);
}

void SchedulerCore::BeginDecision(double now_s) {
  decision_s_ = now_s;
  if (now_s - last_refresh_s_ < options_.preempt_interval_s) return;
  last_refresh_s_ = now_s;
  if (!belief_.Refresh() || !policy_->key_uses_belief()) return;
  ++queue_refiles_;
  RefileQueue();
}

void SchedulerCore::RefileQueue() {
  // Every queued job's key now (the throughput-plan strategy re-keys its class lists by them):
  // the jobs keyed as new share one rank, read by queue_key; the others are keyed one by one.
  // The index is re-sorted only when read: a full decision of that strategy reads none.
  new_job_rank_ = belief_.NewJobRank();
  for (int32_t id : own_key_queue_) queue_key_[id] = KeyOf(records_[id], 0);
  sorted_queue_stale_ = true;
}

const std::set<SchedulerCore::QueueKey>& SchedulerCore::sorted_queue() const {
  if (sorted_queue_stale_) SortQueue();
  return sorted_queue_;
}

void SchedulerCore::SortQueue() const {
  sorted_queue_stale_ = false;
  std::vector<QueueKey> keys;
  keys.reserve(queue_.size());
  for (int32_t id : queue_) keys.push_back(queue_key(id));
  std::sort(keys.begin(), keys.end());
  // The index's nodes take the new keys in order (the k-th node the k-th least key), so the
  // tree keeps its shape and no node is rebalanced or allocated; jobs queued or taken off
  // while it was stale only change how many there are. std::set's nodes hold non-const keys
  // (its iterators are merely read-only), and the keys never tie (they end with the id).
  while (sorted_queue_.size() > keys.size()) sorted_queue_.erase(sorted_queue_.begin());
  auto key = keys.begin();
  for (auto entry = sorted_queue_.begin(); entry != sorted_queue_.end(); ++entry) {
    const_cast<QueueKey&>(*entry) = *key++;
    queue_entry_[std::get<3>(*entry)] = entry;
  }
  for (; key != keys.end(); ++key) {
    queue_entry_[std::get<3>(*key)] = sorted_queue_.insert(sorted_queue_.end(), *key);
  }
}

bool SchedulerCore::MarkRunning(int32_t id, DeviceTypeId type, const std::vector<DeviceId>& devices,
                                double rate, double now_s) {
  JobRecord& r = records_[id];
  Dequeue(id);
  const bool resumed = r.first_start_s >= 0;
  if (!resumed) r.first_start_s = now_s;
  r.run_start_s = now_s;
  r.phase = JobPhase::kRunning;
  r.type = type;
  r.devices.assign(devices.begin(), devices.end());
  r.last_workers = static_cast<int32_t>(r.devices.size());
  r.rate = rate;
  r.progress_since_s = now_s;
  r.service_since_s = now_s;
  AddRunning(id);
  return resumed;
}

Placement SchedulerCore::Start(int32_t id, DeviceTypeId type, std::vector<DeviceId> devices,
                               double now_s, bool migrated) {
  JobRecord& r = records_[id];
  const bool restarted = r.first_start_s >= 0 && r.done_work > 0 && !r.job->portable_checkpoint &&
                         r.type.valid() && !SameVendor(r.type, type);
  migrated = migrated || r.migrating;
  r.migrating = false;
  const double rate = r.incompatible[type.value()] ? 0 : r.speed[type.value()];
  const bool resized =
      r.first_start_s >= 0 && r.last_workers != static_cast<int32_t>(devices.size());
  const bool resumed = MarkRunning(id, type, devices, rate, now_s);
  const double redone_work = restarted ? r.done_work : 0;
  if (restarted) r.done_work = 0;  // after it left the queue: its key depends on the work done
  Hold(id, r.devices);
  if (sharing_ != nullptr) sharing_->OnStarted(id);
  Placement p{JobId(id), type, std::move(devices), resumed, migrated, JobId()};
  p.restarted = restarted;
  p.redone_work = redone_work;
  p.resized = resized;
  return p;
}

void SchedulerCore::Preempt(int32_t id, double now_s, Decision& out) {
  if (sharing_ != nullptr) sharing_->BeforePreempt(id, now_s, out);
  Stop(id, now_s);
  records_[id].preemptions++;
  out.preempted.push_back(JobId(id));
}

void SchedulerCore::Stop(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  const bool released = Leave(id, now_s);
  if (options_.stop_holds_devices && released) {
    // Hold them again until the driver reports the checkpoint written (Scheduler::Stopped).
    Hold(id, r.devices);
    r.phase = JobPhase::kStopping;
    return;
  }
  r.devices.clear();
  Enqueue(id, now_s);
}

bool SchedulerCore::Leave(int32_t id, double now_s) {
  JobRecord& r = records_[id];
  r.done_work = r.DoneAt(now_s);
  r.attained_s = r.AttainedAt(now_s);
  r.attained_norm_s = r.AttainedNormAt(now_s);
  if (tenants_) tenants_->OnLeave(r, now_s);
  const bool shared = sharing_ != nullptr && sharing_->LeavePair(id, now_s);
  if (shared) {
    ReturnHost(id, r.devices);  // the devices stay with its partner, the host is its own
  } else {
    Release(id, r.devices);
  }
  r.rate = 0;
  RemoveRunning(id);
  return !shared;
}

void SchedulerCore::Hold(int32_t id, const std::vector<DeviceId>& devices) {
  state_.Allocate(devices);
  SetOwner(devices, id);
  TakeHost(id, devices);
}

void SchedulerCore::Release(int32_t id, const std::vector<DeviceId>& devices) {
  state_.Release(devices);
  SetOwner(devices, -1);
  ReturnHost(id, devices);
}

void SchedulerCore::TakeHost(int32_t id, const std::vector<DeviceId>& devices) {
  state_.TakeHost(devices, HostRequestOf(*records_[id].job));
}

void SchedulerCore::ReturnHost(int32_t id, const std::vector<DeviceId>& devices) {
  state_.ReturnHost(devices, HostRequestOf(*records_[id].job));
}

double SchedulerCore::RemainingWork(const JobRecord& r, double now_s) const {
  return belief_.ExpectedRemaining(r, now_s) * r.ref_speed;
}

bool SchedulerCore::MovePays(const JobRecord& r, DeviceTypeId to, double now_s) const {
  if (price_.cost_s() <= 0) return true;  // free moves: the policy's own rule decides alone
  const double remaining = RemainingWork(r, now_s);
  // A move that restarts it from zero redoes its done work there (NewWorkShare < 1).
  const double share = NewWorkShare(r, to);
  const double work_there = share > 0 ? remaining / share : 0;
  const double speed_now = r.speed[r.type.value()];
  const double speed_there = r.speed[to.value()];
  if (work_there <= 0 || speed_there <= 0) return false;
  // Equal work on both sides: the redone work slows the move's side by 1 / share.
  return price_.MovePays(remaining, speed_now, speed_there * remaining / work_there);
}

int32_t SchedulerCore::TotalFree() const {
  int32_t total = 0;
  for (int32_t t = 0; t < state_.type_count(); ++t) total += state_.FreeOfType(DeviceTypeId(t));
  return total;
}

bool SchedulerCore::SameVendor(DeviceTypeId a, DeviceTypeId b) const {
  return vendor_of_type_[a.value()] == vendor_of_type_[b.value()];
}

double SchedulerCore::NewWorkShare(const JobRecord& r, DeviceTypeId type) const {
  if (CheckpointLoadsOn(r, type)) return 1;
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

double SchedulerCore::ScoreOf(const JobRecord& r, DeviceTypeId type) const {
  const ScoreContext context{&state_, hints_[r.job->id.value()]};
  return scorers_.Score(r, type, cluster_.catalog, &context) * NewWorkShare(r, type);
}

std::vector<DeviceTypeId> SchedulerCore::TypePreference(
    const JobRecord& r, TypeChoice choice, const std::vector<int32_t>& capacity) const {
  const int32_t gang = std::max(1, r.job->gang_size);
  const bool is_pinned = pinned(r.job->id.value());
  std::vector<std::pair<double, int32_t>> cands;  // (score, type)
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (!r.allowed[t] || (!is_pinned && capacity[t] < gang)) continue;
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

int32_t SchedulerCore::BestType(const JobRecord& r, TypeChoice choice,
                                const std::vector<int32_t>& capacity) const {
  const int32_t gang = std::max(1, r.job->gang_size);
  const bool is_pinned = pinned(r.job->id.value());
  int32_t best = -1;
  double best_score = 0;
  // TypePreference's order (higher score, then more capacity, then lower id) as one linear
  // pass: types are visited by increasing id, so a full tie keeps the earlier one.
  for (int32_t t = 0; t < state_.type_count(); ++t) {
    if (!r.allowed[t] || (!is_pinned && capacity[t] < gang)) continue;
    if (NewWorkShare(r, DeviceTypeId(t)) <= 0) continue;  // it waits for its own vendor
    const double score = choice == TypeChoice::kAgnostic ? 0 : ScoreOf(r, DeviceTypeId(t));
    if (best < 0 || score > best_score || (score == best_score && capacity[t] > capacity[best])) {
      best = t;
      best_score = score;
    }
  }
  return best;
}

std::optional<std::vector<DeviceId>> SchedulerCore::PlaceOn(const JobRecord& r,
                                                            DeviceTypeId type) const {
  return PlaceOn(r, type, HostRequestOf(*r.job));
}

std::optional<std::vector<DeviceId>> SchedulerCore::PlaceOn(const JobRecord& r, DeviceTypeId type,
                                                            const HostRequest& host) const {
  const int32_t id = r.job->id.value();
  const int32_t gang = std::max(1, r.job->gang_size);
  if (pinned_[id].empty()) {
    return options_.placement == PlacementMode::kAgnostic
               ? PlaceGangAgnostic(state_, type, gang, host)
               : PlaceGang(state_, type, gang, hints_[id], host);
  }
  std::vector<DeviceId> out;
  std::vector<std::pair<int32_t, int32_t>> taken;  // (node, workers) with a host request
  for (DeviceId d : pinned_[id]) {
    if (static_cast<int32_t>(out.size()) == gang) break;
    if (cluster_.device(d).type != type || !state_.IsFree(d) || !state_.IsUp(d)) continue;
    if (!host.empty()) {
      const model::NodeId node = cluster_.device(d).node;
      auto it = std::find_if(taken.begin(), taken.end(),
                             [&](const auto& e) { return e.first == node.value(); });
      if (it == taken.end()) it = taken.insert(taken.end(), {node.value(), 0});
      if (state_.HostFit(node, host) <= it->second) continue;
      ++it->second;
    }
    out.push_back(d);
  }
  if (static_cast<int32_t>(out.size()) < gang) return std::nullopt;
  return out;
}

}  // namespace hetsched::sched
