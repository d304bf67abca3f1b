#include "daemon/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "daemon/job_request.h"
#include "drive/power_demand.h"
#include "exec/launch.h"
#include "model/io/dag_reader.h"
#include "model/model_spec.h"
#include "model/topology.h"
#include "plan/cpop.h"
#include "plan/heft.h"
#include "plan/model_partition.h"
#include "plan/peft.h"
#include "plan/schedule.h"

namespace hetsched::svc {

using model::DeviceId;
using model::JobId;

namespace {

constexpr const char* kClockKey = "scheduler_clock";

bool StateEnded(const std::string& state) {
  return state == "completed" || state == "failed" || state == "cancelled";
}

double SystemUnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Buckets (seconds) for decision and API latency: 10 us .. 10 s.
std::vector<double> LatencyBuckets() {
  return {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1, 3, 10};
}

constexpr const char* kBeliefKey = "size_belief";

std::string HistoryJson(const sched::JobHistory& h) {
  nlohmann::json j = {{"attained_s", h.attained_s}, {"attained_norm_s", h.attained_norm_s}};
  if (!h.received_s.empty()) {
    nlohmann::json received = nlohmann::json::object();
    for (const auto& [type, seconds] : h.received_s) received[type] = seconds;
    j["received_s"] = received;
  }
  return j.dump();
}

// What HistoryJson wrote; nullopt for anything else (the job then starts without history).
std::optional<sched::JobHistory> ParseHistory(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.value("attained_s", nlohmann::json()).is_number() ||
      !j.value("attained_norm_s", nlohmann::json()).is_number()) {
    return std::nullopt;
  }
  sched::JobHistory h;
  h.attained_s = j["attained_s"].get<double>();
  h.attained_norm_s = j["attained_norm_s"].get<double>();
  if (auto it = j.find("received_s"); it != j.end() && it->is_object()) {
    for (const auto& [type, seconds] : it->items()) {
      if (seconds.is_number()) h.received_s.push_back({type, seconds.get<double>()});
    }
  }
  return h;
}

}  // namespace

// Why a job is stopping: the scheduler preempted it (it is queued again once stopped) or the
// user cancelled it (it ends).
enum class StopReason { kNone, kPreempt, kCancel };

struct Service::Entry {
  std::string name;
  model::Job job;  // as submitted, with its true size when the user gave one
  std::string spec_json;
  std::string idempotency_key;
  std::string state = "queued";
  JobId slot;  // valid while the job is live
  double submitted_s = 0, started_s = -1, ended_s = -1;
  std::optional<int> exit_status;
  std::string device_type;
  std::vector<DeviceId> devices;
  int64_t attempt = 0;
  StopReason stop = StopReason::kNone;  // as stored (drive::Attempts holds the rules' view)
  int32_t preemptions = 0;
  double done_work = 0;
  std::string message;
};

struct Service::PendingSubmit {
  model::Job job;
  std::string spec_json;
  std::string idempotency_key;
  bool done = false;
  util::Status status;
  JobView view;
};

struct Service::Metrics {
  CounterFamily submitted, placements, preemptions, ended, energy_j;
  HistogramFamily decision_s;
  GaugeFamily jobs, devices_used, devices_offered, power_w, draw_w, nodes;
};

