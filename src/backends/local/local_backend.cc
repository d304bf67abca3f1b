#include "backends/local/local_backend.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "util/file.h"

extern char** environ;

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// PATH for the command lookup when the job's environment has none (glibc's execvp default,
// without the current directory).
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
// Longer grace periods are treated as this long, so deadlines stay representable.
constexpr double kMaxGraceS = 1e9;

// ---------------------------------------------------------------------------------------------
// Code run in the monitor and in the job before exec. The daemon may have threads, so a forked
// child may only make async-signal-safe calls: no allocation, no locks, no stdio. Everything
// it needs is prepared before fork and reached through ChildPlan.

struct ChildPlan {
  char* const* argv;
  char* const* envp;
  const char* const* exec_paths;  // candidates for argv[0], tried in order; null-terminated
  const char* working_dir;        // nullptr: stay in the daemon's
  const char* record_prefix;      // the pid record's first lines (boot id, job, attempt)
  const char* pid_path;
  const char* pid_tmp;
  const char* exit_path;
  const char* exit_tmp;
  int log_fd;
  int null_fd;
  int report_fd;  // the pipe's write end, to the daemon
  int fd_limit;   // RLIMIT_NOFILE, for closing inherited descriptors without close_range
};

// What the monitor tells the daemon through the report pipe: the job runs, or which step
// failed with which errno.
enum ReportStep : int32_t { kStepNone = 0, kStepPipe, kStepFork, kStepRecord };
struct Report {
  int32_t step = kStepNone;
  int32_t error = 0;
  int64_t pid = 0;
  int64_t monitor_pid = 0;
  uint64_t start_time = 0;
  uint64_t monitor_start_time = 0;
};

// A fixed buffer that text is appended to; `ok` turns false when something did not fit.
struct Buf {
  char* data;
  size_t cap;
  size_t len = 0;
  bool ok = true;
};

void Put(Buf& b, const char* s) {
  for (; *s != '\0'; ++s) {
    if (b.len + 1 >= b.cap) {
      b.ok = false;
      return;
    }
    b.data[b.len++] = *s;
  }
  b.data[b.len] = '\0';
}

void PutUint(Buf& b, uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = '\0';
  Put(b, text);
}

bool WriteAll(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Writes `tmp` and renames it over `path`, so a reader sees the whole content or nothing.
// Returns 0 or the errno of the step that failed.
int WriteFileAtomic(const char* tmp, const char* path, const char* data, size_t len) {
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = 0;
  if (!WriteAll(fd, data, len)) err = errno;
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp, path) != 0) err = errno;
  if (err != 0) unlink(tmp);
  return err;
}

