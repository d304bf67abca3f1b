#include <fmt/format.h>

#include "sim/engine.h"
#include "sim/engine_internal.h"

namespace hetsched::sim::internal {

void Engine::Launching(const sched::Placement& p, std::vector<exec::LaunchSpec>& specs,
                       double now_s) {
  if (p.migrated) result_.migrations++;
  if (p.resized) result_.resizes++;
  const int32_t id = p.job.value();
  const sched::JobRecord& r = sched_->record(p.job);
  JobRun& run = runs_[id];
  if (p.restarted && run.type.valid() && r.speed[run.type.value()] > 0) {
    // The steps it had done, at the speed it did them, on the devices it had.
    result_.restart_device_hours +=
        run.devices * p.redone_work / r.speed[run.type.value()] / 3600.0;
  }
  run.start_s = now_s;
  run.type = p.type;
  run.devices = static_cast<int32_t>(p.devices.size());
  run.start_done = r.done_work;
  run.stop_s = -1;
  run.reclaimed = false;
  if (p.restarted) result_.cross_vendor_restarts++;
  run.sync_bytes_per_step = 0;
  run.sync_s = 0;
  run.hop_bytes = 0;
  run.owns = !p.partner.valid();
  run.busy_from_s = now_s;
  run.shared_since_s = run.owns ? -1 : now_s;
  if (!run.owns) result_.pairs_formed++;
  run.held = run.owns ? p.devices : std::vector<DeviceId>{};
  run.cap_power = 1;
  run.cap_throughput = 1;
  if (Recording()) OpenSpan(p, now_s);
  if (outcomes_[id].first_start_s < 0) outcomes_[id].first_start_s = now_s;
  if (p.devices.size() > 1) {
    ++multi_placements_;
    if (specs.size() == 1) ++within_node_;
  }
  // Restoring its checkpoint (drive::Rules::restore_s when the placement resumes it).
  const double startup_s = specs.front().startup_s;
  if (r.incompatible[p.type.value()]) {
    // The naive baseline put it where its stack is missing: the backend has it crash in
    // start-up. Its devices are held (and draw power) meanwhile.
    run.rate = 0;
    run.since_s = run.segment_s = now_s;
  } else {
    StartComputing(p, startup_s, now_s);
  }
  power_.SetBusy(run.held, true, run.cap_power, now_s);
  // Without progress it never ends by itself (the backend ignores this for a failing start).
  const double modeled_s = run.rate > 0 ? TrueRemaining(id, run.since_s) / run.rate : kInf;
  for (exec::LaunchSpec& spec : specs) spec.modeled_s = modeled_s;
}

void Engine::StartComputing(const sched::Placement& p, double startup_s, double now_s) {
  const int32_t id = p.job.value();
  const sched::JobRecord& r = sched_->record(p.job);
  const model::Job& job = *r.job;
  JobRun& run = runs_[id];
  const double speed = sched_->SpeedNow(p.job);  // its pair speed when it joins a partner
  if (job.sync_bytes_per_step > 0 && p.devices.size() > 1) {
    run.sync_s = cost::RingAllReduceSeconds(topology_, p.devices, job.sync_bytes_per_step);
    run.sync_bytes_per_step = cost::RingAllReduceBytesTotal(
        static_cast<double>(job.sync_bytes_per_step), static_cast<int>(p.devices.size()));
    // Each ring hop carries 2(n-1)/n of the buffer per step (cost/transfer.h).
    run.hop_bytes = run.sync_bytes_per_step / static_cast<double>(p.devices.size());
  }
  // A lower power cap slows the compute part of a step (not the communication).
  run.rate = EffectiveRate(speed, run.sync_s, 1);
  result_.restore_device_hours += static_cast<double>(p.devices.size()) * startup_s / 3600.0;
  run.since_s = now_s + startup_s;
  run.segment_s = run.since_s;
  // A guest's devices draw what their holder's cap allows: it picks no cap of its own.
  if (power_.caps() && run.rate > 0 && run.owns) {
    // A deadline can guide the cap only when the scheduler expects some work left; with
    // nothing known it is treated as no deadline (the bounded-slowdown rule).
    const double expected_s = sched_->ExpectedRemainingWork(p.job, now_s) / run.rate;
    const power::CapPoint cap = power_.CapFor(
        p.type, expected_s > 0 ? job.deadline_s : std::nullopt, run.since_s, expected_s);
    if (cap.cap < 1) {
      run.rate = EffectiveRate(speed, run.sync_s, cap.throughput);
      run.cap_power = cap.power;
      run.cap_throughput = cap.throughput;
    }
  }
  run.solo_rate = run.rate;
  if (StartStaging(id, p.devices, job.data_bytes + (p.resumed ? job.checkpoint_bytes : 0), now_s)) {
    run.rate = 0;  // progress waits for the input (OnFlowsDone)
  } else {
    StartRing(id, p.devices, now_s);
  }
}

void Engine::Stopping(JobId job, double now_s) {
  result_.preemptions++;
  if (sched_->record(job).phase != sched::JobPhase::kStopping) return;  // freed at once
  // It writes its checkpoint on its devices (they stay busy) and makes no more progress; the
  // backend reports its exit when that is done.
  JobRun& run = runs_[job.value()];
  network_bytes_ += run.rate * std::max(0.0, now_s - run.segment_s) * run.sync_bytes_per_step;
  run.stop_rate = run.rate;
  run.rate = 0;
  run.segment_s = now_s;
  run.stop_s = now_s;
  EndFlows(run, now_s);  // no synchronization while it writes its checkpoint
  StartCheckpointWrite(job.value(), now_s);
  ++stopping_;
}

void Engine::Apply(const sched::Decision& d, double now_s) {
  attempts_.Apply(d, now_s);
  freed_ = false;  // what the decision's own stops freed, it knew of
  ApplySpeedChanges(now_s, &d.placed);
  EnforceTimeLimits(now_s);  // the timer for the jobs it started
}

bool Engine::EnforceTimeLimits(double now_s) {
  if (!attempts_.has_time_limits()) return false;
  const drive::Attempts::TimeLimits limits = attempts_.EnforceTimeLimits(now_s);
  if (std::isfinite(limits.next_s)) {
    const Micros at = ToMicros(limits.next_s) + 1;  // not before it: the limit is reached then
    if (at < time_limit_at_) {
      time_limit_at_ = at;
      queue_.Push(at, EventKind::kTimeLimit);
    }
  }
  return limits.stopped > 0;
}

Engine::Reaction Engine::Dispatch(double now_s) {
  Reaction reaction;
  reaction.decide = attempts_.Poll(now_s);
  reaction.freed = std::exchange(freed_, false);
  return reaction;
}

bool Engine::OtherEvent(const BackendEvent& ev, double now_s) {
  // SimBackend reports only the attempts of jobs the engine tracks, and its nodes.
  assert(ev.kind == BackendEventKind::kNodeUp || ev.kind == BackendEventKind::kNodeDown);
  const int32_t n = cluster_.FindNode(ev.node)->value();
  return power_driver_.Reported(n, ev.kind == BackendEventKind::kNodeUp, now_s) ==
         drive::NodeReport::kBooted;
}

std::optional<JobId> Engine::JobNamed(const std::string& name) const {
  const std::optional<int32_t> id = SimBackend::JobIdOf(name);
  if (!id) return std::nullopt;
  return JobId(*id);
}

void Engine::BackendFailed(JobId job, const std::string& call, const util::Status& status) {
  (void)job, (void)call;
  Must(status);
}

void Engine::Running(JobId job, double now_s) {
  (void)now_s;
  // Progress counts from the end of its start-up (restoring the checkpoint).
  const JobRun& run = runs_[job.value()];
  sched_->SetProgress(job, run.rate, run.since_s);
}

bool Engine::AttemptOver(JobId job, drive::AttemptEnd end, const std::string& message,
                         double now_s) {
  (void)message;
  const int32_t id = job.value();
  JobRun& run = runs_[id];
  switch (end) {
    case drive::AttemptEnd::kLost:
      if (run.stop_s >= 0) --stopping_;
      run.stop_s = -1;
      CloseRun(id, now_s, RunEnd::kFault);
      return true;
    case drive::AttemptEnd::kStartFailed:
      // A stack mismatch crashes in start-up; an injected failure (Fault::start_failure) at
      // once.
      if (sched_->record(job).incompatible[run.type.value()]) {
        result_.compat_failures++;
        result_.wasted_device_hours += run.devices * options_.compat_startup_s / 3600.0;
      }
      CloseRun(id, now_s, RunEnd::kFailed);
      return true;
    case drive::AttemptEnd::kPreempted:
      if (run.stop_s < 0) {  // stopped at once
        CloseRun(id, now_s, RunEnd::kPreempted);
        return true;
      }
      if (!run.writing.empty()) {
        run.exit_waits = true;  // its checkpoint is still crossing the links
        return false;
      }
      BookCheckpointSaved(id, now_s);
      freed_ = true;
      return true;
    case drive::AttemptEnd::kCompleted:
      CloseRun(id, now_s, RunEnd::kCompleted);
      return true;
    case drive::AttemptEnd::kFailed:
    case drive::AttemptEnd::kCancelled:
      if (run.stop_s >= 0) --stopping_;
      run.stop_s = -1;
      CloseRun(id, now_s, RunEnd::kFailed);
      return true;
  }
  return true;
}

void Engine::Requeued(JobId job, drive::AttemptEnd end, const std::string& why, double now_s) {
  (void)job, (void)why;
  // A start failure freed its devices, which may change a partner's speed. (A lost job's
  // partner fails with it: FaultDown applies the changes once both are requeued.)
  if (end == drive::AttemptEnd::kStartFailed) ApplySpeedChanges(now_s);
}

void Engine::Ended(JobId job, drive::JobEnd end, std::optional<int> exit_status,
                   const std::string& message, double now_s) {
  (void)exit_status;
  ApplySpeedChanges(now_s);
  if (end == drive::JobEnd::kCompleted) {
    EndJob(job.value(), JobStatus::kCompleted, "", now_s);
    result_.makespan_s = std::max(result_.makespan_s, now_s);
  } else if (end == drive::JobEnd::kCancelled) {
    EndJob(job.value(), JobStatus::kCancelled, message, now_s);
  } else {
    EndJob(job.value(), JobStatus::kFailed, message, now_s);
  }
}

}  // namespace hetsched::sim::internal