util::Result<std::unique_ptr<Service>> Service::Create(model::Cluster cluster,
                                                       std::unique_ptr<Backend> backend,
                                                       std::unique_ptr<Store> store,
                                                       ServiceOptions options, Logger* logger,
                                                       MetricsRegistry* metrics) {
  if (!(options.time_scale > 0)) {
    return util::Status::InvalidArgument("time scale must be > 0");
  }
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
  ASSIGN_OR_RETURN(auto submitted, metrics->AddCounter("hetsched_jobs_submitted_total",
                                                       "Jobs admitted through the API."));
  ASSIGN_OR_RETURN(
      auto placements,
      metrics->AddCounter("hetsched_placements_total",
                          "Job starts the scheduler decided, by device type.", {"device_type"}));
  ASSIGN_OR_RETURN(auto preemptions, metrics->AddCounter("hetsched_preemptions_total",
                                                         "Running jobs the scheduler stopped."));
  ASSIGN_OR_RETURN(auto ended, metrics->AddCounter("hetsched_jobs_ended_total",
                                                   "Jobs that ended, by final state.", {"state"}));
  ASSIGN_OR_RETURN(auto decision_s, metrics->AddHistogram("hetsched_decision_seconds",
                                                          "Wall time of one scheduling decision.",
                                                          LatencyBuckets()));
  ASSIGN_OR_RETURN(auto jobs, metrics->AddGauge("hetsched_jobs", "Live jobs by state.", {"state"}));
  ASSIGN_OR_RETURN(auto devices_used, metrics->AddGauge("hetsched_devices_used",
                                                        "Busy devices by type.", {"device_type"}));
  ASSIGN_OR_RETURN(
      auto devices_offered,
      metrics->AddGauge("hetsched_devices_offered",
                        "Devices up on powered, undrained nodes, by type.", {"device_type"}));
  ASSIGN_OR_RETURN(auto power_w, metrics->AddGauge("hetsched_power_watts",
                                                   "Modeled device draw by type (busy at peak, "
                                                   "the rest at idle).",
                                                   {"device_type"}));
  ASSIGN_OR_RETURN(auto energy_j,
                   metrics->AddCounter("hetsched_energy_joules_total",
                                       "Modeled energy of every node (base draw and devices, "
                                       "by power state) since the daemon started."));
  ASSIGN_OR_RETURN(auto draw_w, metrics->AddGauge("hetsched_cluster_power_watts",
                                                  "Modeled draw of every node now (base draw "
                                                  "and devices; off nodes at standby)."));
  ASSIGN_OR_RETURN(auto nodes,
                   metrics->AddGauge("hetsched_nodes", "Nodes by power state.", {"power_state"}));
  service->metrics_ = std::make_unique<Metrics>(Metrics{submitted, placements, preemptions, ended,
                                                        energy_j, decision_s, jobs, devices_used,
                                                        devices_offered, power_w, draw_w, nodes});
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

util::Status Service::ReadyOrUnavailable() const {
  if (!ready_) return util::Status::Unavailable("the daemon is recovering its state; try again");
  if (stopping_) return util::Status::Unavailable("the daemon is shutting down");
  return util::Status::Ok();
}

util::Status Service::Start() {
  std::unique_lock lock(mu_);
  RETURN_IF_ERROR(Recover());
  RETURN_IF_ERROR(StartPower());
  // The clock is otherwise saved at the first reconciliation only: a daemon killed before
  // that would start its next run at scheduler time 0, behind its jobs' arrivals.
  SaveClock();
  ready_ = true;
  loop_ = std::thread([this] { Loop(); });
  return util::Status::Ok();
}

util::Status Service::StartPower() {
  const double now = SchedNow();
  ASSIGN_OR_RETURN(power::PowerController controller,
                   power::PowerController::Create(cluster_, options_.power, now));
  power_.emplace(std::move(controller));
  for (Entry* e : by_slot_) {
    if (e != nullptr && !e->devices.empty()) power_->SetBusy(e->devices, true, 1, now);
  }
  // Nodes hetsched powered down (or was powering up or down) stay off until demand wakes
  // them; the backend is told again, in case the stop came before it heard.
  ASSIGN_OR_RETURN(auto nodes, store_->LoadNodes());
  for (const StoredNode& n : nodes) {
    auto node = cluster_.FindNode(n.name);
    if (!node || n.power_state.empty() || n.power_state == "on") continue;
    if (!power_->AssumeOff(node->value(), now)) continue;
    scheduler_->SetNodeOn(*node, false);
    if (auto st = backend_->SetNodePower(n.name, false); !st.ok()) {
      logger_->Warn("powering a node off again failed",
                    {{"node", n.name}, {"error", st.message()}});
    }
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

void Service::SaveClock() {
  nlohmann::json clock = {{"sched_s", SchedNow()}, {"wall_s", WallNow()}};
  if (auto st = store_->Put(kClockKey, clock.dump()); !st.ok()) {
    logger_->Error("saving the scheduler clock failed", {{"error", st.message()}});
  }
  // The size belief learns from completed jobs only: saved when one completed since.
  if (ended_counts_[0] != belief_saved_at_) {
    if (auto st = store_->Put(kBeliefKey, scheduler_->SaveBelief()); !st.ok()) {
      logger_->Error("saving the size belief failed", {{"error", st.message()}});
    } else {
      belief_saved_at_ = ended_counts_[0];
    }
  }
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
    wake_.wait_for(lock, tick, [this] { return stopping_ || !pending_.empty(); });
  }
}

void Service::Step() {
  const double now = SchedNow();
  CommitSubmissions(now);
  // What the backend's events change is recorded in one transaction per pass (thousands of
  // jobs may end at once); nothing here acts on the backend before it is stored except stops,
  // which are safe to repeat.
  const bool grouped = store_->Begin().ok();
  const double wall = WallNow();
  if (wall - last_reconcile_wall_s_ >= options_.reconcile_every_s) {
    last_reconcile_wall_s_ = wall;
    Reconcile(now);
    SaveClock();
    PruneEnded();
  } else {
    attempts_->Poll(now);
  }
  attempts_->EnforceTimeLimits(now);
  if (grouped) {
    if (auto st = store_->Commit(); !st.ok()) {
      logger_->Error("storing job changes failed", {{"error", st.message()}});
    }
  }
  if (backend_->Available()) {
    DecideAndAct(now);
    ManagePower(now);
  }
  ForgetEnded();
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
    if (it != jobs_.end() && StateEnded(it->second->state)) jobs_.erase(it);
  }
  ended_.clear();
}

util::Result<std::optional<StoredJob>> Service::StoredEnded(const std::string& name) {
  ASSIGN_OR_RETURN(auto stored, store_->GetJob(name));
  if (stored && !StateEnded(stored->state)) {
    // Live jobs are all in memory; a live row without one is a bug, not a job to show.
    return util::Status::Internal(fmt::format(
        "job '{}' is {} in the database but unknown to the daemon", name, stored->state));
  }
  return stored;
}

util::Result<Service::Submitted> Service::Submit(model::Job job, std::string spec_json,
                                                 std::string idempotency_key) {
  std::unique_lock lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  const std::string name = job.name;
  const auto taken = [&](const std::string& key) -> util::Status {
    return util::Status::AlreadyExists(fmt::format(
        "job '{}' exists{}", name,
        idempotency_key.empty() ? " (a retry must send the first submission's Idempotency-Key)"
        : key.empty()           ? " (submitted without an Idempotency-Key)"
                                : " (submitted with another Idempotency-Key)"));
  };
  if (auto it = jobs_.find(name); it != jobs_.end()) {
    const Entry& e = *it->second;
    if (idempotency_key.empty() || e.idempotency_key != idempotency_key) {
      return taken(e.idempotency_key);
    }
    return Submitted{ViewOf(e), false};
  }
  for (const auto& p : pending_) {
    if (p->job.name != name) continue;
    if (idempotency_key.empty() || p->idempotency_key != idempotency_key) {
      return taken(p->idempotency_key);
    }
    // The same request twice at once: both answers wait for the first one's commit.
    const auto first = p;
    committed_.wait(lock, [&] { return first->done; });
    if (!first->status.ok()) return first->status;
    return Submitted{first->view, false};
  }
  ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
  if (ended) {
    if (idempotency_key.empty() || ended->idempotency_key != idempotency_key) {
      return taken(ended->idempotency_key);
    }
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
  const JobId slot = *slots_.Acquire(job.name);
  job.id = slot;
  job.arrival_s = now;
  model::io::ApplyJobClass(options_.classes, job);
  const sched::Admission a = scheduler_->Submit(job, now);
  if (!a.accepted) {
    slots_.Release(slot);
    return util::Status::InvalidArgument(
        fmt::format("job '{}' cannot run on this cluster: {}", job.name, a.reason));
  }
  auto e = std::make_unique<Entry>();
  e->name = job.name;
  e->spec_json = std::move(spec_json);
  e->idempotency_key = std::move(idempotency_key);
  e->slot = slot;
  e->submitted_s = WallNow();
  e->job = std::move(job);
  if (by_slot_.size() <= static_cast<size_t>(slot.value())) by_slot_.resize(slot.value() + 1);
  by_slot_[slot.value()] = e.get();
  attempts_->Track(slot, e->name, e->job.time_limit_s);
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
                      {{"job", ev.job}, {"gang", (*e)->job.gang_size}});
        return;
      }
      rejected = e.status();
    }
  }
  // It can never run here: recorded as failed with the reason (so `hetsched jobs` and the API
  // show it) and withdrawn from the backend rather than left waiting there forever.
  Entry failed;
  failed.name = ev.job;
  failed.spec_json = ev.spec.empty() ? nlohmann::json{{"name", ev.job}}.dump() : ev.spec;
  failed.state = "failed";
  failed.submitted_s = failed.ended_s = WallNow();
  failed.message =
      fmt::format("submitted to {}, cannot run here: {}", backend_->name(), rejected.message());
  if (auto st = Persist(failed, /*insert=*/true); !st.ok()) {
    logger_->Error("storing a rejected job failed", {{"job", ev.job}, {"error", st.message()}});
  }
  ended_counts_[1]++;
  metrics_->ended.Get({"failed"})->Inc();
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
      by_slot_[e->slot.value()] = nullptr;
      jobs_.erase(e->name);
      p->status = util::Status::Unavailable(
          fmt::format("the job was not stored, so it was not accepted: {}", st.message()));
    } else {
      p->view = ViewOf(*e);
      metrics_->submitted.Get({})->Inc();
      logger_->Info("submitted", {{"job", e->name}, {"gang", e->job.gang_size}});
    }
    p->done = true;
  }
  if (!st.ok()) logger_->Error("storing submissions failed", {{"error", st.message()}});
  committed_.notify_all();
}

util::Result<JobView> Service::Cancel(const std::string& name) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  auto it = jobs_.find(name);
  if (it == jobs_.end()) {
    ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
    if (!ended) return util::Status::NotFound(fmt::format("no job '{}'", name));
    return ViewOfStored(*ended);
  }
  Entry& e = *it->second;
  // Applied here, under the lock (the control loop is between passes, no transaction open), so
  // the cancel is stored before it is acknowledged.
  if (!StateEnded(e.state) && e.stop != StopReason::kCancel) {
    const double now = SchedNow();
    if (e.state == "queued") {
      attempts_->Cancel(e.slot, "cancelled while queued", now);
    } else {
      // Starting, running or stopping (a preemption under way): it ends as cancelled once the
      // backend says its processes are gone.
      e.stop = StopReason::kCancel;
      e.state = "stopping";
      e.message = "cancel requested";
      RETURN_IF_ERROR(Persist(e));
      attempts_->Cancel(e.slot, "cancelled", now);
    }
    wake_.notify_one();
  }
  const JobView view = ViewOf(e);
  ForgetEnded();
  return view;
}

