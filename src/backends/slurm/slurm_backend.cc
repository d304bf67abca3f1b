#include "backends/slurm/slurm_backend.h"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace hetsched::svc {
namespace {

constexpr char kOwnPrefix[] = "hetsched:";               // job names of hetsched's own jobs
constexpr char kAdoptedPrefix[] = "slurm-";              // the daemon's names of sbatch jobs
constexpr char kAttemptComment[] = "hetsched:attempt=";  // admin comment of placed sbatch jobs
// Put before an Ascend job's command. Slurm's gres/gpu sets CUDA_VISIBLE_DEVICES,
// ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL and SLURM_JOB_GPUS to the GPUs it allocated (seen on
// the test bed's Slurm 22.05), but not ASCEND_RT_VISIBLE_DEVICES, which the Ascend runtime reads.
constexpr char kAscendVisibility[] =
    "if [ -n \"${CUDA_VISIBLE_DEVICES+set}\" ]; then "
    "export ASCEND_RT_VISIBLE_DEVICES=\"$CUDA_VISIBLE_DEVICES\"; fi; ";
// How long a placement waits for Slurm to requeue a job whose last run it is ending.
constexpr std::chrono::seconds kRequeueWait{60};

// "hetsched:JOB:ATTEMPT" -> (JOB, ATTEMPT); false for other names.
bool ParseOwnName(const std::string& name, std::string* job, int64_t* attempt) {
  if (name.rfind(kOwnPrefix, 0) != 0) return false;
  const size_t colon = name.rfind(':');
  if (colon <= sizeof(kOwnPrefix) - 1) return false;
  *job = name.substr(sizeof(kOwnPrefix) - 1, colon - (sizeof(kOwnPrefix) - 1));
  char* end = nullptr;
  *attempt = std::strtoll(name.c_str() + colon + 1, &end, 10);
  return end != nullptr && *end == '\0' && *attempt > 0 && !job->empty();
}

int64_t AttemptOfComment(const std::string& admin_comment) {
  if (admin_comment.rfind(kAttemptComment, 0) != 0) return 0;
  return std::strtoll(admin_comment.c_str() + sizeof(kAttemptComment) - 1, nullptr, 10);
}

// A shell word: 'text' with every ' written as '\''.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The exit status as the daemon counts it: the code, or 128 + the signal number.
int ExitStatusOf(const slurm::Job& j) {
  if ((j.exit_status & 0x7f) != 0) return 128 + (j.exit_status & 0x7f);
  return (j.exit_status >> 8) & 0xff;
}

// The job's environment: sbatch passes its own on (--export=ALL), so HETSCHED_* are set in
// sbatch's; values may hold commas, which --export=NAME=VALUE lists cannot.
std::map<std::string, std::string> SbatchEnvironment(const LaunchSpec& spec) {
  std::map<std::string, std::string> env = spec.env;
  env["HETSCHED_JOB"] = spec.job;
  env["HETSCHED_ATTEMPT"] = std::to_string(spec.attempt);
  env["HETSCHED_NODE"] = spec.node;
  env["HETSCHED_DEVICE_TYPE"] = spec.device_type;
  env["HETSCHED_DEVICES"] = fmt::format("{}", fmt::join(spec.node_devices, ","));
  return env;
}

}  // namespace

SlurmBackend::SlurmBackend(SlurmBackendOptions options) : options_(std::move(options)) {
  if (!options_.conf.empty()) env_["SLURM_CONF"] = options_.conf;
}

