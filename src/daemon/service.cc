#include "daemon/service.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "daemon/job_request.h"
#include "daemon/service_internal.h"

namespace hetsched::svc {

using model::JobId;

namespace {

double SystemUnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Buckets (seconds) for decision and API latency: 10 us .. 10 s.
std::vector<double> LatencyBuckets() {
  return {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1, 3, 10};
}

// The time scale and the history's interval and bound, which Create takes as they are.
util::Status CheckClockAndHistory(const ServiceOptions& options) {
  if (!(options.time_scale > 0)) {
    return util::Status::InvalidArgument("time scale must be > 0");
  }
  if (!(options.history_every_s >= 0) || options.history_kept < 1) {
    return util::Status::InvalidArgument(
        fmt::format("history: every {} s, {} samples kept (expected >= 0 s and >= 1 sample)",
                    options.history_every_s, options.history_kept));
  }
  return util::Status::Ok();
}

// The control loop holds the service's lock for a whole pass, so a pass this long (wall
// seconds) delays every submission meanwhile by as much: it is logged with where it went.
constexpr double kSlowPassS = 0.1;

// Wall and thread CPU time of a control-loop pass, part by part. The CPU time tells a pass that
// worked from one that waited: for a core on a busy machine, or for the disk.
class PassClock {
 public:
  enum Part { kSubmissions, kBackend, kCommit, kDecide, kPower, kForget, kParts };

  PassClock() : start_(std::chrono::steady_clock::now()), last_(start_), cpu_start_(CpuNow()) {}

  // The time since the last lap (or the start) went to `part`.
  void Lap(Part part) {
    const auto now = std::chrono::steady_clock::now();
    ms_[part] += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }
  double wall_s() const { return std::chrono::duration<double>(last_ - start_).count(); }
  double cpu_s() const { return CpuNow() - cpu_start_; }
  double ms(Part part) const { return ms_[part]; }

 private:
  static double CpuNow() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }

  std::chrono::steady_clock::time_point start_, last_;
  double cpu_start_;
  double ms_[kParts] = {};
};

}  // namespace

// The daemon's metric families, registered in `registry`.
util::Result<std::unique_ptr<Service::Metrics>> Service::NewMetrics(MetricsRegistry& registry) {
  ASSIGN_OR_RETURN(auto submitted, registry.AddCounter("hetsched_jobs_submitted_total",
                                                       "Jobs admitted through the API."));
  ASSIGN_OR_RETURN(
      auto placements,
      registry.AddCounter("hetsched_placements_total",
                          "Job starts the scheduler decided, by device type.", {"device_type"}));
  ASSIGN_OR_RETURN(auto preemptions, registry.AddCounter("hetsched_preemptions_total",
                                                         "Running jobs the scheduler stopped."));
  ASSIGN_OR_RETURN(auto ended, registry.AddCounter("hetsched_jobs_ended_total",
                                                   "Jobs that ended, by final state.", {"state"}));
  ASSIGN_OR_RETURN(auto decision_s, registry.AddHistogram("hetsched_decision_seconds",
                                                          "Wall time of one scheduling decision.",
                                                          LatencyBuckets()));
  ASSIGN_OR_RETURN(auto jobs, registry.AddGauge("hetsched_jobs", "Live jobs by state.", {"state"}));
  ASSIGN_OR_RETURN(auto devices_used, registry.AddGauge("hetsched_devices_used",
                                                        "Busy devices by type.", {"device_type"}));
  ASSIGN_OR_RETURN(
      auto devices_offered,
      registry.AddGauge("hetsched_devices_offered",
                        "Devices up on powered, undrained nodes, by type.", {"device_type"}));
  ASSIGN_OR_RETURN(auto power_w, registry.AddGauge("hetsched_power_watts",
                                                   "Modeled device draw by type (busy at peak, "
                                                   "the rest at idle).",
                                                   {"device_type"}));
  ASSIGN_OR_RETURN(auto energy_j,
                   registry.AddCounter("hetsched_energy_joules_total",
                                       "Modeled energy of every node (base draw and devices, "
                                       "by power state) since the daemon started."));
  ASSIGN_OR_RETURN(auto draw_w, registry.AddGauge("hetsched_cluster_power_watts",
                                                  "Modeled draw of every node now (base draw "
                                                  "and devices; off nodes at standby)."));
  ASSIGN_OR_RETURN(auto nodes,
                   registry.AddGauge("hetsched_nodes", "Nodes by power state.", {"power_state"}));
  ASSIGN_OR_RETURN(auto recovery_s,
                   registry.AddGauge("hetsched_recovery_seconds",
                                     "What reading the stored state back took at start-up, "
                                     "before the first scheduling pass: wall or CPU seconds.",
                                     {"clock"}));
  return std::make_unique<Metrics>(Metrics{submitted, placements, preemptions, ended, energy_j,
                                           decision_s, jobs, devices_used, devices_offered, power_w,
                                           draw_w, nodes, recovery_s});
}

