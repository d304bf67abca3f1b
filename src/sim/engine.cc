#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string_view>

#include "sim/engine_internal.h"

namespace hetsched::sim::internal {

void Engine::ManagePower(double now_s) {
  power_driver_.Decide(now_s);
  if (std::isfinite(power_driver_.next_check_s())) {
    // At least a microsecond on: a check due a rounding error after now (an idle timer of
    // idle_since + 600 s one ulp above now) would else be due again at now, forever.
    const Micros at = std::max(ToMicros(power_driver_.next_check_s()), ToMicros(now_s) + 1);
    if (at < power_check_at_) {
      power_check_at_ = at;
      queue_.Push(at, EventKind::kPowerCheck);
    }
  }
}

void Engine::PowerTimerArmed(const drive::PowerTimer& timer) {
  // Only resume timeouts: a shutdown ends with SimBackend's report (PowerRules).
  assert(timer.kind == drive::PowerTimerKind::kResumeTimeout);
  queue_.Push(ToMicros(timer.due_s), EventKind::kResumeTimeout, timer.node, timer.attempt);
}

void Engine::PowerSwitchFailed(int32_t node, bool on, const util::Status& status) {
  (void)node, (void)on;
  Must(status);
}

bool Engine::PowerEvent(const Event& e, double now_s) {
  switch (e.kind) {
    case EventKind::kPowerCheck:
      if (e.time >= power_check_at_) power_check_at_ = std::numeric_limits<Micros>::max();
      return false;
    case EventKind::kResumeTimeout:
      return power_driver_.OnTimer(e.target, e.generation, now_s);
    default:
      return false;
  }
}

bool Engine::MachineTimer(const Event& e, double now_s) {
  switch (e.kind) {
    case EventKind::kDeviceDown:
      FaultDown(static_cast<size_t>(e.target), now_s);
      return true;
    case EventKind::kDeviceUp:
      FaultUp(static_cast<size_t>(e.target), now_s);
      return true;
    case EventKind::kPowerCheck:
    case EventKind::kResumeTimeout:
      return PowerEvent(e, now_s);
    default:
      return false;
  }
}

double Engine::RunToHorizon(double now_s) {
  const Micros horizon = ToMicros(options_.horizon_s);
  while (!queue_.empty() && queue_.Top().time <= horizon) {
    const Micros at = queue_.Top().time;
    now_s = ToSeconds(at);
    backend_.AdvanceTo(now_s);
    power_.Advance(now_s);
    SampleUntil(now_s);
    while (!queue_.empty() && queue_.Top().time == at) {
      const Event e = queue_.Pop();
      result_.events++;
      if (backend_.Fire(e)) {  // a node switched power: no job runs any more
        Dispatch(now_s);
        continue;
      }
      MachineTimer(e, now_s);  // rounds and the rest: nothing is decided past the last job
    }
    if (power_.suspends()) ManagePower(now_s);
  }
  return options_.horizon_s;
}

void Engine::InitTimeline() {
  Timeline& t = timeline();
  t.sample_s = options_.timeline_sample_s;
  timeline_type_.assign(cluster_.catalog.size(), -1);
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) {
    timeline_type_[type.value()] = static_cast<int32_t>(t.types.size());
    t.types.push_back(cluster_.catalog.Get(type).name);
    t.type_total.push_back(count);
  }
  busy_now_.assign(t.types.size(), 0);
  for (const model::Node& n : cluster_.nodes) t.nodes.push_back(n.name);
}

void Engine::SampleUntil(double until_s) {
  if (!Recording()) return;
  while (next_sample_s_ < until_s) {
    TimelineSample s;
    s.time_s = next_sample_s_;
    s.busy = busy_now_;
    s.queued = static_cast<int32_t>(sched_->queued());
    s.running = static_cast<int32_t>(sched_->running());
    s.power_w = power_.meter().watts();
    timeline().samples.push_back(std::move(s));
    next_sample_s_ += options_.timeline_sample_s;
  }
}