util::Result<std::unique_ptr<SlurmBackend>> SlurmBackend::Create(SlurmBackendOptions options) {
  // Slurm's tools retry a missing config for a minute before they say so.
  if (!options.conf.empty() && access(options.conf.c_str(), R_OK) != 0) {
    return util::Status::InvalidArgument(
        fmt::format("slurm.conf '{}': {} (expected the cluster's slurm.conf)", options.conf,
                    std::strerror(errno)));
  }
  std::unique_ptr<SlurmBackend> b(new SlurmBackend(std::move(options)));
  for (const char* tool : {"sbatch", "scontrol", "scancel", "sinfo", "squeue"}) {
    const std::string path = b->ToolPath(tool);
    if (path.empty() || access(path.c_str(), X_OK) != 0) {
      return util::Status::InvalidArgument(fmt::format(
          "the Slurm backend needs {} and it is not in {} (install slurm-client, or set "
          "slurm.bin_dir)",
          tool, b->options_.bin_dir.empty() ? "PATH" : b->options_.bin_dir));
    }
  }
  auto first = b->TakeSnapshot();
  if (!first.ok()) {
    return util::Status::Unavailable(
        fmt::format("Slurm cannot be reached{}: {}",
                    b->options_.conf.empty() ? "" : " (SLURM_CONF=" + b->options_.conf + ")",
                    first.status().message()));
  }
  b->Install(std::move(first).value());
  b->Recover();
  // The reader leaves SIGINT and SIGTERM to the thread that waits for them (hetsched serve's
  // sigwait): a thread that left them unblocked could take one, whose default action ends the
  // process without its shutdown. It inherits the mask in place while it is created.
  sigset_t stop, before;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, &before);
  b->reader_ = std::thread([raw = b.get()] { raw->ReadLoop(); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return b;
}

SlurmBackend::~SlurmBackend() {
  ReleasePlaced();  // what was placed runs, as the daemon recorded it
  {
    std::lock_guard lock(read_mu_);
    stopping_ = true;
  }
  read_wake_.notify_all();
  if (reader_.joinable()) reader_.join();
}

util::Result<util::CommandResult> SlurmBackend::Run(
    const std::string& tool, const std::vector<std::string>& args,
    const std::map<std::string, std::string>& extra_env) const {
  util::CommandOptions o;
  o.timeout_s = options_.command_timeout_s;
  o.env = env_;
  for (const auto& [k, v] : extra_env) o.env[k] = v;
  o.capture_stderr = true;
  o.max_output = 512u << 20;  // squeue --json of 100,000s of jobs
  return util::RunCommand(ToolPath(tool), args, o);
}

std::string SlurmBackend::ToolPath(const std::string& tool) const {
  if (!options_.bin_dir.empty()) return options_.bin_dir + "/" + tool;
  const char* path = std::getenv("PATH");
  return util::FindExecutable(tool, path != nullptr ? path : "");
}

bool SlurmBackend::Managed(const std::string& partition) const {
  if (options_.partitions.empty()) return true;
  return std::find(options_.partitions.begin(), options_.partitions.end(), partition) !=
         options_.partitions.end();
}

util::Result<SlurmBackend::Snapshot> SlurmBackend::TakeSnapshot() const {
  Snapshot snap;
  snap.taken_at = std::chrono::steady_clock::now();
  // A controller that does not answer makes sinfo and squeue --json exit 0 with errors in
  // the JSON: those come with the same hint as a failed command.
  const auto with_hint = [&](const util::Status& st) {
    const std::string hint = slurm::UnreachableHint(st.message(), options_.conf);
    return hint.empty() ? st : util::Status::Unavailable(st.message() + "; " + hint);
  };
  auto info = Run("sinfo", {"--json"});
  if (!info.ok() || !info->succeeded()) return Failed("sinfo --json", info);
  auto nodes = slurm::ParseSinfoJson(info->out);
  if (!nodes.ok()) return with_hint(nodes.status());
  snap.nodes = std::move(nodes).value();
  auto queue = Run("squeue", {"--json"});
  if (!queue.ok() || !queue->succeeded()) return Failed("squeue --json", queue);
  auto jobs = slurm::ParseSqueueJson(queue->out);
  if (!jobs.ok()) return with_hint(jobs.status());
  snap.jobs = std::move(jobs).value();
  return snap;
}

util::Status SlurmBackend::Failed(const std::string& command,
                                  const util::Result<util::CommandResult>& result) const {
  const std::string said = result.ok() ? result->Failure() : result.status().message();
  // Failure() keeps the first line; the line that says why is often a later one.
  const std::string hint = slurm::UnreachableHint(result.ok() ? result->err : said, options_.conf);
  return util::Status::Unavailable(
      fmt::format("{}: {}{}", command, said, hint.empty() ? "" : "; " + hint));
}

void SlurmBackend::ReadLoop() {
  const auto interval = std::chrono::duration<double>(options_.poll_interval_s);
  std::unique_lock lock(read_mu_);
  while (!stopping_) {
    lock.unlock();
    auto snap = TakeSnapshot();
    lock.lock();
    if (snap.ok()) {
      newest_ = std::move(snap).value();
      if (!reachable_ && options_.logger != nullptr) options_.logger->Info("Slurm answers again");
      reachable_ = true;
    } else {
      if (reachable_ && options_.logger != nullptr) {
        options_.logger->Error("Slurm cannot be reached; no decisions until it answers",
                               {{"error", snap.status().message()}});
      }
      reachable_ = false;
    }
    read_wake_.wait_for(lock, interval, [this] { return stopping_; });
  }
}

void SlurmBackend::ApplyNewest() {
  std::optional<Snapshot> snap;
  {
    std::lock_guard lock(read_mu_);
    snap.swap(newest_);
  }
  if (!snap) return;
  Install(std::move(*snap));
  ComputeEvents();
}

void SlurmBackend::Install(Snapshot snapshot) {
  taken_at_ = snapshot.taken_at;
  nodes_.clear();
  for (slurm::Node& n : snapshot.nodes) {
    bool managed = false;
    for (const std::string& p : n.partitions) managed = managed || Managed(p);
    if (managed) nodes_.push_back(std::move(n));
  }
  jobs_.clear();
  for (slurm::Job& j : snapshot.jobs) jobs_[j.id] = std::move(j);
}

void SlurmBackend::Recover() {
  for (const auto& [id, j] : jobs_) {
    std::string job;
    int64_t attempt = 0;
    if (ParseOwnName(j.name, &job, &attempt)) {
      Part p;
      p.job = job;
      p.attempt = attempt;
      p.node = j.required_nodes.empty() ? j.nodes : j.required_nodes;
      p.placed_at = taken_at_;
      own_[id] = p;
      continue;
    }
    const int64_t placed = AttemptOfComment(j.admin_comment);
    if (placed == 0 || !Managed(j.partition)) continue;
    Adopted a;
    a.slurm_id = id;
    a.attempt = placed;
    // Held again after a stop: that attempt is over. Otherwise it is placed: it may wait,
    // run, or have ended while no backend watched (its exit comes out of ComputeEvents).
    a.placed = j.priority != 0 || slurm::JobEnded(j.state);
    a.restarts = j.restarts;
    a.node = j.required_nodes;
    a.placed_at = taken_at_;
    adopted_[kAdoptedPrefix + std::to_string(id)] = a;
  }
  // What changed while no backend watched comes out as events now.
  ComputeEvents();
}

void SlurmBackend::Exit(const std::string& job, int64_t attempt, const std::string& node,
                        const slurm::Job* record, bool stopped, const std::string& lost_why) {
  BackendEvent ev;
  ev.kind = BackendEventKind::kExited;
  ev.job = job;
  ev.attempt = attempt;
  ev.node = node;
  ev.stopped = stopped;
  if (record == nullptr || !lost_why.empty()) {
    ev.exit_status = -1;
    ev.message = "lost: " + lost_why;
  } else {
    ev.exit_status = ExitStatusOf(*record);
    if (record->state == "NODE_FAIL" || record->state == "BOOT_FAIL") {
      ev.kind = BackendEventKind::kLost;
      ev.exit_status = -1;
      ev.message = fmt::format("Slurm says {} ({})", record->state, record->reason);
    } else if (record->state != "COMPLETED" && record->state != "FAILED" && ev.exit_status == 0) {
      // Ended by Slurm without a status of its own (TIMEOUT, CANCELLED, PREEMPTED, ...).
      ev.exit_status = 128 + 15;
      ev.message = fmt::format("Slurm says {}", record->state);
    }
  }
  events_.push_back(std::move(ev));
}

void SlurmBackend::ComputeEvents() {
  for (auto& [id, p] : own_) OwnJobEvents(id, p);
  for (auto it = adopted_.begin(); it != adopted_.end();) {
    it = AdoptedJobEvents(it->first, it->second) ? std::next(it) : adopted_.erase(it);
  }
  // Nodes after jobs: a job that completed before its node went down completed; one that
  // Slurm gave up with the node came out above as lost.
  NodeEvents();
  NewJobEvents();
}

void SlurmBackend::OwnJobEvents(int64_t slurm_id, Part& p) {
  if (p.ended || p.since > taken_at_) return;  // this snapshot predates its submission
  auto it = jobs_.find(slurm_id);
  if (it == jobs_.end()) {
    p.ended = true;
    Exit(p.job, p.attempt, p.node, nullptr, p.stop_requested, "Slurm no longer lists the job");
    return;
  }
  const slurm::Job& j = it->second;
  if (!p.started && (j.state == "RUNNING" || j.state == "COMPLETING")) {
    p.started = true;
    events_.push_back({BackendEventKind::kStarted, p.job, p.attempt, p.node, 0, false, "", ""});
  }
  if (slurm::JobEnded(j.state)) {
    p.ended = true;
    Exit(p.job, p.attempt, p.node, &j, p.stop_requested, "");
  } else if (const std::string why = p.started ? "" : NotStarting(j, p.placed_at); !why.empty()) {
    p.ended = true;
    RunOrWarn("scancel", {std::to_string(slurm_id)});
    TakeBack(p.job, p.attempt, p.node, slurm_id, why);
  }
}

std::string SlurmBackend::NotStarting(const slurm::Job& j,
                                      std::chrono::steady_clock::time_point placed_at) const {
  if (j.state != "PENDING") return "";
  if (j.reason == "BadConstraints" || j.reason == "PartitionConfig") {
    return fmt::format("Slurm will not run it: {}", j.reason);
  }
  if (taken_at_ - placed_at <= std::chrono::duration<double>(options_.start_timeout_s)) return "";
  return fmt::format("Slurm did not start it within {} s: pending ({})", options_.start_timeout_s,
                     j.reason);
}

void SlurmBackend::TakeBack(const std::string& job, int64_t attempt, const std::string& node,
                            int64_t slurm_id, const std::string& why) {
  if (options_.logger != nullptr) {
    options_.logger->Warn("Slurm does not start a placed job; placement taken back",
                          {{"job", job},
                           {"attempt", attempt},
                           {"node", node},
                           {"slurm_job", slurm_id},
                           {"why", why}});
  }
  events_.push_back({BackendEventKind::kStartFailed, job, attempt, node, 0, false, why, ""});
}

bool SlurmBackend::AdoptedJobEvents(const std::string& name, Adopted& a) {
  if (a.since > taken_at_) return true;  // hetsched acted on it after this snapshot was taken
  auto jt = jobs_.find(a.slurm_id);
  if (jt == jobs_.end() || (jt->second.state == "CANCELLED" && !a.stop_requested)) {
    // Cancelled in Slurm (or purged): the daemon's job goes with it.
    BackendEvent ev;
    ev.kind = BackendEventKind::kWithdrawn;
    ev.job = name;
    ev.attempt = a.attempt;
    ev.message = jt == jobs_.end() ? "Slurm no longer lists it" : "scancel";
    events_.push_back(std::move(ev));
    return false;
  }
  const slurm::Job& j = jt->second;
  if (!a.placed && !a.deferred && (j.state == "RUNNING" || slurm::JobEnded(j.state))) {
    // Released past hetsched (priority 0 is a user hold), or ended by Slurm while hetsched
    // did not run it: no longer hetsched's to manage.
    events_.push_back(
        {BackendEventKind::kWithdrawn, name, a.attempt, j.nodes, 0, false,
         j.state == "RUNNING"
             ? "started by Slurm without hetsched's placement (released by its owner?)"
             : fmt::format("Slurm ended it ({}) while hetsched did not run it", j.state),
         ""});
    return false;
  }
  if (a.deferred) {
    DeferredEvents(name, a, j);
  } else if (a.placed) {
    PlacedEvents(name, a, j);
  }
  return true;
}

void SlurmBackend::DeferredEvents(const std::string& name, Adopted& a, const slurm::Job& j) {
  if (slurm::JobEnded(j.state) && j.state != "NODE_FAIL" && j.state != "BOOT_FAIL") {
    // The last run ended on its own after all (e.g. its processes outlived their node's
    // slurmd and completed): that is the outcome of the daemon's current attempt.
    a.deferred = false;
    Exit(name, a.attempt, a.node, &j, a.stop_requested, "");
    return;
  }
  const bool pending = j.state == "PENDING";
  if (!pending && std::chrono::steady_clock::now() - a.deferred_since <= kRequeueWait) return;
  a.deferred = false;
  util::Status placed = pending ? Place(a)
                                : util::Status::Unavailable(fmt::format(
                                      "Slurm ended the job ({}) and did not requeue it", j.state));
  if (!placed.ok()) {
    events_.push_back(
        {BackendEventKind::kStartFailed, name, a.attempt, a.node, 0, false, placed.message(), ""});
  }
}

void SlurmBackend::PlacedEvents(const std::string& name, Adopted& a, const slurm::Job& j) {
  if (!a.started && (j.state == "RUNNING" || j.state == "COMPLETING")) {
    a.started = true;
    events_.push_back({BackendEventKind::kStarted, name, a.attempt, a.node, 0, false, "", ""});
  }
  if (slurm::JobEnded(j.state)) {
    a.placed = false;
    Exit(name, a.attempt, a.node, &j, a.stop_requested, "");
  } else if (j.state == "PENDING" && j.restarts > a.restarts) {
    // Requeued: by our stop (requeuehold), or by Slurm when its node failed. Held so that
    // Slurm does not start it again by itself; the daemon places it anew.
    a.placed = false;
    if (j.priority != 0) RunOrWarn("scontrol", {"hold", std::to_string(a.slurm_id)});
    if (a.stop_requested) {
      Exit(name, a.attempt, a.node, &j, /*stopped=*/true, "");
    } else {
      events_.push_back({BackendEventKind::kLost, name, a.attempt, a.node, -1, false,
                         fmt::format("Slurm requeued it ({})", j.reason), ""});
    }
  } else if (const std::string why = a.started ? "" : NotStarting(j, a.placed_at); !why.empty()) {
    // Held again, so that Slurm does not start it where it waits; the daemon places it anew.
    a.placed = false;
    if (j.priority != 0) RunOrWarn("scontrol", {"hold", std::to_string(a.slurm_id)});
    TakeBack(name, a.attempt, a.node, a.slurm_id, why);
  }
}

void SlurmBackend::NodeEvents() {
  for (const slurm::Node& n : nodes_) {
    const bool usable = slurm::NodeUsable(n);
    auto [it, first] = node_usable_.emplace(n.name, usable);
    if (!first && it->second == usable) continue;
    if (first && usable) continue;  // the daemon starts out thinking nodes are up
    it->second = usable;
    BackendEvent ev;
    ev.kind = usable ? BackendEventKind::kNodeUp : BackendEventKind::kNodeDown;
    ev.node = n.name;
    ev.message = n.reason;
    events_.push_back(std::move(ev));
  }
}

void SlurmBackend::NewJobEvents() {
  for (const auto& [id, j] : jobs_) {
    if (j.state != "PENDING" || !Managed(j.partition) || j.name.rfind(kOwnPrefix, 0) == 0) {
      if (j.state == "RUNNING" && Managed(j.partition) && j.name.rfind(kOwnPrefix, 0) != 0 &&
          AttemptOfComment(j.admin_comment) == 0 && warned_.insert(id).second &&
          options_.logger != nullptr) {
        options_.logger->Warn(
            "a Slurm job runs in a managed partition without hetsched placing it (is the "
            "job_submit plugin that holds new jobs installed? docs/slurm.md)",
            {{"slurm_job", id}, {"nodes", j.nodes}});
      }
      continue;
    }
    const std::string name = kAdoptedPrefix + std::to_string(id);
    if (adopted_.count(name) != 0) continue;
    if (j.priority != 0 && AttemptOfComment(j.admin_comment) == 0) {
      if (warned_.insert(id).second && options_.logger != nullptr) {
        options_.logger->Warn(
            "a Slurm job waits unheld in a managed partition: Slurm may start it before "
            "hetsched places it (docs/slurm.md)",
            {{"slurm_job", id}});
      }
    }
    Adopted a;
    a.slurm_id = id;
    a.attempt = AttemptOfComment(j.admin_comment);
    a.restarts = j.restarts;
    adopted_[name] = a;
    BackendEvent ev;
    ev.kind = BackendEventKind::kSubmitted;
    ev.job = name;
    auto spec = slurm::JobRequestOf(j, name, options_.mapping, options_.catalog);
    // Refused (the daemon fails it and cancels it in Slurm): what it cannot describe, and GPUs
    // no one node holds, which the daemon could only place across nodes.
    const std::string too_big = slurm::NoNodeHolds(j, nodes_, options_.mapping, options_.catalog);
    if (!spec.ok()) {
      ev.message = spec.status().message();
    } else if (!too_big.empty()) {
      ev.message = too_big;
    } else {
      ev.spec = *spec;
    }
    events_.push_back(std::move(ev));
  }
}

util::Status SlurmBackend::Start(const LaunchSpec& spec) {
  if (auto it = adopted_.find(spec.job); it != adopted_.end()) {
    return StartAdopted(it->second, spec);
  }
  return StartOwn(spec);
}

util::Status SlurmBackend::StartAdopted(Adopted& a, const LaunchSpec& spec) {
  auto jt = jobs_.find(a.slurm_id);
  const int64_t gpus = jt != jobs_.end() ? slurm::GpusPerNode(jt->second).count : 0;
  if (gpus > 0 && static_cast<int64_t>(spec.node_devices.size()) != gpus) {
    // Slurm would keep it pending on that node for good.
    return util::Status::InvalidArgument(fmt::format(
        "Slurm job {} asks for {} GPUs on one node (--gres counts are per node); this placement "
        "gives it {} on {}",
        a.slurm_id, gpus, spec.node_devices.size(), spec.node));
  }
  a.attempt = spec.attempt;
  a.node = spec.node;
  a.started = false;
  a.stop_requested = false;
  a.deferred = false;
  a.placed = false;  // a last run Slurm still ends is no longer the daemon's attempt
  a.since = std::chrono::steady_clock::now();
  if (jt != jobs_.end() && jt->second.state != "PENDING") {
    // Slurm is still ending its last run (e.g. NODE_FAIL before it requeues the job).
    a.deferred = true;
    a.deferred_since = std::chrono::steady_clock::now();
    return util::Status::Ok();
  }
  return Place(a);
}

util::Status SlurmBackend::Place(Adopted& a) {
  const std::string id = std::to_string(a.slurm_id);
  auto jt = jobs_.find(a.slurm_id);
  if (jt != jobs_.end() && jt->second.priority != 0) {
    // Not held (requeued by Slurm): held first, so that it cannot start before it is pinned.
    RunOrWarn("scontrol", {"hold", id});
  }
  const auto must = [&](const std::vector<std::string>& args) -> util::Status {
    auto r = Run("scontrol", args);
    if (!r.ok() || !r->succeeded()) {
      return Failed(fmt::format("scontrol {}", fmt::join(args, " ")), r);
    }
    return util::Status::Ok();
  };
  RETURN_IF_ERROR(must({"update", "JobId=" + id, "NodeList=" + a.node,
                        fmt::format("AdminComment={}{}", kAttemptComment, a.attempt)}));
  to_release_.push_back({a.slurm_id, "slurm-" + id, a.attempt, a.node});
  a.placed = true;
  a.restarts = jt != jobs_.end() ? jt->second.restarts : 0;
  a.since = a.placed_at = std::chrono::steady_clock::now();
  return util::Status::Ok();
}

util::Status SlurmBackend::StartOwn(const LaunchSpec& spec) {
  if (spec.command.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("job '{}' has no command for Slurm to run", spec.job));
  }
  const slurm::Node* node = nullptr;
  for (const slurm::Node& n : nodes_) {
    if (n.name == spec.node) node = &n;
  }
  if (node == nullptr) {
    return util::Status::InvalidArgument(
        fmt::format("node '{}' is not in a managed Slurm partition", spec.node));
  }
  std::string partition;
  for (const std::string& p : node->partitions) {
    if (partition.empty() && Managed(p)) partition = p;
  }
  ASSIGN_OR_RETURN(const std::string resources, ResourcesOn(*node, spec));
  auto r = Run("sbatch", SbatchArgs(spec, partition, resources), SbatchEnvironment(spec));
  if (!r.ok() || !r->succeeded()) return Failed("sbatch", r);
  char* end = nullptr;
  const int64_t id = std::strtoll(r->out.c_str(), &end, 10);
  if (id <= 0) {
    return util::Status::Unavailable(
        fmt::format("sbatch printed no job id: {}", util::FirstLine(r->out)));
  }
  Part p;
  p.job = spec.job;
  p.attempt = spec.attempt;
  p.node = spec.node;
  p.since = p.placed_at = std::chrono::steady_clock::now();
  own_[id] = p;
  to_release_.push_back({id, spec.job, spec.attempt, spec.node});
  return util::Status::Ok();
}

