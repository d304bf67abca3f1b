// The discrete-event simulator: drives the scheduling core (sched/scheduler.h) through virtual
// time over a workload on a cluster, with faults, rounds and preemption costs, and measures
// what happened. Jobs start, stop and exit, and nodes switch power, through an exec::Backend
// in virtual time (sim/sim_backend.h), as in the daemon. It decides after each batch of
// simultaneous events and, where no event falls then, at the time the scheduler names for a
// due reallocation (Scheduler::NextDecisionDue), where the daemon's ticks find it; in rounds
// (SimOptions::round_s) at round boundaries instead, and when a checkpoint write frees devices.
// Deterministic for a given input and seed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "model/profile.h"
#include "power/power_options.h"
#include "sched/scheduler.h"
#include "sim/faults.h"
#include "sim/serving.h"
#include "sim/tenant_books.h"
#include "sim/timeline.h"
#include "util/status.h"

namespace hetsched::sim {

// What the scheduler is told about job sizes (docs/simulator.md, Estimates). The simulator
// alone knows the truth; the scheduler sees only these.
struct EstimateMode {
  enum Kind {
    kWorkload,   // what the workload declares (estimate / time_limit per job), else nothing
    kNone,       // nothing, even where the workload declares something
    kLognormal,  // true size x exp(N(0, sigma)), seeded
    kUserLimit,  // true size x a factor drawn log-uniformly from [1, factor] (users over-ask)
    kHistory,    // the mean of completed jobs of the same type and gang size (online)
    kOracle,     // the true size: an upper bound no real scheduler has
  };
  Kind kind = kWorkload;
  double parameter = 0;  // sigma, or factor
};
// Parses "workload", "none", "lognormal:SIGMA", "user-limit:FACTOR", "history", "oracle".
util::Result<EstimateMode> ParseEstimateMode(std::string_view text);
// The mode as parsed back ("lognormal:1", "oracle", ...).
std::string EstimateModeName(const EstimateMode& mode);

struct SimOptions {
  std::string policy = "default";
  sched::SchedulerOptions sched;
  // Scheduling rounds (Gavel uses 360 s): decisions only at multiples of round_s. 0: a decision
  // after every batch of simultaneous events.
  double round_s = 0;
  // Seconds without progress each time a job resumes after a preemption or migration (reading
  // its checkpoint, restarting the framework). 0 as in Gavel's simulator; docs/simulator.md
  // gives real values.
  double restore_s = 0;
  // Seconds a preempted job keeps its devices while it writes its checkpoint. 0: it frees them
  // at once, as in Gavel's simulator.
  double checkpoint_save_s = 0;
  EstimateMode estimates;
  // Under ignore-compat: a job started on a device it cannot run fails after this long.
  double compat_startup_s = 120;
  // A running job saves its progress every checkpoint_interval_s of progress time; a fault
  // loses what was done since. 0: no periodic checkpoints (a fault loses the whole run).
  double checkpoint_interval_s = 1800;
  std::vector<Fault> faults;
  // A user's cancel: job `second` (its workload id) is cancelled at `first` seconds, which
  // must not be before its arrival.
  std::vector<std::pair<double, int32_t>> cancels;
  // Devices inference services hold at some time of the run (sim/serving.h): training time on
  // them before serving.horizon_s, while the services lend them, is counted in
  // SimResult::lent_device_hours.
  std::vector<model::DeviceId> serving_pool;
  // How inference services (jobs of kind service) are served; Simulate runs them first and
  // fills `faults` and `serving_pool` from their replicas.
  ServingOptions serving;
  // Random node faults: exponential times between failures and to repair, per node. 0: none.
  double node_mtbf_s = 0;
  double node_mttr_s = 0;
  uint64_t seed = 0;
  // Gavel's measurement window: average over jobs with ids in [first, last) and stop once
  // they are all done.
  std::optional<std::pair<int32_t, int32_t>> measure;
  // Called now and then with the fraction of the run done (0..1).
  std::function<void(double)> on_progress;
  bool record_jobs = false;  // keep a per-job outcome list in the result
  // Stop early (the result then covers what happened so far, and says why it stopped):
  // at this virtual time (0: no limit), or after this many decisions, i.e. rounds under
  // round_s (0: no limit).
  double until_s = 0;
  int64_t max_rounds = 0;
  // A common horizon for comparing runs: when > 0 the clock runs on after the last job ends,
  // up to this virtual time, with only the machines' own timers left (power checks, suspends,
  // boots, device faults and repairs; no decisions), so that idle machines keep drawing power
  // or are suspended as the power policy would do it. Energy, cost and utilization are then
  // booked over [0, max(end, horizon_s)]; job times are unaffected. Not with until_s,
  // max_rounds or measure, which stop a run early.
  double horizon_s = 0;
  // Record a timeline for charts (sim/timeline.h): a sample every timeline_sample_s of
  // virtual time, and every job run. 0: none.
  double timeline_sample_s = 0;
  power::PowerOptions power;
};

enum class JobStatus { kCompleted, kFailed, kCancelled, kUnfinished };

struct JobOutcome {
  int32_t id = -1;
  JobStatus status = JobStatus::kUnfinished;
  std::string reason;  // for failed jobs
  double arrival_s = 0;
  double first_start_s = -1;
  double completion_s = -1;
  int32_t preemptions = 0;
  int64_t attempts = 0;  // times it was started (drive::Attempts' attempt number)
};

struct SimResult {
  std::string policy;     // resolved name ("default" shows as what it stands for)
  std::string estimates;  // EstimateModeName of SimOptions::estimates
  // Gavel's measurement window: the last arrival in the workload came before every measured
  // job had completed (arrivals stopped while the window ran: the load fell at its end).
  bool arrivals_ended_early = false;
  double last_arrival_s = 0;
  int64_t cross_vendor_restarts = 0;  // migrations across vendors that lost all progress
  uint64_t seed = 0;
  double round_s = 0;
  int64_t jobs_total = 0;
  int64_t jobs_completed = 0;
  int64_t jobs_failed = 0;  // rejected on arrival, or failed later; reasons below
  int64_t jobs_rejected = 0;
  int64_t jobs_unfinished = 0;  // queued, running or not yet arrived when the run ended
  int64_t jobs_cancelled = 0;   // SimOptions::cancels that found the job live
  std::map<std::string, int64_t> failure_reasons;
  int64_t measured_jobs = 0;  // completed jobs the JCT statistics cover (services excluded)
  double avg_jct_s = 0, p50_jct_s = 0, p99_jct_s = 0;
  double avg_queue_s = 0;                     // arrival to first start
  double makespan_s = 0;                      // last completion
  double end_s = 0;                           // virtual time the run ended
  double horizon_s = 0;                       // books closed: max(end_s, SimOptions::horizon_s)
  std::map<std::string, double> utilization;  // type -> busy / up device time to horizon_s
  int64_t compat_failures = 0;
  double wasted_device_hours = 0;  // held by starts that failed on incompatible devices
  double lost_device_hours = 0;    // work lost to faults since the last checkpoint
  // Busy device time on SimOptions::serving_pool before the services' horizon: capacity the
  // services lent to training and batch jobs.
  double lent_device_hours = 0;
  // The inference services of the workload, when it has any (their holds and pool cleared).
  std::optional<ServingResult> serving;
  int64_t faults = 0;
  int64_t preemptions = 0;
  // What preemptions cost, in device-hours without progress: preempted jobs writing their
  // checkpoints, resumed jobs reading them back (restores after a fault included), and work
  // redone from zero by jobs restarted on another vendor's devices. preemption_share: their
  // sum over the device-hours the cluster had up, the share of capacity they took.
  // preemptions_per_job: over the jobs that started at least once.
  double checkpoint_save_device_hours = 0;
  double restore_device_hours = 0;
  double restart_device_hours = 0;
  double preemption_share = 0;
  double preemptions_per_job = 0;
  int64_t migrations = 0;
  // Restarts of elastic jobs at another gang size (each also counted as a preemption).
  int64_t resizes = 0;
  int64_t decisions = 0;
  double sched_wall_s = 0;
  // Wall time of one decision (Scheduler::Decide), percentiles over the run's decisions.
  double decision_p50_us = 0, decision_p99_us = 0, decision_max_us = 0;
  // Allocation (LP) policies: solves that failed (the last good allocation was kept each
  // time) and the scheduler's log of them (the most recent lines).
  int64_t allocation_failures = 0;
  std::vector<std::string> allocation_log;
  int64_t events = 0;
  double sim_wall_s = 0;
  double network_bytes = 0;  // bytes moved by gradient synchronization between workers
  // Shared links (sim/network.h): bytes read by runs before they compute (Job::data_bytes, plus
  // Job::checkpoint_bytes for a run that resumes; counted once per run that read over links),
  // the mean time such a read took, checkpoints written back by preempted jobs, and the bytes
  // every flow (synchronization, reads and writes) moved over the spine.
  double staged_bytes = 0;
  double avg_staging_s = 0;
  double checkpoint_bytes = 0;
  double spine_bytes = 0;
  double gangs_within_node = 0;  // share of multi-device placements inside one node
  std::vector<JobOutcome> jobs;  // when SimOptions::record_jobs
  // Energy accounting (power/): whole cluster over [0, horizon_s].
  std::string power_policy;  // SimOptions::power.policy
  double energy_kwh = 0;
  double energy_cost = 0;  // USD at the configured tariff
  double peak_power_w = 0;
  int64_t node_power_transitions = 0;             // suspends plus resumes
  int64_t node_boot_failures = 0;                 // resumes that timed out: those nodes are down
  std::map<std::string, double> energy_by_state;  // kWh by node power state (power/node_power.h)
  std::map<std::string, double> energy_by_type;   // kWh by device type, plus "node-base"
  std::optional<double> carbon_kg;                // when a carbon intensity is given
  double capped_device_hours = 0;                 // busy device time under a lowered cap
  std::string stopped_early;                      // "", "until" or "max-rounds"
  Timeline timeline;                              // when SimOptions::timeline_sample_s > 0
  // By tenant name, with tenants (SchedulerOptions::tenants); parents sum their children.
  std::map<std::string, TenantResult> tenants;
  TenantFairness tenant_fairness;  // of `tenants`
  // Space sharing (SchedulerOptions::space_sharing): pairs formed (a guest joining a running
  // job), and device time two jobs shared (a shared device counts once in busy time).
  bool space_sharing = false;
  int64_t pairs_formed = 0;
  double shared_device_hours = 0;
};

// Runs the simulation. Services (kind service) are simulated first (SimulateServing), over
// SimOptions::serving.horizon_s; the other jobs then run on what their replicas leave, and the
// devices they hold are taken back from training as they need them. Errors: an unknown policy /
// filter / scorer (InvalidArgument), a measurement window outside the workload.
util::Result<SimResult> Simulate(const model::Cluster& cluster, const model::Workload& workload,
                                 const model::ThroughputProfile* profile,
                                 const SimOptions& options);

}  // namespace hetsched::sim
