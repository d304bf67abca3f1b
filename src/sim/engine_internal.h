// The simulator's Engine and what its files share (engine.cc, engine_network.cc,
// engine_attempts.cc); nothing else includes this.
#pragma once

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
#include "drive/power_driver.h"
#include "exec/launch.h"
#include "model/topology.h"
#include "power/power_controller.h"
#include "sim/engine.h"
#include "sim/event_queue.h"
#include "sim/network.h"
#include "sim/sim_backend.h"
#include "sim/tenant_books.h"

namespace hetsched::sim::internal {

using exec::BackendEvent;
using exec::BackendEventKind;
using model::DeviceId;
using model::JobId;
using Clock = std::chrono::steady_clock;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

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
inline void Must(const util::Status& status) {
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

// What the simulated machines are told: checkpoint and start-up times, injected boot and start
// failures.
inline SimBackendOptions BackendOptions(const model::Cluster& cluster, const SimOptions& options) {
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

// Steps/s of a gang whose compute runs at `speed` steps/s slowed to `throughput` by a power
// cap, plus `sync_s` of all-reduce per step.
inline double EffectiveRate(double speed, double sync_s, double throughput) {
  const double step_s = 1.0 / (speed * throughput) + sync_s;
  return std::isfinite(step_s) && step_s > 0 ? 1.0 / step_s : 0;
}

// The simulator's loop: events in virtual time into drive::Attempts and drive::PowerDriver
// (which carry the scheduler's decisions and the power controller's out on the SimBackend with
// the rules the daemon uses) and the scheduler; what only a simulation knows (rates, links,
// energy, the books of the result) in its drive::Effects and drive::PowerEffects.
class Engine final : private drive::Effects, private drive::PowerEffects {
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
        // SimBackend reports a node down when its shutdown is done.
        power_driver_(cluster, *sched_, backend_, power_, *this, {.down_report_is_off = true}),
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
  // Books each run by tenant for SimResult::tenants (options with tenants only).
  void KeepTenantBooks(const model::ThroughputProfile* profile) {
    tenant_books_ =
        std::make_unique<TenantBooks>(*options_.sched.tenants, cluster_, workload_, profile);
  }

 private:
  // Execute's parts, in order. The jobs' arrival order, the outcomes, and the events known
  // ahead (cancels, faults).
  void ScheduleStart();
  // The run proper: the events in time order, a decision after those that call for one, until
  // no work is left or a stop (--until, --max-rounds, --measure-jobs, a queue that can never
  // start); returns when it ended.
  double RunJobs();
  // What the events at one time asked for.
  struct Step {
    bool changed = false;     // a decision is due
    bool freed = false;       // devices a stopping job held are free
    bool round_tick = false;  // a round boundary
  };
  // The arrivals and events at `at` (= now_s).
  Step TakeEvents(Micros at, double now_s);
  // The jobs arriving at `at` submitted; true when one was admitted.
  bool Arrive(Micros at, double now_s);
  // A scheduler decision carried out; the placements it made.
  size_t DecideNow(double now_s);
  // Events alone would let a due reallocation wait for the next one, hours in a quiet
  // stretch (an owner's reclaim with them): keeps one kDecisionDue event at the time the
  // scheduler names (a microsecond after, so that rounding never puts it a hair early), after
  // `at`. None when the last decision was made at or after that time: it was a reallocation
  // (with no interval, `--preempt-interval 0`, every decision is one), and the next event
  // decides again.
  void WakeForDueDecision(Micros at) {
    const double due = sched_->NextDecisionDue();
    if (due == kInf || due <= last_decision_s_) return;
    const Micros wake = std::max(ToMicros(due) + 1, at + 1);
    if (wake >= decision_due_at_) return;
    decision_due_at_ = wake;
    queue_.Push(wake, EventKind::kDecisionDue);
  }
  // The queued jobs can never start (nothing that could free or bring devices is left).
  bool Stuck(size_t placed, bool decided) const;
  void ReportProgress();
  // The books at the end: running jobs' busy time and devices still down up to `now_s`; then
  // the result's job statistics and its machines' (utilization, energy, network).
  void CloseBooks(double now_s);
  // SimResult::tenants from the tenant books, over the measured jobs' span (arrival of the
  // first to completion of the last, or `now_s` while one runs) or else [0, now_s).
  void SummarizeTenants(double now_s) {
    if (!tenant_books_) return;
    std::vector<TenantJobEnd> measured;
    std::pair<double, double> window{options_.measure ? kInf : 0, options_.measure ? 0 : now_s};
    for (const JobOutcome& o : outcomes_) {
      if (!Measured(o.id)) continue;
      measured.push_back({o.id, o.arrival_s, o.completion_s});
      if (!options_.measure) continue;
      window.first = std::min(window.first, o.arrival_s);
      window.second = std::max(window.second, o.completion_s < 0 ? now_s : o.completion_s);
    }
    result_.tenants = tenant_books_->Summarize(measured, window);
    result_.tenant_fairness = tenant_books_->Fairness(result_.tenants, measured);
  }
  void SummarizeJobs(double now_s);
  void SummarizeMachines(double now_s);

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
      if (tenant_books_) {
        tenant_books_->Run(id, run.type, run.devices, run.busy_from_s, now_s,
                           end == RunEnd::kPreempted);
      }
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
  // Stops the jobs past their time limit (drive::Attempts) and sets the timer for the next;
  // true when it stopped one.
  bool EnforceTimeLimits(double now_s);
  // What the backend reports now, through the rules of drive::Attempts.
  Reaction Dispatch(double now_s);

  // drive::Effects: the simulation's side of carrying decisions out.
  void Launching(const sched::Placement& p, std::vector<exec::LaunchSpec>& specs,
                 double now_s) override;
  // A launched run that can compute (its stack is there): its rate (ring synchronization,
  // power cap) from the end of its `startup_s`, then its input read or its ring.
  void StartComputing(const sched::Placement& p, double startup_s, double now_s);
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
  std::optional<JobId> JobNamed(const std::string& name) const override;  // SimBackend::JobName
  void FaultDown(size_t fault, double now_s);
  void FaultUp(size_t fault, double now_s);
  void ScheduleRandomFault(model::NodeId node, double now_s);
  std::vector<DeviceId> FaultDevices(const Fault& f) const;

  // Power (power/power_controller.h), carried out by drive::PowerDriver: its decision, and the
  // next check it asks for as an event.
  void ManagePower(double now_s);
  // drive::PowerEffects: a resume timeout becomes an event; a switch the backend refuses is a
  // bug in the simulation. (The controller keeps the power books the result reads.)
  void PowerTimerArmed(const drive::PowerTimer& timer) override;
  void PowerSwitchFailed(int32_t node, bool on, const util::Status& status) override;
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
  std::unique_ptr<TenantBooks> tenant_books_;  // with tenants (SimOptions::sched.tenants)
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
  drive::PowerDriver power_driver_;
  Micros power_check_at_ = std::numeric_limits<Micros>::max();
  drive::Attempts attempts_;
  bool freed_ = false;  // a preempted job's checkpoint was written since the last Dispatch
  Micros time_limit_at_ = std::numeric_limits<Micros>::max();  // the pending kTimeLimit's time
  // The pending kDecisionDue's time (earlier ones are stale: the due time moved).
  Micros decision_due_at_ = std::numeric_limits<Micros>::max();
  double last_decision_s_ = -kInf;  // when DecideNow last ran
};

}  // namespace hetsched::sim::internal