util::Result<std::string> SlurmBackend::ResourcesOn(const slurm::Node& node,
                                                    const LaunchSpec& spec) const {
  for (const slurm::Gres& g : node.gres) {
    if (g.name != "gpu") continue;
    const auto type = g.type.empty()
                          ? std::optional<std::string>(spec.device_type)
                          : slurm::CatalogTypeFor(g.type, options_.mapping, options_.catalog);
    if (type && *type == spec.device_type) {
      if (static_cast<int64_t>(spec.node_devices.size()) > g.count) {
        return util::Status::InvalidArgument(
            fmt::format("node '{}' has {} GPUs of GRES gpu:{} and the placement asks for {}",
                        spec.node, g.count, g.type, spec.node_devices.size()));
      }
      return fmt::format("--gres=gpu:{}{}", g.type.empty() ? "" : g.type + ":",
                         spec.node_devices.size());
    }
  }
  if (spec.device_type != options_.mapping.cpu_type) {
    return util::Status::InvalidArgument(
        fmt::format("node '{}' has no GRES that maps to {}", spec.node, spec.device_type));
  }
  // A CPU device is a socket: its share of the node's CPUs.
  return fmt::format(
      "--cpus-per-task={}",
      std::max<int64_t>(1, static_cast<int64_t>(node.cpus) *
                               static_cast<int64_t>(spec.node_devices.size()) / node.sockets));
}

