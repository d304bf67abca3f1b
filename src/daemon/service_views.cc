#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon/job_request.h"
#include "daemon/service.h"
#include "daemon/service_internal.h"
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

// The nodes a plan request may use: every node left in the cluster ("all"), or the idle ones
// (offered, every device up and free).
std::vector<model::NodeId> NodesToPlanOn(const model::Cluster& cluster,
                                         const sched::Scheduler& scheduler,
                                         const std::string& mode) {
  const sched::ClusterState& state = scheduler.state();
  std::vector<model::NodeId> chosen;
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const model::NodeId id(static_cast<int32_t>(i));
    bool usable = !state.NodeRemoved(id) && (mode == "all" || state.Offers(id));
    const model::Node& n = cluster.node(id);
    for (int32_t k = 0; usable && mode != "all" && k < n.device_count; ++k) {
      const DeviceId d(n.first_device.value() + k);
      usable = state.IsUp(d) && !scheduler.JobOn(d).has_value();
    }
    if (usable) chosen.push_back(id);
  }
  return chosen;
}

// The DAG of `dag_json` over the devices of `part`, one processor each. Costs may be keyed by
// any device type of `cluster`: types with no device in `part` get a stand-in processor,
// dropped after reading, so a busy type is "cannot run here", not an unknown key.
// `*cannot_run` names a task that can run on none of the devices (the graph is then partial).
util::Result<model::TaskGraph> DagOver(const model::Cluster& part, const model::Cluster& cluster,
                                       const std::string& dag_json, std::string* cannot_run) {
  model::io::DagReadOptions read;
  for (size_t d = 0; d < part.devices.size(); ++d) {
    const model::Device& dev = part.devices[d];
    read.processors.push_back({fmt::format("{}/{}", part.node(dev.node).name, dev.local_index),
                               part.type_of(DeviceId(static_cast<int32_t>(d))).name});
  }
  const size_t considered = read.processors.size();
  std::set<std::string> present;
  for (const model::DagProcessor& p : read.processors) present.insert(p.type);
  for (const auto& [type, count] : cluster.DeviceTypeCounts()) {
    const std::string& name = cluster.catalog.Get(type).name;
    if (present.insert(name).second) read.processors.push_back({"(no " + name + " idle)", name});
  }
  ASSIGN_OR_RETURN(model::TaskGraph read_graph,
                   model::io::ParseDagJson(dag_json, "request body: dag", read));
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
      *cannot_run =
          fmt::format("task {} can run on none of the {} devices considered", t.name, considered);
      return graph;
    }
    graph.tasks.push_back(std::move(t));
  }
  RETURN_IF_ERROR(graph.Finalize());
  return graph;
}

// `graph` scheduled over `part`'s devices and links by `algo` (heft, cpop or peft), as
// hooks.dag_schedule_json shows it.
util::Result<nlohmann::ordered_json> ScheduleDag(const std::string& algo,
                                                 const model::Cluster& part,
                                                 const model::TaskGraph& graph,
                                                 const AnalysisHooks& hooks) {
  const model::Topology topology(part);
  plan::TransferModel transfer =
      plan::TransferModel::FromLinks(graph.num_processors(), [&](int32_t a, int32_t b) {
        const model::Path path = topology.Between(DeviceId(a), DeviceId(b));
        return plan::TransferModel::Link{path.latency_s, path.bandwidth};
      });
  const plan::DagProblem problem(graph, std::move(transfer));
  const plan::Schedule schedule = algo == "cpop"   ? plan::Cpop(problem)
                                  : algo == "peft" ? plan::Peft(problem)
                                                   : plan::Heft(problem);
  if (auto st = plan::ValidateSchedule(problem, schedule); !st.ok()) {
    return util::Status::Internal(
        fmt::format("{} produced an invalid schedule: {}", algo, st.message()));
  }
  return hooks.dag_schedule_json(algo, schedule, problem);
}

}  // namespace