void Service::StopAttempt(Entry& e) {
  if (auto st = backend_->Stop(e.name, e.attempt, options_.stop_grace_s); !st.ok()) {
    logger_->Error("stop failed", {{"job", e.name}, {"error", st.message()}});
  }
}

bool Service::OtherEvent(const BackendEvent& ev, double now) {
  switch (ev.kind) {
    case BackendEventKind::kNodeUp:
    case BackendEventKind::kNodeDown:
      SetNodeUp(ev.node, ev.kind == BackendEventKind::kNodeUp, now);
      return true;
    case BackendEventKind::kSubmitted:
      AdoptBackendJob(ev, now);
      return true;
    case BackendEventKind::kWithdrawn:
      if (auto it = jobs_.find(ev.job); it != jobs_.end() && !StateEnded(it->second->state)) {
        attempts_->Cancel(it->second->slot,
                          fmt::format("cancelled in {}{}{}", backend_->name(),
                                      ev.message.empty() ? "" : ": ", ev.message),
                          now);
      }
      return true;
    default:
      // An attempt of a job that ended here (a gang part stopped after the job was given up).
      logger_->Debug("stale backend event", {{"job", ev.job}, {"attempt", ev.attempt}});
      return false;
  }
}

void Service::BackendFailed(JobId job, const std::string& call, const util::Status& status) {
  const Entry* e = by_slot_[job.value()];
  logger_->Error(call + " failed", {{"job", e ? e->name : ""}, {"error", status.message()}});
}

util::Status Service::Record(const sched::Decision& d, double now) {
  (void)now;
  // Write ahead: what is about to happen is on disk before the backend hears of it.
  std::vector<Entry*> stops, starts;
  util::Status st = store_->Begin();
  for (JobId id : d.preempted) {
    Entry* e = by_slot_[id.value()];
    if (attempts_->attempt(id)->stop != drive::StopCause::kNone) continue;  // stopping already
    e->stop = StopReason::kPreempt;
    e->state = "stopping";
    ++e->preemptions;
    stops.push_back(e);
    if (st.ok()) st = Persist(*e);
  }
  for (const sched::Placement& p : d.placed) {
    Entry* e = by_slot_[p.job.value()];
    e->attempt = attempts_->attempt(p.job)->number + 1;  // the one drive::Attempts launches
    e->state = "starting";
    e->device_type = cluster_.catalog.Get(p.type).name;
    e->devices = p.devices;
    if (p.restarted) e->done_work = 0;
    starts.push_back(e);
    if (st.ok()) st = Persist(*e);
  }
  if (st.ok()) st = store_->Commit();
  if (st.ok()) return st;
  // Without the record the daemon could place these twice after a restart: drive::Attempts
  // acts on nothing and puts them back.
  logger_->Error("storing a decision failed; nothing was started or stopped",
                 {{"error", st.message()}});
  for (Entry* e : starts) {
    e->state = "queued";
    e->devices.clear();
  }
  for (Entry* e : stops) {
    e->state = "queued";
    e->stop = StopReason::kNone;
  }
  return st;
}

void Service::Stopping(JobId job, double now) {
  (void)now;
  const Entry& e = *by_slot_[job.value()];
  metrics_->preemptions.Get({})->Inc();
  Event("preempt", e.name, fmt::format("attempt {}", e.attempt));
}

void Service::Launching(const sched::Placement& p, std::vector<LaunchSpec>& specs, double now) {
  Entry& e = *by_slot_[p.job.value()];
  const sched::JobRecord& r = scheduler_->record(e.slot);
  // The true remaining time at the speed there: only the virtual backend uses it.
  const double speed =
      scheduler_->SpeedNow(e.slot) > 0 ? scheduler_->SpeedNow(e.slot) : r.speed[r.type.value()];
  double modeled_s = 0;
  if (e.job.work > 0 && speed > 0) {
    modeled_s = std::max(0.0, e.job.work - e.done_work) / speed;
  } else if (e.job.estimate_s) {
    modeled_s = *e.job.estimate_s;
  } else if (e.job.time_limit_s) {
    modeled_s = *e.job.time_limit_s;
  }
  for (LaunchSpec& spec : specs) {
    spec.command = e.job.command;
    spec.modeled_s = modeled_s;
  }
  if (power_) power_->SetBusy(e.devices, true, 1, now);
  metrics_->placements.Get({e.device_type})->Inc();
  Event("place", e.name,
        fmt::format("attempt {} on {} x{}", e.attempt, e.device_type, e.devices.size()));
  logger_->Info("placed", {{"job", e.name},
                           {"attempt", e.attempt},
                           {"device_type", e.device_type},
                           {"devices", e.devices.size()}});
}

void Service::Running(JobId job, double now) {
  Entry& e = *by_slot_[job.value()];
  e.state = "running";
  if (e.started_s < 0) e.started_s = WallNow();
  // Progress counts from now, when the backend says it runs.
  scheduler_->SetProgress(e.slot, scheduler_->SpeedNow(e.slot), now);
  if (auto st = Persist(e); !st.ok()) {
    logger_->Error("storing a start failed", {{"job", e.name}, {"error", st.message()}});
  }
  // Every part runs; the node of its first device names where (a gang's first node).
  const std::string node =
      e.devices.empty() ? "" : cluster_.node(cluster_.device(e.devices.front()).node).name;
  logger_->Info("started", {{"job", e.name}, {"attempt", e.attempt}, {"node", node}});
}

double Service::WorkKept(JobId job, double now) {
  (void)now;
  return by_slot_[job.value()]->done_work;  // what the store has of its progress
}

bool Service::AttemptOver(JobId job, drive::AttemptEnd end, const std::string& message,
                          double now) {
  (void)now;
  Entry& e = *by_slot_[job.value()];
  if (end == drive::AttemptEnd::kStartFailed) {
    e.message = message;
    logger_->Warn("start failed", {{"job", e.name}, {"attempt", e.attempt}, {"why", message}});
  } else if (end == drive::AttemptEnd::kLost) {
    e.message = message;
    logger_->Warn("an attempt was lost",
                  {{"job", e.name}, {"attempt", e.attempt}, {"why", message}});
    Event("lost", e.name, message);
  }
  return true;  // nothing is held after the exit: the checkpoint is the job's to write
}

void Service::Requeued(JobId job, drive::AttemptEnd end, const std::string& why, double now) {
  (void)why, (void)now;
  Entry& e = *by_slot_[job.value()];
  if (end == drive::AttemptEnd::kPreempted) {
    // Back in the queue with the progress the scheduler booked.
    e.done_work = scheduler_->record(e.slot).done_work;
    Event("stopped", e.name, fmt::format("attempt {}", e.attempt));
  }
  MarkQueued(e);
}

void Service::MarkQueued(Entry& e) {
  e.state = "queued";
  e.stop = StopReason::kNone;
  if (power_) power_->SetBusy(e.devices, false, 1, SchedNow());
  demand_changed_ = true;
  e.devices.clear();
  e.device_type.clear();
  if (auto st = Persist(e); !st.ok()) {
    logger_->Error("storing a requeue failed", {{"job", e.name}, {"error", st.message()}});
  }
}