std::vector<std::string> SlurmBackend::SbatchArgs(const LaunchSpec& spec,
                                                  const std::string& partition,
                                                  const std::string& resources) const {
  std::string command = "exec";
  if (spec.vendor == "huawei") {
    // The NPUs Slurm allocated, where the Ascend runtime looks for them.
    command = std::string(kAscendVisibility) + command;
  }
  for (const std::string& arg : spec.command) command += " " + ShellQuote(arg);
  const std::string log =
      fmt::format("{}/{}.{}.{}.log", options_.output_dir, spec.job, spec.attempt, spec.node);
  std::vector<std::string> args = {
      "--parsable",
      "--hold",
      "--job-name=" + fmt::format("{}{}:{}", kOwnPrefix, spec.job, spec.attempt),
      "--partition=" + partition,
      "--nodelist=" + spec.node,
      "--nodes=1",
      "--ntasks=1",
      "--no-requeue",
      "--chdir=" + options_.output_dir,
      "--output=" + log,
      resources,
      "--wrap=" + command};
  if (spec.time_limit_s) {
    // The daemon stops the job at its limit (after its grace); Slurm's own limit, a minute
    // later, ends it should the daemon be down then. Slurm reads "minutes:seconds".
    const auto s = static_cast<int64_t>(std::ceil(*spec.time_limit_s)) + 60;
    args.push_back(fmt::format("--time={}:{:02}", s / 60, s % 60));
  }
  return args;
}

