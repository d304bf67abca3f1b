// LocalBackend::Start: the daemon's side of launching an attempt (the monitor's and the job's
// side is backends/local/monitor_process.cc).
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <utility>

#include "backends/local/local_backend.h"
#include "backends/local/monitor_process.h"
#include "backends/local/run_records.h"

extern char** environ;

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using local::ValidJobName;

// PATH for the command lookup when the job's environment has none (glibc's execvp default,
// without the current directory).
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// Moves `fd` above 0, 1 and 2 (a daemon started with closed stdio gets those back from open),
// since the monitor puts /dev/null there before using the others. Returns -1 on failure.
int AboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

// Closes the descriptors it holds on destruction, whatever path Start leaves by.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
  int Add(int fd) {
    fds.push_back(fd);
    return fd;
  }
  void Close(int fd) {
    for (int& held : fds) {
      if (held == fd) {
        close(held);
        held = -1;
      }
    }
  }
};

// The variable that makes a vendor's devices visible; nullptr for vendors without one.
const char* VisibilityVariable(std::string_view vendor) {
  if (vendor == "nvidia") return "CUDA_VISIBLE_DEVICES";
  if (vendor == "amd") return "ROCR_VISIBLE_DEVICES";
  if (vendor == "huawei") return "ASCEND_RT_VISIBLE_DEVICES";
  return nullptr;
}

// The job's environment: the daemon's, then the spec's, then what the backend sets. The AMD
// runtime applies HIP_VISIBLE_DEVICES to the devices ROCR_VISIBLE_DEVICES left, renumbered
// from 0, so it lists 0..n-1 (overriding an inherited value) rather than the node's indices.
util::Result<std::vector<std::string>> BuildEnvironment(const LaunchSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& [key, value] : spec.env) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos ||
        value.find('\0') != std::string::npos) {
      return util::Status::InvalidArgument(
          fmt::format("job {}: environment variable '{}': a name must be non-empty and hold "
                      "no '=' or NUL, a value no NUL",
                      spec.job, key));
    }
    env[key] = value;
  }
  auto join = [](const std::vector<int32_t>& indices) {
    std::string out;
    for (size_t i = 0; i < indices.size(); ++i) {
      if (i > 0) out += ',';
      out += std::to_string(indices[i]);
    }
    return out;
  };
  std::vector<int32_t> renumbered(spec.visible_devices.size());
  for (size_t i = 0; i < renumbered.size(); ++i) renumbered[i] = static_cast<int32_t>(i);
  env["HETSCHED_JOB"] = spec.job;
  env["HETSCHED_ATTEMPT"] = std::to_string(spec.attempt);
  env["HETSCHED_NODE"] = spec.node;
  env["HETSCHED_DEVICE_TYPE"] = spec.device_type;
  env["HETSCHED_DEVICES"] = join(spec.node_devices);
  if (const char* variable = VisibilityVariable(spec.vendor))
    env[variable] = join(spec.visible_devices);
  if (spec.vendor == "amd") env["HIP_VISIBLE_DEVICES"] = join(renumbered);
  // CUDA numbers devices fastest first unless told otherwise; the numbers above are nvidia-smi's
  // (PCI bus order), which differ on a machine mixing NVIDIA models.
  if (spec.vendor == "nvidia") env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

// Where the job process looks for argv[0]: itself when it names a path, else each PATH entry.
std::vector<std::string> ExecCandidates(const std::string& program,
                                        const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return {program};
  std::string path = kDefaultPath;
  for (const std::string& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
  }
  std::vector<std::string> out;
  size_t begin = 0;
  while (true) {
    const size_t end = path.find(':', begin);
    std::string dir = path.substr(begin, end == std::string::npos ? end : end - begin);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + program);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The faults of the spec itself: Start's kInvalidArgument list but for a bad environment name
// (BuildEnvironment) and a repeated start.
util::Status CheckSpec(const LaunchSpec& spec, const std::string& node_name) {
  if (!ValidJobName(spec.job)) {
    return util::Status::InvalidArgument(
        fmt::format("job name '{}': expected [A-Za-z0-9][A-Za-z0-9._-]{{0,127}}", spec.job));
  }
  if (spec.attempt < 0) {
    return util::Status::InvalidArgument(
        fmt::format("job {}: attempt {} (expected >= 0)", spec.job, spec.attempt));
  }
  if (spec.node != node_name) {
    return util::Status::InvalidArgument(fmt::format(
        "job {}: node '{}': the local backend runs only '{}'", spec.job, spec.node, node_name));
  }
  if (spec.command.empty() || spec.command[0].empty()) {
    return util::Status::InvalidArgument(
        fmt::format("job {}: no command to run (the local backend runs real processes)", spec.job));
  }
  for (const std::vector<int32_t>* list : {&spec.node_devices, &spec.visible_devices}) {
    for (int32_t d : *list) {
      if (d < 0) {
        return util::Status::InvalidArgument(
            fmt::format("job {}: device index {} (expected >= 0)", spec.job, d));
      }
    }
  }
  if (VisibilityVariable(spec.vendor) != nullptr &&
      spec.visible_devices.size() != spec.node_devices.size()) {
    return util::Status::InvalidArgument(fmt::format(
        "job {}: {} visible device number(s) for {} device(s) (expected one per device)", spec.job,
        spec.visible_devices.size(), spec.node_devices.size()));
  }
  return util::Status::Ok();
}

// The descriptors the monitor gets, all above stdio and close-on-exec.
struct ChildFds {
  int log = -1;           // the job's log, appended to
  int null = -1;          // /dev/null
  int report_read = -1;   // the report pipe: the daemon's end
  int report_write = -1;  // the monitor's end
};

// Opens them, each held by `held` (closed when Start returns).
util::Status OpenChildFds(const std::string& job, const std::string& log_path, Fds& held,
                          ChildFds& out) {
  out.log =
      held.Add(AboveStdio(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)));
  if (out.log < 0) {
    return util::Status::IoError(
        fmt::format("{}: cannot open the job's log: {}", log_path, std::strerror(errno)));
  }
  out.null = held.Add(AboveStdio(open("/dev/null", O_RDWR | O_CLOEXEC)));
  int report[2];
  if (out.null < 0 || pipe2(report, O_CLOEXEC) != 0) {
    return util::Status::IoError(
        fmt::format("job {}: cannot set up the monitor: {}", job, std::strerror(errno)));
  }
  out.report_read = held.Add(AboveStdio(report[0]));
  out.report_write = held.Add(AboveStdio(report[1]));
  if (out.report_read < 0 || out.report_write < 0) {
    return util::Status::IoError(
        fmt::format("job {}: cannot set up the monitor: {}", job, std::strerror(errno)));
  }
  return util::Status::Ok();
}