void Service::Ended(JobId job, drive::JobEnd how, std::optional<int> exit_status,
                    const std::string& message, double now) {
  Entry& e = *by_slot_[job.value()];
  const std::string state = how == drive::JobEnd::kCompleted ? "completed"
                            : how == drive::JobEnd::kFailed  ? "failed"
                                                             : "cancelled";
  attempts_->Untrack(e.slot);
  slots_.Release(e.slot);
  by_slot_[e.slot.value()] = nullptr;
  e.slot = JobId();
  e.state = state;
  e.stop = StopReason::kNone;
  e.ended_s = WallNow();
  e.exit_status = exit_status;
  e.message = message;
  if (power_) power_->SetBusy(e.devices, false, 1, now);
  demand_changed_ = true;
  e.devices.clear();
  backend_->Forget(e.name);
  if (auto st = Persist(e); !st.ok()) {
    // Kept in memory, where its end is known, rather than shown from a stale row.
    logger_->Error("storing a job's end failed", {{"job", e.name}, {"error", st.message()}});
  } else {
    ended_.push_back(e.name);
  }
  ended_counts_[how == drive::JobEnd::kCompleted ? 0 : how == drive::JobEnd::kFailed ? 1 : 2]++;
  metrics_->ended.Get({state})->Inc();
  logger_->Info("ended", {{"job", e.name}, {"state", state}, {"message", message}});
}

void Service::DecideAndAct(double now) {
  if (!scheduler_->HasWork()) return;
  const auto t0 = std::chrono::steady_clock::now();
  const sched::Decision d = scheduler_->Decide(now);
  metrics_->decision_s.Get({})->Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  attempts_->Apply(d, now);
}

void Service::SetNodeUp(const std::string& node_name, bool up, double now) {
  auto node = cluster_.FindNode(node_name);
  if (!node) {
    logger_->Warn("backend reported an unknown node", {{"node", node_name}});
    return;
  }
  if (power_) {
    const power::NodePower& p = power_->node(node->value());
    if (up && p.state == power::NodeState::kBooting) {
      if (power_->OnBooted(node->value(), p.boot_attempt, now)) {
        power_in_flight_.erase(node->value());
        scheduler_->SetNodeOn(*node, true);
        StoreNode(*node, "up: boot completed");
        demand_changed_ = true;
      }
      return;
    }
    if (p.state == power::NodeState::kSuspending || p.state == power::NodeState::kOff ||
        p.state == power::NodeState::kDown) {
      // Down: the power-off hetsched asked for. Up while hetsched holds it off: not ours to
      // use until it is resumed through hetsched.
      if (up) logger_->Warn("a node hetsched powered off reports up", {{"node", node_name}});
      return;
    }
  }
  const model::Node& n = cluster_.node(*node);
  if (up) {
    down_nodes_.erase(node_name);
  } else {
    down_nodes_.insert(node_name);
  }
  for (int32_t i = 0; i < n.device_count; ++i) {
    const DeviceId d(n.first_device.value() + i);
    if (up) {
      scheduler_->SetDeviceUp(d);
      continue;
    }
    // Lost with the node (drive::Attempts: not a start failure; its other nodes are stopped).
    if (auto job = scheduler_->JobOn(d)) {
      attempts_->Lose(*job, fmt::format("node {} went down", node_name), now);
    }
    scheduler_->SetDeviceDown(d);
  }
  Event("node", node_name, up ? "up" : "down");
  logger_->Warn(up ? "node up" : "node down", {{"node", node_name}});
}

std::string Service::PowerStateOf(model::NodeId node) const {
  if (scheduler_->state().NodeRemoved(node)) return "removed";
  if (!power_) return scheduler_->state().NodeOn(node) ? "on" : "off";
  const power::NodeState s = power_->node(node.value()).state;
  return power::IsOn(s) ? "on" : std::string(power::NodeStateName(s));
}

StoredNode Service::StoredNodeOf(model::NodeId node) const {
  StoredNode s;
  s.name = cluster_.node(node).name;
  s.drained = scheduler_->state().NodeDrained(node);
  s.power_state = PowerStateOf(node);
  s.since_s = WallNow();
  if (auto it = node_spec_.find(node.value()); it != node_spec_.end()) s.spec = it->second;
  return s;
}

void Service::StoreNode(model::NodeId node, const std::string& event_detail,
                        const std::string& event_kind) {
  const StoredNode s = StoredNodeOf(node);
  if (auto st = store_->PutNode(s); !st.ok()) {
    logger_->Error("storing a node's state failed", {{"node", s.name}, {"error", st.message()}});
  }
  if (!event_detail.empty()) Event(event_kind, s.name, event_detail);
}

util::Result<model::NodeId> Service::AddNodeFromSpec(const std::string& name,
                                                     const std::string& spec, double now) {
  const auto bad = [&](const std::string& why) {
    return util::Status::InvalidArgument(fmt::format("node {}: {}", name, why));
  };
  if (cluster_.FindNode(name)) return bad("a node of that name exists");
  const nlohmann::json j = nlohmann::json::parse(spec, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.value("devices", nlohmann::json()).is_array()) {
    return bad("its description is not {\"rack\", \"devices\": [[TYPE, COUNT], ...]}");
  }
  std::vector<model::DeviceTypeId> types;
  for (const nlohmann::json& d : j["devices"]) {
    if (!d.is_array() || d.size() != 2 || !d[0].is_string() || !d[1].is_number_integer() ||
        d[1].get<int64_t>() < 1 || d[1].get<int64_t>() > 4096) {
      return bad("devices entries are [TYPE, COUNT] with COUNT from 1 to 4096");
    }
    const auto type = cluster_.catalog.FindId(d[0].get<std::string>());
    if (!type)
      return bad(fmt::format("device type '{}' is not in the catalog", d[0].get<std::string>()));
    types.insert(types.end(), d[1].get<int64_t>(), *type);
  }
  if (types.empty()) return bad("it has no devices");
  const std::string rack = j.value("rack", std::string());
  std::optional<model::RackId> rack_id;
  if (!rack.empty()) {
    rack_id = cluster_.FindRack(rack);
    if (!rack_id) return bad(fmt::format("rack '{}' is not in the cluster", rack));
  }
  // Links, memory, power and boot times as its rack's first node (else the cluster's first):
  // the backend describes devices, not the rest.
  model::Node node;
  for (const model::Node& n : cluster_.nodes) {
    if (!rack_id || n.rack == *rack_id) {
      node = n;
      break;
    }
  }
  node.name = name;
  node.rack = rack_id.value_or(model::RackId());
  node.islands.clear();
  node.pcie_switches.clear();
  node.labels.clear();
  const model::NodeId id = model::AddNode(cluster_, std::move(node), types);
  scheduler_->AddNode(id);
  if (power_) power_->AddNode(id.value(), now);
  node_spec_[id.value()] = spec;
  return id;
}

void Service::RemoveNode(model::NodeId node, double now) {
  const model::Node& n = cluster_.node(node);
  for (int32_t i = 0; i < n.device_count; ++i) {
    auto job = scheduler_->JobOn(DeviceId(n.first_device.value() + i));
    if (!job) continue;
    // Its other nodes, if any, are stopped; it waits again with the progress it had.
    attempts_->Lose(*job, fmt::format("node {} left the cluster; requeued", n.name), now);
  }
  if (auto st = scheduler_->RemoveNode(node); !st.ok()) {
    logger_->Error("removing a node failed", {{"node", n.name}, {"error", st.message()}});
    return;
  }
  // Never suspended or woken again: it is not there.
  if (power_ && !power_->AssumeOff(node.value(), now)) {
    logger_->Warn("a node that left was not idle in the power books", {{"node", n.name}});
  }
  StoreNode(node, "left the cluster", "node");
  logger_->Warn("node left the cluster", {{"node", n.name}});
}

