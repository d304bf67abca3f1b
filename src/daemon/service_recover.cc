#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "daemon/heap_reserve.h"
#include "daemon/job_request.h"
#include "daemon/policy_state.h"
#include "daemon/service.h"
#include "daemon/service_internal.h"

namespace hetsched::svc {

using model::DeviceId;
using model::JobId;

void Service::Reconcile(double now) {
  // What runs before the events are applied: an attempt that ends in between is reported by
  // its event, so only attempts missing from both were lost.
  SyncNodes(backend_->ListNodes(), now);
  std::set<std::pair<std::string, int64_t>> running;
  for (const BackendJob& j : backend_->ListJobs()) running.insert({j.job, j.attempt});
  attempts_->Poll(now);
  for (const auto& [key, attempt] : running) {
    auto it = jobs_.find(key);
    const bool current = it != jobs_.end() && !IsEnded(it->second->state) &&
                         it->second->attempt == attempt && it->second->state != JobState::kQueued;
    if (current) continue;
    // A process the daemon does not account for: an attempt it already gave up, or a job it
    // never knew. Either would hold devices the scheduler believes free.
    Event("repair", key, fmt::format("stopped stray attempt {}", attempt));
    logger_->Warn("stopping a stray attempt", {{"job", key}, {"attempt", attempt}});
    if (auto st = backend_->Stop(key, attempt, options_.stop_grace_s); !st.ok()) {
      logger_->Error("stopping a stray attempt failed", {{"job", key}, {"error", st.message()}});
    }
  }
  // Queued jobs hold nothing to lose.
  int64_t vanished = 0;
  std::string first_vanished;
  quiet_losses_ = true;  // one warning below for all of them, not two per attempt
  for (Entry* e : PlacedBySlot()) {
    if (running.count({e->name, e->attempt}) != 0) continue;
    // The backend does not know it: it vanished (a lost node, a restart of the backend).
    Event("repair", e->name, fmt::format("attempt {} vanished; requeued", e->attempt));
    logger_->Debug("an attempt vanished; requeued", {{"job", e->name}, {"attempt", e->attempt}});
    if (vanished++ == 0) first_vanished = e->name;
    attempts_->Lose(e->slot, fmt::format("attempt {} vanished from the backend", e->attempt), now);
  }
  quiet_losses_ = false;
  // After a restart on the virtual backend every attempt that ran vanishes: a line per job
  // (10,000 at scale) would bury the log. The database's event log keeps each one (a
  // "repair" and a "lost" event about the job).
  if (vanished > 0) {
    logger_->Warn("attempts vanished from the backend; requeued",
                  {{"attempts", vanished}, {"first_job", first_vanished}});
  }
}

namespace {

// What the heap grows by for each live job a restart reads back (its entry, its job, the
// scheduler's record, the name indexes and the tables by slot), for HeapReserve, with room to
// spare: about 2,270 bytes at 229,540 live jobs of scripts/daemon-scale.sh --full (docs/
// benchmarks.md, "2026-12-07 (morning): restart until ready"). A job beyond the stretch is on
// 4 KiB pages as before; the stretch left over goes back to the kernel.
constexpr size_t kRecoveredJobBytes = 2560;

// This thread's CPU seconds: recovery runs on the thread that starts the service.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

util::Status Service::Recover() {
  const auto wall_begin = std::chrono::steady_clock::now();
  const double cpu_begin = ThreadCpuSeconds();
  wall_start_s_ = WallNow();
  RETURN_IF_ERROR(RestoreClockAndBelief());
  RETURN_IF_ERROR(RestoreNodes());
  ASSIGN_OR_RETURN(const int64_t live_jobs, store_->CountLiveJobs());
  RETURN_IF_ERROR(CheckStoredTenants());
  // Growing the tables by name one job at a time rehashes them over and over: a fifth of a
  // restart at 200,000 live jobs (docs/benchmarks.md, "The daemon at scale"). The tables by
  // slot are sized once too: grown, they would move every record admitted so far.
  const auto reserve = static_cast<size_t>(live_jobs);
  // The jobs' memory on transparent huge pages: on 4 KiB pages a fifth of a large recovery's
  // CPU went to page faults (daemon/heap_reserve.h). Below a block's worth (12,288 jobs, a
  // fraction of a second to recover) it reserves nothing.
  const size_t heap_bytes = reserve * kRecoveredJobBytes;
  HeapReserve heap(heap_bytes >= HeapReserve::kBlockBytes ? heap_bytes : 0);
  if (!heap.problem().empty()) {
    logger_->Info("recovering without huge pages", {{"reason", heap.problem()}});
  }
  slots_.Reserve(reserve);
  attempts_->Reserve(reserve);
  scheduler_->Reserve(reserve);
  by_slot_.reserve(reserve);
  jobs_.reserve(jobs_.size() + reserve);
  const double now = SchedNow();
  int64_t recovered = 0;
  // Jobs this cluster can no longer run are stored as failed once every row has been read:
  // the store reads the rows while they are adopted.
  std::vector<std::unique_ptr<Entry>> refused;
  RETURN_IF_ERROR(store_->ForEachLiveJob([&](StoredJob& s) -> util::Status {
    const size_t refused_before = refused.size();
    RETURN_IF_ERROR(RecoverJob(s, now, refused));
    if (refused.size() == refused_before) ++recovered;
    return util::Status::Ok();
  }));
  for (const std::unique_ptr<Entry>& e : refused) RETURN_IF_ERROR(Persist(*e));
  // Stops asked for before the restart may not have reached the backend.
  for (Entry* e : PlacedBySlot()) {
    if (e->state == JobState::kStopping) StopAttempt(*e);
  }
  last_reconcile_wall_s_ = WallNow();
  RETURN_IF_ERROR(store_->Begin());
  Reconcile(now);
  RETURN_IF_ERROR(store_->Commit());
  ForgetEnded();
  metrics_->recovery_s.Get({"wall"})->Set(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count());
  metrics_->recovery_s.Get({"cpu"})->Set(ThreadCpuSeconds() - cpu_begin);
  logger_->Info("recovered", {{"live_jobs", recovered},
                              {"scheduler_s", now},
                              {"heap_advised_mib", static_cast<int64_t>(heap.advised() >> 20)}});
  return util::Status::Ok();
}

util::Status Service::RestoreClockAndBelief() {
  ASSIGN_OR_RETURN(auto clock, store_->Get(kClockKey));
  if (clock) {
    auto j = nlohmann::json::parse(*clock, nullptr, false);
    if (j.is_object() && j.contains("sched_s") && j.contains("wall_s")) {
      // The cluster went on while the daemon was down.
      sched_base_s_ =
          j["sched_s"].get<double>() +
          std::max(0.0, wall_start_s_ - j["wall_s"].get<double>()) * options_.time_scale;
    }
  }
  ASSIGN_OR_RETURN(auto belief, store_->Get(kBeliefKey));
  if (belief) {
    if (auto st = scheduler_->RestoreBelief(*belief); !st.ok()) {
      logger_->Warn("the stored size belief does not read; starting without it",
                    {{"error", st.message()}});
    }
  }
  return RestoreTenantUsage();
}

util::Status Service::RestoreNodes() {
  ASSIGN_OR_RETURN(auto nodes, store_->LoadNodes());
  for (const StoredNode& n : nodes) {
    auto node = cluster_.FindNode(n.name);
    if (!node && !n.spec.empty()) {
      // Joined at run time: back before the jobs that ran there are adopted.
      ASSIGN_OR_RETURN(node, AddNodeFromSpec(n.name, n.spec, SchedNow()));
    }
    if (!node) continue;
    if (n.power_state == "removed") {
      if (auto st = scheduler_->RemoveNode(*node); !st.ok()) {
        logger_->Error("a node stored as removed cannot be removed",
                       {{"node", n.name}, {"error", st.message()}});
      }
      continue;
    }
    scheduler_->SetNodeDrained(*node, n.drained);
  }
  return util::Status::Ok();
}

util::Status Service::RecoverJob(StoredJob& s, double now,
                                 std::vector<std::unique_ptr<Entry>>& refused) {
  auto e = std::make_unique<Entry>();
  // Moved, not copied: `s` is read once (a restart's jobs take most of its memory).
  e->name = std::move(s.name);
  e->spec_json = std::move(s.spec_json);
  e->idempotency_key = std::move(s.idempotency_key);
  e->state = s.state;
  e->submitted_s = s.submitted_s;
  e->started_s = s.started_s;
  e->ended_s = s.ended_s;
  e->exit_status = s.exit_status;
  e->device_type = std::move(s.device_type);
  e->attempt = s.attempt;
  e->preemptions = s.preemptions;
  e->done_work = s.done_work;
  e->message = std::move(s.message);
  auto req = ParseStoredJobRequest(e->spec_json, cluster_.catalog);
  if (!req.ok()) {
    return util::Status::Internal(fmt::format("{}: stored job '{}' no longer parses: {}",
                                              store_->path(), e->name, req.status().message()));
  }
  model::Job& job = req->job;
  job.arrival_s = s.arrival_s;
  e->slot = slots_.Acquire();
  job.id = e->slot;
  // The configuration's classes as they are now (the stored request is the one submitted).
  model::io::ApplyJobClass(options_.classes, job);
  e->work = std::exchange(job.work, 0);  // the scheduler shares the job: it sees no size
  e->job = std::make_shared<const model::Job>(std::move(job));
  const sched::Admission a = scheduler_->Submit(e->job, now);
  if (!a.accepted) {
    slots_.Release(e->slot);
    e->slot = JobId();
    e->state = JobState::kFailed;
    e->ended_s = WallNow();
    e->message = fmt::format("cannot run on this cluster after a restart: {}", a.reason);
    refused.push_back(std::move(e));
    return util::Status::Ok();
  }
  if (by_slot_.size() <= static_cast<size_t>(e->slot.value())) {
    by_slot_.resize(e->slot.value() + 1);
  }
  by_slot_[e->slot.value()] = e.get();
  BecameLive(*e);
  attempts_->Track(e->slot, e->name, e->job->time_limit_s, e->attempt);
  if (e->state != JobState::kQueued) AdoptPlacement(*e, s, now);
  if (!s.policy_state.empty()) {
    if (auto history = ParseHistory(s.policy_state)) {
      scheduler_->RestoreHistory(e->slot, *history, now);
    } else {
      logger_->Warn("a job's stored policy state does not read; it starts without history",
                    {{"job", e->name}});
    }
  }
  jobs_[e->name] = std::move(e);
  return util::Status::Ok();
}

void Service::AdoptPlacement(Entry& e, const StoredJob& s, double now) {
  // It held devices when the daemon stopped: they are its again until reconciliation shows
  // whether it still runs.
  for (int32_t d : s.devices) e.devices.push_back(DeviceId(d));
  if (auto st = scheduler_->Adopt(e.slot, e.devices, e.done_work, now); !st.ok()) {
    logger_->Warn("a recovered placement does not fit; requeued",
                  {{"job", e.name}, {"error", st.message()}});
    SetState(e, JobState::kQueued);
    e.devices.clear();
    return;
  }
  // A job that was stopping stays adopted until its exit comes: then it is requeued, or ends as
  // its stop cause says (a cancel, its time limit). Its time limit counts the run time from
  // here: the store keeps none from before.
  attempts_->Adopt(e.slot, e.attempt, e.devices, e.state != JobState::kStarting, s.stop,
                   /*ran_s=*/0, now);
  scheduler_->SetProgress(e.slot, e.state == JobState::kRunning ? scheduler_->SpeedNow(e.slot) : 0,
                          now);
}

drive::StopCause Service::StopCauseOf(const Entry& e) const {
  const drive::Attempt* a = e.slot.valid() ? attempts_->attempt(e.slot) : nullptr;
  return a != nullptr && a->active ? a->stop : drive::StopCause::kNone;
}

util::Status Service::Persist(const Entry& e, bool insert) {
  const StoredJob s = StoredOf(e);
  return insert ? store_->InsertJob(s) : store_->UpdateJob(s);
}

util::Status Service::PersistStopping(Entry& e, drive::StopCause cause) {
  SetState(e, JobState::kStopping);
  StoredJob s = StoredOf(e);
  s.stop = cause;
  return store_->UpdateJob(s);
}

StoredJob Service::StoredOf(const Entry& e) const {
  StoredJob s;
  s.name = e.name;
  s.spec_json = e.spec_json;
  s.idempotency_key = e.idempotency_key;
  s.state = e.state;
  s.submitted_s = e.submitted_s;
  s.arrival_s = e.job->arrival_s;
  s.started_s = e.started_s;
  s.ended_s = e.ended_s;
  s.exit_status = e.exit_status;
  s.device_type = e.device_type;
  for (DeviceId d : e.devices) {
    s.devices.push_back(d.value());
    if (s.node.empty()) s.node = cluster_.node(cluster_.device(d).node).name;
  }
  s.attempt = e.attempt;
  s.done_work = e.done_work;
  s.preemptions = e.preemptions;
  s.stop = StopCauseOf(e);
  s.message = e.message;
  s.tenant = e.job->tenant;
  if (e.slot.valid()) s.policy_state = HistoryJson(scheduler_->History(e.slot, SchedNow()));
  return s;
}

}  // namespace hetsched::svc
