// Service: the daemon's heart. One control loop drives the decision core (sched::Scheduler) in
// real time against a Backend, writing every job, placement and stop to the Store before it
// acts, and recovering from it at start. The HTTP API (daemon/api/http_api.h) calls it from many
// threads; everything here is safe to call concurrently.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/backend.h"
#include "daemon/analysis.h"
#include "daemon/job_state.h"
#include "daemon/plan_request.h"
#include "daemon/store.h"
#include "drive/attempts.h"
#include "drive/power_driver.h"
#include "model/cluster.h"
#include "model/io/job_classes.h"
#include "model/job.h"
#include "model/profile.h"
#include "obs/log.h"
#include "obs/metrics.h"
#include "power/power_controller.h"
#include "sched/job_slots.h"
#include "sched/scheduler.h"
#include "util/status.h"

namespace hetsched::svc {

struct ServiceOptions {
  std::string policy = "default";
  sched::SchedulerOptions scheduler;
  // Scheduler seconds per wall second: the virtual backend's time scale (1 for real backends).
  double time_scale = 1;
  // The control loop runs at least this often (wall seconds), and at once on a submission.
  double tick_s = 0.05;
  // Wall seconds between reconciliations with what the backend reports.
  double reconcile_every_s = 10;
  // Wall seconds a stopped job gets between SIGTERM (write your checkpoint) and SIGKILL.
  double stop_grace_s = 30;
  // Modeled seconds a restored job spends loading its checkpoint (the virtual backend adds
  // them to a resumed attempt's run time).
  double restore_s = 0;
  // Start attempts that fail in a row before the job is given up (failed).
  int32_t max_start_failures = 3;
  // Ended jobs are kept in the database this many wall seconds after they end (0: forever);
  // in memory the daemon holds live jobs only.
  double keep_ended_s = 0;
  // Wall seconds between samples of the cluster's figures (GET /v1/history, the dashboard's
  // charts), the first taken by the control loop's first pass; 0: none taken.
  double history_every_s = 10;
  // The database keeps the newest this many samples (a day at the default interval).
  int64_t history_kept = 8640;
  // Per job kind: a priority and a weight applied to each job as it enters the scheduler
  // (serve --config's classes; docs/operations.md).
  model::io::JobClasses classes;
  // Node power (docs/power.md): always-on, idle-timeout or consolidate, with Slurm's timeouts
  // and rates, carried out through the backend's SetNodePower. Cap policies and injected boot
  // failures are the simulator's only (kInvalidArgument).
  power::PowerOptions power;
  // Wall clock, unix seconds; injectable for tests.
  std::function<double()> wall_clock;
  // What WhatIf and Plan call (kInternal from them when not given).
  AnalysisHooks analysis;
};

// Whose jobs a caller may see and cancel: one tenant's (a token bound to a tenant,
// daemon/api/http_api.h), or every job's (nullopt). A job outside the scope is as unknown to
// the caller as a job that does not exist.
using TenantScope = std::optional<std::string>;

// What the API shows of one job.
struct JobView {
  std::string name;
  std::string tenant;  // empty: none
  JobState state = JobState::kQueued;
  std::string kind;
  int32_t gang = 1;
  std::vector<std::string> stacks;
  double submitted_s = 0;  // unix seconds
  double started_s = -1;
  double ended_s = -1;
  std::optional<int> exit_status;
  std::string device_type;
  std::vector<std::string> devices;  // "node/index"
  int32_t preemptions = 0;
  int64_t attempt = 0;
  std::string message;
  bool has_command = false;
  bool preemptible = false;
  // Device-seconds it has run (what least-attained-service policies rank by); live jobs only.
  std::optional<double> attained_s;
};

struct DeviceView {
  int32_t index = 0;  // within the node
  std::string type;
  std::string state;  // free, busy, down, off (node off or drained)
  std::string job;    // while busy
};

struct NodeView {
  std::string name;
  std::string rack;
  bool drained = false;
  std::string power_state;   // on, suspending, off, booting, down
  double power_since_s = 0;  // scheduler seconds: when it entered that state
  std::vector<DeviceView> devices;
};

struct TypeSummary {
  std::string type;
  int32_t capacity = 0;    // devices in the cluster
  int32_t offered = 0;     // up, on powered and undrained nodes
  int32_t used = 0;        // busy
  double utilization = 0;  // used / offered (0 when none offered)
  double power_w = 0;      // modeled draw: busy devices at peak, the rest at idle
};

struct ClusterView {
  std::vector<TypeSummary> types;
  double power_w = 0;     // modeled draw of every node (base and devices), as the meter books
  double energy_j = 0;    // since the daemon started
  int64_t nodes_off = 0;  // suspending, off or booting
  int64_t power_transitions = 0;  // suspends and resumes since the daemon started
  // Jobs by state (JobStateIndex): the live ones now, the ended ones since the daemon started.
  std::array<int64_t, kJobStates.size()> jobs{};
  int64_t jobs_in(JobState state) const { return jobs[JobStateIndex(state)]; }
  double now_s = 0;  // scheduler time
  std::string policy;
  std::string backend;
  bool recovering = false;
};

// What-if: the live jobs simulated from now under one policy (AnalysisHooks::simulate).
struct WhatIfResult {
  std::string policy;     // as resolved ("default" shows as what it stands for)
  int64_t jobs = 0;       // simulated: live jobs whose remaining size is known
  int64_t skipped = 0;    // live jobs without a known size (a command with no estimate)
  double makespan_s = 0;  // from now until the last of them completes
  double avg_jct_s = 0;   // mean time from now to completion
  double p99_jct_s = 0;
  int64_t preemptions = 0;
};

// What GET /v1/tenants shows of one tenant: as configured, and its standing now as the
// scheduler's fair share counts it (sched::TenantStanding).
struct TenantView {
  model::Tenant tenant;
  sched::TenantStanding standing;
  std::map<std::string, int32_t> devices;  // held now, by device type name
  // The standing's borrowed_devices and lent_devices by device type name, types with none left
  // out.
  std::map<std::string, double> borrowed_devices;
  std::map<std::string, double> lent_devices;
};

struct TenantsView {
  std::string reference_type;  // what one reference device is
  double half_life_s = 0;      // of usage
  std::vector<TenantView> tenants;
};

// Where a page of GET /v1/jobs stopped; the next page starts after it. The list is the jobs
// live at `as_of_s` (the wall clock when the first page was read: live then, or ended since),
// then the jobs ended by then, each part in submission order. A job's part never changes once
// as_of_s is fixed, nor does its submission key, so pages read one after another neither skip
// nor repeat a job, whatever ends or is submitted in between.
struct JobPosition {
  double as_of_s = 0;
  bool in_ended_part = false;
  SubmissionKey last;  // the last job of the page
};

// Filters of GET /v1/jobs.
struct JobFilter {
  std::optional<JobState> state;  // none: all
  size_t limit = 1000;
  std::optional<JobPosition> after;  // none: the first page
  TenantScope tenant;                // none: every tenant's jobs
};

// One page of jobs; `next` is set when more remain.
struct JobPage {
  std::vector<JobView> jobs;
  std::optional<JobPosition> next;
};

// One page of GET /v1/history; `next_after` is the seq of its last sample when more remain.
struct HistoryPage {
  std::vector<StoredSample> samples;
  std::optional<int64_t> next_after;
};

// One page of nodes in cluster order (the cluster file's, then those that joined, which come
// last); `next_after` is the cluster index of the page's last node when more remain.
struct NodePage {
  std::vector<NodeView> nodes;
  std::optional<int32_t> next_after;
};

class Service final : private drive::Effects, private drive::PowerEffects {
 public:
  // Takes ownership of the backend and store; `logger` and `metrics` outlive the service.
  static util::Result<std::unique_ptr<Service>> Create(model::Cluster cluster,
                                                       std::unique_ptr<Backend> backend,
                                                       std::unique_ptr<Store> store,
                                                       ServiceOptions options, Logger* logger,
                                                       MetricsRegistry* metrics);
  ~Service();  // stops the control loop (Shutdown)