void Engine::OpenSpan(const sched::Placement& p, double now_s) {
  RunSpan span;
  span.job = p.job.value();
  span.type = timeline_type_[p.type.value()];
  span.devices = static_cast<int32_t>(p.devices.size());
  for (DeviceId d : p.devices) span.nodes.push_back(cluster_.device(d).node.value());
  std::sort(span.nodes.begin(), span.nodes.end());
  span.nodes.erase(std::unique(span.nodes.begin(), span.nodes.end()), span.nodes.end());
  span.start_s = span.end_s = now_s;
  JobRun& run = runs_[p.job.value()];
  run.counted = run.owns ? span.devices : 0;
  busy_now_[span.type] += run.counted;
  run.span = static_cast<int32_t>(timeline().runs.size());
  timeline().runs.push_back(std::move(span));
}

std::vector<DeviceId> Engine::FaultDevices(const Fault& f) const {
  if (f.device.valid()) return {f.device};
  std::vector<DeviceId> out;
  const model::Node& n = cluster_.node(f.node);
  for (int32_t i = 0; i < n.device_count; ++i) out.push_back(cluster_.device_of(f.node, i));
  return out;
}

void Engine::ScheduleRandomFault(model::NodeId node, double now_s) {
  std::exponential_distribution<double> up(1.0 / options_.node_mtbf_s);
  std::exponential_distribution<double> repair(1.0 / options_.node_mttr_s);
  Fault f;
  f.time_s = now_s + up(rng_);
  f.node = node;
  f.duration_s = repair(rng_);
  faults_.push_back(f);
  fault_random_.push_back(1);
  queue_.Push(ToMicros(f.time_s), EventKind::kDeviceDown, static_cast<int32_t>(faults_.size() - 1));
}

void Engine::FaultDown(size_t index, double now_s) {
  const Fault f = faults_[index];
  if (!f.service) result_.faults++;
  for (DeviceId d : FaultDevices(f)) {
    if (down_count_[d.value()]++ > 0) continue;
    if (auto job = sched_->JobOn(d)) {
      // Both jobs sharing the device fail with it.
      const int32_t partner = sched_->record(*job).partner;
      if (f.service) {  // before they stop: the backend may report the exit at once
        runs_[job->value()].reclaimed = true;
        if (partner >= 0) runs_[partner].reclaimed = true;
      }
      if (partner >= 0) attempts_.Lose(JobId(partner), "a device it ran on failed", now_s);
      attempts_.Lose(*job, "a device it ran on failed", now_s);
      ApplySpeedChanges(now_s);
    }
    sched_->SetDeviceDown(d);
    down_since_[d.value()] = now_s;
  }
  if (f.service) {
    // The replica's draw, booked in the cluster's energy (holds of one device may meet end to
    // start, in either order: the count says when the last one ends).
    for (DeviceId d : FaultDevices(f)) ++service_holds_[d.value()];
    power_.SetServiceDraw(FaultDevices(f), f.service_draw, now_s);
  }
  if (std::isfinite(f.duration_s)) {
    queue_.Push(ToMicros(now_s + f.duration_s), EventKind::kDeviceUp, static_cast<int32_t>(index));
    ++pending_ups_;
  }
}

double Engine::WorkKept(JobId job, double now_s) {
  const int32_t id = job.value();
  const sched::JobRecord& r = sched_->record(job);
  JobRun& run = runs_[id];
  // Progress stopped at the preemption when it is writing its checkpoint.
  const double progress_end_s = run.stop_s >= 0 ? run.stop_s : now_s;
  const double progress_time = std::max(0.0, progress_end_s - run.since_s);
  double saved_time = 0;
  if (options_.checkpoint_interval_s > 0) {
    saved_time =
        std::floor(progress_time / options_.checkpoint_interval_s) * options_.checkpoint_interval_s;
  }
  // A reclaim is known ahead (the services' plans are made before they take effect): the job
  // spent its last checkpoint_save_s writing a checkpoint, without progress.
  if (run.reclaimed) {
    saved_time = std::max(saved_time, progress_time - options_.checkpoint_save_s);
  }
  const double lost_time = progress_time - saved_time;
  result_.lost_device_hours += run.devices * lost_time / 3600.0;
  const double rate = run.stop_s >= 0 ? run.stop_rate : run.rate;
  return std::max(run.start_done, r.DoneAt(now_s) - rate * lost_time);
}

