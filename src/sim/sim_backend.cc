#include "sim/sim_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "model/software_stack.h"

namespace hetsched::sim {

using exec::BackendEvent;
using exec::BackendEventKind;

SimBackend::SimBackend(const model::Cluster& cluster, const model::Workload& workload,
                       EventQueue& queue, SimBackendOptions options)
    : cluster_(cluster),
      workload_(workload),
      queue_(queue),
      options_(std::move(options)),
      runs_(workload.jobs.size()),
      nodes_(cluster.nodes.size()) {
  for (const std::string& name : options_.boot_failure_nodes) {
    if (auto n = cluster.FindNode(name)) nodes_[n->value()].boots = false;
  }
  for (const SimBackendOptions::StartFailureWindow& w : options_.start_failures) {
    if (auto n = cluster.FindNode(w.node))
      nodes_[n->value()].failing.push_back({w.from_s, w.until_s});
  }
}

std::string SimBackend::JobName(int32_t id) { return std::to_string(id); }

std::optional<int32_t> SimBackend::JobIdOf(const std::string& name) {
  int32_t id = -1;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end != name.data() + name.size() || id < 0) return std::nullopt;
  return id;
}

std::optional<int32_t> SimBackend::FindJob(const std::string& job) const {
  const std::optional<int32_t> id = JobIdOf(job);
  if (!id || static_cast<size_t>(*id) >= runs_.size()) return std::nullopt;
  return id;
}

SimBackend::Run* SimBackend::Running(const std::string& job, int64_t attempt, int32_t* id) {
  const std::optional<int32_t> found = FindJob(job);
  if (!found) return nullptr;
  Run& run = runs_[*found];
  if (!run.active || run.attempt != attempt) return nullptr;
  *id = *found;
  return &run;
}

void SimBackend::Schedule(int32_t id, double at_s, EventKind kind) {
  Run& run = runs_[id];
  ++run.token;
  run.pending_at = kNever;
  if (!std::isfinite(at_s)) return;
  run.pending_at = ToMicros(at_s);
  queue_.Push(run.pending_at, kind, id, run.token);
}

void SimBackend::Report(BackendEventKind kind, int32_t id, const Run& run, int32_t node) {
  BackendEvent e;
  e.kind = kind;
  e.job = JobName(id);
  e.attempt = run.attempt;
  e.node = cluster_.nodes[node].name;
  if (kind == BackendEventKind::kExited) {
    e.exit_status = run.exit_status;
    e.stopped = run.stopping;
  } else if (kind == BackendEventKind::kStartFailed) {
    e.message = run.failure;
  }
  ready_.push_back(std::move(e));
}

void SimBackend::Exit(int32_t id, bool stopped) {
  Run& run = runs_[id];
  run.stopping = stopped;
  for (int32_t node : run.nodes) Report(BackendEventKind::kExited, id, run, node);
  run.active = false;
  run.nodes.clear();
}

util::Status SimBackend::Start(const exec::LaunchSpec& spec) {
  const std::optional<int32_t> id = FindJob(spec.job);
  if (!id) return util::Status::NotFound(fmt::format("sim backend: no job '{}'", spec.job));
  const std::optional<model::NodeId> node = cluster_.FindNode(spec.node);
  if (!node) return util::Status::NotFound(fmt::format("sim backend: no node '{}'", spec.node));
  const int32_t n = node->value();
  if (nodes_[n].power != Power::kOn) {
    return util::Status::Infeasible(fmt::format("sim backend: node '{}' is not on", spec.node));
  }
  Run& run = runs_[*id];
  if (run.active) {
    if (run.attempt != spec.attempt ||
        std::find(run.nodes.begin(), run.nodes.end(), n) != run.nodes.end()) {
      return util::Status::InvalidArgument(
          fmt::format("sim backend: attempt {} of job {} runs on '{}' already", run.attempt,
                      spec.job, cluster_.nodes[run.nodes.front()].name));
    }
    // Another node of the same gang: it runs (or fails) with the first part.
    run.nodes.push_back(n);
    if (run.failure.empty()) Report(BackendEventKind::kStarted, *id, run, n);
    return util::Status::Ok();
  }
  const model::DeviceType* type = cluster_.catalog.Find(spec.device_type);
  if (type == nullptr) {
    return util::Status::NotFound(
        fmt::format("sim backend: no device type '{}'", spec.device_type));
  }
  run.attempt = spec.attempt;
  run.active = true;
  run.stopping = false;
  run.exit_status = 0;
  run.nodes = {n};
  run.failure.clear();
  const model::Job& job = workload_.jobs[*id];
  for (const auto& [from_s, until_s] : nodes_[n].failing) {
    if (now_s_ >= from_s && now_s_ < until_s) {
      run.failure = fmt::format("injected start failure on {}", spec.node);
      Schedule(*id, now_s_, EventKind::kAttemptStartFailure);
      return util::Status::Ok();
    }
  }
  if (!job.stacks.empty() && !model::AnySatisfied(type->stacks, job.stacks)) {
    // Its build finds no stack it can use: it crashes while starting.
    run.failure = fmt::format("{} has none of the stacks the job runs on", type->name);
    Schedule(*id, now_s_ + options_.compat_startup_s, EventKind::kAttemptStartFailure);
    return util::Status::Ok();
  }
  Report(BackendEventKind::kStarted, *id, run, n);
  const double since_s = now_s_ + spec.startup_s;
  Schedule(*id, since_s + spec.modeled_s, EventKind::kAttemptEnd);
  return util::Status::Ok();
}