JobView Service::ViewOf(const Entry& e) const {
  JobView v;
  v.name = e.name;
  v.tenant = e.job->tenant;
  v.state = e.state;
  v.kind = std::string(model::JobKindName(e.job->kind));
  v.gang = e.job->gang_size;
  for (const auto& s : e.job->stacks) v.stacks.push_back(model::ToString(s));
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
  v.has_command = !e.job->command.empty();
  v.preemptible = e.job->preemptible;
  if (e.slot.valid()) v.attained_s = scheduler_->record(e.slot).AttainedAt(SchedNow());
  return v;
}

JobView Service::ViewOfStored(const StoredJob& s) const {
  JobView v;
  v.name = s.name;
  v.state = s.state;
  // What the job asked for is in its submission; a stored spec parsed when it was accepted.
  if (auto req = ParseStoredJobRequest(s.spec_json, cluster_.catalog); req.ok()) {
    v.tenant = req->job.tenant;
    v.kind = std::string(model::JobKindName(req->job.kind));
    v.gang = req->job.gang_size;
    for (const auto& stack : req->job.stacks) v.stacks.push_back(model::ToString(stack));
    v.has_command = !req->job.command.empty();
    v.preemptible = req->job.preemptible;
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

util::Result<JobView> Service::Get(const std::string& name, const TenantScope& scope) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  auto it = jobs_.find(name);
  if (it != jobs_.end() && InScope(it->second->job->tenant, scope)) return ViewOf(*it->second);
  if (it != jobs_.end()) return NoJob(name);
  ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
  if (!ended) return NoJob(name);
  JobView v = ViewOfStored(*ended);
  if (!InScope(v.tenant, scope)) return NoJob(name);
  return v;
}

util::Result<std::vector<JobView>> Service::JobsLiveAt(const JobFilter& filter, double as_of_s,
                                                       size_t limit) {
  const auto after_position = [&](const SubmissionKey& key) {
    return !filter.after || key > filter.after->last;
  };
  std::vector<const Entry*> live;
  if (!filter.state || !IsEnded(*filter.state)) {
    for (const auto& [name, e] : jobs_) {
      if (IsEnded(e->state) || (filter.state && e->state != *filter.state)) continue;
      if (!InScope(e->job->tenant, filter.tenant)) continue;
      if (after_position({e->submitted_s, e->name})) live.push_back(e.get());
    }
  }
  // Only the first `limit` are ordered: the dashboard asks for 200 of possibly 100,000s while
  // the control loop waits for the lock.
  const size_t keep = std::min(limit, live.size());
  std::partial_sort(live.begin(), live.begin() + keep, live.end(),
                    [](const Entry* a, const Entry* b) {
                      return std::tie(a->submitted_s, a->name) < std::tie(b->submitted_s, b->name);
                    });
  std::vector<JobView> out;
  for (size_t i = 0; i < keep; ++i) out.push_back(ViewOf(*live[i]));
  if (filter.state && !IsEnded(*filter.state)) return out;
  // Jobs that were live at as_of_s and have ended since are in the store.
  EndedJobsQuery since{filter.state, as_of_s, /*ended_by_as_of=*/false,
                       std::nullopt, limit,   filter.tenant};
  if (filter.after) since.after = filter.after->last;
  ASSIGN_OR_RETURN(auto ended, store_->EndedJobs(since));
  std::vector<JobView> merged;
  merged.reserve(out.size() + ended.size());
  auto stored = ended.begin();
  for (JobView& v : out) {
    for (; stored != ended.end() &&
           SubmissionKey{stored->submitted_s, stored->name} < SubmissionKey{v.submitted_s, v.name};
         ++stored) {
      merged.push_back(ViewOfStored(*stored));
    }
    merged.push_back(std::move(v));
  }
  for (; stored != ended.end(); ++stored) merged.push_back(ViewOfStored(*stored));
  if (merged.size() > limit) merged.resize(limit);
  return merged;
}

util::Result<JobPage> Service::List(const JobFilter& filter) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  const double as_of_s = filter.after ? filter.after->as_of_s : WallNow();
  // One job more than the page holds tells whether more remain.
  const size_t wanted = filter.limit + 1;
  std::vector<JobView> jobs;
  if (!filter.after || !filter.after->in_ended_part) {
    ASSIGN_OR_RETURN(jobs, JobsLiveAt(filter, as_of_s, wanted));
  }
  if (jobs.size() < wanted && (!filter.state || IsEnded(*filter.state))) {
    EndedJobsQuery before{filter.state,         as_of_s,      /*ended_by_as_of=*/true, std::nullopt,
                          wanted - jobs.size(), filter.tenant};
    if (filter.after && filter.after->in_ended_part) before.after = filter.after->last;
    ASSIGN_OR_RETURN(auto ended, store_->EndedJobs(before));
    for (const StoredJob& s : ended) jobs.push_back(ViewOfStored(s));
  }
  JobPage page;
  if (jobs.size() > filter.limit) {
    jobs.resize(filter.limit);
    const JobView& last = jobs.back();
    page.next = JobPosition{
        as_of_s, IsEnded(last.state) && last.ended_s <= as_of_s, {last.submitted_s, last.name}};
  }
  page.jobs = std::move(jobs);
  return page;
}

