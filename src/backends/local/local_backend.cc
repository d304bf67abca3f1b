#include "backends/local/local_backend.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "backends/local/monitor_process.h"
#include "backends/local/run_records.h"
#include "util/file.h"

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using local::ParseInt;
using local::ParseOutcome;
using local::ParseRecord;
using local::Record;
using local::ValidJobName;

// Longer grace periods are treated as this long, so deadlines stay representable.
constexpr double kMaxGraceS = 1e9;

// True while `pid` is a live (not zombie) process started at `start_time`. A zombie with that
// start time is reaped when `reap` and it is this process's child (a backend recreated in the
// same process adopts monitors its predecessor forked).
bool ProcessRunning(pid_t pid, uint64_t start_time, bool reap) {
  if (pid <= 1) return false;
  char state = 0;
  uint64_t started = 0;
  if (!local::ReadProcStat(pid, &state, &started) || started != start_time) return false;
  if (state == 'Z' || state == 'X') {
    if (reap) waitpid(pid, nullptr, WNOHANG);
    return false;
  }
  return true;
}

void SignalGroup(pid_t pgid, int sig) {
  if (pgid > 1) kill(-pgid, sig);  // never 0 or -1: those would signal the daemon's own group
}

int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ReadBootId() {
  auto text = util::ReadFile("/proc/sys/kernel/random/boot_id");
  if (!text.ok()) return "";
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

}  // namespace

LocalBackend::LocalBackend(LocalBackendOptions options, std::string boot_id)
    : options_(std::move(options)), boot_id_(std::move(boot_id)) {}

LocalBackend::~LocalBackend() = default;

util::Result<std::unique_ptr<LocalBackend>> LocalBackend::Create(LocalBackendOptions options) {
  if (options.node_name.empty()) {
    return util::Status::InvalidArgument("local backend: the node name is empty");
  }
  if (options.state_dir.empty()) {
    return util::Status::InvalidArgument("local backend: the state directory is empty");
  }
  for (const char* sub : {"logs", "run"}) {
    std::error_code ec;
    const fs::path dir = fs::path(options.state_dir) / sub;
    fs::create_directories(dir, ec);
    if (ec) {
      return util::Status::IoError(
          fmt::format("{}: cannot create directory: {}", dir.string(), ec.message()));
    }
  }
  std::unique_ptr<LocalBackend> backend(new LocalBackend(std::move(options), ReadBootId()));
  backend->Adopt();
  return backend;
}

std::string LocalBackend::LogPath(const std::string& job, int64_t attempt) const {
  return fmt::format("{}/logs/{}.{}.log", options_.state_dir, job, attempt);
}

std::string LocalBackend::RunPath(const Attempt& a, const char* suffix) const {
  return fmt::format("{}/run/{}.{}{}", options_.state_dir, a.job, a.attempt, suffix);
}

LocalBackend::Attempt* LocalBackend::Find(const std::string& job, int64_t attempt) {
  for (Attempt& a : attempts_) {
    if (a.job == job && a.attempt == attempt) return &a;
  }
  return nullptr;
}

void LocalBackend::Adopt() {
  const fs::path run = fs::path(options_.state_dir) / "run";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  auto has = [&](const std::string& name) {
    return std::binary_search(names.begin(), names.end(), name);
  };
  for (const std::string& name : names) {
    const fs::path path = run / name;
    if (name.size() > 5 && name.ends_with(".exit")) {
      // The pid record goes first once an exit is reported: an exit file without one was
      // reported already.
      if (!has(name.substr(0, name.size() - 5) + ".pid")) fs::remove(path, ec);
      continue;
    }
    if (name.size() <= 4 || !name.ends_with(".pid")) continue;  // *.tmp: a write in progress
    Attempt a;
    auto text = util::ReadFile(path.string());
    std::optional<Record> record = text.ok() ? ParseRecord(*text) : std::nullopt;
    if (record.has_value()) {
      a.job = record->job;
      a.attempt = record->attempt;
      // After a reboot the pids belong to other processes, whatever their start times.
      const bool other_boot =
          !record->boot_id.empty() && !boot_id_.empty() && record->boot_id != boot_id_;
      if (!other_boot) {
        a.pid = static_cast<pid_t>(record->pid);
        a.start_time = record->start_time;
        a.monitor_pid = static_cast<pid_t>(record->monitor_pid);
        a.monitor_start_time = record->monitor_start_time;
      }
      a.stop_requested = record->stop_requested;
      if (a.stop_requested) {
        a.kill_at_unix_ms = record->kill_at_unix_ms;
        a.kill_at = Clock::now() + std::chrono::milliseconds(
                                       std::max<int64_t>(0, a.kill_at_unix_ms - UnixMillis()));
      }
    } else {
      // Unreadable: keep the attempt the name gives (pids unknown, so it is reported lost
      // unless an exit file says more); a name that gives none is left alone.
      const std::string base = name.substr(0, name.size() - 4);
      const size_t dot = base.rfind('.');
      if (dot == std::string::npos || !ValidJobName(base.substr(0, dot)) ||
          !ParseInt(std::string_view(base).substr(dot + 1), a.attempt) || a.attempt < 0) {
        continue;
      }
      a.job = base.substr(0, dot);
    }
    if (fmt::format("{}.{}.pid", a.job, a.attempt) != name) continue;  // under another's name
    attempts_.push_back(std::move(a));
  }
}