void Engine::ApplySpeedChanges(double now_s, const std::vector<sched::Placement>* skip) {
  const std::vector<JobId> changed = sched_->TakeSpeedChanges();
  if (changed.empty()) return;
  // A job started in this same decision already runs at its final speed.
  std::vector<JobId> started;
  if (skip != nullptr) {
    for (const sched::Placement& p : *skip) started.push_back(p.job);
    std::sort(started.begin(), started.end());
  }
  for (JobId j : changed) {
    if (!std::binary_search(started.begin(), started.end(), j)) Rerate(j.value(), now_s);
  }
}

void Engine::Rerate(int32_t id, double now_s) {
  const sched::JobRecord& r = sched_->record(JobId(id));
  if (r.phase != sched::JobPhase::kRunning) return;
  JobRun& run = runs_[id];
  network_bytes_ += run.rate * std::max(0.0, now_s - run.segment_s) * run.sync_bytes_per_step;
  if (r.partner < 0) EndSharing(run, now_s);
  if (!run.owns && !r.guest) {  // the holder left: the devices are this job's now
    run.owns = true;
    run.busy_from_s = now_s;
    run.held = r.devices;
    power_.SetBusy(run.held, true, run.cap_power, now_s);
    if (run.span >= 0) {
      run.counted = run.devices;
      busy_now_[timeline().runs[run.span].type] += run.counted;
    }
  }
  run.solo_rate = EffectiveRate(sched_->SpeedNow(JobId(id)), run.sync_s, run.cap_throughput);
  if (run.ring >= 0) network_.SetDemand(run.ring, run.solo_rate * run.hop_bytes, now_s);
  run.rate = NetworkRate(run);
  ProgressFrom(id, std::max(now_s, r.progress_since_s));
}

void Engine::ProgressFrom(int32_t id, double from_s) {
  JobRun& run = runs_[id];
  run.segment_s = from_s;
  sched_->SetProgress(JobId(id), run.rate, from_s);
  backend_.MoveEnd(SimBackend::JobName(id), attempts_.attempt(JobId(id))->number,
                   run.rate > 0 ? from_s + TrueRemaining(id, from_s) / run.rate : kInf);
}

void Engine::BookCheckpointSaved(int32_t id, double now_s) {
  result_.checkpoint_save_device_hours +=
      runs_[id].devices * std::max(0.0, now_s - runs_[id].stop_s) / 3600.0;
  runs_[id].stop_s = -1;
  runs_[id].exit_waits = false;
  --stopping_;
  CloseRun(id, now_s, RunEnd::kPreempted);
}

void Engine::FaultUp(size_t index, double now_s) {
  const Fault f = faults_[index];
  --pending_ups_;
  for (DeviceId d : FaultDevices(f)) {
    if (f.service && --service_holds_[d.value()] == 0) power_.SetServiceDraw({d}, 0, now_s);
    if (--down_count_[d.value()] > 0) continue;
    sched_->SetDeviceUp(d);
    down_s_[cluster_.device(d).type.value()] += now_s - down_since_[d.value()];
  }
  if (fault_random_[index]) ScheduleRandomFault(f.node, now_s);
}

std::optional<sched::SizeEstimate> Engine::EstimateFor(const model::Job& job) {
  const EstimateMode& m = options_.estimates;
  double factor = 0;
  switch (m.kind) {
    case EstimateMode::kWorkload:
    case EstimateMode::kNone:
    case EstimateMode::kHistory:
      return std::nullopt;
    case EstimateMode::kOracle:
      factor = 1;
      break;
    case EstimateMode::kLognormal:
      factor = m.parameter > 0
                   ? std::exp(std::normal_distribution<double>(0, m.parameter)(estimate_rng_))
                   : 1;
      break;
    case EstimateMode::kUserLimit:
      factor =
          std::exp(std::uniform_real_distribution<double>(0, std::log(m.parameter))(estimate_rng_));
      break;
  }
  return sched::SizeEstimate{job.work * factor, sched::EstimateSource::kDriver};
}

