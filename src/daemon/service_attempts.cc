#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "daemon/service.h"
#include "daemon/service_internal.h"
#include "exec/launch.h"

namespace hetsched::svc {

using model::JobId;

void Service::StopAttempt(Entry& e) {
  if (auto st = backend_->Stop(e.name, e.attempt, options_.stop_grace_s); !st.ok()) {
    logger_->Error("stop failed", {{"job", e.name}, {"error", st.message()}});
  }
}

bool Service::OtherEvent(const BackendEvent& ev, double now) {
  switch (ev.kind) {
    case BackendEventKind::kNodeUp:
    case BackendEventKind::kNodeDown:
      SetNodeUp(ev.node, ev.kind == BackendEventKind::kNodeUp, now);
      return true;
    case BackendEventKind::kSubmitted:
      AdoptBackendJob(ev, now);
      return true;
    case BackendEventKind::kWithdrawn:
      if (auto it = jobs_.find(ev.job); it != jobs_.end() && !IsEnded(it->second->state)) {
        attempts_->Cancel(it->second->slot,
                          fmt::format("cancelled in {}{}{}", backend_->name(),
                                      ev.message.empty() ? "" : ": ", ev.message),
                          now);
      }
      return true;
    default:
      // An attempt of a job that ended here (a gang part stopped after the job was given up).
      logger_->Debug("stale backend event", {{"job", ev.job}, {"attempt", ev.attempt}});
      return false;
  }
}

std::optional<JobId> Service::JobNamed(const std::string& name) const {
  const auto it = jobs_.find(name);
  if (it == jobs_.end() || !it->second->slot.valid()) return std::nullopt;
  return it->second->slot;
}

void Service::BackendFailed(JobId job, const std::string& call, const util::Status& status) {
  const Entry* e = by_slot_[job.value()];
  logger_->Error(call + " failed", {{"job", e ? e->name : ""}, {"error", status.message()}});
}

util::Status Service::Record(const sched::Decision& d, double now) {
  (void)now;
  // Write ahead: what is about to happen is on disk before the backend hears of it.
  std::vector<Entry*> starts;
  std::vector<std::pair<Entry*, JobState>> stops;  // with the state each had before
  util::Status st = store_->Begin();
  for (JobId id : d.preempted) {
    Entry* e = by_slot_[id.value()];
    if (StopCauseOf(*e) != drive::StopCause::kNone) continue;  // stopping already
    ++e->preemptions;
    stops.push_back({e, e->state});
    if (st.ok()) st = PersistStopping(*e, drive::StopCause::kPreempt);
  }
  for (const sched::Placement& p : d.placed) {
    Entry* e = by_slot_[p.job.value()];
    e->attempt = attempts_->next_attempt(p.job);
    e->message.clear();  // a job's message is its latest attempt's
    SetState(*e, JobState::kStarting);
    e->device_type = cluster_.catalog.Get(p.type).name;
    e->devices = p.devices;
    if (p.restarted) e->done_work = 0;
    starts.push_back(e);
    if (st.ok()) st = Persist(*e);
  }
  if (st.ok()) st = store_->Commit();
  if (st.ok()) return st;
  // Without the record the daemon could place these twice after a restart: drive::Attempts
  // acts on nothing and puts them back.
  logger_->Error("storing a decision failed; nothing was started or stopped",
                 {{"error", st.message()}});
  for (Entry* e : starts) {
    SetState(*e, JobState::kQueued);
    e->devices.clear();
  }
  // The stops are taken back too: those jobs run on in the state they had (marked queued,
  // the next reconciliation would stop them as strays).
  for (auto [e, before] : stops) {
    --e->preemptions;
    SetState(*e, before);
  }
  return st;
}

void Service::Stopping(JobId job, double now) {
  (void)now;
  const Entry& e = *by_slot_[job.value()];
  metrics_->preemptions.Get({})->Inc();
  Event("preempt", e.name, fmt::format("attempt {}", e.attempt));
}

void Service::Launching(const sched::Placement& p, std::vector<LaunchSpec>& specs, double now) {
  Entry& e = *by_slot_[p.job.value()];
  const sched::JobRecord& r = scheduler_->record(e.slot);
  // The true remaining time at the speed there: only the virtual backend uses it.
  const double speed =
      scheduler_->SpeedNow(e.slot) > 0 ? scheduler_->SpeedNow(e.slot) : r.speed[r.type.value()];
  double modeled_s = 0;
  if (e.work > 0 && speed > 0) {
    modeled_s = std::max(0.0, e.work - e.done_work) / speed;
  } else if (e.job->estimate_s) {
    modeled_s = *e.job->estimate_s;
  } else if (e.job->time_limit_s) {
    // Only an upper bound: the job runs until its limit stops it (failed, as a job that never
    // ends by itself). Modeled as ending at the limit, it would race the driver's stop.
    modeled_s = std::numeric_limits<double>::infinity();
  }
  for (LaunchSpec& spec : specs) {
    spec.command = e.job->command;
    spec.modeled_s = modeled_s;
  }
  if (power_) power_->SetBusy(e.devices, true, 1, now);
  metrics_->placements.Get({e.device_type})->Inc();
  Event("place", e.name,
        fmt::format("attempt {} on {} x{}", e.attempt, e.device_type, e.devices.size()));
  logger_->Info("placed", {{"job", e.name},
                           {"attempt", e.attempt},
                           {"device_type", e.device_type},
                           {"devices", e.devices.size()}});
}

void Service::Running(JobId job, double now) {
  Entry& e = *by_slot_[job.value()];
  SetState(e, JobState::kRunning);
  if (e.started_s < 0) e.started_s = WallNow();
  // Progress counts from now, when the backend says it runs.
  scheduler_->SetProgress(e.slot, scheduler_->SpeedNow(e.slot), now);
  if (auto st = Persist(e); !st.ok()) {
    logger_->Error("storing a start failed", {{"job", e.name}, {"error", st.message()}});
  }
  // Every part runs; the node of its first device names where (a gang's first node).
  const std::string node =
      e.devices.empty() ? "" : cluster_.node(cluster_.device(e.devices.front()).node).name;
  logger_->Info("started", {{"job", e.name}, {"attempt", e.attempt}, {"node", node}});
}

double Service::WorkKept(JobId job, double now) {
  (void)now;
  return by_slot_[job.value()]->done_work;  // what the store has of its progress
}

bool Service::AttemptOver(JobId job, drive::AttemptEnd end, const std::string& message,
                          double now) {
  (void)now;
  Entry& e = *by_slot_[job.value()];
  if (end == drive::AttemptEnd::kStartFailed) {
    e.message = message;
    logger_->Warn("start failed", {{"job", e.name}, {"attempt", e.attempt}, {"why", message}});
  } else if (end == drive::AttemptEnd::kLost) {
    e.message = message;
    logger_->Log(quiet_losses_ ? LogLevel::kDebug : LogLevel::kWarn, "an attempt was lost",
                 {{"job", e.name}, {"attempt", e.attempt}, {"why", message}});
    Event("lost", e.name, message);
  }
  return true;  // nothing is held after the exit: the checkpoint is the job's to write
}

void Service::Requeued(JobId job, drive::AttemptEnd end, const std::string& why, double now) {
  (void)why, (void)now;
  Entry& e = *by_slot_[job.value()];
  if (end == drive::AttemptEnd::kPreempted) {
    // Back in the queue with the progress the scheduler booked.
    e.done_work = scheduler_->record(e.slot).done_work;
    Event("stopped", e.name, fmt::format("attempt {}", e.attempt));
  }
  MarkQueued(e);
}

void Service::SetState(Entry& e, JobState next) {
  LeftLive(e);
  e.state = next;
  BecameLive(e);
}

void Service::BecameLive(Entry& e) {
  ++live_counts_[JobStateIndex(e.state)];
  if (e.state != JobState::kQueued) placed_.insert(&e);
}

void Service::LeftLive(Entry& e) {
  --live_counts_[JobStateIndex(e.state)];
  placed_.erase(&e);
}

std::vector<Service::Entry*> Service::PlacedBySlot() const {
  std::vector<Entry*> out(placed_.begin(), placed_.end());
  std::sort(out.begin(), out.end(),
            [](const Entry* a, const Entry* b) { return a->slot.value() < b->slot.value(); });
  return out;
}

void Service::MarkQueued(Entry& e) {
  SetState(e, JobState::kQueued);
  if (power_) power_->SetBusy(e.devices, false, 1, SchedNow());
  demand_changed_ = true;
  e.devices.clear();
  e.device_type.clear();
  if (auto st = Persist(e); !st.ok()) {
    logger_->Error("storing a requeue failed", {{"job", e.name}, {"error", st.message()}});
  }
}

void Service::Ended(JobId job, drive::JobEnd how, std::optional<int> exit_status,
                    const std::string& message, double now) {
  Entry& e = *by_slot_[job.value()];
  const JobState state = how == drive::JobEnd::kCompleted ? JobState::kCompleted
                         : how == drive::JobEnd::kFailed  ? JobState::kFailed
                                                          : JobState::kCancelled;
  attempts_->Untrack(e.slot);
  slots_.Release(e.slot);
  LeftLive(e);
  by_slot_[e.slot.value()] = nullptr;
  e.slot = JobId();
  e.state = state;
  e.ended_s = WallNow();
  e.exit_status = exit_status;
  e.message = message;
  if (power_) power_->SetBusy(e.devices, false, 1, now);
  demand_changed_ = true;
  e.devices.clear();
  backend_->Forget(e.name);
  if (auto st = Persist(e); !st.ok()) {
    // Kept in memory, where its end is known, rather than shown from a stale row.
    logger_->Error("storing a job's end failed", {{"job", e.name}, {"error", st.message()}});
  } else {
    ended_.push_back(e.name);
  }
  ended_counts_[JobStateIndex(state)]++;
  const std::string state_name(JobStateName(state));
  metrics_->ended.Get({state_name})->Inc();
  logger_->Info("ended", {{"job", e.name}, {"state", state_name}, {"message", message}});
}

void Service::MarkTimeLimitStops() {
  // Only jobs with an attempt can be stopped for their time limit.
  for (Entry* e : PlacedBySlot()) {
    if (e->state == JobState::kStopping) continue;
    if (StopCauseOf(*e) != drive::StopCause::kTimeLimit) continue;
    SetState(*e, JobState::kStopping);
    if (auto st = Persist(*e); !st.ok()) {
      logger_->Error("storing a time-limit stop failed",
                     {{"job", e->name}, {"error", st.message()}});
    }
  }
}

util::Result<JobView> Service::Preempt(const std::string& name, const std::string& why) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return util::Status::NotFound(fmt::format("no job '{}'", name));
  Entry& e = *it->second;
  if (e.state != JobState::kRunning || StopCauseOf(e) != drive::StopCause::kNone) {
    return util::Status::InvalidArgument(
        fmt::format("job '{}' is {} (expected running)", name, JobStateName(e.state)));
  }
  const double now = SchedNow();
  auto d = scheduler_->PreemptNow(e.slot, now);
  if (!d.ok())
    return util::Status::InvalidArgument(fmt::format("job '{}': {}", name, d.status().message()));
  attempts_->Apply(*d, now);
  e.message = why;
  wake_.notify_one();
  return ViewOf(e);
}

void Service::DecideAndAct(double now) {
  if (!scheduler_->HasWork()) return;
  const auto t0 = std::chrono::steady_clock::now();
  const sched::Decision d = scheduler_->Decide(now);
  metrics_->decision_s.Get({})->Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  attempts_->Apply(d, now);
}

}  // namespace hetsched::svc
