#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "cost/transfer.h"
#include "model/topology.h"
#include "sim/event_queue.h"

namespace hetsched::sim {
namespace {

using model::DeviceId;
using model::JobId;
using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The simulator's bookkeeping for one run of a job (start to stop).
struct JobRun {
  uint32_t generation = 0;
  double start_s = 0;
  double since_s = 0;  // progress starts (after a restore)
  double rate = 0;     // effective steps/s, synchronization included
  double start_remaining = 0;
  model::DeviceTypeId type;
  int32_t devices = 0;
  double sync_bytes_per_step = 0;  // summed over the gang (ring all-reduce: 2(n-1) x buffer)
  int32_t span = -1;               // its RunSpan in the timeline, when one is recorded
};

class Engine {
 public:
  Engine(const model::Cluster& cluster, const model::Workload& workload, const SimOptions& options,
         std::unique_ptr<sched::Scheduler> scheduler)
      : cluster_(cluster),
        workload_(workload),
        options_(options),
        sched_(std::move(scheduler)),
        topology_(cluster),
        runs_(workload.jobs.size()),
        outcomes_(workload.jobs.size()),
        down_count_(cluster.devices.size(), 0),
        down_since_(cluster.devices.size(), 0),
        rng_(options.seed) {
    busy_s_.assign(cluster.catalog.size(), 0);
    down_s_.assign(cluster.catalog.size(), 0);
    if (options.timeline_sample_s > 0) InitTimeline();
  }

  SimResult Execute();

 private:
  bool WorkLeft() const {
    return next_arrival_ < order_.size() || sched_->queued() > 0 || sched_->running() > 0;
  }
  bool MeasureDone() const { return options_.measure && measured_left_ == 0; }
  bool Measured(int32_t id) const {
    return !options_.measure || (id >= options_.measure->first && id < options_.measure->second);
  }
  void EndJob(int32_t id, JobStatus status, std::string reason, double now_s) {
    JobOutcome& o = outcomes_[id];
    o.status = status;
    o.reason = std::move(reason);
    if (status == JobStatus::kCompleted) o.completion_s = now_s;
    ++ended_;
    if (options_.measure && Measured(id)) --measured_left_;
  }
  // Books the end of the current run of `id` (busy time, bytes moved) at `now_s`.
  void CloseRun(int32_t id, double now_s, RunEnd end) {
    JobRun& run = runs_[id];
    busy_s_[run.type.value()] += run.devices * std::max(0.0, now_s - run.start_s);
    const double steps = run.rate * std::max(0.0, now_s - run.since_s);
    network_bytes_ += steps * run.sync_bytes_per_step;
    run.generation++;
    if (run.span >= 0) {
      RunSpan& span = timeline().runs[run.span];
      span.end_s = now_s;
      span.end = end;
      busy_now_[span.type] -= run.devices;
      run.span = -1;
    }
  }
  Timeline& timeline() { return result_.timeline; }
  bool Recording() const { return options_.timeline_sample_s > 0; }
  void InitTimeline();
  // Samples the (piecewise constant) state at every sample time before `until_s`.
  void SampleUntil(double until_s);
  void OpenSpan(const sched::Placement& p, double now_s);
  void Apply(const sched::Decision& d, double now_s);
  void StartRun(const sched::Placement& p, double now_s);
  void FaultDown(size_t fault, double now_s);
  void FaultUp(size_t fault, double now_s);
  void ScheduleRandomFault(model::NodeId node, double now_s);
  std::vector<DeviceId> FaultDevices(const Fault& f) const;