void Engine::ScheduleStart() {
  const size_t n = workload_.jobs.size();
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    return workload_.jobs[a].arrival_s < workload_.jobs[b].arrival_s;
  });
  for (size_t i = 0; i < n; ++i) {
    outcomes_[i].id = static_cast<int32_t>(i);
    outcomes_[i].arrival_s = workload_.jobs[i].arrival_s;
  }
  if (options_.measure) {
    measured_left_ = options_.measure->second - options_.measure->first;
  }
  for (const auto& [at_s, job] : options_.cancels) {
    queue_.Push(ToMicros(at_s), EventKind::kCancel, job);
  }
  for (const Fault& f : options_.faults) {
    if (f.start_failure) continue;  // the backend's (BackendOptions)
    faults_.push_back(f);
    fault_random_.push_back(0);
    queue_.Push(ToMicros(f.time_s), EventKind::kDeviceDown,
                static_cast<int32_t>(faults_.size() - 1));
  }
  if (options_.node_mtbf_s > 0 && options_.node_mttr_s > 0) {
    for (size_t i = 0; i < cluster_.nodes.size(); ++i) {
      ScheduleRandomFault(model::NodeId(static_cast<int32_t>(i)), 0);
    }
  }
}

bool Engine::Arrive(Micros at, double now_s) {
  bool arrived = false;
  while (next_arrival_ < order_.size() &&
         ToMicros(workload_.jobs[order_[next_arrival_]].arrival_s) == at) {
    const model::Job& job = workload_.jobs[order_[next_arrival_++]];
    result_.events++;
    const sched::Admission a = sched_->Submit(job, now_s, EstimateFor(job));
    if (!a.accepted) {
      result_.jobs_rejected++;
      EndJob(job.id.value(), JobStatus::kFailed, "rejected on arrival: " + a.reason, now_s);
      continue;
    }
    attempts_.Track(job.id, SimBackend::JobName(job.id.value()), job.time_limit_s);
    arrived = true;
  }
  return arrived;
}

Engine::Step Engine::TakeEvents(Micros at, double now_s) {
  Step step;
  step.changed = Arrive(at, now_s);
  const auto react = [&](const Reaction& reaction) {
    step.changed = reaction.decide || step.changed;
    step.freed = reaction.freed || step.freed;
  };
  while (!queue_.empty() && queue_.Top().time == at) {
    const Event e = queue_.Pop();
    result_.events++;
    if (backend_.Fire(e)) {  // the machines': an attempt or a node changed
      react(Dispatch(now_s));
      continue;
    }
    switch (e.kind) {
      case EventKind::kDeviceDown:
      case EventKind::kDeviceUp:
      case EventKind::kPowerCheck:
      case EventKind::kResumeTimeout:
        step.changed = MachineTimer(e, now_s) || step.changed;
        break;
      case EventKind::kRound:
        step.round_tick = true;
        break;
      case EventKind::kTimeLimit:
        if (e.time >= time_limit_at_) time_limit_at_ = std::numeric_limits<Micros>::max();
        break;
      case EventKind::kDecisionDue:
        // Not due when the due time moved later since (WakeForDueDecision arms the next).
        if (e.time == decision_due_at_) {
          decision_due_at_ = std::numeric_limits<Micros>::max();
          step.changed = sched_->NextDecisionDue() <= now_s || step.changed;
        }
        break;
      case EventKind::kCancel:
        if (outcomes_[e.target].status == JobStatus::kUnfinished) {
          attempts_.Cancel(JobId(e.target), "cancelled", now_s);
          step.changed = true;
        }
        break;
      case EventKind::kFlowDone:
        if (e.generation == network_epoch_) {
          flow_event_at_ = std::numeric_limits<Micros>::max();
          Reaction reaction;
          OnFlowsDone(now_s, reaction);
          react(reaction);
        }
        break;
      case EventKind::kAttemptEnd:  // the backend's (Fire took them)
      case EventKind::kAttemptStartFailure:
      case EventKind::kNodeOff:
      case EventKind::kNodeOn:
        break;
    }
  }
  return step;
}