void SlurmBackend::ReleasePlaced() {
  if (to_release_.empty()) return;
  std::vector<Release> batch;
  batch.swap(to_release_);
  std::string ids;
  for (const Release& r : batch) ids += (ids.empty() ? "" : ",") + std::to_string(r.slurm_id);
  auto all = Run("scontrol", {"release", ids});
  if (all.ok() && all->succeeded()) return;
  // One by one, to learn which did not take: those starts failed.
  for (const Release& r : batch) {
    const std::string id = std::to_string(r.slurm_id);
    auto one = Run("scontrol", {"release", id});
    if (one.ok() && one->succeeded()) continue;
    if (auto it = own_.find(r.slurm_id); it != own_.end()) {
      it->second.ended = true;
      RunOrWarn("scancel", {id});
    } else if (auto a = adopted_.find(r.job); a != adopted_.end()) {
      a->second.placed = false;
    }
    events_.push_back({BackendEventKind::kStartFailed, r.job, r.attempt, r.node, 0, false,
                       Failed("scontrol release " + id, one).message(), ""});
  }
}

void SlurmBackend::RunOrWarn(const std::string& tool, const std::vector<std::string>& args) const {
  auto r = Run(tool, args);
  if ((r.ok() && r->succeeded()) || options_.logger == nullptr) return;
  options_.logger->Warn(
      "a Slurm command failed",
      {{"error", Failed(fmt::format("{} {}", tool, fmt::join(args, " ")), r).message()}});
}