void Service::SyncNodes(const std::vector<BackendNode>& listed, double now) {
  std::set<std::string> names;
  for (const BackendNode& b : listed) {
    names.insert(b.name);
    if (!b.problem.empty() && !cluster_.FindNode(b.name)) {
      // Said once per problem, not at every reconciliation.
      if (node_problems_.insert(b.name + ": " + b.problem).second) {
        logger_->Error("a node the backend lists cannot join",
                       {{"node", b.name}, {"error", b.problem}});
        Event("node", b.name, "cannot join: " + b.problem);
      }
      continue;
    }
    if (auto known = cluster_.FindNode(b.name)) {
      // Down in the backend while the daemon counts on it (a failure reported while the daemon
      // was down): its attempts are lost and nothing starts there until it is reported up.
      if (!b.up && down_nodes_.count(b.name) == 0 && !scheduler_->state().NodeRemoved(*known) &&
          (!power_ || power::IsOn(power_->node(known->value()).state))) {
        SetNodeUp(b.name, false, now);
      }
      // A drain done in the backend (e.g. scontrol) is followed when it changes, so that one
      // done through the API stays until the backend's own changes.
      auto [it, first] = listed_drained_.emplace(b.name, b.drained);
      if ((first && b.drained) || (!first && it->second != b.drained)) {
        it->second = b.drained;
        if (!scheduler_->state().NodeRemoved(*known) &&
            scheduler_->state().NodeDrained(*known) != b.drained) {
          scheduler_->SetNodeDrained(*known, b.drained);
          StoreNode(*known, b.drained ? "drained in the backend" : "undrained in the backend",
                    b.drained ? "drain" : "undrain");
          logger_->Info(b.drained ? "node drained in the backend" : "node undrained in the backend",
                        {{"node", b.name}});
          demand_changed_ = true;
        }
      }
      continue;
    }
    if (b.devices.empty()) continue;
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& [type, count] : b.devices) devices.push_back({type, count});
    const std::string spec = nlohmann::json{{"rack", b.rack}, {"devices", devices}}.dump();
    auto id = AddNodeFromSpec(b.name, spec, now);
    if (!id.ok()) {
      logger_->Warn("a node the backend lists cannot join", {{"error", id.status().message()}});
      continue;
    }
    StoreNode(*id, fmt::format("joined the cluster: {}", spec), "node");
    logger_->Info("node joined the cluster", {{"node", b.name}});
    demand_changed_ = true;
  }
  // Gone: listed before, or joined at run time (a backend that comes back after a restart
  // without it lost it), and not listed now.
  std::set<std::string> known = listed_nodes_;
  for (const auto& [id, spec] : node_spec_) known.insert(cluster_.nodes[id].name);
  for (const std::string& name : known) {
    if (names.count(name) != 0) continue;
    auto node = cluster_.FindNode(name);
    if (node && !scheduler_->state().NodeRemoved(*node)) RemoveNode(*node, now);
  }
  listed_nodes_ = std::move(names);
}

void Service::ManagePower(double now) {
  power_->Advance(now);
  // Suspends whose shutdown time passed are off; boots past ResumeTimeout are down (final,
  // as Slurm marks them).
  // Only nodes in flight have deadlines: the O(nodes) scan is skipped on most passes.
  if (!power_in_flight_.empty() && power_->NextDeadline() <= now) {
    std::vector<int32_t> suspending;
    for (int32_t n : power_in_flight_) {
      if (power_->node(n).state == power::NodeState::kSuspending) suspending.push_back(n);
    }
    for (int32_t n : power_->Expire(now)) {
      StoreNode(model::NodeId(n), fmt::format("down: not up within the resume timeout ({} s)",
                                              options_.power.resume_timeout_s));
      logger_->Warn("node did not come up; down", {{"node", cluster_.nodes[n].name}});
      power_in_flight_.erase(n);
    }
    for (int32_t n : suspending) {
      if (power_->node(n).state != power::NodeState::kOff) continue;
      StoreNode(model::NodeId(n), "off");
      power_in_flight_.erase(n);
    }
  }
  if (!power_->suspends()) return;
  const double wall = WallNow();
  const bool due =
      now >= next_power_check_s_ || (demand_changed_ && wall - last_power_wall_s_ >= 1.0);
  if (!due) return;
  last_power_wall_s_ = wall;
  demand_changed_ = false;
  const power::PowerCommands c = power_->Decide(drive::DemandOf(*scheduler_), now);
  next_power_check_s_ = c.next_check_s;
  if (c.suspend.empty() && c.resume.empty()) return;
  // Write ahead: the node rows and events are on disk before the backend hears of them.
  const bool grouped = store_->Begin().ok();
  for (const power::NodeCommand& cmd : c.suspend) {
    StoreNode(model::NodeId(cmd.node), "suspend requested");
  }
  for (const power::NodeCommand& cmd : c.resume) {
    StoreNode(model::NodeId(cmd.node), "resume requested");
  }
  if (grouped) {
    if (auto st = store_->Commit(); !st.ok()) {
      logger_->Error("storing power actions failed", {{"error", st.message()}});
    }
  }
  for (const power::NodeCommand& cmd : c.suspend) {
    const std::string& name = cluster_.nodes[cmd.node].name;
    scheduler_->SetNodeOn(model::NodeId(cmd.node), false);
    power_in_flight_.insert(cmd.node);
    logger_->Info("suspending node", {{"node", name}});
    if (auto st = backend_->SetNodePower(name, false); !st.ok()) {
      logger_->Error("suspend failed", {{"node", name}, {"error", st.message()}});
    }
  }
  for (const power::NodeCommand& cmd : c.resume) {
    const std::string& name = cluster_.nodes[cmd.node].name;
    power_in_flight_.insert(cmd.node);
    logger_->Info("resuming node", {{"node", name}});
    if (auto st = backend_->SetNodePower(name, true); !st.ok()) {
      logger_->Error("resume failed", {{"node", name}, {"error", st.message()}});
    }
  }
}

void Service::Reconcile(double now) {
  // What runs before the events are applied: an attempt that ends in between is reported by
  // its event, so only attempts missing from both were lost.
  SyncNodes(backend_->ListNodes(), now);
  std::set<std::pair<std::string, int64_t>> running;
  for (const BackendJob& j : backend_->ListJobs()) running.insert({j.job, j.attempt});
  attempts_->Poll(now);
  for (const auto& [key, attempt] : running) {
    auto it = jobs_.find(key);
    const bool current = it != jobs_.end() && !StateEnded(it->second->state) &&
                         it->second->attempt == attempt && it->second->state != "queued";
    if (current) continue;
    // A process the daemon does not account for: an attempt it already gave up, or a job it
    // never knew. Either would hold devices the scheduler believes free.
    Event("repair", key, fmt::format("stopped stray attempt {}", attempt));
    logger_->Warn("stopping a stray attempt", {{"job", key}, {"attempt", attempt}});
    if (auto st = backend_->Stop(key, attempt, options_.stop_grace_s); !st.ok()) {
      logger_->Error("stopping a stray attempt failed", {{"job", key}, {"error", st.message()}});
    }
  }
  for (Entry* e : by_slot_) {
    // Live jobs only are in by_slot_; queued ones hold nothing to lose.
    if (e == nullptr || e->state == "queued") continue;
    if (running.count({e->name, e->attempt}) != 0) continue;
    // The backend does not know it: it vanished (a lost node, a restart of the backend).
    Event("repair", e->name, fmt::format("attempt {} vanished; requeued", e->attempt));
    logger_->Warn("an attempt vanished; requeued", {{"job", e->name}, {"attempt", e->attempt}});
    attempts_->Lose(e->slot, fmt::format("attempt {} vanished from the backend", e->attempt), now);
  }
}