size_t Engine::DecideNow(double now_s) {
  const auto t0 = Clock::now();
  const sched::Decision d = sched_->Decide(now_s);
  const double took_s = Seconds(Clock::now() - t0);
  result_.sched_wall_s += took_s;
  decision_us_.push_back(static_cast<float>(took_s * 1e6));
  result_.decisions++;
  last_decision_s_ = now_s;
  Apply(d, now_s);
  return d.placed.size();
}

bool Engine::Stuck(size_t placed, bool decided) const {
  // Nothing runs or writes a checkpoint, nothing will arrive or come back up (no fault
  // repair, no node booting or waiting to be resumed), and the last decision placed nothing:
  // the queued jobs can never start.
  return sched_->running() == 0 && stopping_ == 0 && next_arrival_ == order_.size() &&
         pending_ups_ == 0 && placed == 0 && decided && sched_->queued() > 0 &&
         options_.node_mtbf_s <= 0 && !power_.CapacityPending();
}

void Engine::ReportProgress() {
  const double total = options_.measure
                           ? static_cast<double>(options_.measure->second - options_.measure->first)
                           : static_cast<double>(order_.size());
  const double done = options_.measure ? total - measured_left_ : ended_;
  options_.on_progress(total > 0 ? done / total : 1);
}

double Engine::RunJobs() {
  const bool rounds = options_.round_s > 0;
  const Micros round_us = rounds ? std::max<Micros>(1, ToMicros(options_.round_s)) : 0;
  bool round_pending = false;
  double now_s = 0;
  // Every node starts on and idle: the idle timers run from 0, before the first event.
  if (power_.suspends()) ManagePower(0);
  int64_t progress_tick = 0;
  while (WorkLeft() && !MeasureDone()) {
    Micros next = std::numeric_limits<Micros>::max();
    if (next_arrival_ < order_.size()) {
      next = ToMicros(workload_.jobs[order_[next_arrival_]].arrival_s);
    }
    if (!queue_.empty()) next = std::min(next, queue_.Top().time);
    if (next == std::numeric_limits<Micros>::max()) break;
    if (options_.until_s > 0 && next > ToMicros(options_.until_s)) {
      now_s = options_.until_s;
      result_.stopped_early = "until";
      break;
    }
    now_s = ToSeconds(next);
    backend_.AdvanceTo(now_s);
    power_.Advance(now_s);
    SampleUntil(now_s);
    Step step = TakeEvents(next, now_s);
    if (EnforceTimeLimits(now_s)) step.changed = step.freed = true;  // its devices are freed
    bool decide = step.changed;
    if (rounds) {
      // Devices a checkpoint write held are free now: fill them without waiting for the round.
      decide = step.round_tick || step.freed;
      if (step.round_tick) round_pending = false;
    }
    size_t placed = 0;
    if (decide && sched_->HasWork()) {
      placed = DecideNow(now_s);
      if (options_.max_rounds > 0 && result_.decisions >= options_.max_rounds) {
        result_.stopped_early = "max-rounds";
        break;
      }
    }
    if (network_.live() > 0 || flow_event_at_ != std::numeric_limits<Micros>::max()) {
      Reshare(now_s);
    }
    if (power_.suspends()) ManagePower(now_s);
    if (rounds && !round_pending && WorkLeft()) {
      // The next round boundary at or after now (after now when this one just ran).
      Micros at = (next + round_us - 1) / round_us * round_us;
      if (step.round_tick && at <= next) at = next + round_us;
      queue_.Push(at, EventKind::kRound);
      round_pending = true;
    }
    if (!rounds) WakeForDueDecision(next);
    if (Stuck(placed, decide)) break;
    if (options_.on_progress && (++progress_tick & 1023) == 0) ReportProgress();
  }
  return now_s;
}