bool LocalBackend::MonitorRunning(Attempt& a) {
  if (a.monitor_pid <= 1) return false;
  if (!a.own_monitor) return ProcessRunning(a.monitor_pid, a.monitor_start_time, true);
  if (a.monitor_reaped) return false;
  const pid_t r = waitpid(a.monitor_pid, nullptr, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return true;
  a.monitor_reaped = true;  // ended (ECHILD: reaped by someone else, e.g. SIGCHLD ignored)
  return false;
}

// While the monitor runs it has not reaped the leader, and while the leader runs the group is
// its: signalling the group cannot reach a stranger's that reused the number.
bool LocalBackend::GroupIsOurs(Attempt& a) {
  return MonitorRunning(a) || ProcessRunning(a.pid, a.start_time, /*reap=*/false);
}

util::Status LocalBackend::WriteRecord(const Attempt& a) const {
  std::string text = fmt::format(
      "boot_id {}\njob {}\nattempt {}\npid {}\npgid {}\nstart_time {}\nmonitor_pid {}\n"
      "monitor_start_time {}\n",
      boot_id_, a.job, a.attempt, a.pid, a.pid, a.start_time, a.monitor_pid, a.monitor_start_time);
  if (a.stop_requested) {
    text += fmt::format("stop_requested 1\nkill_at_unix_ms {}\n", a.kill_at_unix_ms);
  }
  return util::ReplaceFile(RunPath(a, ".pid"), text);
}

util::Status LocalBackend::Stop(const std::string& job, int64_t attempt, double grace_s) {
  Attempt* a = Find(job, attempt);
  if (a == nullptr || !GroupIsOurs(*a)) return util::Status::Ok();  // ended: Poll says how
  const Clock::time_point now = Clock::now();
  const int64_t now_ms = UnixMillis();
  if (!(grace_s > 0)) {
    SignalGroup(a->pid, SIGKILL);
    a->killed = true;
    a->kill_at = now;
    a->kill_at_unix_ms = now_ms;
  } else {
    SignalGroup(a->pid, SIGTERM);
    const double grace = std::min(grace_s, kMaxGraceS);
    const auto deadline =
        now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace));
    if (!a->stop_requested || deadline < a->kill_at) {
      a->kill_at = deadline;
      a->kill_at_unix_ms = now_ms + static_cast<int64_t>(grace * 1000);
    }
  }
  a->stop_requested = true;
  // So that a restarted daemon still reports stopped = true and still sends the SIGKILL.
  util::Status written = WriteRecord(*a);
  if (!written.ok()) {
    return util::Status::IoError(
        fmt::format("job {} attempt {}: signalled, but the stop was not recorded: {}", job, attempt,
                    written.message()));
  }
  return util::Status::Ok();
}

util::Status LocalBackend::SetNodePower(const std::string& node, bool on) {
  return util::Status::Infeasible(
      fmt::format("node {}: cannot switch {}: the local backend cannot switch this machine's power",
                  node, on ? "on" : "off"));
}

std::vector<BackendNode> LocalBackend::ListNodes() {
  return {BackendNode{options_.node_name, true, {}, "", "", false, ""}};
}