// RLIMIT_NOFILE's soft limit (1024 when unlimited or unknown).
int FdLimit() {
  struct rlimit nofile = {};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    return static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, INT_MAX));
  }
  return 1024;
}

// Forks the monitor with every signal blocked, so none reaches it before it has chosen which to
// ignore (a Ctrl-C to the daemon's terminal would otherwise kill it in that window). Returns its
// pid, or -1 with the fork's errno in `fork_errno`.
pid_t ForkMonitor(const local::ChildPlan& plan, int& fork_errno) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t monitor = fork();
  fork_errno = errno;
  if (monitor == 0) local::RunMonitor(plan);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return monitor;
}

// The monitor's report that the job runs. When it reports a failure or ends without a report,
// it is reaped and the failure returned.
util::Result<local::Report> AwaitReport(pid_t monitor, int report_fd, const std::string& job,
                                        const std::string& pid_path) {
  local::Report r;
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = read(report_fd, reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got == sizeof r && r.step == local::kStepNone) return r;
  while (waitpid(monitor, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (got < sizeof r) {
    return util::Status::Internal(
        fmt::format("job {}: the monitor process ended before starting the job", job));
  }
  const std::string what = r.step == local::kStepPipe   ? "cannot create a pipe"
                           : r.step == local::kStepFork ? "cannot fork the job"
                                                        : "cannot write " + pid_path;
  return util::Status::IoError(fmt::format("job {}: {}: {}", job, what, std::strerror(r.error)));
}

}  // namespace

util::Status LocalBackend::Start(const LaunchSpec& spec) {
  RETURN_IF_ERROR(CheckSpec(spec, options_.node_name));
  Attempt a;
  a.job = spec.job;
  a.attempt = spec.attempt;
  a.own_monitor = true;
  const std::string pid_path = RunPath(a, ".pid");
  std::error_code ec;
  if (Find(spec.job, spec.attempt) != nullptr || fs::exists(pid_path, ec)) {
    return util::Status::InvalidArgument(
        fmt::format("job {} attempt {}: started already", spec.job, spec.attempt));
  }

  // Everything the children use, prepared before fork.
  ASSIGN_OR_RETURN(std::vector<std::string> env, BuildEnvironment(spec));
  std::vector<std::string> args = spec.command;
  std::vector<std::string> paths = ExecCandidates(spec.command[0], env);
  std::vector<char*> envp = CStrings(env);
  std::vector<char*> argv = CStrings(args);
  std::vector<const char*> exec_paths;
  for (const std::string& p : paths) exec_paths.push_back(p.c_str());
  exec_paths.push_back(nullptr);
  const std::string prefix =
      fmt::format("boot_id {}\njob {}\nattempt {}\n", boot_id_, spec.job, spec.attempt);
  const std::string pid_tmp = pid_path + ".tmp";
  const std::string exit_path = RunPath(a, ".exit");
  const std::string exit_tmp = exit_path + ".tmp";
  fs::remove(exit_path, ec);  // left by an attempt of this number whose record was lost
  Fds held;
  ChildFds fds;
  RETURN_IF_ERROR(OpenChildFds(spec.job, LogPath(spec.job, spec.attempt), held, fds));
  const local::ChildPlan plan{
      argv.data(),       envp.data(),
      exec_paths.data(), options_.working_dir.empty() ? nullptr : options_.working_dir.c_str(),
      prefix.c_str(),    pid_path.c_str(),
      pid_tmp.c_str(),   exit_path.c_str(),
      exit_tmp.c_str(),  fds.log,
      fds.null,          fds.report_write,
      FdLimit()};

  int fork_errno = 0;
  const pid_t monitor = ForkMonitor(plan, fork_errno);
  if (monitor < 0) {
    return util::Status::IoError(
        fmt::format("job {}: cannot fork: {}", spec.job, std::strerror(fork_errno)));
  }
  held.Close(fds.report_write);
  held.Close(fds.log);
  held.Close(fds.null);
  ASSIGN_OR_RETURN(const local::Report r,
                   AwaitReport(monitor, fds.report_read, spec.job, pid_path));
  a.pid = static_cast<pid_t>(r.pid);
  a.start_time = r.start_time;
  a.monitor_pid = monitor;
  a.monitor_start_time = r.monitor_start_time;
  attempts_.push_back(std::move(a));
  BackendEvent started;
  started.kind = BackendEventKind::kStarted;
  started.job = spec.job;
  started.attempt = spec.attempt;
  started.node = options_.node_name;
  started.message = fmt::format("pid {}", r.pid);
  events_.push_back(std::move(started));
  return util::Status::Ok();
}

}  // namespace hetsched::svc
