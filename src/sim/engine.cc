#include "sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string_view>

#include "cost/transfer.h"
#include "drive/attempts.h"
#include "drive/power_demand.h"
#include "exec/launch.h"
#include "model/topology.h"
#include "power/power_controller.h"
#include "sim/event_queue.h"
#include "sim/network.h"
#include "sim/sim_backend.h"

namespace hetsched::sim {
namespace {

using exec::BackendEvent;
using exec::BackendEventKind;
using model::DeviceId;
using model::JobId;
using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The q-quantile by nearest rank (the smallest value with at least q of the values at or
// below it). `values` must not be empty; it is reordered.
template <typename T>
double Percentile(std::vector<T>& values, double q) {
  const size_t k = static_cast<size_t>(std::ceil(q * values.size()));
  const size_t i = std::clamp<size_t>(k, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + i, values.end());
  return values[i];
}

// A backend call the engine makes cannot fail: it names jobs, nodes and types the backend
// knows, and starts work only on nodes the scheduler sees on.
void Must(const util::Status& status) {
  assert(status.ok());
  (void)status;
}

// The simulator's model of one run of a job (start to stop), i.e. one attempt on the backend;
// the attempt itself is drive::Attempts'.
struct JobRun {
  // Stopped because an inference service took its devices back (Fault::service): told ahead,
  // it wrote its checkpoint and loses only the time that took.
  bool reclaimed = false;
  double start_s = 0;
  double since_s = 0;     // progress starts (after a restore)
  double rate = 0;        // effective steps/s, synchronization included
  double start_done = 0;  // steps done when the run started
  double stop_s = -1;     // preempted at (writing its checkpoint until it exits)
  double stop_rate = 0;   // its rate until then (a fault while it saves loses work at it)
  model::DeviceTypeId type;
  int32_t devices = 0;
  double sync_bytes_per_step = 0;  // summed over the gang (ring all-reduce: 2(n-1) x buffer)
  int32_t span = -1;               // its RunSpan in the timeline, when one is recorded
  std::vector<DeviceId> held;      // devices held by this run (for the power draw)
  double cap_power = 1;            // power fraction of the devices' cap (power/cap_curve.h)
  double cap_throughput = 1;       // throughput fraction left to the compute under that cap
  double sync_s = 0;               // all-reduce seconds per step
  // Shared links (sim/network.h). solo_rate: steps/s with the links to itself (rate is the
  // lower of it and what the ring's share of the links allows). ring: its synchronization
  // flow between nodes (-1: none), moving hop_bytes per ring hop per step. staging: its input
  // still being read (flows), progress starts when they are all done.
  double solo_rate = 0;
  int32_t ring = -1;
  double hop_bytes = 0;
  std::vector<int32_t> staging;
  double staging_from_s = 0;
  uint64_t staging_bytes = 0;
  // writing: its checkpoint still being written back (flows); exit_waits: its attempt has
  // exited and waits for them.
  std::vector<int32_t> writing;
  bool exit_waits = false;
  // Space sharing: a guest on another run's devices books no busy time or power until it
  // holds them (`owns`); busy time counts from busy_from_s. The rate holds from segment_s
  // (a partner joining or leaving changes it mid-run). A guest's pair began at
  // shared_since_s (-1: not sharing). `counted`: devices it adds to the timeline's busy count.
  bool owns = true;
  double busy_from_s = 0;
  double segment_s = 0;
  double shared_since_s = -1;
  int32_t counted = 0;
};

// Steps/s of a gang whose compute runs at `speed` steps/s slowed to `throughput` by a power
// cap, plus `sync_s` of all-reduce per step.
// What the simulated machines are told: checkpoint and start-up times, injected boot and start
// failures.
SimBackendOptions BackendOptions(const model::Cluster& cluster, const SimOptions& options) {
  SimBackendOptions o;
  o.checkpoint_save_s = options.checkpoint_save_s;
  o.compat_startup_s = options.compat_startup_s;
  o.boot_failure_nodes = options.power.boot_failure_nodes;
  for (const Fault& f : options.faults) {
    if (!f.start_failure) continue;
    o.start_failures.push_back({cluster.node(f.node).name, f.time_s, f.time_s + f.duration_s});
  }
  return o;
}

double EffectiveRate(double speed, double sync_s, double throughput) {
  const double step_s = 1.0 / (speed * throughput) + sync_s;
  return std::isfinite(step_s) && step_s > 0 ? 1.0 / step_s : 0;
}

// The simulator's loop: events in virtual time into drive::Attempts (which carries decisions
// out on the SimBackend with the rules the daemon uses) and the scheduler; what only a
// simulation knows (rates, links, energy, the books of the result) in its drive::Effects.
class Engine final : private drive::Effects {
 public:
  Engine(const model::Cluster& cluster, const model::Workload& workload, const SimOptions& options,
         std::unique_ptr<sched::Scheduler> scheduler, power::PowerController power)
      : cluster_(cluster),
        workload_(workload),
        options_(options),
        sched_(std::move(scheduler)),
        topology_(cluster),
        network_(cluster),
        backend_(cluster, workload, queue_, BackendOptions(cluster, options)),
        runs_(workload.jobs.size()),
        outcomes_(workload.jobs.size()),
        down_count_(cluster.devices.size(), 0),
        service_holds_(cluster.devices.size(), 0),
        down_since_(cluster.devices.size(), 0),
        rng_(options.seed),
        estimate_rng_(options.seed ^ 0x5eed5eed5eedULL),
        power_(std::move(power)),
        node_attempt_(cluster.nodes.size(), 0),
        // Its start failures are stack mismatches, which fail every time: a type is given up at
        // the first. A stop's grace is the checkpoint write the backend models.
        attempts_(
            cluster, *sched_, backend_, *this,
            {.start_failures_per_type = 1, .stop_grace_s = kInf, .restore_s = options.restore_s}) {
    busy_s_.assign(cluster.catalog.size(), 0);
    down_s_.assign(cluster.catalog.size(), 0);
    if (!options.serving_pool.empty()) {
      serving_pool_.assign(cluster.devices.size(), 0);
      for (DeviceId d : options.serving_pool) serving_pool_[d.value()] = 1;
    }
    if (options.timeline_sample_s > 0) InitTimeline();
  }

  SimResult Execute();

 private:
  bool WorkLeft() const {
    return next_arrival_ < order_.size() || sched_->queued() > 0 || sched_->running() > 0 ||
           stopping_ > 0;
  }
  // The truth the scheduler never sees: steps job `id` still needs.
  double TrueRemaining(int32_t id, double now_s) const {
    return std::max(0.0, workload_.jobs[id].work - sched_->record(JobId(id)).DoneAt(now_s));
  }
  // What the scheduler is told about a job's size under SimOptions::estimates.
  std::optional<sched::SizeEstimate> EstimateFor(const model::Job& job);
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
    if (run.owns) {
      power_.SetBusy(run.held, false, 1, now_s);
      if (run.cap_power < 1) {
        result_.capped_device_hours += run.devices * std::max(0.0, now_s - run.busy_from_s) / 3600;
      }
      busy_s_[run.type.value()] += run.devices * std::max(0.0, now_s - run.busy_from_s);
      if (!serving_pool_.empty()) {
        // Lent while the services run: [0, their horizon).
        const double lent_s =
            std::max(0.0, std::min(now_s, options_.serving.horizon_s) - run.busy_from_s);
        for (DeviceId d : run.held) {
          if (serving_pool_[d.value()]) result_.lent_device_hours += lent_s / 3600;
        }
      }
    }
    run.held.clear();
    const double steps = run.rate * std::max(0.0, now_s - run.segment_s);
    network_bytes_ += steps * run.sync_bytes_per_step;
    EndFlows(run, now_s);
    EndSharing(run, now_s);
    if (run.span >= 0) {
      RunSpan& span = timeline().runs[run.span];
      span.end_s = now_s;
      span.end = end;
      busy_now_[span.type] -= run.counted;
      run.span = -1;
    }
  }
  void EndSharing(JobRun& run, double now_s) {
    if (run.shared_since_s < 0) return;
    result_.shared_device_hours += run.devices * std::max(0.0, now_s - run.shared_since_s) / 3600;
    run.shared_since_s = -1;
  }
  // What the events of one instant call for.
  struct Reaction {
    bool decide = false;  // a job or a node changed: a decision is due
    bool freed = false;   // a preempted job finished writing its checkpoint
  };
  // Space sharing: the running jobs whose partner joined or left get their new rate (and the
  // devices, when the partner that held them left). `skip`: jobs started at now_s with it.
  void ApplySpeedChanges(double now_s, const std::vector<sched::Placement>* skip = nullptr);
  void Rerate(int32_t id, double now_s);
  // The run progresses at run.rate from `from_s`: the scheduler's progress and the attempt's
  // modeled end follow.
  void ProgressFrom(int32_t id, double from_s);
  // Shared links (sim/network.h). A run's rate: none while its input is read, else its own
  // speed capped by its ring's share of the links.
  double NetworkRate(const JobRun& run) const;
  // Starts reading `bytes` (the job's input, and its checkpoint when it resumes) onto the
  // nodes of `devices`, each node its share; false when nothing is read over a link.
  bool StartStaging(int32_t id, const std::vector<DeviceId>& devices, uint64_t bytes, double now_s);
  void StartRing(int32_t id, const std::vector<DeviceId>& devices, double now_s);
  // A preempted job writes its checkpoint back to where its data lives, each node its share;
  // it exits when both the write time of --checkpoint-save and the transfer are over.
  void StartCheckpointWrite(int32_t id, double now_s);
  void EndFlows(JobRun& run, double now_s);
  // Recomputes the link shares when flows changed: rings whose share changed get their new
  // rate, and the next transfer to finish gets its event.
  void Reshare(double now_s);
  // Transfers that finished: a job whose input is all read starts making progress; a job whose
  // checkpoint is written and whose attempt has exited frees its devices.
  void OnFlowsDone(double now_s, Reaction& reaction);
  // A preempted job's checkpoint is saved: its run closes and its devices are free.
  // A preempted job's checkpoint is written and its attempt has exited: the books of its run.
  void BookCheckpointSaved(int32_t id, double now_s);
  Timeline& timeline() { return result_.timeline; }
  bool Recording() const { return options_.timeline_sample_s > 0; }
  void InitTimeline();
  // Samples the (piecewise constant) state at every sample time before `until_s`.
  void SampleUntil(double until_s);
  void OpenSpan(const sched::Placement& p, double now_s);
  void Apply(const sched::Decision& d, double now_s);
  // Stops the jobs past their time limit (drive::Attempts) and sets the timer for the next.
  void EnforceTimeLimits(double now_s);
  // What the backend reports now, through the rules of drive::Attempts.
  Reaction Dispatch(double now_s);

  // drive::Effects: the simulation's side of carrying decisions out.
  void Launching(const sched::Placement& p, std::vector<exec::LaunchSpec>& specs,
                 double now_s) override;
  void Stopping(JobId job, double now_s) override;
  void Running(JobId job, double now_s) override;
  double WorkKept(JobId job, double now_s) override;
  bool AttemptOver(JobId job, drive::AttemptEnd end, const std::string& message,
                   double now_s) override;
  void Requeued(JobId job, drive::AttemptEnd end, const std::string& why, double now_s) override;
  void Ended(JobId job, drive::JobEnd end, std::optional<int> exit_status,
             const std::string& message, double now_s) override;
  bool OtherEvent(const exec::BackendEvent& ev, double now_s) override;
  void BackendFailed(JobId job, const std::string& call, const util::Status& status) override;
  void FaultDown(size_t fault, double now_s);
  void FaultUp(size_t fault, double now_s);
  void ScheduleRandomFault(model::NodeId node, double now_s);
  std::vector<DeviceId> FaultDevices(const Fault& f) const;

  // Power (power/power_controller.h): the demand the controller sees, and its commands carried
  // out as events (shutdowns, boots, resume timeouts, the next check).
  void ManagePower(double now_s);
  // Handles the controller's timers (kPowerCheck, kResumeTimeout); true when capacity changed.
  bool PowerEvent(const Event& e, double now_s);
  // The machines' own timers, shared by the run and RunToHorizon: a device fault or repair
  // (FaultDown, FaultUp), a power check or resume timeout (PowerEvent). True when a decision
  // is due; any other event is left alone (false).
  bool MachineTimer(const Event& e, double now_s);
  // SimOptions::horizon_s: after the last job, runs the machines' own events (power timers,
  // node shutdowns and boots, device faults and repairs) up to the horizon, deciding nothing;
  // returns the horizon.
  double RunToHorizon(double now_s);

  const model::Cluster& cluster_;
  const model::Workload& workload_;
  const SimOptions& options_;
  std::unique_ptr<sched::Scheduler> sched_;
  model::Topology topology_;
  Network network_;
  struct FlowOwner {
    enum Kind : uint8_t { kRing, kRead, kWrite };  // synchronization, input, checkpoint
    int32_t job = -1;
    Kind kind = kRing;
  };
  // Adds a flow owned by job `id` and returns its id.
  int32_t AddFlow(Network::LinkUses links, double demand, double bytes, int32_t id,
                  FlowOwner::Kind kind, double now_s);
  std::vector<FlowOwner> flow_owner_;  // by network flow
  uint32_t network_epoch_ = 0;         // kFlowDone events of older epochs are stale
  Micros flow_event_at_ = std::numeric_limits<Micros>::max();  // the current one's time
  EventQueue queue_;
  SimBackend backend_;          // the machines: attempts and node power, events in queue_
  std::vector<int32_t> order_;  // job ids by arrival
  size_t next_arrival_ = 0;
  std::vector<JobRun> runs_;
  std::vector<JobOutcome> outcomes_;
  std::vector<Fault> faults_;
  std::vector<char> fault_random_;
  std::vector<int32_t> down_count_;
  std::vector<int32_t> service_holds_;  // by device: service holds under way
  std::vector<double> down_since_;
  std::vector<double> busy_s_, down_s_;  // by device type
  std::vector<char> serving_pool_;       // by device: SimOptions::serving_pool
  std::mt19937_64 rng_;
  std::mt19937_64 estimate_rng_;  // its own stream: estimates do not shift the faults' draws
  int64_t stopping_ = 0;          // preempted jobs still writing their checkpoint
  int64_t pending_ups_ = 0;
  int64_t measured_left_ = 0;
  int64_t ended_ = 0;
  SimResult result_;
  // Timeline: catalog type -> index into Timeline::types (-1: absent), devices held per index.
  std::vector<int32_t> timeline_type_;
  std::vector<int32_t> busy_now_;
  double next_sample_s_ = 0;
  std::vector<float> decision_us_;  // wall time of each decision
  double network_bytes_ = 0;
  double staging_s_ = 0;  // summed over the runs whose input was read over links
  int64_t stagings_ = 0;
  int64_t multi_placements_ = 0, within_node_ = 0;
  // Power.
  power::PowerController power_;
  std::vector<uint32_t> node_attempt_;  // per node: the controller's attempt the backend runs
  Micros power_check_at_ = std::numeric_limits<Micros>::max();
  drive::Attempts attempts_;
  bool freed_ = false;  // a preempted job's checkpoint was written since the last Dispatch
  Micros time_limit_at_ = std::numeric_limits<Micros>::max();  // the pending kTimeLimit's time
};

void Engine::ManagePower(double now_s) {
  const power::PowerCommands c = power_.Decide(drive::DemandOf(*sched_), now_s);
  // The backend reports the node off after its shutdown time (the command's deadline) and on
  // after its boot time; a node not on by the resume deadline is marked down.
  for (const power::NodeCommand& s : c.suspend) {
    sched_->SetNodeOn(model::NodeId(s.node), false);
    node_attempt_[s.node] = s.attempt;
    Must(backend_.SetNodePower(cluster_.nodes[s.node].name, false));
  }
  for (const power::NodeCommand& r : c.resume) {
    node_attempt_[r.node] = r.attempt;
    Must(backend_.SetNodePower(cluster_.nodes[r.node].name, true));
    queue_.Push(ToMicros(r.deadline_s), EventKind::kResumeTimeout, r.node, r.attempt);
  }
  if (std::isfinite(c.next_check_s)) {
    const Micros at = ToMicros(c.next_check_s);
    if (at < power_check_at_) {
      power_check_at_ = at;
      queue_.Push(at, EventKind::kPowerCheck);
    }
  }
}

bool Engine::PowerEvent(const Event& e, double now_s) {
  const int32_t n = e.target;
  switch (e.kind) {
    case EventKind::kPowerCheck:
      if (e.time >= power_check_at_) power_check_at_ = std::numeric_limits<Micros>::max();
      return false;
    case EventKind::kResumeTimeout:
      // The jobs that waited for the node are served elsewhere.
      return power_.OnResumeTimeout(n, e.generation, now_s);
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

double Engine::NetworkRate(const JobRun& run) const {
  if (!run.staging.empty()) return 0;
  if (run.ring < 0 || run.hop_bytes <= 0) return run.solo_rate;
  return std::min(run.solo_rate, network_.Rate(run.ring) / run.hop_bytes);
}

namespace {

// The distinct nodes of `devices`, in id order.
std::vector<model::NodeId> NodesOf(const model::Cluster& cluster,
                                   const std::vector<DeviceId>& devices) {
  std::vector<model::NodeId> nodes;
  for (DeviceId d : devices) nodes.push_back(cluster.device(d).node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

}  // namespace

int32_t Engine::AddFlow(Network::LinkUses links, double demand, double bytes, int32_t id,
                        FlowOwner::Kind kind, double now_s) {
  const int32_t flow = network_.Add(std::move(links), demand, bytes, now_s);
  if (static_cast<size_t>(flow) >= flow_owner_.size()) flow_owner_.resize(flow + 1);
  flow_owner_[flow] = {id, kind};
  return flow;
}

bool Engine::StartStaging(int32_t id, const std::vector<DeviceId>& devices, uint64_t bytes,
                          double now_s) {
  if (bytes == 0) return false;
  const DataSource source = network_.SourceOf(workload_.jobs[id].data_location);
  const std::vector<model::NodeId> nodes = NodesOf(cluster_, devices);
  JobRun& run = runs_[id];
  // Each node reads its workers' share.
  const double share = static_cast<double>(bytes) / static_cast<double>(nodes.size());
  for (model::NodeId n : nodes) {
    Network::LinkUses path = network_.ReadPath(source, n);
    if (path.empty()) continue;  // already there
    run.staging.push_back(
        AddFlow(std::move(path), Network::kForever, share, id, FlowOwner::kRead, now_s));
  }
  run.staging_from_s = now_s;
  run.staging_bytes = bytes;
  return !run.staging.empty();
}

void Engine::StartCheckpointWrite(int32_t id, double now_s) {
  const model::Job& job = workload_.jobs[id];
  if (job.checkpoint_bytes == 0) return;
  const DataSource dest = network_.SourceOf(job.data_location);
  const std::vector<model::NodeId> nodes = NodesOf(cluster_, sched_->record(JobId(id)).devices);
  JobRun& run = runs_[id];
  const double share =
      static_cast<double>(job.checkpoint_bytes) / static_cast<double>(nodes.size());
  for (model::NodeId n : nodes) {
    Network::LinkUses path = network_.WritePath(n, dest);
    if (path.empty()) continue;  // written where it stays
    run.writing.push_back(
        AddFlow(std::move(path), Network::kForever, share, id, FlowOwner::kWrite, now_s));
  }
  if (run.writing.empty()) result_.checkpoint_bytes += static_cast<double>(job.checkpoint_bytes);
}

void Engine::StartRing(int32_t id, const std::vector<DeviceId>& devices, double now_s) {
  JobRun& run = runs_[id];
  if (run.hop_bytes <= 0 || run.solo_rate <= 0) return;
  Network::LinkUses path = network_.RingPath(devices);
  if (path.empty()) return;  // inside one node: its links are its own
  run.ring = AddFlow(std::move(path), run.solo_rate * run.hop_bytes, Network::kForever, id,
                     FlowOwner::kRing, now_s);
}

void Engine::EndFlows(JobRun& run, double now_s) {
  if (run.ring >= 0) network_.Remove(run.ring, now_s);
  run.ring = -1;
  for (int32_t flow : run.staging) network_.Remove(flow, now_s);
  run.staging.clear();
  for (int32_t flow : run.writing) network_.Remove(flow, now_s);
  run.writing.clear();
  run.exit_waits = false;
}

void Engine::Reshare(double now_s) {
  // A ring whose share changed runs at its new rate; a transfer's end moves (event below).
  for (int32_t flow : network_.Reshare(now_s)) {
    if (flow_owner_[flow].kind == FlowOwner::kRing) Rerate(flow_owner_[flow].job, now_s);
  }
  const double next = network_.NextCompletion();
  const Micros at = std::isfinite(next) ? std::max(ToMicros(next), ToMicros(now_s))
                                        : std::numeric_limits<Micros>::max();
  if (at == flow_event_at_) return;
  flow_event_at_ = at;
  ++network_epoch_;  // the event pushed before is stale
  if (std::isfinite(next)) queue_.Push(at, EventKind::kFlowDone, -1, network_epoch_);
}

void Engine::OnFlowsDone(double now_s, Reaction& reaction) {
  network_.Advance(now_s);
  for (int32_t flow : network_.Finished()) {
    const int32_t id = flow_owner_[flow].job;
    JobRun& run = runs_[id];
    network_.Remove(flow, now_s);
    if (flow_owner_[flow].kind == FlowOwner::kWrite) {
      run.writing.erase(std::find(run.writing.begin(), run.writing.end(), flow));
      if (!run.writing.empty()) continue;
      result_.checkpoint_bytes += static_cast<double>(workload_.jobs[id].checkpoint_bytes);
      if (run.exit_waits) {
        BookCheckpointSaved(id, now_s);
        attempts_.CheckpointWritten(JobId(id), now_s);
        reaction.decide = reaction.freed = true;
      }
      continue;
    }
    run.staging.erase(std::find(run.staging.begin(), run.staging.end(), flow));
    if (!run.staging.empty()) continue;
    // Its input is all there: it computes (and synchronizes) from now, or from the end of its
    // restore if that is later.
    result_.staged_bytes += static_cast<double>(run.staging_bytes);
    staging_s_ += now_s - run.staging_from_s;
    ++stagings_;
    const sched::JobRecord& r = sched_->record(JobId(id));
    run.since_s = std::max(run.since_s, now_s);
    StartRing(id, r.devices, now_s);
    run.rate = NetworkRate(run);
    ProgressFrom(id, run.since_s);
  }
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

void Engine::Launching(const sched::Placement& p, std::vector<exec::LaunchSpec>& specs,
                       double now_s) {
  if (p.migrated) result_.migrations++;
  if (p.resized) result_.resizes++;
  const int32_t id = p.job.value();
  const sched::JobRecord& r = sched_->record(p.job);
  const model::Job& job = *r.job;
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
    if (StartStaging(id, p.devices, job.data_bytes + (p.resumed ? job.checkpoint_bytes : 0),
                     now_s)) {
      run.rate = 0;  // progress waits for the input (OnFlowsDone)
    } else {
      StartRing(id, p.devices, now_s);
    }
  }
  power_.SetBusy(run.held, true, run.cap_power, now_s);
  // Without progress it never ends by itself (the backend ignores this for a failing start).
  const double modeled_s = run.rate > 0 ? TrueRemaining(id, run.since_s) / run.rate : kInf;
  for (exec::LaunchSpec& spec : specs) spec.modeled_s = modeled_s;
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
}

void Engine::EnforceTimeLimits(double now_s) {
  if (!attempts_.has_time_limits()) return;
  const double next_s = attempts_.EnforceTimeLimits(now_s);
  if (!std::isfinite(next_s)) return;
  const Micros at = ToMicros(next_s) + 1;  // not before it: the limit is reached by then
  if (at >= time_limit_at_) return;
  time_limit_at_ = at;
  queue_.Push(at, EventKind::kTimeLimit);
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
  if (ev.kind == BackendEventKind::kNodeDown) {
    power_.OnSuspended(n, node_attempt_[n], now_s);
    return false;
  }
  if (!power_.OnBooted(n, node_attempt_[n], now_s)) return false;
  sched_->SetNodeOn(model::NodeId(n), true);
  return true;
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
  const bool rounds = options_.round_s > 0;
  const Micros round_us = rounds ? std::max<Micros>(1, ToMicros(options_.round_s)) : 0;
  bool round_pending = false;
  double now_s = 0;
  // Every node starts on and idle: the idle timers run from 0, before the first event.
  if (power_.suspends()) ManagePower(0);
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
    backend_.AdvanceTo(now_s);
    power_.Advance(now_s);
    SampleUntil(now_s);
    bool changed = false, round_tick = false, stopped_now = false;
    while (next_arrival_ < n && ToMicros(workload_.jobs[order_[next_arrival_]].arrival_s) == next) {
      const model::Job& job = workload_.jobs[order_[next_arrival_++]];
      result_.events++;
      const sched::Admission a = sched_->Submit(job, now_s, EstimateFor(job));
      if (!a.accepted) {
        result_.jobs_rejected++;
        EndJob(job.id.value(), JobStatus::kFailed, "rejected on arrival: " + a.reason, now_s);
        continue;
      }
      attempts_.Track(job.id, SimBackend::JobName(job.id.value()), job.time_limit_s);
      changed = true;
    }
    while (!queue_.empty() && queue_.Top().time == next) {
      const Event e = queue_.Pop();
      result_.events++;
      if (backend_.Fire(e)) {  // the machines': an attempt or a node changed
        const Reaction reaction = Dispatch(now_s);
        changed = reaction.decide || changed;
        stopped_now = reaction.freed || stopped_now;
        continue;
      }
      switch (e.kind) {
        case EventKind::kDeviceDown:
        case EventKind::kDeviceUp:
        case EventKind::kPowerCheck:
        case EventKind::kResumeTimeout:
          changed = MachineTimer(e, now_s) || changed;
          break;
        case EventKind::kRound:
          round_tick = true;
          break;
        case EventKind::kTimeLimit:
          if (e.time >= time_limit_at_) time_limit_at_ = std::numeric_limits<Micros>::max();
          break;
        case EventKind::kCancel:
          if (outcomes_[e.target].status == JobStatus::kUnfinished) {
            attempts_.Cancel(JobId(e.target), "cancelled", now_s);
            changed = true;
          }
          break;
        case EventKind::kFlowDone:
          if (e.generation == network_epoch_) {
            flow_event_at_ = std::numeric_limits<Micros>::max();
            Reaction reaction;
            OnFlowsDone(now_s, reaction);
            changed = reaction.decide || changed;
            stopped_now = reaction.freed || stopped_now;
          }
          break;
        case EventKind::kAttemptEnd:  // the backend's (Fire took them)
        case EventKind::kAttemptStartFailure:
        case EventKind::kNodeOff:
        case EventKind::kNodeOn:
          break;
      }
    }
    EnforceTimeLimits(now_s);
    bool decide = changed;
    if (rounds) {
      // Devices a checkpoint write held are free now: fill them without waiting for the round.
      decide = round_tick || stopped_now;
      if (round_tick) round_pending = false;
    }
    size_t placed = 0;
    if (decide && sched_->HasWork()) {
      const auto t0 = Clock::now();
      const sched::Decision d = sched_->Decide(now_s);
      const double took_s = Seconds(Clock::now() - t0);
      result_.sched_wall_s += took_s;
      decision_us_.push_back(static_cast<float>(took_s * 1e6));
      result_.decisions++;
      placed = d.placed.size();
      Apply(d, now_s);
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
      if (round_tick && at <= next) at = next + round_us;
      queue_.Push(at, EventKind::kRound);
      round_pending = true;
    }
    // Nothing runs or writes a checkpoint, nothing will arrive or come back up (no fault
    // repair, no node booting or waiting to be resumed), and the last decision placed nothing:
    // the queued jobs can never start.
    if (sched_->running() == 0 && stopping_ == 0 && next_arrival_ == n && pending_ups_ == 0 &&
        placed == 0 && decide && sched_->queued() > 0 && options_.node_mtbf_s <= 0 &&
        !power_.CapacityPending()) {
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
  // From here on now_s is where the books close: the horizon when the run ended before it.
  if (options_.horizon_s > now_s) now_s = RunToHorizon(now_s);
  result_.horizon_s = now_s;
  backend_.AdvanceTo(now_s);
  power_.Advance(now_s);
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
    if (r.phase == sched::JobPhase::kRunning || r.phase == sched::JobPhase::kStopping) {
      CloseRun(i, now_s, RunEnd::kRunning);
    }
    outcomes_[i].preemptions = r.preemptions;
    if (const drive::Attempt* a = attempts_.attempt(JobId(static_cast<int32_t>(i)))) {
      outcomes_[i].attempts = a->number;
    }
  }
  for (size_t d = 0; d < cluster_.devices.size(); ++d) {
    if (down_count_[d] > 0) {
      down_s_[cluster_.devices[d].type.value()] += now_s - down_since_[d];
    }
  }
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
  if (options_.record_jobs) result_.jobs = outcomes_;
  result_.sim_wall_s = Seconds(Clock::now() - wall_start);
  if (options_.on_progress) options_.on_progress(1);
  return std::move(result_);
}

}  // namespace

util::Result<EstimateMode> ParseEstimateMode(std::string_view text) {
  constexpr std::string_view kKnown =
      "workload, none, lognormal:SIGMA, user-limit:FACTOR, history, oracle";
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  EstimateMode m;
  const bool takes_parameter = name == "lognormal" || name == "user-limit";
  if (name == "workload") {
    m.kind = EstimateMode::kWorkload;
  } else if (name == "none") {
    m.kind = EstimateMode::kNone;
  } else if (name == "history") {
    m.kind = EstimateMode::kHistory;
  } else if (name == "oracle") {
    m.kind = EstimateMode::kOracle;
  } else if (name == "lognormal") {
    m.kind = EstimateMode::kLognormal;
  } else if (name == "user-limit") {
    m.kind = EstimateMode::kUserLimit;
  } else {
    return util::Status::InvalidArgument(
        fmt::format("--estimates '{}': unknown mode (known: {})", text, kKnown));
  }
  if (!takes_parameter) {
    if (colon != std::string_view::npos) {
      return util::Status::InvalidArgument(
          fmt::format("--estimates '{}': '{}' takes no parameter (known: {})", text, name, kKnown));
    }
    return m;
  }
  const std::string_view value =
      colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  double x = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  const bool lognormal = m.kind == EstimateMode::kLognormal;
  const bool ok = !value.empty() && ec == std::errc() && ptr == value.data() + value.size() &&
                  std::isfinite(x) && (lognormal ? x >= 0 && x <= 10 : x >= 1 && x <= 1000);
  if (!ok) {
    return util::Status::InvalidArgument(fmt::format(
        "--estimates '{}': {} (expected {})", text,
        value.empty() ? "the parameter is missing" : fmt::format("bad parameter '{}'", value),
        lognormal ? "lognormal:SIGMA with 0 <= SIGMA <= 10, e.g. lognormal:1"
                  : "user-limit:FACTOR with 1 <= FACTOR <= 1000, e.g. user-limit:5"));
  }
  m.parameter = x;
  return m;
}

std::string EstimateModeName(const EstimateMode& m) {
  switch (m.kind) {
    case EstimateMode::kWorkload:
      return "workload";
    case EstimateMode::kNone:
      return "none";
    case EstimateMode::kLognormal:
      return fmt::format("lognormal:{}", m.parameter);
    case EstimateMode::kUserLimit:
      return fmt::format("user-limit:{}", m.parameter);
    case EstimateMode::kHistory:
      return "history";
    case EstimateMode::kOracle:
      return "oracle";
  }
  return "?";
}

util::Result<SimResult> Simulate(const model::Cluster& cluster, const model::Workload& workload,
                                 const model::ThroughputProfile* profile,
                                 const SimOptions& options) {
  if (HasServices(workload)) {
    // Services first; the rest of the workload (ids renumbered) runs around their replicas.
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
  return engine.Execute();
}

}  // namespace hetsched::sim