util::Result<std::string> Service::Why(const std::string& name, const TenantScope& scope) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  auto it = jobs_.find(name);
  if (it != jobs_.end() && !InScope(it->second->job->tenant, scope)) return NoJob(name);
  if (it == jobs_.end()) {
    ASSIGN_OR_RETURN(auto ended, StoredEnded(name));
    if (!ended || !InScope(ViewOfStored(*ended).tenant, scope)) return NoJob(name);
    return fmt::format("{}{}", JobStateName(ended->state),
                       ended->message.empty() ? "" : ": " + ended->message);
  }
  const Entry& e = *it->second;
  if (e.state == JobState::kQueued) return scheduler_->WhyWaiting(e.slot, SchedNow());
  if (IsEnded(e.state)) {
    return fmt::format("{}{}", JobStateName(e.state), e.message.empty() ? "" : ": " + e.message);
  }
  const JobView v = ViewOf(e);
  return fmt::format("{} on {} x{} ({}), attempt {}", JobStateName(e.state), e.device_type,
                     e.devices.size(), fmt::join(v.devices, ", "), e.attempt);
}

NodeView Service::NodeViewOf(model::NodeId id, const TenantScope& scope) const {
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
      const Entry& holder = *by_slot_[job->value()];
      if (InScope(holder.job->tenant, scope)) dv.job = holder.name;
    } else if (!state.IsUp(d)) {
      dv.state = state.Offers(id) ? "down" : (v.drained ? "drained" : "off");
    } else {
      dv.state = "free";
    }
    v.devices.push_back(std::move(dv));
  }
  return v;
}

util::Result<NodePage> Service::Nodes(size_t limit, std::optional<int32_t> after,
                                      const TenantScope& scope) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  NodePage page;
  const size_t first = after ? static_cast<size_t>(std::max<int64_t>(*after, -1) + 1) : 0;
  int32_t last = -1;
  for (size_t i = first; i < cluster_.nodes.size(); ++i) {
    const model::NodeId id(static_cast<int32_t>(i));
    if (scheduler_->state().NodeRemoved(id)) continue;
    if (page.nodes.size() == limit) {
      page.next_after = last;
      break;
    }
    page.nodes.push_back(NodeViewOf(id, scope));
    last = id.value();
  }
  return page;
}

util::Result<NodeView> Service::SetDrained(const std::string& node_name, bool drained) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
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

util::Result<Service::NodeHistory> Service::Node(const std::string& node_name, int limit,
                                                 const TenantScope& scope) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  auto node = cluster_.FindNode(node_name);
  if (!node) return util::Status::NotFound(fmt::format("no node '{}'", node_name));
  NodeHistory out;
  out.node = NodeViewOf(*node, scope);
  // One event more than asked tells whether older ones remain.
  ASSIGN_OR_RETURN(out.events, store_->Events(node_name, limit + 1));
  out.older_events = out.events.size() > static_cast<size_t>(limit);
  if (out.older_events) out.events.erase(out.events.begin());
  return out;
}

util::Result<ClusterView> Service::Cluster() {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  return ClusterNow();
}