  // Recovers the queue, allocations and node states from the store, reconciles them with the
  // backend, and starts the control loop. Until it returns, every call that needs that state
  // answers kUnavailable at once (without waiting for the lock recovery holds).
  util::Status Start();
  void Shutdown();
  // Whether the daemon answers (GET /healthz): Ok once Start() has recovered the state and
  // started the control loop, kUnavailable before and once Shutdown() began, with the reason.
  // Takes no lock, so it answers while a scheduling pass or a recovery holds the service's.
  util::Status Health() const;

  // Admits `job` (its name is its id) and returns once it is committed to the store.
  // kAlreadyExists when the name is taken and `idempotency_key` is empty or differs from the
  // first submission's (the same key returns the first submission's job, `created` false);
  // kMismatch when the key is the same but `spec_json` differs from the first submission's;
  // kInvalidArgument when no device of the cluster can run it (the reasons say why), or when
  // it has no `command` and the backend runs commands (local, Slurm).
  struct Submitted {
    JobView job;
    bool created = true;
  };
  util::Result<Submitted> Submit(model::Job job, std::string spec_json,
                                 std::string idempotency_key);
  // Queued jobs end at once; starting or running ones are stopped (state stopping) and end as
  // cancelled when the backend reports them gone. An ended job is returned unchanged.
  // Get, Cancel and Why answer kNotFound for a job outside `scope`.
  util::Result<JobView> Cancel(const std::string& name, const TenantScope& scope = std::nullopt);
  // Preempts running, preemptible job `name` now, as the scheduler would: it is stopped with
  // stop_grace to write its checkpoint and queued again; `why` becomes its message.
  // kInvalidArgument when it is not running or not preemptible.
  util::Result<JobView> Preempt(const std::string& name, const std::string& why);
  util::Result<JobView> Get(const std::string& name, const TenantScope& scope = std::nullopt);
  util::Result<JobPage> List(const JobFilter& filter);
  // Why a queued job waits (the scheduler's reasons), or what it does otherwise.
  util::Result<std::string> Why(const std::string& name, const TenantScope& scope = std::nullopt);
  // At most `limit` nodes (removed ones left out), after cluster index `after` when given.
  // A node's index never changes: nodes that join are appended, those that leave stay removed.
  // Devices busy with a job outside `scope` show no job name.
  util::Result<NodePage> Nodes(size_t limit, std::optional<int32_t> after,
                               const TenantScope& scope = std::nullopt);
  util::Result<NodeView> SetDrained(const std::string& node, bool drained);
  // Where `node` is reached over the network as the backend last listed it (Slurm's NodeAddr);
  // "" when the backend names no address (the local backend) or does not list the node.
  std::string NodeAddress(const std::string& node) const;
  // One node and its history (drains, power changes, failures: newest `limit` events).
  struct NodeHistory {
    NodeView node;
    std::vector<StoredEvent> events;
    bool older_events = false;  // the store holds older events than these
  };
  util::Result<NodeHistory> Node(const std::string& node, int limit,
                                 const TenantScope& scope = std::nullopt);
  util::Result<ClusterView> Cluster();
  // Sets the gauges of GET /metrics (devices, power, jobs by state, tenants) from the state
  // now, waiting for a scheduling pass under way. kUnavailable, the gauges left as they are,
  // while Start() recovers (none set yet) and during the first pass after it (it re-places
  // every job that ran, seconds at scale): their values are then the end of recovery's.
  util::Status RefreshGauges();
  // The tenants (ServiceOptions::scheduler.tenants; none without them) in their configured
  // order, only the scope's own when a scope is given.
  util::Result<TenantsView> Tenants(const TenantScope& scope = std::nullopt);
  // The samples of the cluster's figures (ServiceOptions::history_every_s) that the database
  // keeps, taken at or after `since_s` (unix seconds) and after the sample of seq `after` when
  // given, oldest first, at most `limit`.
  util::Result<HistoryPage> History(double since_s, std::optional<int64_t> after, size_t limit);
  const ServiceOptions& options() const { return options_; }
  double WallNow() const;  // unix seconds (ServiceOptions::wall_clock)
  // Simulates the live jobs from an empty cluster under `policy` and under the daemon's own
  // (the first result), each job needing what remains of its size: its work less the progress
  // booked, else its estimate or time limit. Running jobs are placed again from scratch, so
  // the comparison is between policies, not a forecast of this cluster's next hours.
  // kInvalidArgument for an unknown policy or more than kMaxWhatIfJobs live jobs.
  util::Result<std::vector<WhatIfResult>> WhatIf(const std::string& policy);
  static constexpr int64_t kMaxWhatIfJobs = 20000;
  // Splits the request's model or DAG over the nodes it names (idle ones by default), as
  // `hetsched plan` would over a cluster made of them: {"nodes": {...}, "feasible", and the
  // plan or the reason none fits}. Runs outside the daemon's lock. kInvalidArgument for an
  // unknown preset, precision, optimizer or device type, or a DAG that does not read.
  util::Result<nlohmann::ordered_json> Plan(const PlanRequest& request);
  static constexpr size_t kMaxDagDevices = 4096;