util::Status SlurmBackend::Stop(const std::string& job, int64_t attempt, double grace_s) {
  (void)grace_s;
  // Not released yet: it stays held (and is cancelled or requeued below).
  std::erase_if(to_release_,
                [&](const Release& r) { return r.job == job && r.attempt == attempt; });
  if (auto it = adopted_.find(job); it != adopted_.end()) {
    Adopted& a = it->second;
    if (a.attempt != attempt || !(a.placed || a.deferred)) return util::Status::Ok();
    a.stop_requested = true;
    a.since = std::chrono::steady_clock::now();
    const std::string id = std::to_string(a.slurm_id);
    auto jt = jobs_.find(a.slurm_id);
    if (a.deferred || (jt != jobs_.end() && jt->second.state == "PENDING")) {
      // Released but not started (or not yet placed): held again, and that attempt is over.
      if (!a.deferred) {
        auto r = Run("scontrol", {"hold", id});
        if (!r.ok()) return Failed("scontrol hold " + id, r);
      }
      a.placed = a.deferred = false;
      BackendEvent ev;
      ev.kind = BackendEventKind::kExited;
      ev.job = job;
      ev.attempt = attempt;
      ev.node = a.node;
      ev.stopped = true;
      events_.push_back(std::move(ev));
      return util::Status::Ok();
    }
    auto r = Run("scontrol", {"requeuehold", id});
    if (!r.ok() || !r->succeeded()) return Failed("scontrol requeuehold " + id, r);
    return util::Status::Ok();
  }
  std::vector<std::string> ids;
  for (auto& [id, p] : own_) {
    if (p.job != job || p.attempt != attempt || p.ended) continue;
    p.stop_requested = true;
    ids.push_back(std::to_string(id));
  }
  if (ids.empty()) return util::Status::Ok();
  auto r = Run("scancel", ids);
  if (!r.ok() || !r->succeeded()) return Failed(fmt::format("scancel {}", fmt::join(ids, " ")), r);
  return util::Status::Ok();
}