util::Status Service::RefreshGauges() {
  RETURN_IF_ERROR(Health());
  std::unique_lock lock(mu_, std::defer_lock);
  if (!lock.try_lock()) {
    if (!first_pass_done_) {
      return util::Status::Unavailable(
          "the first scheduling pass after recovery holds the state: gauges as recovered");
    }
    lock.lock();
  }
  RETURN_IF_ERROR(Health());
  ClusterNow();
  return util::Status::Ok();
}

ClusterView Service::ClusterNow() {
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
  // Ended ones not yet forgotten are in ended_counts_, not in live_counts_.
  for (size_t i = 0; i < v.jobs.size(); ++i) v.jobs[i] = ended_counts_[i] + live_counts_[i];
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
  for (const JobState state : kJobStates) {
    if (IsEnded(state)) continue;  // hetsched_jobs_ended_total counts those
    metrics_->jobs.Get({std::string(JobStateName(state))})
        ->Set(static_cast<double>(v.jobs_in(state)));
  }
  RefreshTenantGauges();
  v.now_s = SchedNow();
  v.policy = scheduler_->policy().name();
  v.backend = backend_->name();
  return v;
}

void Service::SampleHistory(double wall) {
  if (!(options_.history_every_s > 0)) return;
  if (last_sample_wall_s_ && wall - *last_sample_wall_s_ < options_.history_every_s) return;
  last_sample_wall_s_ = wall;
  const ClusterView v = ClusterNow();
  StoredSample sample;
  sample.at_s = wall;
  sample.power_w = v.power_w;
  sample.jobs_queued = v.jobs_in(JobState::kQueued);
  sample.jobs_running = v.jobs_in(JobState::kRunning);
  for (const TypeSummary& t : v.types) sample.types.push_back({t.type, t.used, t.offered});
  if (auto st = store_->AppendSample(sample, options_.history_kept); !st.ok()) {
    logger_->Error("storing a sample of the cluster failed", {{"error", st.message()}});
  }
}

util::Result<HistoryPage> Service::History(double since_s, std::optional<int64_t> after,
                                           size_t limit) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  // One more than asked tells whether more remain.
  ASSIGN_OR_RETURN(std::vector<StoredSample> samples,
                   store_->Samples(since_s, after.value_or(0), limit + 1));
  HistoryPage page;
  if (samples.size() > limit) {
    samples.resize(limit);
    page.next_after = samples.back().seq;
  }
  page.samples = std::move(samples);
  return page;
}

util::Result<std::vector<WhatIfResult>> Service::WhatIf(const std::string& policy) {
  if (!options_.analysis.simulate) return util::Status::Internal("what-if: no simulator given");
  model::Workload workload;
  int64_t skipped = 0;
  std::string own_policy;
  {
    ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
    const double now = SchedNow();
    own_policy = options_.policy;
    for (const Entry* e : by_slot_) {
      if (e == nullptr) continue;
      const sched::JobRecord& r = scheduler_->record(e->slot);
      const double done = e->state == JobState::kQueued ? e->done_work : r.DoneAt(now);
      double remaining = e->work > 0 ? e->work - done : 0;
      if (remaining <= 0 && r.ref_speed > 0) {
        // No true size: what the user said, in steps on the fastest type.
        const double said = e->job->estimate_s.value_or(e->job->time_limit_s.value_or(0));
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
      model::Job job = *e->job;
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
  size_t nodes_total = 0;
  {
    // Nodes may join at run time.
    ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
    part = model::SubCluster(cluster_, NodesToPlanOn(cluster_, *scheduler_, request.nodes));
    nodes_total = cluster_.nodes.size();
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
  std::string cannot_run;
  ASSIGN_OR_RETURN(model::TaskGraph graph, DagOver(part, cluster_, request.dag_json, &cannot_run));
  if (!cannot_run.empty()) return infeasible(cannot_run);
  ASSIGN_OR_RETURN(auto plan, ScheduleDag(request.algo, part, graph, options_.analysis));
  out["feasible"] = true;
  out["plan"] = std::move(plan);
  return out;
}

}  // namespace hetsched::svc