util::Status Service::Recover() {
  wall_start_s_ = WallNow();
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
  ASSIGN_OR_RETURN(auto stored, store_->LoadJobs(/*include_ended=*/false));
  const double now = SchedNow();
  int64_t recovered = 0;
  for (StoredJob& s : stored) {
    auto e = std::make_unique<Entry>();
    e->name = s.name;
    e->spec_json = s.spec_json;
    e->idempotency_key = s.idempotency_key;
    e->state = s.state;
    e->submitted_s = s.submitted_s;
    e->started_s = s.started_s;
    e->ended_s = s.ended_s;
    e->exit_status = s.exit_status;
    e->device_type = s.device_type;
    e->attempt = s.attempt;
    e->preemptions = s.preemptions;
    e->done_work = s.done_work;
    e->message = s.message;
    e->stop = s.stop_reason == "cancel"    ? StopReason::kCancel
              : s.stop_reason == "preempt" ? StopReason::kPreempt
                                           : StopReason::kNone;
    auto req = ParseJobRequest(s.spec_json, cluster_.catalog);
    if (!req.ok()) {
      return util::Status::Internal(fmt::format("{}: stored job '{}' no longer parses: {}",
                                                store_->path(), s.name, req.status().message()));
    }
    e->job = std::move(req->job);
    e->job.arrival_s = s.arrival_s;
    e->slot = *slots_.Acquire(e->name);
    e->job.id = e->slot;
    // The configuration's classes as they are now (the stored request is the one submitted).
    model::io::ApplyJobClass(options_.classes, e->job);
    const sched::Admission a = scheduler_->Submit(e->job, now);
    if (!a.accepted) {
      slots_.Release(e->slot);
      e->slot = JobId();
      e->state = "failed";
      e->ended_s = WallNow();
      e->message = fmt::format("cannot run on this cluster after a restart: {}", a.reason);
      RETURN_IF_ERROR(Persist(*e));
      continue;
    }
    if (by_slot_.size() <= static_cast<size_t>(e->slot.value())) {
      by_slot_.resize(e->slot.value() + 1);
    }
    by_slot_[e->slot.value()] = e.get();
    attempts_->Track(e->slot, e->name, e->job.time_limit_s, e->attempt);
    if (e->state != "queued") {
      // It held devices when the daemon stopped: they are its again until reconciliation
      // shows whether it still runs.
      for (int32_t d : s.devices) e->devices.push_back(DeviceId(d));
      if (auto st = scheduler_->Adopt(e->slot, e->devices, e->done_work, now); !st.ok()) {
        logger_->Warn("a recovered placement does not fit; requeued",
                      {{"job", e->name}, {"error", st.message()}});
        e->state = "queued";
        e->devices.clear();
      } else {
        // A job that was stopping stays adopted until its exit comes (then it is requeued).
        // Its time limit counts the run time from here: the store keeps none from before.
        attempts_->Adopt(e->slot, e->attempt, e->devices, e->state != "starting",
                         e->stop == StopReason::kCancel    ? drive::StopCause::kCancel
                         : e->stop == StopReason::kPreempt ? drive::StopCause::kPreempt
                                                           : drive::StopCause::kNone,
                         /*ran_s=*/0, now);
        if (e->state == "running") {
          scheduler_->SetProgress(e->slot, scheduler_->SpeedNow(e->slot), now);
        } else {
          scheduler_->SetProgress(e->slot, 0, now);
        }
      }
    }
    if (!s.policy_state.empty()) {
      if (auto history = ParseHistory(s.policy_state)) {
        scheduler_->RestoreHistory(e->slot, *history, now);
      } else {
        logger_->Warn("a job's stored policy state does not read; it starts without history",
                      {{"job", e->name}});
      }
    }
    ++recovered;
    jobs_[e->name] = std::move(e);
  }
  // Stops asked for before the restart may not have reached the backend.
  for (Entry* e : by_slot_) {
    if (e != nullptr && e->state == "stopping") StopAttempt(*e);
  }
  last_reconcile_wall_s_ = WallNow();
  RETURN_IF_ERROR(store_->Begin());
  Reconcile(now);
  RETURN_IF_ERROR(store_->Commit());
  ForgetEnded();
  logger_->Info("recovered", {{"live_jobs", recovered}, {"scheduler_s", now}});
  return util::Status::Ok();
}

util::Status Service::Persist(const Entry& e, bool insert) {
  StoredJob s;
  s.name = e.name;
  s.spec_json = e.spec_json;
  s.idempotency_key = e.idempotency_key;
  s.state = e.state;
  s.submitted_s = e.submitted_s;
  s.arrival_s = e.job.arrival_s;
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
  s.stop_reason = e.stop == StopReason::kCancel    ? "cancel"
                  : e.stop == StopReason::kPreempt ? "preempt"
                                                   : "";
  s.message = e.message;
  if (e.slot.valid()) s.policy_state = HistoryJson(scheduler_->History(e.slot, SchedNow()));
  return insert ? store_->InsertJob(s) : store_->UpdateJob(s);
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

JobView Service::ViewOf(const Entry& e) const {
  JobView v;
  v.name = e.name;
  v.state = e.state;
  v.kind = std::string(model::JobKindName(e.job.kind));
  v.gang = e.job.gang_size;
  for (const auto& s : e.job.stacks) v.stacks.push_back(model::ToString(s));
  v.submitted_s = e.submitted_s;
  v.started_s = e.started_s;
  v.ended_s = e.ended_s;
  v.exit_status = e.exit_status;
  v.device_type = e.device_type;
  for (DeviceId d : e.devices) {
    const model::Device& dev = cluster_.device(d);
    v.devices.push_back(fmt::format("{}/{}", cluster_.node(dev.node).name, dev.local_index));
  }
  v.preemptions = e.preemptions;
  v.attempt = e.attempt;
  v.message = e.message;
  v.has_command = !e.job.command.empty();
  if (e.slot.valid()) v.attained_s = scheduler_->record(e.slot).AttainedAt(SchedNow());
  return v;
}

JobView Service::ViewOfStored(const StoredJob& s) const {
  JobView v;
  v.name = s.name;
  v.state = s.state;
  // What the job asked for is in its submission; a stored spec parsed when it was accepted.
  if (auto req = ParseJobRequest(s.spec_json, cluster_.catalog); req.ok()) {
    v.kind = std::string(model::JobKindName(req->job.kind));
    v.gang = req->job.gang_size;
    for (const auto& stack : req->job.stacks) v.stacks.push_back(model::ToString(stack));
    v.has_command = !req->job.command.empty();
  }
  v.submitted_s = s.submitted_s;
  v.started_s = s.started_s;
  v.ended_s = s.ended_s;
  v.exit_status = s.exit_status;
  v.device_type = s.device_type;
  v.preemptions = s.preemptions;
  v.attempt = s.attempt;
  v.message = s.message;
  return v;
}

util::Result<JobView> Service::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  auto it = jobs_.find(name);
  if (it != jobs_.end()) return ViewOf(*it->second);
  ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
  if (!ended) return util::Status::NotFound(fmt::format("no job '{}'", name));
  return ViewOfStored(*ended);
}

util::Result<std::vector<JobView>> Service::List(const JobFilter& filter) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  // Live jobs first (from memory), then ended ones (from the store), each group in submission
  // order: a limit cuts ended jobs first.
  std::vector<const Entry*> picked;
  const bool want_live = filter.state.empty() || !StateEnded(filter.state);
  if (want_live) {
    for (const auto& [name, e] : jobs_) {
      if (StateEnded(e->state)) continue;
      if (filter.state.empty() || e->state == filter.state) picked.push_back(e.get());
    }
  }
  // Only the first `limit` are ordered: the dashboard asks for 200 of possibly 100,000s while
  // the control loop waits for the lock.
  const size_t keep = std::min(filter.limit, picked.size());
  std::partial_sort(picked.begin(), picked.begin() + keep, picked.end(),
                    [](const Entry* a, const Entry* b) {
                      return std::tie(a->submitted_s, a->name) < std::tie(b->submitted_s, b->name);
                    });
  picked.resize(keep);
  std::vector<JobView> out;
  out.reserve(picked.size());
  for (const Entry* e : picked) out.push_back(ViewOf(*e));
  if (out.size() < filter.limit && (filter.state.empty() || StateEnded(filter.state))) {
    ASSIGN_OR_RETURN(auto ended, store_->EndedJobs(filter.state, filter.limit - out.size()));
    for (const StoredJob& s : ended) out.push_back(ViewOfStored(s));
  }
  return out;
}

