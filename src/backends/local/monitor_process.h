// The monitor and the job of a local attempt, between fork and exec (LocalBackend::Start forks
// RunMonitor): code run in a forked child, so async-signal-safe throughout.
//
// The daemon may have threads, so a forked child may only make async-signal-safe calls: no
// allocation, no locks, no stdio. Everything it needs is prepared before fork and reached
// through ChildPlan.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace hetsched::svc::local {

// What the monitor and the job use: pointers into the daemon's memory, prepared before fork.
// What the monitor and the job use: pointers into the daemon's memory, prepared before fork.
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

// The monitor: forks the job, records it, waits for it and records how it ended. It never
// execs and takes no signal but SIGKILL (all stay blocked from the daemon's fork on; TERM, INT
// and HUP are ignored, so a daemon's process group being signalled passes it by).
[[noreturn]] void RunMonitor(const ChildPlan& p);

// Reads the state (field 3) and start time (field 22, clock ticks since boot) of
// /proc/<pid>/stat; pid 0 reads the calling process. False when there is no such process.
// Async-signal-safe, so the monitor uses it too.
bool ReadProcStat(pid_t pid, char* state, uint64_t* start_time);

}  // namespace hetsched::svc::local