  const model::Cluster& cluster_;
  const model::Workload& workload_;
  const SimOptions& options_;
  std::unique_ptr<sched::Scheduler> sched_;
  model::Topology topology_;
  EventQueue queue_;
  std::vector<int32_t> order_;  // job ids by arrival
  size_t next_arrival_ = 0;
  std::vector<JobRun> runs_;
  std::vector<JobOutcome> outcomes_;
  std::vector<Fault> faults_;
  std::vector<char> fault_random_;
  std::vector<int32_t> down_count_;
  std::vector<double> down_since_;
  std::vector<double> busy_s_, down_s_;  // by device type
  std::mt19937_64 rng_;
  int64_t pending_ups_ = 0;
  int64_t measured_left_ = 0;
  int64_t ended_ = 0;
  SimResult result_;
  // Timeline: catalog type -> index into Timeline::types (-1: absent), devices held per index.
  std::vector<int32_t> timeline_type_;
  std::vector<int32_t> busy_now_;
  double next_sample_s_ = 0;
  double network_bytes_ = 0;
  int64_t multi_placements_ = 0, within_node_ = 0;
};

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
  busy_now_[span.type] += span.devices;
  runs_[p.job.value()].span = static_cast<int32_t>(timeline().runs.size());
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
  result_.faults++;
  for (DeviceId d : FaultDevices(f)) {
    if (down_count_[d.value()]++ > 0) continue;
    if (auto job = sched_->JobOn(d)) {
      const int32_t id = job->value();
      const sched::JobRecord& r = sched_->record(*job);
      JobRun& run = runs_[id];
      const double progress_time = std::max(0.0, now_s - run.since_s);
      double saved_time = 0;
      if (options_.checkpoint_interval_s > 0) {
        saved_time = std::floor(progress_time / options_.checkpoint_interval_s) *
                     options_.checkpoint_interval_s;
      }
      const double lost_time = progress_time - saved_time;
      result_.lost_device_hours += run.devices * lost_time / 3600.0;
      const double remaining =
          r.rate > 0 ? std::min(run.start_remaining, r.RemainingAt(now_s) + run.rate * lost_time)
                     : run.start_remaining;
      CloseRun(id, now_s, RunEnd::kFault);
      sched_->Requeue(*job, now_s, remaining);
    }
    sched_->SetDeviceDown(d);
    down_since_[d.value()] = now_s;
  }
  if (std::isfinite(f.duration_s)) {
    queue_.Push(ToMicros(now_s + f.duration_s), EventKind::kDeviceUp, static_cast<int32_t>(index));
    ++pending_ups_;
  }
}

void Engine::FaultUp(size_t index, double now_s) {
  const Fault f = faults_[index];
  --pending_ups_;
  for (DeviceId d : FaultDevices(f)) {
    if (--down_count_[d.value()] > 0) continue;
    sched_->SetDeviceUp(d);
    down_s_[cluster_.device(d).type.value()] += now_s - down_since_[d.value()];
  }
  if (fault_random_[index]) ScheduleRandomFault(f.node, now_s);
}

void Engine::StartRun(const sched::Placement& p, double now_s) {
  const int32_t id = p.job.value();
  const sched::JobRecord& r = sched_->record(p.job);
  const model::Job& job = *r.job;
  JobRun& run = runs_[id];
  run.generation++;
  run.start_s = now_s;
  run.type = p.type;
  run.devices = static_cast<int32_t>(p.devices.size());
  run.start_remaining = r.remaining_work;
  run.sync_bytes_per_step = 0;
  if (Recording()) OpenSpan(p, now_s);
  if (outcomes_[id].first_start_s < 0) outcomes_[id].first_start_s = now_s;
  if (p.devices.size() > 1) {
    ++multi_placements_;
    const model::NodeId node = cluster_.device(p.devices[0]).node;
    if (std::all_of(p.devices.begin(), p.devices.end(),
                    [&](DeviceId d) { return cluster_.device(d).node == node; })) {
      ++within_node_;
    }
  }
  if (r.incompatible[p.type.value()]) {
    // The naive baseline put it where its stack is missing: it crashes after start-up.
    run.rate = 0;
    run.since_s = now_s;
    sched_->SetProgress(p.job, 0, now_s);
    queue_.Push(ToMicros(now_s + options_.compat_startup_s), EventKind::kStartFailure, id,
                run.generation);
    return;
  }
  const double speed = r.speed[p.type.value()];
  double step_s = 1.0 / speed;
  if (job.sync_bytes_per_step > 0 && p.devices.size() > 1) {
    step_s += cost::RingAllReduceSeconds(topology_, p.devices, job.sync_bytes_per_step);
    run.sync_bytes_per_step =
        2.0 * static_cast<double>(p.devices.size() - 1) * job.sync_bytes_per_step;
  }
  run.rate = std::isfinite(step_s) && step_s > 0 ? 1.0 / step_s : 0;
  run.since_s = now_s + (p.resumed ? options_.restore_s : 0);
  sched_->SetProgress(p.job, run.rate, run.since_s);
  if (run.rate > 0) {
    queue_.Push(ToMicros(run.since_s + r.remaining_work / run.rate), EventKind::kCompletion, id,
                run.generation);
  }
}

void Engine::Apply(const sched::Decision& d, double now_s) {
  for (JobId j : d.preempted) {
    CloseRun(j.value(), now_s, RunEnd::kPreempted);
    result_.preemptions++;
  }
  for (const auto& p : d.placed) {
    if (p.migrated) result_.migrations++;
    StartRun(p, now_s);
  }
}

SimResult Engine::Execute() {
  const auto wall_start = Clock::now();
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
  for (const Fault& f : options_.faults) {
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
  const bool rounds = options_.round_s > 0;
  const Micros round_us = rounds ? std::max<Micros>(1, ToMicros(options_.round_s)) : 0;
  bool round_pending = false;
  double now_s = 0;
  int64_t progress_tick = 0;
  while (WorkLeft() && !MeasureDone()) {
    Micros next = std::numeric_limits<Micros>::max();
    if (next_arrival_ < n) next = ToMicros(workload_.jobs[order_[next_arrival_]].arrival_s);
    if (!queue_.empty()) next = std::min(next, queue_.Top().time);
    if (next == std::numeric_limits<Micros>::max()) break;
    if (options_.until_s > 0 && next > ToMicros(options_.until_s)) {
      now_s = options_.until_s;
      result_.stopped_early = "until";
      break;
    }
    now_s = ToSeconds(next);
    SampleUntil(now_s);
    bool changed = false, round_tick = false;
    while (next_arrival_ < n && ToMicros(workload_.jobs[order_[next_arrival_]].arrival_s) == next) {
      const model::Job& job = workload_.jobs[order_[next_arrival_++]];
      result_.events++;
      const sched::Admission a = sched_->Submit(job, now_s);
      if (!a.accepted) {
        result_.jobs_rejected++;
        EndJob(job.id.value(), JobStatus::kFailed, "rejected on arrival: " + a.reason, now_s);
        continue;
      }
      changed = true;
    }
    while (!queue_.empty() && queue_.Top().time == next) {
      const Event e = queue_.Pop();
      result_.events++;
      switch (e.kind) {
        case EventKind::kCompletion: {
          if (runs_[e.target].generation != e.generation) break;  // stopped since
          CloseRun(e.target, now_s, RunEnd::kCompleted);
          sched_->Finish(JobId(e.target), now_s);
          EndJob(e.target, JobStatus::kCompleted, "", now_s);
          result_.makespan_s = std::max(result_.makespan_s, now_s);
          changed = true;
          break;
        }
        case EventKind::kStartFailure: {
          if (runs_[e.target].generation != e.generation) break;
          const JobRun& run = runs_[e.target];
          const model::DeviceTypeId type = run.type;
          result_.compat_failures++;
          result_.wasted_device_hours += run.devices * options_.compat_startup_s / 3600.0;
          const double remaining = run.start_remaining;
          CloseRun(e.target, now_s, RunEnd::kFailed);
          sched_->Requeue(JobId(e.target), now_s, remaining, type);
          if (!sched_->HasAllowedType(JobId(e.target))) {
            sched_->Drop(JobId(e.target), now_s);
            EndJob(e.target, JobStatus::kFailed,
                   "failed at start-up on every device type it was placed on (no compatible "
                   "stack)",
                   now_s);
          }
          changed = true;
          break;
        }
        case EventKind::kDeviceDown:
          FaultDown(static_cast<size_t>(e.target), now_s);
          changed = true;
          break;
        case EventKind::kDeviceUp:
          FaultUp(static_cast<size_t>(e.target), now_s);
          changed = true;
          break;
        case EventKind::kRound:
          round_tick = true;
          break;
      }
    }
    bool decide = changed;
    if (rounds) {
      decide = round_tick;
      if (round_tick) round_pending = false;
    }
    size_t placed = 0;
    if (decide && sched_->queued() > 0) {
      const auto t0 = Clock::now();
      const sched::Decision d = sched_->Decide(now_s);
      result_.sched_wall_s += Seconds(Clock::now() - t0);
      result_.decisions++;
      placed = d.placed.size();
      Apply(d, now_s);
      if (options_.max_rounds > 0 && result_.decisions >= options_.max_rounds) {
        result_.stopped_early = "max-rounds";
        break;
      }
    }
    if (rounds && !round_pending && WorkLeft()) {
      // The next round boundary at or after now (after now when this one just ran).
      Micros at = (next + round_us - 1) / round_us * round_us;
      if (round_tick && at <= next) at = next + round_us;
      queue_.Push(at, EventKind::kRound);
      round_pending = true;
    }
    // Nothing runs, nothing will arrive or come back up, and the last decision placed nothing:
    // the queued jobs can never start.
    if (sched_->running() == 0 && next_arrival_ == n && pending_ups_ == 0 && placed == 0 &&
        decide && sched_->queued() > 0 && options_.node_mtbf_s <= 0) {
      break;
    }
    if (options_.on_progress && (++progress_tick & 1023) == 0) {
      const double total =
          options_.measure ? static_cast<double>(options_.measure->second - options_.measure->first)
                           : static_cast<double>(n);
      const double done = options_.measure ? total - measured_left_ : ended_;
      options_.on_progress(total > 0 ? done / total : 1);
    }
  }
  result_.end_s = now_s;
  if (Recording()) {
    // The samples up to the end, then one at the end itself so charts close there.
    SampleUntil(now_s);
    next_sample_s_ = now_s;
    SampleUntil(std::nextafter(now_s, kInf));
  }

  // Close the books: running jobs' busy time, devices still down.
  for (size_t i = 0; i < n; ++i) {
    if (!sched_->Known(JobId(static_cast<int32_t>(i)))) continue;  // not arrived, or rejected
    const sched::JobRecord& r = sched_->record(JobId(static_cast<int32_t>(i)));
    if (r.phase == sched::JobPhase::kRunning) CloseRun(i, now_s, RunEnd::kRunning);
    outcomes_[i].preemptions = r.preemptions;
  }
  for (size_t d = 0; d < cluster_.devices.size(); ++d) {
    if (down_count_[d] > 0) {
      down_s_[cluster_.devices[d].type.value()] += now_s - down_since_[d];
    }
  }
  result_.policy = std::string(sched_->policy().name());
  result_.seed = options_.seed;
  result_.round_s = options_.round_s;
  result_.jobs_total = static_cast<int64_t>(n);
  std::vector<double> jct, queue;
  for (const JobOutcome& o : outcomes_) {
    switch (o.status) {
      case JobStatus::kCompleted:
        result_.jobs_completed++;
        if (Measured(o.id)) {
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
      case JobStatus::kUnfinished:
        result_.jobs_unfinished++;
        break;
    }
  }
  result_.measured_jobs = static_cast<int64_t>(jct.size());
  if (!jct.empty()) {
    result_.avg_jct_s = std::accumulate(jct.begin(), jct.end(), 0.0) / jct.size();
    result_.avg_queue_s = std::accumulate(queue.begin(), queue.end(), 0.0) / queue.size();
    std::sort(jct.begin(), jct.end());
    const auto rank = [&](double q) {
      const size_t k = static_cast<size_t>(std::ceil(q * jct.size()));
      return jct[std::clamp<size_t>(k, 1, jct.size()) - 1];
    };
    result_.p50_jct_s = rank(0.5);
    result_.p99_jct_s = rank(0.99);
  }
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) {
    const double available = count * now_s - down_s_[type.value()];
    result_.utilization[cluster_.catalog.Get(type).name] =
        available > 0 ? busy_s_[type.value()] / available : 0;
  }
  result_.network_bytes = network_bytes_;
  result_.gangs_within_node =
      multi_placements_ > 0 ? static_cast<double>(within_node_) / multi_placements_ : 1.0;
  if (options_.record_jobs) result_.jobs = outcomes_;
  result_.sim_wall_s = Seconds(Clock::now() - wall_start);
  if (options_.on_progress) options_.on_progress(1);
  return std::move(result_);
}

}  // namespace

util::Result<SimResult> Simulate(const model::Cluster& cluster, const model::Workload& workload,
                                 const model::ThroughputProfile* profile,
                                 const SimOptions& options) {
  for (size_t i = 0; i < workload.jobs.size(); ++i) {
    if (workload.jobs[i].id.value() != static_cast<int32_t>(i)) {
      return util::Status::InvalidArgument(fmt::format(
          "workload job {} has id {} (ids must be positions)", i, workload.jobs[i].id.value()));
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
  if (options.round_s < 0 || options.restore_s < 0 || options.until_s < 0 ||
      options.max_rounds < 0 || options.timeline_sample_s < 0 || options.compat_startup_s < 0 ||
      options.checkpoint_interval_s < 0 || options.node_mtbf_s < 0 || options.node_mttr_s < 0 ||
      options.sched.preempt_interval_s < 0 || options.sched.tuning.aging < 0) {
    return util::Status::InvalidArgument(
        "round, restore, start-up, checkpoint, preempt-interval, until, MTBF and MTTR times, "
        "max rounds, timeline sample and aging must be >= 0");
  }
  if ((options.node_mtbf_s > 0) != (options.node_mttr_s > 0)) {
    return util::Status::InvalidArgument("give both --mtbf and --mttr, or neither");
  }
  ASSIGN_OR_RETURN(auto scheduler,
                   sched::Scheduler::Create(cluster, profile, options.policy, options.sched));
  Engine engine(cluster, workload, options, std::move(scheduler));
  return engine.Execute();
}

nlohmann::json ToJson(const SimResult& r) {
  nlohmann::json j;
  j["policy"] = r.policy;
  j["seed"] = r.seed;
  j["round_s"] = r.round_s;
  j["jobs_total"] = r.jobs_total;
  j["jobs_completed"] = r.jobs_completed;
  j["jobs_failed"] = r.jobs_failed;
  j["jobs_rejected"] = r.jobs_rejected;
  j["jobs_unfinished"] = r.jobs_unfinished;
  j["failure_reasons"] = r.failure_reasons;
  j["measured_jobs"] = r.measured_jobs;
  j["avg_jct_s"] = r.avg_jct_s;
  j["p50_jct_s"] = r.p50_jct_s;
  j["p99_jct_s"] = r.p99_jct_s;
  j["avg_queue_s"] = r.avg_queue_s;
  j["makespan_s"] = r.makespan_s;
  j["end_s"] = r.end_s;
  j["utilization"] = r.utilization;
  j["compat_failures"] = r.compat_failures;
  j["wasted_device_hours"] = r.wasted_device_hours;
  j["lost_device_hours"] = r.lost_device_hours;
  j["faults"] = r.faults;
  j["preemptions"] = r.preemptions;
  j["migrations"] = r.migrations;
  j["decisions"] = r.decisions;
  j["sched_wall_s"] = r.sched_wall_s;
  j["events"] = r.events;
  j["sim_wall_s"] = r.sim_wall_s;
  j["network_bytes"] = r.network_bytes;
  j["gangs_within_node"] = r.gangs_within_node;
  if (!r.stopped_early.empty()) j["stopped_early"] = r.stopped_early;
  if (r.timeline.sample_s > 0) j["timeline"] = ToJson(r.timeline);
  if (!r.jobs.empty()) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& o : r.jobs) {
      nlohmann::json jo;
      jo["id"] = o.id;
      jo["status"] = o.status == JobStatus::kCompleted ? "completed"
                     : o.status == JobStatus::kFailed  ? "failed"
                                                       : "unfinished";
      if (!o.reason.empty()) jo["reason"] = o.reason;
      jo["arrival_s"] = o.arrival_s;
      jo["first_start_s"] = o.first_start_s;
      jo["completion_s"] = o.completion_s;
      jo["preemptions"] = o.preemptions;
      jobs.push_back(jo);
    }
    j["jobs"] = jobs;
  }
  return j;
}

}  // namespace hetsched::sim