util::Result<std::string> Service::Why(const std::string& name) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  auto it = jobs_.find(name);
  if (it == jobs_.end()) {
    ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
    if (!ended) return util::Status::NotFound(fmt::format("no job '{}'", name));
    return fmt::format("{}{}", ended->state, ended->message.empty() ? "" : ": " + ended->message);
  }
  const Entry& e = *it->second;
  if (e.state == "queued") return scheduler_->WhyWaiting(e.slot, SchedNow());
  if (StateEnded(e.state)) {
    return fmt::format("{}{}", e.state, e.message.empty() ? "" : ": " + e.message);
  }
  const JobView v = ViewOf(e);
  return fmt::format("{} on {} x{} ({}), attempt {}", e.state, e.device_type, e.devices.size(),
                     fmt::join(v.devices, ", "), e.attempt);
}

NodeView Service::NodeViewOf(model::NodeId id) const {
  const model::Node& n = cluster_.node(id);
  const sched::ClusterState& state = scheduler_->state();
  NodeView v;
  v.name = n.name;
  if (n.rack.valid()) v.rack = cluster_.racks[n.rack.value()].name;
  v.drained = state.NodeDrained(id);
  v.power_state = PowerStateOf(id);
  if (power_) v.power_since_s = power_->node(id.value()).since_s;
  for (int32_t i = 0; i < n.device_count; ++i) {
    const DeviceId d(n.first_device.value() + i);
    DeviceView dv;
    dv.index = cluster_.device(d).local_index;
    dv.type = cluster_.catalog.Get(cluster_.device(d).type).name;
    if (auto job = scheduler_->JobOn(d); job && by_slot_[job->value()] != nullptr) {
      dv.state = "busy";
      dv.job = by_slot_[job->value()]->name;
    } else if (!state.IsUp(d)) {
      dv.state = state.Offers(id) ? "down" : (v.drained ? "drained" : "off");
    } else {
      dv.state = "free";
    }
    v.devices.push_back(std::move(dv));
  }
  return v;
}

util::Result<std::vector<NodeView>> Service::Nodes() {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  std::vector<NodeView> out;
  for (size_t i = 0; i < cluster_.nodes.size(); ++i) {
    const model::NodeId id(static_cast<int32_t>(i));
    if (!scheduler_->state().NodeRemoved(id)) out.push_back(NodeViewOf(id));
  }
  return out;
}

util::Result<NodeView> Service::SetDrained(const std::string& node_name, bool drained) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  auto node = cluster_.FindNode(node_name);
  if (!node) return util::Status::NotFound(fmt::format("no node '{}'", node_name));
  if (scheduler_->state().NodeRemoved(*node)) {
    return util::Status::NotFound(fmt::format("node '{}' left the cluster", node_name));
  }
  StoredNode s = StoredNodeOf(*node);
  s.drained = drained;
  RETURN_IF_ERROR(store_->PutNode(s));
  scheduler_->SetNodeDrained(*node, drained);
  Event(drained ? "drain" : "undrain", node_name, "");
  logger_->Info(drained ? "node drained" : "node undrained", {{"node", node_name}});
  wake_.notify_one();
  return NodeViewOf(*node);
}

util::Result<Service::NodeHistory> Service::Node(const std::string& node_name, int limit) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  auto node = cluster_.FindNode(node_name);
  if (!node) return util::Status::NotFound(fmt::format("no node '{}'", node_name));
  NodeHistory out;
  out.node = NodeViewOf(*node);
  ASSIGN_OR_RETURN(out.events, store_->Events(node_name, limit));
  return out;
}

util::Result<ClusterView> Service::Cluster() {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyOrUnavailable());
  ClusterView v;
  const sched::ClusterState& state = scheduler_->state();
  std::vector<int32_t> row_of_type(state.type_count(), -1);  // index in v.types
  for (int32_t t = 0; t < state.type_count(); ++t) {
    const model::DeviceTypeId type(t);
    const int32_t total = state.TotalOfType(type);
    if (total == 0) continue;
    TypeSummary s;
    s.type = cluster_.catalog.Get(type).name;
    s.capacity = total;
    s.offered = state.UpOfType(type);
    row_of_type[t] = static_cast<int32_t>(v.types.size());
    v.types.push_back(s);
  }
  for (size_t i = 0; i < cluster_.devices.size(); ++i) {
    const DeviceId d(static_cast<int32_t>(i));
    const model::DeviceTypeId type = cluster_.device(d).type;
    // Devices of nodes that left are not capacity (their type may have no row at all).
    if (state.NodeRemoved(cluster_.device(d).node)) continue;
    const model::DeviceType& dt = cluster_.catalog.Get(type);
    TypeSummary& row = v.types[row_of_type[type.value()]];
    const bool busy = scheduler_->JobOn(d).has_value();
    if (busy) row.used++;
    if (state.NodeOn(cluster_.device(d).node)) row.power_w += busy ? dt.peak_watts : dt.idle_watts;
  }
  for (TypeSummary& s : v.types) {
    s.utilization = s.offered > 0 ? static_cast<double>(s.used) / s.offered : 0;
    metrics_->devices_used.Get({s.type})->Set(s.used);
    metrics_->devices_offered.Get({s.type})->Set(s.offered);
    metrics_->power_w.Get({s.type})->Set(s.power_w);
  }
  for (const auto& [name, e] : jobs_) {
    if (e->state == "queued")
      ++v.queued;
    else if (e->state == "starting")
      ++v.starting;
    else if (e->state == "running")
      ++v.running;
    else if (e->state == "stopping")
      ++v.stopping;
  }
  v.completed = ended_counts_[0];
  v.failed = ended_counts_[1];
  v.cancelled = ended_counts_[2];
  if (power_) {
    power_->Advance(SchedNow());
    const power::EnergyMeter& meter = power_->meter();
    v.power_w = meter.watts();
    v.energy_j = meter.joules();
    v.power_transitions = power_->transitions();
    std::map<std::string, int64_t> by_state;
    for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
      const std::string state = PowerStateOf(model::NodeId(static_cast<int32_t>(n)));
      ++by_state[state];
      if (state == "suspending" || state == "off" || state == "booting") ++v.nodes_off;
    }
    for (const char* state : {"on", "suspending", "off", "booting", "down"}) {
      metrics_->nodes.Get({state})->Set(static_cast<double>(by_state[state]));
    }
    metrics_->draw_w.Get({})->Set(v.power_w);
    metrics_->energy_j.Get({})->Inc(v.energy_j - energy_reported_j_);
    energy_reported_j_ = v.energy_j;
  }
  for (const auto& [state_name, count] :
       std::initializer_list<std::pair<const char*, int64_t>>{{"queued", v.queued},
                                                              {"starting", v.starting},
                                                              {"running", v.running},
                                                              {"stopping", v.stopping}}) {
    metrics_->jobs.Get({state_name})->Set(static_cast<double>(count));
  }
  v.now_s = SchedNow();
  v.policy = scheduler_->policy().name();
  v.backend = backend_->name();
  return v;
}