void Engine::CloseBooks(double now_s) {
  backend_.AdvanceTo(now_s);
  power_.Advance(now_s);
  if (Recording()) {
    // The samples up to the end, then one at the end itself so charts close there.
    SampleUntil(now_s);
    next_sample_s_ = now_s;
    SampleUntil(std::nextafter(now_s, kInf));
  }
  // Running jobs' busy time, devices still down.
  for (size_t i = 0; i < outcomes_.size(); ++i) {
    const JobId id(static_cast<int32_t>(i));
    if (!sched_->Known(id)) continue;  // not arrived, or rejected
    const sched::JobRecord& r = sched_->record(id);
    if (r.phase == sched::JobPhase::kRunning || r.phase == sched::JobPhase::kStopping) {
      CloseRun(i, now_s, RunEnd::kRunning);
    }
    outcomes_[i].preemptions = r.preemptions;
    if (const drive::Attempt* a = attempts_.attempt(id)) outcomes_[i].attempts = a->number;
  }
  for (size_t d = 0; d < cluster_.devices.size(); ++d) {
    if (down_count_[d] > 0) {
      down_s_[cluster_.devices[d].type.value()] += now_s - down_since_[d];
    }
  }
}

void Engine::SummarizeJobs(double now_s) {
  const size_t n = workload_.jobs.size();
  result_.policy = std::string(sched_->policy().name());
  result_.estimates = EstimateModeName(options_.estimates);
  if (n > 0) result_.last_arrival_s = workload_.jobs[order_.back()].arrival_s;
  // Gavel keeps generating jobs until the measured ones are done: a trace that ran out of
  // arrivals before that measured them under a falling load.
  result_.arrivals_ended_early =
      options_.measure && n > 0 && next_arrival_ == n && result_.last_arrival_s < now_s;
  result_.allocation_failures = sched_->allocation_failures();
  result_.allocation_log = sched_->allocation_log();
  result_.space_sharing = options_.sched.space_sharing;
  result_.seed = options_.seed;
  result_.round_s = options_.round_s;
  result_.jobs_total = static_cast<int64_t>(n);
  std::vector<double> jct, queue;
  for (const JobOutcome& o : outcomes_) {
    switch (o.status) {
      case JobStatus::kCompleted:
        result_.jobs_completed++;
        // A service (kind realtime) runs for a set time, not to a result: its "completion
        // time" says nothing about scheduling, so JCT statistics leave it out.
        if (Measured(o.id) && workload_.jobs[o.id].kind != model::JobKind::kRealtime) {
          jct.push_back(o.completion_s - o.arrival_s);
          queue.push_back(o.first_start_s - o.arrival_s);
        }
        break;
      case JobStatus::kFailed: {
        result_.jobs_failed++;
        const std::string key = o.reason.substr(0, o.reason.find(':'));
        result_.failure_reasons[key]++;
        break;
      }
      case JobStatus::kCancelled:
        result_.jobs_cancelled++;
        break;
      case JobStatus::kUnfinished:
        result_.jobs_unfinished++;
        break;
    }
  }
  result_.measured_jobs = static_cast<int64_t>(jct.size());
  if (!jct.empty()) {
    result_.avg_jct_s = std::accumulate(jct.begin(), jct.end(), 0.0) / jct.size();
    result_.avg_queue_s = std::accumulate(queue.begin(), queue.end(), 0.0) / queue.size();
    result_.p50_jct_s = Percentile(jct, 0.5);
    result_.p99_jct_s = Percentile(jct, 0.99);
  }
  if (!decision_us_.empty()) {
    result_.decision_p50_us = Percentile(decision_us_, 0.5);
    result_.decision_p99_us = Percentile(decision_us_, 0.99);
    result_.decision_max_us = *std::max_element(decision_us_.begin(), decision_us_.end());
  }
}