util::Result<std::unique_ptr<Service>> Service::Create(model::Cluster cluster,
                                                       std::unique_ptr<Backend> backend,
                                                       std::unique_ptr<Store> store,
                                                       ServiceOptions options, Logger* logger,
                                                       MetricsRegistry* metrics) {
  RETURN_IF_ERROR(CheckClockAndHistory(options));
  // A preempted job keeps its devices until its process is gone; the daemon never assumes.
  options.scheduler.stop_holds_devices = true;
  // Space sharing needs pair measurements the daemon does not have.
  options.scheduler.space_sharing = false;
  if (!options.wall_clock) options.wall_clock = SystemUnixNow;
  {
    ASSIGN_OR_RETURN(const power::PolicyParts parts, power::ParsePowerPolicy(options.power.policy));
    if (parts.caps) {
      return util::Status::InvalidArgument(fmt::format(
          "power policy '{}': the daemon cannot set device power caps yet (cap policies are "
          "simulated only; use always-on, idle-timeout or consolidate)",
          options.power.policy));
    }
    if (!options.power.boot_failure_nodes.empty()) {
      return util::Status::InvalidArgument(
          "boot failure injection is the simulator's, not the daemon's");
    }
    RETURN_IF_ERROR(power::PowerController::Create(cluster, options.power).status());
  }
  auto service =
      std::unique_ptr<Service>(new Service(std::move(cluster), std::move(backend), std::move(store),
                                           std::move(options), logger, metrics));
  ASSIGN_OR_RETURN(service->scheduler_,
                   sched::Scheduler::Create(service->cluster_, nullptr, service->options_.policy,
                                            service->options_.scheduler));
  const drive::Rules rules{.start_failures_per_type = service->options_.max_start_failures,
                           .stop_grace_s = service->options_.stop_grace_s,
                           .restore_s = service->options_.restore_s};
  drive::Effects& effects = *service;
  service->attempts_ = std::make_unique<drive::Attempts>(service->cluster_, *service->scheduler_,
                                                         *service->backend_, effects, rules);
  ASSIGN_OR_RETURN(service->metrics_, NewMetrics(*metrics));
  RETURN_IF_ERROR(service->AddTenantMetrics());
  return service;
}

Service::Service(model::Cluster cluster, std::unique_ptr<Backend> backend,
                 std::unique_ptr<Store> store, ServiceOptions options, Logger* logger,
                 MetricsRegistry* registry)
    : cluster_(std::move(cluster)),
      backend_(std::move(backend)),
      store_(std::move(store)),
      options_(std::move(options)),
      logger_(logger),
      registry_(registry) {}

Service::~Service() { Shutdown(); }

double Service::WallNow() const { return options_.wall_clock(); }

double Service::SchedNow() const {
  return sched_base_s_ + (WallNow() - wall_start_s_) * options_.time_scale;
}

util::Status Service::HasWhatTheBackendRuns(const model::Job& job) const {
  if (!backend_->RunsCommands() || (!job.command.empty() && !job.command[0].empty())) {
    return util::Status::Ok();
  }
  return util::Status::InvalidArgument(fmt::format(
      "command: missing (the {} backend runs each job's command: give the argv, e.g. "
      "\"command\": [\"python3\", \"train.py\"], or `hetsched submit ... -- python3 train.py`)",
      backend_->name()));
}

util::Status Service::Health() const {
  if (!ready_) return util::Status::Unavailable("the daemon is recovering its state; try again");
  if (stopping_) return util::Status::Unavailable("the daemon is shutting down");
  return util::Status::Ok();
}

util::Result<std::unique_lock<std::mutex>> Service::LockWhenReady() const {
  // Checked before taking mu_ as well: Start() holds it throughout recovery (seconds at scale).
  RETURN_IF_ERROR(Health());
  std::unique_lock lock(mu_);
  RETURN_IF_ERROR(Health());  // Shutdown() may have begun meanwhile
  return lock;
}