util::Result<std::vector<WhatIfResult>> Service::WhatIf(const std::string& policy) {
  if (!options_.analysis.simulate) return util::Status::Internal("what-if: no simulator given");
  model::Workload workload;
  int64_t skipped = 0;
  std::string own_policy;
  {
    std::lock_guard lock(mu_);
    RETURN_IF_ERROR(ReadyOrUnavailable());
    const double now = SchedNow();
    own_policy = options_.policy;
    for (const Entry* e : by_slot_) {
      if (e == nullptr) continue;
      const sched::JobRecord& r = scheduler_->record(e->slot);
      const double done = e->state == "queued" ? e->done_work : r.DoneAt(now);
      double remaining = e->job.work > 0 ? e->job.work - done : 0;
      if (remaining <= 0 && r.ref_speed > 0) {
        // No true size: what the user said, in steps on the fastest type.
        const double said = e->job.estimate_s.value_or(e->job.time_limit_s.value_or(0));
        remaining = said * r.ref_speed - done;
      }
      if (!(remaining > 0)) {
        ++skipped;
        continue;
      }
      if (static_cast<int64_t>(workload.jobs.size()) >= kMaxWhatIfJobs) {
        return util::Status::InvalidArgument(fmt::format(
            "a what-if simulates at most {} live jobs; there are more", kMaxWhatIfJobs));
      }
      model::Job job = e->job;
      job.id = model::JobId(static_cast<int32_t>(workload.jobs.size()));
      job.arrival_s = 0;
      job.deadline_s.reset();
      job.work = remaining;
      workload.jobs.push_back(std::move(job));
    }
  }
  std::vector<WhatIfResult> out;
  for (const std::string& p : {own_policy, policy}) {
    auto r = options_.analysis.simulate(cluster_, workload, p, options_.scheduler);
    if (!r.ok()) return r.status();
    WhatIfResult w;
    w.policy = r->policy;
    w.jobs = static_cast<int64_t>(workload.jobs.size());
    w.skipped = skipped;
    w.makespan_s = r->makespan_s;
    w.avg_jct_s = r->avg_jct_s;
    w.p99_jct_s = r->p99_jct_s;
    w.preemptions = r->preemptions;
    out.push_back(std::move(w));
  }
  return out;
}

util::Result<nlohmann::ordered_json> Service::Plan(const PlanRequest& request) {
  if (!options_.analysis.model_plan_json || !options_.analysis.dag_schedule_json) {
    return util::Status::Internal("plan: no plan writer given");
  }
  model::Cluster part;
  int64_t nodes_total = 0;
  {
    std::lock_guard lock(mu_);
    RETURN_IF_ERROR(ReadyOrUnavailable());
    const sched::ClusterState& state = scheduler_->state();
    std::vector<model::NodeId> chosen;
    nodes_total = static_cast<int64_t>(cluster_.nodes.size());
    for (size_t i = 0; i < cluster_.nodes.size(); ++i) {
      const model::NodeId id(static_cast<int32_t>(i));
      bool usable = !state.NodeRemoved(id) && (request.nodes == "all" || state.Offers(id));
      const model::Node& n = cluster_.node(id);
      for (int32_t k = 0; usable && request.nodes != "all" && k < n.device_count; ++k) {
        const DeviceId d(n.first_device.value() + k);
        usable = state.IsUp(d) && !scheduler_->JobOn(d).has_value();
      }
      if (usable) chosen.push_back(id);
    }
    part = model::SubCluster(cluster_, chosen);
  }
  nlohmann::ordered_json out;
  out["nodes"] = {{"mode", request.nodes},
                  {"used", part.nodes.size()},
                  {"of", nodes_total},
                  {"devices", part.devices.size()}};
  const auto infeasible = [&](const std::string& reason) {
    out["feasible"] = false;
    out["reason"] = reason;
    return out;
  };
  if (part.devices.empty()) {
    return infeasible(request.nodes == "idle"
                          ? "no node is idle (powered, undrained, every device up and free); "
                            "\"nodes\": \"all\" plans on the whole cluster"
                          : "the cluster has no devices");
  }
  if (!request.model.empty()) {
    auto spec = model::MakePreset(request.model, request.preset);
    if (!spec.ok()) return util::Status::InvalidArgument(spec.status().message());
    auto p = plan::PlanModelPartition(*spec, part, request.partition);
    if (p.status().code() == util::StatusCode::kInfeasible) {
      return infeasible(p.status().message());
    }
    if (!p.ok()) return util::Status::InvalidArgument(p.status().message());
    out["feasible"] = true;
    out["plan"] = options_.analysis.model_plan_json(*spec, part, *p);
    return out;
  }
  if (part.devices.size() > kMaxDagDevices) {
    return util::Status::InvalidArgument(
        fmt::format("a DAG is planned over at most {} devices; the nodes considered have {}",
                    kMaxDagDevices, part.devices.size()));
  }
  // Costs may be keyed by any device type of the cluster: types with no device considered get
  // a stand-in processor, dropped after reading, so a busy type is "cannot run here", not an
  // unknown key.
  model::io::DagReadOptions read;
  for (size_t d = 0; d < part.devices.size(); ++d) {
    const model::Device& dev = part.devices[d];
    read.processors.push_back({fmt::format("{}/{}", part.node(dev.node).name, dev.local_index),
                               part.type_of(DeviceId(static_cast<int32_t>(d))).name});
  }
  const size_t considered = read.processors.size();
  std::set<std::string> present;
  for (const model::DagProcessor& p : read.processors) present.insert(p.type);
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) {
    const std::string& name = cluster_.catalog.Get(type).name;
    if (present.insert(name).second) read.processors.push_back({"(no " + name + " idle)", name});
  }
  ASSIGN_OR_RETURN(model::TaskGraph read_graph,
                   model::io::ParseDagJson(request.dag_json, "request body: dag", read));
  model::TaskGraph graph;
  graph.name = read_graph.name;
  graph.bandwidth = read_graph.bandwidth;
  graph.edges = read_graph.edges;
  graph.processors.assign(read_graph.processors.begin(),
                          read_graph.processors.begin() + static_cast<std::ptrdiff_t>(considered));
  for (model::DagTask& t : read_graph.tasks) {
    t.cost.resize(considered);
    if (std::none_of(t.cost.begin(), t.cost.end(),
                     [](double c) { return c != model::kCannotRun; })) {
      return infeasible(
          fmt::format("task {} can run on none of the {} devices considered", t.name, considered));
    }
    graph.tasks.push_back(std::move(t));
  }
  RETURN_IF_ERROR(graph.Finalize());
  const model::Topology topology(part);
  plan::TransferModel transfer =
      plan::TransferModel::FromLinks(graph.num_processors(), [&](int32_t a, int32_t b) {
        const model::Path path = topology.Between(DeviceId(a), DeviceId(b));
        return plan::TransferModel::Link{path.latency_s, path.bandwidth};
      });
  const plan::DagProblem problem(graph, std::move(transfer));
  const plan::Schedule schedule = request.algo == "cpop"   ? plan::Cpop(problem)
                                  : request.algo == "peft" ? plan::Peft(problem)
                                                           : plan::Heft(problem);
  if (auto st = plan::ValidateSchedule(problem, schedule); !st.ok()) {
    return util::Status::Internal(
        fmt::format("{} produced an invalid schedule: {}", request.algo, st.message()));
  }
  out["feasible"] = true;
  out["plan"] = options_.analysis.dag_schedule_json(request.algo, schedule, problem);
  return out;
}

}  // namespace hetsched::svc