std::vector<BackendJob> LocalBackend::ListJobs() {
  std::vector<BackendJob> out;
  for (const Attempt& a : attempts_) out.push_back({a.job, a.attempt, options_.node_name});
  return out;
}

void LocalBackend::SendDueKill(Attempt& a, Clock::time_point now) {
  if (a.stop_requested && !a.killed && now >= a.kill_at) {
    SignalGroup(a.pid, SIGKILL);
    a.killed = true;
  }
}

std::optional<BackendEvent> LocalBackend::EndOf(Attempt& a, Clock::time_point now,
                                                fs::file_time_type& written) {
  const std::string exit_path = RunPath(a, ".exit");
  auto text = util::ReadFile(exit_path);
  if (!text.ok()) {
    if (MonitorRunning(a)) {
      SendDueKill(a, now);
      return std::nullopt;
    }
    // The monitor writes the exit file before it ends: a second look after seeing it gone
    // cannot miss the file.
    text = util::ReadFile(exit_path);
  }
  BackendEvent e;
  e.kind = BackendEventKind::kExited;
  e.job = a.job;
  e.attempt = a.attempt;
  e.node = options_.node_name;
  e.stopped = a.stop_requested;
  written = fs::file_time_type::max();
  if (text.ok()) {
    std::error_code ec;
    written = fs::last_write_time(exit_path, ec);
    if (ec) written = fs::file_time_type::max();
    if (!ParseOutcome(*text, e.exit_status, e.message)) {
      e.exit_status = -1;
      e.message = fmt::format("lost: unreadable exit record {}", exit_path);
    }
    // Found before the monitor ended: it ends right after writing; reap it later.
    if (a.own_monitor && !a.monitor_reaped) unreaped_.push_back(a.monitor_pid);
  } else if (ProcessRunning(a.pid, a.start_time, /*reap=*/false)) {
    // Its monitor is gone (killed), so nobody will record the status: watch the pid instead.
    SendDueKill(a, now);
    return std::nullopt;
  } else {
    e.exit_status = -1;
    e.message = a.pid > 1 ? fmt::format(
                                "lost: no exit status was recorded and neither the job (pid {}) "
                                "nor its monitor (pid {}) is running",
                                a.pid, a.monitor_pid)
                          : "lost: no exit status was recorded and the process ids are unknown or "
                            "from before the machine restarted";
  }
  return e;
}

std::vector<BackendEvent> LocalBackend::Poll() {
  // The caller has recorded what the last Poll reported (it polls again only after that):
  // those records can go. Until now they stayed, so a daemon killed in between learns the
  // outcome again from the next backend on this folder instead of losing it.
  for (const std::string& path : reported_) {
    std::error_code ec;
    fs::remove(path, ec);
  }
  reported_.clear();
  const Clock::time_point now = Clock::now();
  std::erase_if(unreaped_, [](pid_t pid) {
    const pid_t r = waitpid(pid, nullptr, WNOHANG);
    return r == pid || (r < 0 && errno == ECHILD);
  });
  struct Ended {
    size_t index;
    fs::file_time_type at;  // when the exit file was written; lost ones sort last
    BackendEvent event;
  };
  std::vector<Ended> ended;
  for (size_t i = 0; i < attempts_.size(); ++i) {
    fs::file_time_type at;
    std::optional<BackendEvent> e = EndOf(attempts_[i], now, at);
    if (e.has_value()) ended.push_back({i, at, std::move(*e)});
  }
  std::stable_sort(ended.begin(), ended.end(),
                   [](const Ended& x, const Ended& y) { return x.at < y.at; });
  for (Ended& e : ended) {
    // Removed by the next Poll, the record first: an exit file without a record is known to be
    // reported (see Adopt).
    reported_.push_back(RunPath(attempts_[e.index], ".pid"));
    reported_.push_back(RunPath(attempts_[e.index], ".exit"));
    events_.push_back(std::move(e.event));
  }
  std::vector<size_t> gone;
  for (const Ended& e : ended) gone.push_back(e.index);
  std::sort(gone.rbegin(), gone.rend());
  for (size_t index : gone) attempts_.erase(attempts_.begin() + static_cast<ptrdiff_t>(index));
  return std::exchange(events_, {});
}

}  // namespace hetsched::svc