util::Status Service::Start() {
  std::unique_lock lock(mu_);
  RETURN_IF_ERROR(Recover());
  RETURN_IF_ERROR(StartPower());
  // The clock is otherwise saved at the first reconciliation only: a daemon killed before
  // that would start its next run at scheduler time 0, behind its jobs' arrivals.
  SaveClock();
  // The gauges of GET /metrics as recovered: the first pass, which they are not refreshed
  // during (RefreshGauges), may take seconds.
  ClusterNow();
  ready_ = true;
  loop_ = std::thread([this] { Loop(); });
  return util::Status::Ok();
}

util::Status Service::StartPower() {
  const double now = SchedNow();
  ASSIGN_OR_RETURN(power::PowerController controller,
                   power::PowerController::Create(cluster_, options_.power, now));
  power_.emplace(std::move(controller));
  drive::PowerEffects& effects = *this;
  power_driver_.emplace(cluster_, *scheduler_, *backend_, *power_, effects, drive::PowerRules{});
  for (Entry* e : by_slot_) {
    if (e != nullptr && !e->devices.empty()) power_->SetBusy(e->devices, true, 1, now);
  }
  // Nodes hetsched powered down (or was powering up or down) stay off until demand wakes them.
  ASSIGN_OR_RETURN(auto nodes, store_->LoadNodes());
  for (const StoredNode& n : nodes) {
    auto node = cluster_.FindNode(n.name);
    if (!node || n.power_state.empty() || n.power_state == "on") continue;
    power_driver_->FoundOff(node->value(), now);
  }
  return util::Status::Ok();
}

void Service::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    // Submitters still waiting get an answer.
    for (auto& p : pending_) {
      p->done = true;
      p->status = util::Status::Unavailable("the daemon is shutting down");
    }
    pending_.clear();
  }
  wake_.notify_all();
  committed_.notify_all();
  if (loop_.joinable()) loop_.join();
  std::lock_guard lock(mu_);
  if (ready_) {
    SaveClock();
    // Attained service of running jobs since their last change, which a crash would lose.
    SavePolicyState();
  }
}

util::Status Service::PutValue(const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  return store_->Put(key, value);
}

util::Result<std::optional<std::string>> Service::GetValue(const std::string& key) {
  std::lock_guard lock(mu_);
  return store_->Get(key);
}

void Service::SaveClock() {
  nlohmann::json clock = {{"sched_s", SchedNow()}, {"wall_s", WallNow()}};
  if (auto st = store_->Put(kClockKey, clock.dump()); !st.ok()) {
    logger_->Error("saving the scheduler clock failed", {{"error", st.message()}});
  }
  // The size belief learns from completed jobs only: saved when one completed since.
  const int64_t completed = ended_counts_[JobStateIndex(JobState::kCompleted)];
  if (completed != belief_saved_at_) {
    if (auto st = store_->Put(kBeliefKey, scheduler_->SaveBelief()); !st.ok()) {
      logger_->Error("saving the size belief failed", {{"error", st.message()}});
    } else {
      belief_saved_at_ = completed;
    }
  }
  SaveTenantUsage();
}

void Service::SavePolicyState() {
  if (!store_->Begin().ok()) return;
  for (Entry* e : by_slot_) {
    if (e == nullptr) continue;
    if (auto st = Persist(*e); !st.ok()) {
      logger_->Error("saving a job's policy state failed",
                     {{"job", e->name}, {"error", st.message()}});
    }
  }
  if (auto st = store_->Commit(); !st.ok()) {
    logger_->Error("saving the jobs' policy state failed", {{"error", st.message()}});
  }
}

void Service::Loop() {
  std::unique_lock lock(mu_);
  const auto tick = std::chrono::duration<double>(options_.tick_s);
  while (!stopping_) {
    Step();
    first_pass_done_ = true;
    wake_.wait_for(lock, tick, [this] { return stopping_ || !pending_.empty(); });
  }
}