void SlurmBackend::Forget(const std::string& job) {
  if (auto it = adopted_.find(job); it != adopted_.end()) {
    auto jt = jobs_.find(it->second.slurm_id);
    if (jt == jobs_.end() || !slurm::JobEnded(jt->second.state)) {
      // Still waiting in Slurm (e.g. cancelled through hetsched while queued): cancelled there.
      RunOrWarn("scancel", {std::to_string(it->second.slurm_id)});
    }
    adopted_.erase(it);
    return;
  }
  if (job.rfind(kAdoptedPrefix, 0) == 0) {
    // Not adopted by this backend (e.g. rejected before): cancelled if it still waits.
    char* end = nullptr;
    const int64_t id = std::strtoll(job.c_str() + sizeof(kAdoptedPrefix) - 1, &end, 10);
    auto jt = jobs_.find(id);
    if (id > 0 && *end == '\0' && jt != jobs_.end() && jt->second.state == "PENDING") {
      RunOrWarn("scancel", {std::to_string(id)});
    }
    return;
  }
  for (auto it = own_.begin(); it != own_.end();) {
    it = it->second.job == job && it->second.ended ? own_.erase(it) : std::next(it);
  }
}

util::Status SlurmBackend::SetNodePower(const std::string& node, bool on) {
  auto r = Run("scontrol", {"update", "NodeName=" + node,
                            std::string("State=") + (on ? "POWER_UP" : "POWER_DOWN")});
  if (!r.ok() || !r->succeeded()) return Failed("scontrol update NodeName=" + node, r);
  return util::Status::Ok();
}

std::vector<BackendNode> SlurmBackend::ListNodes() {
  ApplyNewest();
  std::vector<BackendNode> out;
  out.reserve(nodes_.size());
  for (const slurm::Node& n : nodes_) {
    out.push_back(slurm::DescribeNode(n, options_.mapping, options_.catalog));
  }
  return out;
}

std::vector<BackendJob> SlurmBackend::ListJobs() {
  ReleasePlaced();
  ApplyNewest();
  std::vector<BackendJob> out;
  for (const auto& [id, p] : own_) {
    if (!p.ended) out.push_back({p.job, p.attempt, p.node});
  }
  for (const auto& [name, a] : adopted_) {
    if (a.placed || a.deferred) out.push_back({name, a.attempt, a.node});
  }
  return out;
}

std::vector<BackendEvent> SlurmBackend::Poll() {
  ReleasePlaced();
  ApplyNewest();
  std::vector<BackendEvent> out;
  out.swap(events_);
  return out;
}

}  // namespace hetsched::svc