void Engine::SummarizeMachines(double now_s) {
  double up_device_s = 0;
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) {
    const double available = count * now_s - down_s_[type.value()];
    up_device_s += available;
    result_.utilization[cluster_.catalog.Get(type).name] =
        available > 0 ? busy_s_[type.value()] / available : 0;
  }
  const double preemption_device_s =
      3600 * (result_.checkpoint_save_device_hours + result_.restore_device_hours +
              result_.restart_device_hours);
  result_.preemption_share = up_device_s > 0 ? preemption_device_s / up_device_s : 0;
  const auto started = std::count_if(outcomes_.begin(), outcomes_.end(),
                                     [](const JobOutcome& o) { return o.first_start_s >= 0; });
  result_.preemptions_per_job =
      started > 0 ? static_cast<double>(result_.preemptions) / started : 0;
  result_.power_policy = options_.power.policy;
  const power::EnergyMeter& meter = power_.meter();
  result_.energy_kwh = meter.kwh();
  result_.energy_cost = meter.cost();
  result_.peak_power_w = meter.peak_watts();
  result_.energy_by_state = meter.KwhByState();
  result_.energy_by_type = meter.KwhByType();
  if (options_.power.carbon_g_per_kwh) {
    result_.carbon_kg = meter.kwh() * *options_.power.carbon_g_per_kwh / 1000;
  }
  result_.node_power_transitions = power_.transitions();
  result_.node_boot_failures = power_.boot_failures();
  result_.network_bytes = network_bytes_;
  network_.Advance(now_s);
  result_.spine_bytes = network_.spine_bytes();
  if (stagings_ > 0) result_.avg_staging_s = staging_s_ / static_cast<double>(stagings_);
  result_.gangs_within_node =
      multi_placements_ > 0 ? static_cast<double>(within_node_) / multi_placements_ : 1.0;
}

SimResult Engine::Execute() {
  const auto wall_start = Clock::now();
  ScheduleStart();
  double now_s = RunJobs();
  result_.end_s = now_s;
  // From here on now_s is where the books close: the horizon when the run ended before it.
  if (options_.horizon_s > now_s) now_s = RunToHorizon(now_s);
  result_.horizon_s = now_s;
  CloseBooks(now_s);
  SummarizeJobs(now_s);
  SummarizeMachines(now_s);
  SummarizeTenants(now_s);
  if (options_.record_jobs) result_.jobs = outcomes_;
  result_.sim_wall_s = Seconds(Clock::now() - wall_start);
  if (options_.on_progress) options_.on_progress(1);
  return std::move(result_);
}

}  // namespace hetsched::sim::internal