// Reads the state (field 3) and start time (field 22, clock ticks since boot) of
// /proc/<pid>/stat; pid 0 reads the calling process. False when there is no such process.
bool ReadProcStat(pid_t pid, char* state, uint64_t* start_time) {
  char path[64];
  Buf b{path, sizeof path};
  Put(b, "/proc/");
  if (pid == 0) {
    Put(b, "self");
  } else {
    PutUint(b, static_cast<uint64_t>(pid));
  }
  Put(b, "/stat");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[2048];
  size_t n = 0;
  while (n < sizeof text) {
    ssize_t r = read(fd, text + n, sizeof text - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  close(fd);
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  size_t paren = n;
  for (size_t i = n; i-- > 0;) {
    if (text[i] == ')') {
      paren = i;
      break;
    }
  }
  if (paren == n) return false;
  int field = 2;
  for (size_t i = paren + 1; i + 1 < n; ++i) {
    if (text[i] != ' ') continue;
    ++field;
    if (field == 3) *state = text[i + 1];
    if (field == 22) {
      uint64_t v = 0;
      size_t j = i + 1;
      for (; j < n && text[j] >= '0' && text[j] <= '9'; ++j) {
        v = v * 10 + static_cast<uint64_t>(text[j] - '0');
      }
      if (j == i + 1) return false;
      *start_time = v;
      return true;
    }
  }
  return false;
}

void CloseRange(unsigned lo, unsigned hi, int fd_limit) {
  if (lo > hi) return;
  if (close_range(lo, hi, 0) == 0) return;
  // Kernels before 5.9 lack close_range: close one by one up to the descriptor limit.
  const unsigned top = std::min(hi, static_cast<unsigned>(fd_limit));
  for (unsigned fd = lo; fd <= top; ++fd) close(static_cast<int>(fd));
}

// Closes every descriptor above stderr except `keep_a` and `keep_b` (-1: none). The daemon's
// descriptors (its listening socket, its database) must not outlive it in a monitor or a job.
void CloseFdsExcept(int keep_a, int keep_b, int fd_limit) {
  const int keeps[2] = {std::min(keep_a, keep_b), std::max(keep_a, keep_b)};
  unsigned next = 3;
  for (int keep : keeps) {
    if (keep < static_cast<int>(next)) continue;
    CloseRange(next, static_cast<unsigned>(keep) - 1, fd_limit);
    next = static_cast<unsigned>(keep) + 1;
  }
  CloseRange(next, UINT_MAX, fd_limit);
}

const char* ErrnoText(int err) {
  switch (err) {
    case ENOENT:
      return "no such file or directory";
    case EACCES:
      return "permission denied";
    case ENOEXEC:
      return "not an executable format";
    case ENOTDIR:
      return "a path component is not a directory";
    case E2BIG:
      return "argument list too long";
    case ENOMEM:
      return "out of memory";
    default:
      return "error";
  }
}

// Writes "hetsched: <what> '<subject>': <reason> (errno N)" to the job's stderr (its log).
void ReportInLog(const char* what, const char* subject, int err) {
  char text[512];
  Buf b{text, sizeof text};
  Put(b, "hetsched: ");
  Put(b, what);
  Put(b, " '");
  Put(b, subject);
  Put(b, "': ");
  Put(b, ErrnoText(err));
  Put(b, " (errno ");
  PutUint(b, static_cast<uint64_t>(err));
  Put(b, ")\n");
  WriteAll(2, b.data, b.len);
}

// The job: waits until the monitor has recorded it, then becomes the command.
[[noreturn]] void RunJob(const ChildPlan& p, int go_fd) {
  // Also the go pipe's write end, so that the read below sees EOF if the monitor gives up.
  CloseFdsExcept(go_fd, p.log_fd, p.fd_limit);
  setpgid(0, 0);
  // Signal dispositions the monitor ignores would survive exec; the daemon's too.
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  char go = 0;
  ssize_t r;
  do {
    r = read(go_fd, &go, 1);
  } while (r < 0 && errno == EINTR);
  if (r != 1) _exit(127);  // the attempt could not be recorded: never run it
  dup2(p.log_fd, 1);
  dup2(p.log_fd, 2);  // go_fd and log_fd are close-on-exec
  if (p.working_dir != nullptr && chdir(p.working_dir) != 0) {
    ReportInLog("cannot change to working directory", p.working_dir, errno);
    _exit(127);
  }
  // Every signal has been blocked since the daemon forked; one that arrived meanwhile (an early
  // Stop) is delivered now, with its default action.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Like execvp: ENOENT and ENOTDIR move on to the next PATH entry, EACCES is remembered.
  // Unlike it, a file without a #! line is not handed to /bin/sh.
  int err = ENOENT;
  for (const char* const* path = p.exec_paths; *path != nullptr; ++path) {
    execve(*path, p.argv, p.envp);
    if (errno != ENOENT && errno != ENOTDIR) err = errno;
    if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) break;
  }
  ReportInLog("cannot execute", p.argv[0], err);
  _exit(127);
}

[[noreturn]] void MonitorFails(const ChildPlan& p, Report& report, ReportStep step, int err) {
  report.step = step;
  report.error = err;
  WriteAll(p.report_fd, &report, sizeof report);
  _exit(1);
}

// The monitor: forks the job, records it, waits for it and records how it ended. It never
// execs and takes no signal but SIGKILL (all stay blocked from the daemon's fork on; TERM, INT
// and HUP are ignored, so a daemon's process group being signalled passes it by).
[[noreturn]] void RunMonitor(const ChildPlan& p) {
  setsid();
  struct sigaction ign = {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaction(sig, &ign, nullptr);
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, nullptr);  // a daemon ignoring SIGCHLD would make waitpid fail
  dup2(p.null_fd, 0);
  dup2(p.null_fd, 1);
  dup2(p.null_fd, 2);
  CloseFdsExcept(p.report_fd, p.log_fd, p.fd_limit);

  Report report;
  report.monitor_pid = getpid();
  char state = 0;
  ReadProcStat(0, &state, &report.monitor_start_time);
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) MonitorFails(p, report, kStepPipe, errno);
  const pid_t job = fork();
  if (job < 0) MonitorFails(p, report, kStepFork, errno);
  if (job == 0) RunJob(p, go[0]);
  close(go[0]);
  // The job does the same; whoever is first, the group exists before the daemon learns the pid.
  setpgid(job, job);
  report.pid = job;
  ReadProcStat(job, &state, &report.start_time);

  char record[1024];
  Buf b{record, sizeof record};
  Put(b, p.record_prefix);
  Put(b, "pid ");
  PutUint(b, static_cast<uint64_t>(job));
  Put(b, "\npgid ");
  PutUint(b, static_cast<uint64_t>(job));
  Put(b, "\nstart_time ");
  PutUint(b, report.start_time);
  Put(b, "\nmonitor_pid ");
  PutUint(b, static_cast<uint64_t>(report.monitor_pid));
  Put(b, "\nmonitor_start_time ");
  PutUint(b, report.monitor_start_time);
  Put(b, "\n");
  const int err = b.ok ? WriteFileAtomic(p.pid_tmp, p.pid_path, b.data, b.len) : ENAMETOOLONG;
  if (err != 0) {
    close(go[1]);  // the job sees EOF and exits 127 without running the command
    while (waitpid(job, nullptr, 0) < 0 && errno == EINTR) {
    }
    MonitorFails(p, report, kStepRecord, err);
  }
  WriteAll(go[1], "g", 1);
  close(go[1]);
  WriteAll(p.report_fd, &report, sizeof report);
  close(p.report_fd);
  close(p.log_fd);

  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(job, &status, 0);
  } while (waited < 0 && errno == EINTR);
  // The attempt is over when its leader is: what it left in its group goes too, so the devices
  // are free when the daemon reports the end. The group id cannot have been reused while any
  // member lives.
  if (waited == job) kill(-job, SIGKILL);
  char outcome[64];
  Buf o{outcome, sizeof outcome};
  if (waited == job && WIFEXITED(status)) {
    Put(o, "exit ");
    PutUint(o, static_cast<uint64_t>(WEXITSTATUS(status)));
  } else if (waited == job && WIFSIGNALED(status)) {
    Put(o, "signal ");
    PutUint(o, static_cast<uint64_t>(WTERMSIG(status)));
  }
  // Without an outcome no file is written and the daemon reports the attempt lost.
  if (o.len > 0) {
    Put(o, "\n");
    WriteFileAtomic(p.exit_tmp, p.exit_path, o.data, o.len);
  }
  _exit(0);
}