  const model::Cluster& cluster() const { return cluster_; }
  // A named value kept in the database beside the daemon's own (the serving loop keeps its
  // services there, daemon/serving_loop.h); nullopt when none is stored under `key`.
  util::Status PutValue(const std::string& key, const std::string& value);
  util::Result<std::optional<std::string>> GetValue(const std::string& key);
  // Jobs held in memory: the live ones (ended jobs are read from the store).
  size_t jobs_held() const {
    std::lock_guard lock(mu_);
    return jobs_.size();
  }

 private:
  Service(model::Cluster cluster, std::unique_ptr<Backend> backend, std::unique_ptr<Store> store,
          ServiceOptions options, Logger* logger, MetricsRegistry* metrics);
  struct Entry;  // one job the daemon knows (daemon/service.cc)
  struct PendingSubmit;

  struct Metrics;        // the daemon's metric families
  struct TenantMetrics;  // and those by tenant, with tenants

  double SchedNow() const;  // scheduler seconds: continues across restarts
  // mu_, for a call that needs the recovered state: kUnavailable (Health()) at once, without
  // waiting for mu_, while Start() recovers, and once Shutdown() began.
  util::Result<std::unique_lock<std::mutex>> LockWhenReady() const;
  // The scheduler clock, the tenants' usage, and the size belief when a job completed since
  // the last save.
  void SaveClock();
  // Every live job's policy state (attained service, LP time), in one transaction.
  void SavePolicyState();
  void Loop();
  // One pass of the control loop (mu_ held), and its parts.
  void Step();
  void CommitSubmissions(double now);
  // Into the scheduler and the daemon's jobs (not yet stored); kInvalidArgument when no device
  // of the cluster can run it.
  util::Result<Entry*> Admit(model::Job job, std::string spec_json, std::string idempotency_key,
                             double now);
  // A job submitted to the backend itself (kSubmitted): admitted and stored like an API
  // submission, or, when it cannot run here, stored as failed with the reason and withdrawn
  // from the backend.
  void AdoptBackendJob(const BackendEvent& ev, double now);
  // Decides and carries the decision out (drive::Attempts; Record writes it ahead).
  void DecideAndAct(double now);
  // Compares what the backend runs with what the daemon believes and repairs the difference.
  void Reconcile(double now);
  // A live job's state changes to `next` (live_counts_, placed_ follow). BecameLive counts a
  // job that entered by_slot_ in the state it has; LeftLive one leaving it.
  void SetState(Entry& e, JobState next);
  void BecameLive(Entry& e);
  void LeftLive(Entry& e);
  // placed_ in slot order, so that what is done to them does not depend on hashing.
  std::vector<Entry*> PlacedBySlot() const;
  util::Status Recover();
  // Recover's parts: the scheduler clock, size belief and tenants' usage; the nodes' drains,
  // removals and joins at run time; one live job (false when it can no longer run here: then it is
  // stored as failed), and the placement it held.
  util::Status RestoreClockAndBelief();
  // Tenants (daemon/service_tenants.cc): their metric families; the gauges set from their
  // standing now (mu_ held); their decayed usage stored (with the clock) and read back at
  // recovery, so that a restart keeps what fair share remembers.
  static util::Result<std::unique_ptr<Metrics>> NewMetrics(MetricsRegistry& registry);
  util::Status AddTenantMetrics();
  TenantsView TenantsNow(const TenantScope& scope) const;
  void RefreshTenantGauges();
  void SaveTenantUsage();
  util::Status RestoreTenantUsage();
  // Live jobs stored under a config whose tenants this one lacks (or gave children since) would
  // run outside every tenant's limits: kInvalidArgument naming them and the tenant, the store
  // left as it is.
  // Reads the live jobs' tenants on a pass of their own, before any job is adopted (only with
  // tenants configured).
  util::Status CheckStoredTenants() const;
  util::Status RestoreNodes();
  // Adopts one stored job (moving its strings out of `s`); one that can no longer run is put in
  // `refused` instead, marked failed, for the caller to store.
  util::Status RecoverJob(StoredJob& s, double now, std::vector<std::unique_ptr<Entry>>& refused);
  void AdoptPlacement(Entry& e, const StoredJob& s, double now);
  // The power controller, from the state recovered (busy devices, nodes left off).
  util::Status StartPower();