void Service::Step() {
  PassClock clock;
  const double now = SchedNow();
  const size_t submissions = pending_.size();
  CommitSubmissions(now);
  clock.Lap(PassClock::kSubmissions);
  // What the backend's events change is recorded in one transaction per pass (thousands of
  // jobs may end at once); nothing here acts on the backend before it is stored except stops,
  // which are safe to repeat.
  const bool grouped = store_->Begin().ok();
  const double wall = WallNow();
  const bool reconcile = wall - last_reconcile_wall_s_ >= options_.reconcile_every_s;
  if (reconcile) {
    last_reconcile_wall_s_ = wall;
    Reconcile(now);
    SaveClock();
    PruneEnded();
  } else {
    attempts_->Poll(now);
  }
  SampleHistory(wall);
  if (attempts_->EnforceTimeLimits(now).stopped > 0) MarkTimeLimitStops();
  clock.Lap(PassClock::kBackend);
  if (grouped) {
    if (auto st = store_->Commit(); !st.ok()) {
      logger_->Error("storing job changes failed", {{"error", st.message()}});
    }
  }
  clock.Lap(PassClock::kCommit);
  if (backend_->Available()) {
    DecideAndAct(now);
    clock.Lap(PassClock::kDecide);
    ManagePower(now);
    clock.Lap(PassClock::kPower);
  }
  ForgetEnded();
  clock.Lap(PassClock::kForget);
  if (clock.wall_s() >= kSlowPassS) {
    logger_->Warn("a slow pass of the control loop (submissions waited for it)",
                  {{"wall_ms", 1e3 * clock.wall_s()},
                   {"cpu_ms", 1e3 * clock.cpu_s()},
                   {"submissions", submissions},
                   {"submissions_ms", clock.ms(PassClock::kSubmissions)},
                   {"reconciled", reconcile},
                   {"backend_ms", clock.ms(PassClock::kBackend)},
                   {"commit_ms", clock.ms(PassClock::kCommit)},
                   {"decide_ms", clock.ms(PassClock::kDecide)},
                   {"power_ms", clock.ms(PassClock::kPower)},
                   {"forget_ms", clock.ms(PassClock::kForget)}});
  }
}

void Service::PruneEnded() {
  if (!(options_.keep_ended_s > 0)) return;
  auto pruned = store_->PruneEndedJobs(WallNow() - options_.keep_ended_s);
  if (!pruned.ok()) {
    logger_->Error("pruning ended jobs failed", {{"error", pruned.status().message()}});
  } else if (*pruned > 0) {
    logger_->Info("pruned ended jobs", {{"jobs", *pruned}});
  }
}

void Service::ForgetEnded() {
  for (const std::string& name : ended_) {
    auto it = jobs_.find(name);
    if (it != jobs_.end() && IsEnded(it->second->state)) jobs_.erase(it);
  }
  ended_.clear();
}

util::Result<std::optional<StoredJob>> Service::StoredEnded(const std::string& name) {
  ASSIGN_OR_RETURN(auto stored, store_->GetJob(name));
  if (stored && !IsEnded(stored->state)) {
    // Live jobs are all in memory; a live row without one is a bug, not a job to show.
    return util::Status::Internal(
        fmt::format("job '{}' is {} in the database but unknown to the daemon", name,
                    JobStateName(stored->state)));
  }
  return stored;
}

util::Result<Service::Submitted> Service::Submit(model::Job job, std::string spec_json,
                                                 std::string idempotency_key) {
  RETURN_IF_ERROR(HasWhatTheBackendRuns(job));
  if (options_.scheduler.tenants) RETURN_IF_ERROR(CheckJobTenant(*options_.scheduler.tenants, job));
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  const std::string name = job.name;
  // Whether a submission of `name` (made with `key`, as `spec`) may be answered as a retry of
  // this one: only with the same key and the same job (the body parsed, so spacing and key
  // order do not count).
  const auto retry_of = [&](const std::string& key, const std::string& spec) -> util::Status {
    if (idempotency_key.empty() || key != idempotency_key) {
      return util::Status::AlreadyExists(fmt::format(
          "job '{}' exists{}", name,
          idempotency_key.empty() ? " (a retry must send the first submission's Idempotency-Key)"
          : key.empty()           ? " (submitted without an Idempotency-Key)"
                                  : " (submitted with another Idempotency-Key)"));
    }
    if (spec != spec_json) {
      return util::Status::Mismatch(fmt::format(
          "Idempotency-Key '{}' was first sent with another body for job '{}' (expected a retry "
          "to repeat the first request; a new job needs a new key and name)",
          idempotency_key, name));
    }
    return util::Status::Ok();
  };
  if (auto it = jobs_.find(name); it != jobs_.end()) {
    const Entry& e = *it->second;
    RETURN_IF_ERROR(retry_of(e.idempotency_key, e.spec_json));
    return Submitted{ViewOf(e), false};
  }
  for (const auto& p : pending_) {
    if (p->job.name != name) continue;
    RETURN_IF_ERROR(retry_of(p->idempotency_key, p->spec_json));
    // The same request twice at once: both answers wait for the first one's commit.
    const auto first = p;
    committed_.wait(lock, [&] { return first->done; });
    if (!first->status.ok()) return first->status;
    return Submitted{first->view, false};
  }
  ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
  if (ended) {
    RETURN_IF_ERROR(retry_of(ended->idempotency_key, ended->spec_json));
    return Submitted{ViewOfStored(*ended), false};
  }
  auto p = std::make_shared<PendingSubmit>();
  p->job = std::move(job);
  p->spec_json = std::move(spec_json);
  p->idempotency_key = std::move(idempotency_key);
  pending_.push_back(p);
  wake_.notify_one();
  committed_.wait(lock, [&] { return p->done; });
  if (!p->status.ok()) return p->status;
  return Submitted{p->view, true};
}