util::Status SimBackend::Stop(const std::string& job, int64_t attempt, double grace_s) {
  int32_t id = -1;
  Run* run = Running(job, attempt, &id);
  if (run == nullptr) return util::Status::Ok();
  const double save_s = std::min(options_.checkpoint_save_s, std::max(0.0, grace_s));
  const int status = grace_s < options_.checkpoint_save_s ? 128 + 9 : 0;  // SIGKILL
  if (save_s <= 0) {
    ++run->token;  // its pending event, if any, is stale
    run->pending_at = kNever;
    run->exit_status = status;
    Exit(id, /*stopped=*/true);
    return util::Status::Ok();
  }
  if (run->stopping && run->pending_at <= ToMicros(now_s_ + save_s)) return util::Status::Ok();
  run->stopping = true;
  run->exit_status = status;
  Schedule(id, now_s_ + save_s, EventKind::kAttemptEnd);
  return util::Status::Ok();
}

void SimBackend::MoveEnd(const std::string& job, int64_t attempt, double end_s) {
  int32_t id = -1;
  Run* run = Running(job, attempt, &id);
  if (run == nullptr || run->stopping) return;
  run->failure.clear();
  Schedule(id, end_s, EventKind::kAttemptEnd);
}

util::Status SimBackend::SetNodePower(const std::string& node, bool on) {
  const std::optional<model::NodeId> found = cluster_.FindNode(node);
  if (!found) return util::Status::NotFound(fmt::format("sim backend: no node '{}'", node));
  const int32_t n = found->value();
  NodeRun& nr = nodes_[n];
  const bool heading_on = nr.power == Power::kOn || nr.power == Power::kBooting;
  if (heading_on == on) return util::Status::Ok();
  ++nr.token;  // a switch still under way is superseded
  const model::Node& spec = cluster_.nodes[n];
  if (!on) {
    nr.power = Power::kShuttingDown;
    queue_.Push(ToMicros(now_s_ + spec.shutdown_s), EventKind::kNodeOff, n, nr.token);
  } else {
    nr.power = Power::kBooting;
    if (nr.boots) queue_.Push(ToMicros(now_s_ + spec.boot_s), EventKind::kNodeOn, n, nr.token);
  }
  return util::Status::Ok();
}

bool SimBackend::Fire(const Event& e) {
  switch (e.kind) {
    case EventKind::kAttemptEnd:
    case EventKind::kAttemptStartFailure: {
      Run& run = runs_[e.target];
      if (!run.active || run.token != e.generation) return true;  // superseded
      run.pending_at = kNever;
      if (e.kind == EventKind::kAttemptEnd) {
        Exit(e.target, run.stopping);
        return true;
      }
      for (int32_t node : run.nodes) Report(BackendEventKind::kStartFailed, e.target, run, node);
      run.active = false;
      run.nodes.clear();
      return true;
    }
    case EventKind::kNodeOff:
    case EventKind::kNodeOn: {
      NodeRun& nr = nodes_[e.target];
      if (nr.token != e.generation) return true;
      const bool on = e.kind == EventKind::kNodeOn;
      nr.power = on ? Power::kOn : Power::kOff;
      BackendEvent ev;
      ev.kind = on ? BackendEventKind::kNodeUp : BackendEventKind::kNodeDown;
      ev.node = cluster_.nodes[e.target].name;
      ready_.push_back(std::move(ev));
      return true;
    }
    default:
      return false;
  }
}

std::vector<exec::BackendNode> SimBackend::ListNodes() {
  std::vector<exec::BackendNode> out;
  out.reserve(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) {
    out.push_back({cluster_.nodes[n].name, nodes_[n].power == Power::kOn, {}, "", "", false, ""});
  }
  return out;
}

std::vector<exec::BackendJob> SimBackend::ListJobs() {
  std::vector<exec::BackendJob> out;
  for (size_t id = 0; id < runs_.size(); ++id) {
    const Run& run = runs_[id];
    if (!run.active) continue;
    for (int32_t node : run.nodes) {
      out.push_back({JobName(static_cast<int32_t>(id)), run.attempt, cluster_.nodes[node].name});
    }
  }
  return out;
}

std::vector<BackendEvent> SimBackend::Poll() {
  std::vector<BackendEvent> out = std::move(ready_);
  ready_.clear();
  return out;
}

}  // namespace hetsched::sim