  // Asks the backend again to stop `e`'s attempt (after a restart).
  void StopAttempt(Entry& e);
  // `e` waits in the queue again (the scheduler has put it back): its record says so.
  void MarkQueued(Entry& e);

  // drive::Effects: the daemon's side of carrying decisions out (its store, log, metrics and
  // power books); the rules are drive::Attempts'. Ended: the job's slot is freed and its
  // record stored; its Entry stays valid until ForgetEnded.
  util::Status Record(const sched::Decision& d, double now) override;
  void Launching(const sched::Placement& p, std::vector<LaunchSpec>& specs, double now) override;
  void Stopping(model::JobId job, double now) override;
  void Running(model::JobId job, double now) override;
  double WorkKept(model::JobId job, double now) override;
  bool AttemptOver(model::JobId job, drive::AttemptEnd end, const std::string& message,
                   double now) override;
  void Requeued(model::JobId job, drive::AttemptEnd end, const std::string& why,
                double now) override;
  void Ended(model::JobId job, drive::JobEnd how, std::optional<int> exit_status,
             const std::string& message, double now) override;
  bool OtherEvent(const BackendEvent& ev, double now) override;
  void BackendFailed(model::JobId job, const std::string& call,
                     const util::Status& status) override;
  std::optional<model::JobId> JobNamed(const std::string& name) const override;  // jobs_
  // Ended jobs leave memory (they are in the store): the daemon holds live jobs only.
  void ForgetEnded();
  // Deletes ended jobs older than keep_ended_s from the store.
  void PruneEnded();
  // An ended job from the store (nullopt when there is none of that name).
  util::Result<std::optional<StoredJob>> StoredEnded(const std::string& name);
  JobView ViewOfStored(const StoredJob& s) const;
  // Cluster's view, mu_ held (it refreshes the gauges too).
  ClusterView ClusterNow();
  // Stores a sample of ClusterNow when history_every_s has passed since the last one.
  void SampleHistory(double wall);
  // The first part of List's pages: jobs live at `as_of_s` in the filter's state after its
  // position (one in that part), in submission order, at most `limit`.
  util::Result<std::vector<JobView>> JobsLiveAt(const JobFilter& filter, double as_of_s,
                                                size_t limit);
  void SetNodeUp(const std::string& node, bool up, double now);
  // Power (ServiceOptions::power), through drive::PowerDriver: the switches' timers when one is
  // due, then the controller's decision when it asked for one or the demand changed.
  void ManagePower(double now);
  // drive::PowerEffects: each suspend and resume is stored (node row and event) before the
  // backend is asked; the switches' ends are stored and logged.
  void RecordPower(const power::PowerCommands& commands, double now) override;
  void NodePowerChanged(int32_t node, drive::NodeChange change, double now) override;
  void PowerSwitchFailed(int32_t node, bool on, const util::Status& status) override;
  StoredNode StoredNodeOf(model::NodeId node) const;
  // Stores the node's row and, when `event_detail` is not empty, an event about it.
  void StoreNode(model::NodeId node, const std::string& event_detail,
                 const std::string& event_kind = "power");
  // Nodes joining and leaving: what the backend lists is compared with the cluster. A listed
  // node with a description that the cluster lacks joins (AddNodeFromSpec); a node listed
  // before, or one that joined at run time, that is not listed now is removed (its jobs
  // requeued).
  void SyncNodes(const std::vector<BackendNode>& listed, double now);
  util::Result<model::NodeId> AddNodeFromSpec(const std::string& name, const std::string& spec,
                                              double now);
  void RemoveNode(model::NodeId node, double now);
  std::string PowerStateOf(model::NodeId node) const;
  // Why `e`'s attempt is being stopped, as drive::Attempts keeps it (kNone without an attempt
  // under way).
  drive::StopCause StopCauseOf(const Entry& e) const;
  // The row of `e`, its stop cause StopCauseOf's.
  StoredJob StoredOf(const Entry& e) const;
  util::Status Persist(const Entry& e, bool insert = false);
  // `e` is stopping for `cause`, stored before drive::Attempts is asked for the stop.
  util::Status PersistStopping(Entry& e, drive::StopCause cause);
  // Jobs drive::Attempts stopped at their time limit this pass: stored as stopping, so that a
  // restart finds them so (it stops them again and they fail with the reason).
  void MarkTimeLimitStops();
  void Event(const std::string& kind, const std::string& subject, const std::string& detail);
  JobView ViewOf(const Entry& e) const;
  NodeView NodeViewOf(model::NodeId node, const TenantScope& scope = std::nullopt) const;
  // kInvalidArgument naming `command` when the backend runs commands and `job` has none: it
  // could only fail its starts.
  util::Status HasWhatTheBackendRuns(const model::Job& job) const;