// ---------------------------------------------------------------------------------------------
// Daemon-side helpers (ordinary code).

bool ValidJobName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

template <typename T>
bool ParseInt(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

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

// The contents of a pid record: "key value" lines in any order.
struct Record {
  std::string boot_id;
  std::string job;
  int64_t attempt = -1;
  int64_t pid = 0;
  uint64_t start_time = 0;
  int64_t monitor_pid = 0;
  uint64_t monitor_start_time = 0;
  bool stop_requested = false;
  int64_t kill_at_unix_ms = 0;
};

std::optional<Record> ParseRecord(std::string_view text) {
  Record r;
  bool has_pid = false, has_monitor = false, has_start = false, has_monitor_start = false;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(0, space);
    const std::string_view value = line.substr(space + 1);
    bool ok = true;
    if (key == "boot_id") {
      r.boot_id = std::string(value);
    } else if (key == "job") {
      r.job = std::string(value);
    } else if (key == "attempt") {
      ok = ParseInt(value, r.attempt);
    } else if (key == "pid") {
      ok = has_pid = ParseInt(value, r.pid);
    } else if (key == "start_time") {
      ok = has_start = ParseInt(value, r.start_time);
    } else if (key == "monitor_pid") {
      ok = has_monitor = ParseInt(value, r.monitor_pid);
    } else if (key == "monitor_start_time") {
      ok = has_monitor_start = ParseInt(value, r.monitor_start_time);
    } else if (key == "stop_requested") {
      r.stop_requested = value == "1";
    } else if (key == "kill_at_unix_ms") {
      ok = ParseInt(value, r.kill_at_unix_ms);
    }  // other keys (pgid: always the pid) are informational
    if (!ok) return std::nullopt;
  }
  if (!ValidJobName(r.job) || r.attempt < 0 || !has_pid || !has_monitor || !has_start ||
      !has_monitor_start || r.pid <= 1 || r.monitor_pid <= 1 || r.pid > INT32_MAX ||
      r.monitor_pid > INT32_MAX) {
    return std::nullopt;
  }
  return r;
}