namespace hetsched::sim {

using internal::Engine;
using model::DeviceId;

namespace {

// The services first (sim/serving.h); the rest of the workload (ids renumbered) runs around
// their replicas.
util::Result<SimResult> SimulateWithServices(const model::Cluster& cluster,
                                             const model::Workload& workload,
                                             const model::ThroughputProfile* profile,
                                             const SimOptions& options) {
  std::vector<const model::Job*> services;
  std::vector<std::vector<model::InferenceRequest>> requests;
  for (const model::Job& job : workload.jobs) {
    if (job.kind != model::JobKind::kService) continue;
    services.push_back(&job);
    ASSIGN_OR_RETURN(auto reqs,
                     RequestsOf(job, options.serving.horizon_s, options.seed + services.size()));
    requests.push_back(std::move(reqs));
  }
  ASSIGN_OR_RETURN(ServingResult serving,
                   SimulateServing(cluster, services, requests, options.serving));
  SimOptions with_holds = options;
  with_holds.faults.insert(with_holds.faults.end(), serving.holds.begin(), serving.holds.end());
  with_holds.serving_pool = serving.pool;
  // A replica's node must be on while it runs, and the power policy does not see the
  // services' plans: nodes that host a replica at some time of the day are not suspended.
  for (DeviceId d : serving.pool) {
    const std::string& node = cluster.node(cluster.device(d).node).name;
    auto& excluded = with_holds.power.exclude_nodes;
    if (std::find(excluded.begin(), excluded.end(), node) == excluded.end()) {
      excluded.push_back(node);
    }
  }
  serving.holds.clear();
  ASSIGN_OR_RETURN(SimResult result,
                   Simulate(cluster, WithoutServices(workload), profile, with_holds));
  result.serving = std::move(serving);
  return result;
}

// The workload and options a simulation can run: jobs with positional ids and work, and
// times, cancels and stops that make sense.
util::Status CheckSimulation(const model::Workload& workload, const SimOptions& options) {
  for (size_t i = 0; i < workload.jobs.size(); ++i) {
    if (workload.jobs[i].id.value() != static_cast<int32_t>(i)) {
      return util::Status::InvalidArgument(fmt::format(
          "workload job {} has id {} (ids must be positions)", i, workload.jobs[i].id.value()));
    }
    if (!(workload.jobs[i].work > 0)) {
      return util::Status::InvalidArgument(fmt::format(
          "job '{}' has no work: the simulator needs its size (work, or duration with "
          "reference_device); only a daemon backend that runs its command can do without",
          workload.jobs[i].name));
    }
  }
  if (options.measure) {
    const auto [a, b] = *options.measure;
    if (a < 0 || b <= a || b > static_cast<int32_t>(workload.jobs.size())) {
      return util::Status::InvalidArgument(
          fmt::format("--measure-jobs {}-{}: the workload has jobs 0-{} (expected FIRST-LAST with "
                      "FIRST < LAST <= {})",
                      a, b, workload.jobs.size(), workload.jobs.size()));
    }
  }
  if (options.round_s < 0 || options.restore_s < 0 || options.checkpoint_save_s < 0 ||
      options.until_s < 0 || options.max_rounds < 0 || options.timeline_sample_s < 0 ||
      options.horizon_s < 0 || options.compat_startup_s < 0 || options.checkpoint_interval_s < 0 ||
      options.node_mtbf_s < 0 || options.node_mttr_s < 0 || options.sched.preempt_interval_s < 0 ||
      options.sched.tuning.aging < 0) {
    return util::Status::InvalidArgument(
        "round, restore, start-up, checkpoint, preempt-interval, until, horizon, MTBF and MTTR "
        "times, max rounds, timeline sample and aging must be >= 0");
  }
  for (const auto& [at_s, job] : options.cancels) {
    if (job < 0 || static_cast<size_t>(job) >= workload.jobs.size() ||
        !(at_s >= workload.jobs[job].arrival_s)) {
      return util::Status::InvalidArgument(fmt::format(
          "a cancel of job {} at {} s: expected a job of the workload, at or after its arrival",
          job, at_s));
    }
  }
  if (options.horizon_s > 0 && (options.until_s > 0 || options.max_rounds > 0 || options.measure)) {
    return util::Status::InvalidArgument(
        "--horizon extends a run past its last job; --until, --max-rounds and --measure-jobs "
        "stop one early: give one or the other");
  }
  if ((options.node_mtbf_s > 0) != (options.node_mttr_s > 0)) {
    return util::Status::InvalidArgument("give both --mtbf and --mttr, or neither");
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<SimResult> Simulate(const model::Cluster& cluster, const model::Workload& workload,
                                 const model::ThroughputProfile* profile,
                                 const SimOptions& options) {
  if (HasServices(workload)) return SimulateWithServices(cluster, workload, profile, options);
  RETURN_IF_ERROR(CheckSimulation(workload, options));
  ASSIGN_OR_RETURN(power::PowerController power,
                   power::PowerController::Create(cluster, options.power));
  sched::SchedulerOptions sched_options = options.sched;
  sched_options.stop_holds_devices = options.checkpoint_save_s > 0;
  sched_options.preemption_cost_s = options.checkpoint_save_s + options.restore_s;
  sched_options.history_estimates = options.estimates.kind == EstimateMode::kHistory;
  sched_options.declared_estimates = options.estimates.kind == EstimateMode::kWorkload;
  ASSIGN_OR_RETURN(auto scheduler,
                   sched::Scheduler::Create(cluster, profile, options.policy, sched_options));
  Engine engine(cluster, workload, options, std::move(scheduler), std::move(power));
  if (options.sched.tenants) engine.KeepTenantBooks(profile);
  return engine.Execute();
}

}  // namespace hetsched::sim
