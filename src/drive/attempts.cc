#include "drive/attempts.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "exec/launch.h"

namespace hetsched::drive {
namespace {

using exec::BackendEvent;
using exec::BackendEventKind;
using model::JobId;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string ExitMessage(int status) {
  if (status > 128) return fmt::format("killed by signal {}", status - 128);
  if (status < 0) return "its processes were lost";
  return fmt::format("exited with status {}", status);
}

}  // namespace

Attempts::Attempts(const model::Cluster& cluster, sched::Scheduler& scheduler,
                   exec::Backend& backend, Effects& effects, Rules rules)
    : cluster_(cluster), sched_(scheduler), backend_(backend), effects_(effects), rules_(rules) {}

void Attempts::Reserve(size_t jobs) { books_.reserve(jobs); }

void Attempts::Track(JobId job, std::string name, std::optional<double> time_limit_s,
                     int64_t attempts) {
  const size_t i = static_cast<size_t>(job.value());
  // One at a time (the vector's capacity grows geometrically): doubling the size would step
  // past a Reserve, moving every book and making up to twice the books a recovery needs.
  if (i >= books_.size()) books_.resize(i + 1);
  if (books_[i].tracked) Untrack(job);
  Book& b = books_[i];
  b.name = std::move(name);
  b.time_limit_s = time_limit_s;
  b.attempt.number = attempts;
  b.tracked = true;
  if (time_limit_s) limited_.push_back(job.value());
}

void Attempts::Untrack(JobId job) {
  Book& b = book(job);
  if (b.time_limit_s) std::erase(limited_, job.value());
  b = Book();
}

void Attempts::Adopt(JobId job, int64_t attempt, const std::vector<model::DeviceId>& devices,
                     bool running, StopCause stop, double ran_s, double now_s) {
  Book& b = book(job);
  b.ran_s = ran_s;
  Attempt& a = b.attempt;
  a.number = attempt;
  a.active = a.adopted = true;
  a.running = running;
  // Parts may have started before the restart: the first start reported after it will do.
  a.parts_to_start = running ? 0 : 1;
  a.parts_left = static_cast<int32_t>(exec::SpecsPerNode(cluster_, devices).size());
  a.stop = stop;
  a.type = devices.empty() ? model::DeviceTypeId() : cluster_.device(devices.front()).type;
  a.running_since_s = now_s;
  a.first_failure = 0;
}

const Attempt* Attempts::attempt(JobId job) const {
  const size_t i = static_cast<size_t>(job.value());
  return i < books_.size() && books_[i].tracked ? &books_[i].attempt : nullptr;
}

double Attempts::RunTime(JobId job, double now_s) const {
  return RunTime(books_[job.value()], now_s);
}

double Attempts::RunTime(const Book& b, double now_s) const {
  const Attempt& a = b.attempt;
  return b.ran_s + (a.active && a.running ? std::max(0.0, now_s - a.running_since_s) : 0);
}

void Attempts::Stop(JobId job, double grace_s, double now_s) {
  Book& b = book(job);
  // Unknown or ended attempts are not an error for a backend: a failure is one it could not
  // act on, which the attempt's exit or the driver's reconciliation settles.
  if (const util::Status st = backend_.Stop(b.name, b.attempt.number, grace_s); !st.ok()) {
    effects_.BackendFailed(job, "stop", st);
  }
  Drain(now_s);
}

bool Attempts::Apply(const sched::Decision& d, double now_s) {
  if (d.placed.empty() && d.preempted.empty()) return true;
  if (const util::Status st = effects_.Record(d, now_s); !st.ok()) {
    // Without the record a restart could act on it twice: carry out nothing, take it back.
    for (const sched::Placement& p : d.placed) {
      sched_.Requeue(p.job, now_s, sched_.record(p.job).done_work);
    }
    for (JobId j : d.preempted) sched_.Stopped(j, now_s);
    return false;
  }
  for (JobId j : d.preempted) {
    Attempt& a = book(j).attempt;
    if (!a.active || a.stop != StopCause::kNone) continue;  // being stopped already
    a.stop = StopCause::kPreempt;
    // Held while it writes its checkpoint: it gets the grace; freed at once: it goes at once.
    const bool holds = sched_.record(j).phase == sched::JobPhase::kStopping;
    effects_.Stopping(j, now_s);
    Stop(j, holds ? rules_.stop_grace_s : 0, now_s);
  }
  for (const sched::Placement& p : d.placed) Launch(p, now_s);
  return true;
}

void Attempts::Launch(const sched::Placement& p, double now_s) {
  Book& b = book(p.job);
  Attempt& a = b.attempt;
  a.number = next_attempt(p.job);
  a.active = true;
  a.running = a.adopted = false;
  a.stop = StopCause::kNone;
  a.type = p.type;
  a.first_failure = 0;
  std::vector<exec::LaunchSpec> specs = exec::SpecsPerNode(cluster_, p.devices);
  a.parts_to_start = a.parts_left = static_cast<int32_t>(specs.size());
  const double startup_s = p.resumed ? rules_.restore_s : 0;
  for (exec::LaunchSpec& spec : specs) {
    spec.job = b.name;
    spec.attempt = a.number;
    spec.startup_s = startup_s;
    if (b.time_limit_s) spec.time_limit_s = std::max(0.0, *b.time_limit_s - b.ran_s);
  }
  // Nothing progresses until the backend says the attempt runs.
  sched_.SetProgress(p.job, 0, now_s);
  effects_.Launching(p, specs, now_s);
  const int64_t number = a.number;
  for (const exec::LaunchSpec& spec : specs) {
    if (const util::Status st = backend_.Start(spec); !st.ok()) {
      StartFailed(p.job, fmt::format("start failed on {}: {}", spec.node, st.message()), now_s);
      return;
    }
    if (!a.active || a.number != number) return;  // a part's start already failed
  }
  Drain(now_s);
}

bool Attempts::Poll(double now_s) { return Drain(now_s); }

bool Attempts::Drain(double now_s) {
  if (draining_) return false;  // the pass under way reads them
  draining_ = true;
  bool decide = false;
  for (std::vector<BackendEvent> events = backend_.Poll(); !events.empty();
       events = backend_.Poll()) {
    for (const BackendEvent& ev : events) {
      const bool about_a_job =
          ev.kind == BackendEventKind::kStarted || ev.kind == BackendEventKind::kStartFailed ||
          ev.kind == BackendEventKind::kExited || ev.kind == BackendEventKind::kLost;
      const std::optional<JobId> job = about_a_job ? effects_.JobNamed(ev.job) : std::nullopt;
      // The driver may name a job it has not tracked yet, or has released (its id reused).
      const bool tracked = job && job->valid() &&
                           static_cast<size_t>(job->value()) < books_.size() &&
                           book(*job).tracked && book(*job).name == ev.job;
      if (!tracked) {
        decide = effects_.OtherEvent(ev, now_s) || decide;
        continue;
      }
      decide = OnJobEvent(*job, ev, now_s) || decide;
    }
  }
  draining_ = false;
  return decide;
}

bool Attempts::OnJobEvent(JobId job, const BackendEvent& ev, double now_s) {
  Book& b = book(job);
  Attempt& a = b.attempt;
  // The backend may still report an attempt the rules already ended (a part of a gang whose
  // start failed, an attempt declared lost): stale.
  if (!a.active || ev.attempt != a.number) return false;
  switch (ev.kind) {
    case BackendEventKind::kStarted:
      if (a.running || --a.parts_to_start > 0) return false;
      a.running = true;
      a.running_since_s = now_s;
      if (a.type.valid() && static_cast<size_t>(a.type.value()) < b.start_failures.size()) {
        b.start_failures[a.type.value()] = 0;
      }
      effects_.Running(job, now_s);
      return false;
    case BackendEventKind::kStartFailed:
      StartFailed(job, fmt::format("start failed on {}: {}", ev.node, ev.message), now_s);
      return true;
    case BackendEventKind::kLost:
      return Lose(job, fmt::format("attempt {} lost on {}: {}", a.number, ev.node, ev.message),
                  now_s);
    case BackendEventKind::kExited:
      if (ev.exit_status != 0 && a.first_failure == 0) a.first_failure = ev.exit_status;
      if (--a.parts_left > 0) {
        // One node of a gang ended with an error: the others cannot go on without it.
        if (ev.exit_status != 0 && a.stop == StopCause::kNone) Stop(job, 0, now_s);
        return false;
      }
      return Exited(job, ev.stopped, now_s);
    default:
      return false;
  }
}

void Attempts::StartFailed(JobId job, const std::string& why, double now_s) {
  Book& b = book(job);
  Attempt& a = b.attempt;
  a.active = false;  // what its other parts report from here on is stale
  if (a.parts_left > 1) Stop(job, 0, now_s);
  const model::DeviceTypeId type = a.type;
  if (b.start_failures.size() <= static_cast<size_t>(type.value())) {
    b.start_failures.resize(cluster_.catalog.size(), 0);
  }
  const int32_t failures = ++b.start_failures[type.value()];
  effects_.AttemptOver(job, AttemptEnd::kStartFailed, why, now_s);
  if (a.stop == StopCause::kCancel) {
    EndJob(job, JobEnd::kCancelled, std::nullopt, b.cancel_message, now_s);
    return;
  }
  const double kept = sched_.record(job).done_work;
  if (failures >= rules_.start_failures_per_type) {
    sched_.Requeue(job, now_s, kept, type);  // never there again
  } else {
    sched_.Requeue(job, now_s, kept);
  }
  if (!sched_.HasAllowedType(job)) {
    EndJob(job, JobEnd::kFailed, std::nullopt,
           fmt::format("no device type it can use is left after {} failed start{} on {}; the "
                       "last: {}",
                       failures, failures == 1 ? "" : "s", cluster_.catalog.Get(type).name, why),
           now_s);
    return;
  }
  effects_.Requeued(job, AttemptEnd::kStartFailed, why, now_s);
}

bool Attempts::Lose(JobId job, const std::string& why, double now_s) {
  Book& b = book(job);
  Attempt& a = b.attempt;
  if (!a.active) return false;
  const double kept = effects_.WorkKept(job, now_s);
  b.ran_s = RunTime(b, now_s);
  a.active = false;  // what its parts report from here on is stale
  // Whatever parts still run are of no use without the lost one.
  Stop(job, 0, now_s);
  effects_.AttemptOver(job, AttemptEnd::kLost, why, now_s);
  if (a.stop == StopCause::kCancel) {
    EndJob(job, JobEnd::kCancelled, std::nullopt, b.cancel_message, now_s);
  } else if (a.stop == StopCause::kTimeLimit) {
    EndJob(job, JobEnd::kFailed, std::nullopt, TimeLimitMessage(b), now_s);
  } else {
    sched_.Requeue(job, now_s, kept);
    effects_.Requeued(job, AttemptEnd::kLost, why, now_s);
  }
  return true;
}

bool Attempts::Exited(JobId job, bool stopped, double now_s) {
  Book& b = book(job);
  Attempt& a = b.attempt;
  b.ran_s = RunTime(b, now_s);
  a.active = false;
  const int status = a.first_failure;
  if (a.stop == StopCause::kCancel) {
    effects_.AttemptOver(job, AttemptEnd::kCancelled, b.cancel_message, now_s);
    EndJob(job, JobEnd::kCancelled, status, b.cancel_message, now_s);
  } else if (a.stop == StopCause::kTimeLimit) {
    const std::string why = TimeLimitMessage(b);
    effects_.AttemptOver(job, AttemptEnd::kFailed, why, now_s);
    EndJob(job, JobEnd::kFailed, status, why, now_s);
  } else if (a.stop == StopCause::kPreempt && stopped) {
    // The driver may hold its devices until its checkpoint is where it belongs.
    if (!effects_.AttemptOver(job, AttemptEnd::kPreempted, "preempted", now_s)) return false;
    return Released(job, now_s);
  } else if (status == 0) {
    effects_.AttemptOver(job, AttemptEnd::kCompleted, "", now_s);
    EndJob(job, JobEnd::kCompleted, 0, "", now_s);
  } else {
    const std::string why = ExitMessage(status);
    effects_.AttemptOver(job, AttemptEnd::kFailed, why, now_s);
    EndJob(job, JobEnd::kFailed, status, why, now_s);
  }
  return true;
}

void Attempts::CheckpointWritten(JobId job, double now_s) { Released(job, now_s); }

bool Attempts::Released(JobId job, double now_s) {
  bool changed = true;
  const sched::JobPhase phase = sched_.record(job).phase;
  if (phase == sched::JobPhase::kStopping) {  // held while it wrote its checkpoint
    sched_.Stopped(job, now_s);
  } else if (book(job).attempt.adopted && phase == sched::JobPhase::kRunning) {
    // Adopted after a daemon restart while it was stopping: it runs in the scheduler's eyes.
    sched_.Requeue(job, now_s, effects_.WorkKept(job, now_s));
  } else {
    changed = false;  // the scheduler queued it at the decision (and may have placed it again)
  }
  effects_.Requeued(job, AttemptEnd::kPreempted, "preempted", now_s);
  return changed;
}

void Attempts::Cancel(JobId job, const std::string& why, double now_s) {
  Book& b = book(job);
  Attempt& a = b.attempt;
  if (!a.active) {
    EndJob(job, JobEnd::kCancelled, std::nullopt, why, now_s);
    return;
  }
  if (a.stop == StopCause::kCancel) return;
  b.cancel_message = why;
  // One writing its checkpoint for a preemption finishes writing it; any other is asked now.
  const bool already_stopping = a.stop != StopCause::kNone;
  a.stop = StopCause::kCancel;
  if (!already_stopping) Stop(job, rules_.stop_grace_s, now_s);
}

Attempts::TimeLimits Attempts::EnforceTimeLimits(double now_s) {
  TimeLimits out{0, kInf};
  std::vector<int32_t> due;  // stopped after the scan: a stop may end jobs, changing limited_
  for (const int32_t i : limited_) {
    Book& b = books_[i];
    const Attempt& a = b.attempt;
    if (!b.tracked || !a.active || !a.running) continue;
    const double left = *b.time_limit_s - RunTime(b, now_s);
    if (left > 0) {
      out.next_s = std::min(out.next_s, now_s + left);
    } else if (a.stop != StopCause::kCancel && a.stop != StopCause::kTimeLimit) {
      b.attempt.stop = StopCause::kTimeLimit;
      due.push_back(i);
    }
  }
  for (const int32_t i : due) {
    if (books_[i].attempt.active) Stop(JobId(i), rules_.stop_grace_s, now_s);  // not ended since
  }
  out.stopped = static_cast<int32_t>(due.size());
  return out;
}

std::string Attempts::TimeLimitMessage(const Book& b) const {
  return fmt::format("stopped at its time limit of {:g} s", b.time_limit_s.value_or(0));
}

void Attempts::EndJob(JobId job, JobEnd how, std::optional<int> exit_status,
                      const std::string& message, double now_s) {
  if (how == JobEnd::kCompleted) {
    sched_.Finish(job, now_s);
  } else {
    sched_.Drop(job, now_s);
  }
  effects_.Ended(job, how, exit_status, message, now_s);
}

}  // namespace hetsched::drive