  model::Cluster cluster_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Store> store_;
  ServiceOptions options_;
  Logger* logger_;
  MetricsRegistry* registry_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<TenantMetrics> tenant_metrics_;  // with tenants
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<drive::Attempts> attempts_;       // carries decisions out on backend_
  std::optional<power::PowerController> power_;     // from Start on
  std::optional<drive::PowerDriver> power_driver_;  // drives power_ on backend_
  std::map<int32_t, std::string> node_spec_;        // nodes that joined at run time: description
  std::set<std::string> listed_nodes_;              // what the backend listed last
  std::set<std::string> node_problems_;             // "node: problem" already reported
  std::map<std::string, bool> listed_drained_;      // drained as the backend listed it last
  std::set<std::string> down_nodes_;                // reported down (not by hetsched's power)

  mutable std::mutex mu_;                              // guards everything below
  std::map<std::string, std::string> node_addresses_;  // as the backend listed them last
  std::condition_variable wake_;                       // the control loop waits on it
  std::condition_variable committed_;                  // submitters wait on it
  sched::JobSlots slots_;
  // By name: live (and ended until ForgetEnded). Unordered: a restart inserts every live job
  // (a tree of 230,000 names took a comparison chain per insert); views sort what they show.
  std::unordered_map<std::string, std::unique_ptr<Entry>> jobs_;
  std::vector<std::string> ended_;  // ended, not yet forgotten
  std::vector<Entry*> by_slot_;     // live jobs by JobId
  std::deque<std::shared_ptr<PendingSubmit>> pending_;
  int64_t commit_generation_ = 0;
  // Atomic so that Health() reads them without mu_ (written under it): ready_ from the end of
  // Start() (the state recovered, before the first scheduling pass), stopping_ from Shutdown().
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> first_pass_done_{false};  // the control loop's first pass ended
  double sched_base_s_ = 0;                   // scheduler time at wall_start_s_
  double wall_start_s_ = 0;
  double last_reconcile_wall_s_ = 0;
  // While Reconcile requeues vanished attempts: it logs one warning for all of them, so each
  // loss is logged at debug.
  bool quiet_losses_ = false;
  std::optional<double> last_sample_wall_s_;  // none before the first sample
  // Jobs that ended since the daemon started, by state (JobStateIndex).
  std::array<int64_t, kJobStates.size()> ended_counts_{};
  // Live jobs by state, and the live ones not queued (those holding or stopping an attempt),
  // kept as states change (SetState) so that no periodic pass walks every job: at 200,000
  // queued jobs each walk held the lock for 30-160 ms while submitters waited.
  std::array<int64_t, kJobStates.size()> live_counts_{};
  std::unordered_set<Entry*> placed_;
  int64_t belief_saved_at_ = 0;        // jobs completed when the belief was last saved
  double last_power_wall_s_ = -1e300;  // when the power controller last decided
  bool demand_changed_ = false;        // jobs queued or ended since the last power decision
  double energy_reported_j_ = 0;       // what the energy counter has been given
  std::thread loop_;
};

}  // namespace hetsched::svc
