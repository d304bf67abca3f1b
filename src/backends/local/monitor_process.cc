#include "backends/local/monitor_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>

namespace hetsched::svc::local {
namespace {

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

}  // namespace

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

namespace {

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

// The monitor's own setup: a session of its own, deaf to the signals a daemon's process group
// gets, stdio on /dev/null, none of the daemon's descriptors but the two it needs.
void DetachFromDaemon(const ChildPlan& p) {
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
}

// Writes the pid record (see LocalBackend::WriteRecord for its keys). Returns 0 or the errno.
int WritePidRecord(const ChildPlan& p, const Report& report) {
  char record[1024];
  Buf b{record, sizeof record};
  Put(b, p.record_prefix);
  Put(b, "pid ");
  PutUint(b, static_cast<uint64_t>(report.pid));
  Put(b, "\npgid ");
  PutUint(b, static_cast<uint64_t>(report.pid));
  Put(b, "\nstart_time ");
  PutUint(b, report.start_time);
  Put(b, "\nmonitor_pid ");
  PutUint(b, static_cast<uint64_t>(report.monitor_pid));
  Put(b, "\nmonitor_start_time ");
  PutUint(b, report.monitor_start_time);
  Put(b, "\n");
  return b.ok ? WriteFileAtomic(p.pid_tmp, p.pid_path, b.data, b.len) : ENAMETOOLONG;
}

// Waits for the job and writes how it ended ("exit N" or "signal N") to the exit file.
void RecordOutcome(const ChildPlan& p, pid_t job) {
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
}

}  // namespace

[[noreturn]] void RunMonitor(const ChildPlan& p) {
  DetachFromDaemon(p);
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
  const int err = WritePidRecord(p, report);
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
  RecordOutcome(p, job);
  _exit(0);
}

}  // namespace hetsched::svc::local