util::Result<Service::Entry*> Service::Admit(model::Job job, std::string spec_json,
                                             std::string idempotency_key, double now) {
  const JobId slot = slots_.Acquire();
  job.id = slot;
  job.arrival_s = now;
  model::io::ApplyJobClass(options_.classes, job);
  auto e = std::make_unique<Entry>();
  e->work = std::exchange(job.work, 0);  // the scheduler shares the job: it sees no size
  e->job = std::make_shared<const model::Job>(std::move(job));
  const sched::Admission a = scheduler_->Submit(e->job, now);
  if (!a.accepted) {
    slots_.Release(slot);
    return util::Status::InvalidArgument(
        fmt::format("job '{}' cannot run on this cluster: {}", e->job->name, a.reason));
  }
  e->name = e->job->name;
  e->spec_json = std::move(spec_json);
  e->idempotency_key = std::move(idempotency_key);
  e->slot = slot;
  e->submitted_s = WallNow();
  if (by_slot_.size() <= static_cast<size_t>(slot.value())) by_slot_.resize(slot.value() + 1);
  by_slot_[slot.value()] = e.get();
  BecameLive(*e);
  attempts_->Track(slot, e->name, e->job->time_limit_s);
  Entry* out = e.get();
  jobs_[out->name] = std::move(e);
  demand_changed_ = true;
  return out;
}

void Service::AdoptBackendJob(const BackendEvent& ev, double now) {
  if (jobs_.count(ev.job) != 0) return;  // adopted already (the backend repeats waiting jobs)
  auto ended = StoredEnded(ev.job);
  if (!ended.ok()) {
    logger_->Error("a job submitted to the backend cannot be checked",
                   {{"job", ev.job}, {"error", ended.status().message()}});
    return;
  }
  if (*ended) {
    // It ended here; what the backend keeps of it is stale.
    backend_->Forget(ev.job);
    return;
  }
  util::Status rejected = util::Status::InvalidArgument(ev.message);
  if (!ev.spec.empty()) {
    auto req = ParseJobRequest(ev.spec, cluster_.catalog);
    if (req.ok() && options_.scheduler.tenants) {
      // Its tenant (the Slurm account's) is checked as an API submission's.
      if (auto st = CheckJobTenant(*options_.scheduler.tenants, req->job); !st.ok()) req = st;
    }
    if (!req.ok()) {
      rejected = req.status();
    } else {
      auto e = Admit(std::move(req->job), ev.spec, "", now);
      if (e.ok()) {
        if (auto st = Persist(**e, /*insert=*/true); !st.ok()) {
          logger_->Error("storing a job submitted to the backend failed",
                         {{"job", ev.job}, {"error", st.message()}});
        }
        metrics_->submitted.Get({})->Inc();
        logger_->Info("adopted a job submitted to the backend",
                      {{"job", ev.job}, {"gang", (*e)->job->gang_size}});
        return;
      }
      rejected = e.status();
    }
  }
  // It can never run here: recorded as failed with the reason (so `hetsched jobs` and the API
  // show it) and withdrawn from the backend rather than left waiting there forever.
  Entry failed;
  failed.name = ev.job;
  failed.job = std::make_shared<const model::Job>();  // none could be read: no tenant, arrival 0
  failed.spec_json = ev.spec.empty() ? nlohmann::json{{"name", ev.job}}.dump() : ev.spec;
  failed.state = JobState::kFailed;
  failed.submitted_s = failed.ended_s = WallNow();
  failed.message =
      fmt::format("submitted to {}, cannot run here: {}", backend_->name(), rejected.message());
  if (auto st = Persist(failed, /*insert=*/true); !st.ok()) {
    logger_->Error("storing a rejected job failed", {{"job", ev.job}, {"error", st.message()}});
  }
  ended_counts_[JobStateIndex(JobState::kFailed)]++;
  metrics_->ended.Get({std::string(JobStateName(JobState::kFailed))})->Inc();
  logger_->Error("a job submitted to the backend cannot run here; withdrawn",
                 {{"job", ev.job}, {"why", rejected.message()}});
  backend_->Forget(ev.job);
}