// True while `pid` is a live (not zombie) process started at `start_time`. A zombie with that
// start time is reaped when `reap` and it is this process's child (a backend recreated in the
// same process adopts monitors its predecessor forked).
bool ProcessRunning(pid_t pid, uint64_t start_time, bool reap) {
  if (pid <= 1) return false;
  char state = 0;
  uint64_t started = 0;
  if (!ReadProcStat(pid, &state, &started) || started != start_time) return false;
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

// "exit N" or "signal N" as written by the monitor.
bool ParseOutcome(std::string_view text, int& exit_status, std::string& message) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int n = 0;
  if (text.rfind("exit ", 0) == 0 && ParseInt(text.substr(5), n) && n >= 0 && n <= 255) {
    exit_status = n;
    message = fmt::format("exited with status {}", n);
    return true;
  }
  if (text.rfind("signal ", 0) == 0 && ParseInt(text.substr(7), n) && n > 0 && n < 128) {
    exit_status = 128 + n;
    message = fmt::format("killed by signal {}", n);
    return true;
  }
  return false;
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

util::Status LocalBackend::Start(const LaunchSpec& spec) {
  if (!ValidJobName(spec.job)) {
    return util::Status::InvalidArgument(
        fmt::format("job name '{}': expected [A-Za-z0-9][A-Za-z0-9._-]{{0,127}}", spec.job));
  }
  if (spec.attempt < 0) {
    return util::Status::InvalidArgument(
        fmt::format("job {}: attempt {} (expected >= 0)", spec.job, spec.attempt));
  }
  if (spec.node != options_.node_name) {
    return util::Status::InvalidArgument(
        fmt::format("job {}: node '{}': the local backend runs only '{}'", spec.job, spec.node,
                    options_.node_name));
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
  const std::string log_path = LogPath(spec.job, spec.attempt);
  fs::remove(exit_path, ec);  // left by an attempt of this number whose record was lost

  Fds fds;
  const int log_fd =
      fds.Add(AboveStdio(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)));
  if (log_fd < 0) {
    return util::Status::IoError(
        fmt::format("{}: cannot open the job's log: {}", log_path, std::strerror(errno)));
  }
  const int null_fd = fds.Add(AboveStdio(open("/dev/null", O_RDWR | O_CLOEXEC)));
  int report[2];
  if (null_fd < 0 || pipe2(report, O_CLOEXEC) != 0) {
    return util::Status::IoError(
        fmt::format("job {}: cannot set up the monitor: {}", spec.job, std::strerror(errno)));
  }
  report[0] = fds.Add(AboveStdio(report[0]));
  report[1] = fds.Add(AboveStdio(report[1]));
  if (report[0] < 0 || report[1] < 0) {
    return util::Status::IoError(
        fmt::format("job {}: cannot set up the monitor: {}", spec.job, std::strerror(errno)));
  }
  struct rlimit nofile = {};
  int fd_limit = 1024;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    fd_limit = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, INT_MAX));
  }
  const ChildPlan plan{
      argv.data(),       envp.data(),
      exec_paths.data(), options_.working_dir.empty() ? nullptr : options_.working_dir.c_str(),
      prefix.c_str(),    pid_path.c_str(),
      pid_tmp.c_str(),   exit_path.c_str(),
      exit_tmp.c_str(),  log_fd,
      null_fd,           report[1],
      fd_limit};

  // Forked with every signal blocked, so none reaches the monitor before it has chosen which
  // to ignore (a Ctrl-C to the daemon's terminal would otherwise kill it in that window).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t monitor = fork();
  const int fork_errno = errno;
  if (monitor == 0) RunMonitor(plan);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (monitor < 0) {
    return util::Status::IoError(
        fmt::format("job {}: cannot fork: {}", spec.job, std::strerror(fork_errno)));
  }
  fds.Close(report[1]);
  fds.Close(log_fd);
  fds.Close(null_fd);

  Report r;
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = read(report[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof r || r.step != kStepNone) {
    while (waitpid(monitor, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (got < sizeof r) {
      return util::Status::Internal(
          fmt::format("job {}: the monitor process ended before starting the job", spec.job));
    }
    const std::string what = r.step == kStepPipe   ? "cannot create a pipe"
                             : r.step == kStepFork ? "cannot fork the job"
                                                   : "cannot write " + pid_path;
    return util::Status::IoError(
        fmt::format("job {}: {}: {}", spec.job, what, std::strerror(r.error)));
  }
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
  const std::string path = RunPath(a, ".pid");
  const std::string tmp = path + ".tmp";
  RETURN_IF_ERROR(util::WriteFile(tmp, text));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return util::Status::IoError(fmt::format("{}: cannot replace: {}", path, std::strerror(errno)));
  }
  return util::Status::Ok();
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
  return {BackendNode{options_.node_name, true, {}, "", "", false}};
}

std::vector<BackendJob> LocalBackend::ListJobs() {
  std::vector<BackendJob> out;
  for (const Attempt& a : attempts_) out.push_back({a.job, a.attempt, options_.node_name});
  return out;
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
    Attempt& a = attempts_[i];
    auto send_due_kill = [&] {
      if (a.stop_requested && !a.killed && now >= a.kill_at) {
        SignalGroup(a.pid, SIGKILL);
        a.killed = true;
      }
    };
    const std::string exit_path = RunPath(a, ".exit");
    auto text = util::ReadFile(exit_path);
    if (!text.ok()) {
      if (MonitorRunning(a)) {
        send_due_kill();
        continue;
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
    fs::file_time_type at = fs::file_time_type::max();
    if (text.ok()) {
      std::error_code ec;
      at = fs::last_write_time(exit_path, ec);
      if (ec) at = fs::file_time_type::max();
      if (!ParseOutcome(*text, e.exit_status, e.message)) {
        e.exit_status = -1;
        e.message = fmt::format("lost: unreadable exit record {}", exit_path);
      }
      // Found before the monitor ended: it ends right after writing; reap it later.
      if (a.own_monitor && !a.monitor_reaped) unreaped_.push_back(a.monitor_pid);
    } else if (ProcessRunning(a.pid, a.start_time, /*reap=*/false)) {
      // Its monitor is gone (killed), so nobody will record the status: watch the pid instead.
      send_due_kill();
      continue;
    } else {
      e.exit_status = -1;
      e.message = a.pid > 1
                      ? fmt::format(
                            "lost: no exit status was recorded and neither the job (pid {}) "
                            "nor its monitor (pid {}) is running",
                            a.pid, a.monitor_pid)
                      : "lost: no exit status was recorded and the process ids are unknown or "
                        "from before the machine restarted";
    }
    ended.push_back({i, at, std::move(e)});
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