void Service::CommitSubmissions(double now) {
  if (pending_.empty()) return;
  std::vector<std::shared_ptr<PendingSubmit>> batch(pending_.begin(), pending_.end());
  pending_.clear();
  std::vector<Entry*> admitted;
  for (auto& p : batch) {
    auto admitted_or = Admit(std::move(p->job), p->spec_json, p->idempotency_key, now);
    if (!admitted_or.ok()) {
      p->status = admitted_or.status();
      p->done = true;
      continue;
    }
    admitted.push_back(*admitted_or);
  }
  // One transaction for the batch: a job is acknowledged only once it is on disk.
  util::Status st = store_->Begin();
  for (Entry* e : admitted) {
    if (st.ok()) st = Persist(*e, /*insert=*/true);
  }
  if (st.ok()) st = store_->Commit();
  size_t next = 0;
  for (auto& p : batch) {
    if (p->done) continue;
    Entry* e = admitted[next++];
    if (!st.ok()) {
      scheduler_->Drop(e->slot, now);
      slots_.Release(e->slot);
      LeftLive(*e);
      by_slot_[e->slot.value()] = nullptr;
      jobs_.erase(e->name);
      p->status = util::Status::Unavailable(
          fmt::format("the job was not stored, so it was not accepted: {}", st.message()));
    } else {
      p->view = ViewOf(*e);
      metrics_->submitted.Get({})->Inc();
      logger_->Info("submitted", {{"job", e->name}, {"gang", e->job->gang_size}});
    }
    p->done = true;
  }
  if (!st.ok()) logger_->Error("storing submissions failed", {{"error", st.message()}});
  committed_.notify_all();
}

util::Result<JobView> Service::Cancel(const std::string& name, const TenantScope& scope) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  auto it = jobs_.find(name);
  if (it != jobs_.end() && !InScope(it->second->job->tenant, scope)) return NoJob(name);
  if (it == jobs_.end()) {
    ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
    if (!ended) return NoJob(name);
    JobView v = ViewOfStored(*ended);
    if (!InScope(v.tenant, scope)) return NoJob(name);
    return v;
  }
  Entry& e = *it->second;
  // Applied here, under the lock (the control loop is between passes, no transaction open), so
  // the cancel is stored before it is acknowledged.
  if (!IsEnded(e.state) && StopCauseOf(e) != drive::StopCause::kCancel) {
    const double now = SchedNow();
    if (e.state == JobState::kQueued) {
      attempts_->Cancel(e.slot, "cancelled while queued", now);
    } else {
      // Starting, running or stopping (a preemption or its time limit): it ends as cancelled once
      // the backend says its processes are gone.
      e.message = "cancel requested";
      RETURN_IF_ERROR(PersistStopping(e, drive::StopCause::kCancel));
      attempts_->Cancel(e.slot, "cancelled", now);
    }
    wake_.notify_one();
  }
  const JobView view = ViewOf(e);
  ForgetEnded();
  return view;
}

void Service::Event(const std::string& kind, const std::string& subject,
                    const std::string& detail) {
  StoredEvent ev;
  ev.at_s = WallNow();
  ev.kind = kind;
  ev.subject = subject;
  ev.detail = detail;
  if (auto st = store_->AppendEvent(ev); !st.ok()) {
    logger_->Error("storing an event failed", {{"kind", kind}, {"error", st.message()}});
  }
}

}  // namespace hetsched::svc
