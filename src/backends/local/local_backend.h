// LocalBackend: runs each job attempt as a process group on this machine, its devices made
// visible through the vendor's *_VISIBLE_DEVICES variable, its exit status kept on disk.
//
// Every attempt gets a small monitor process (its own session, deaf to SIGTERM/SIGINT/SIGHUP)
// that forks the job, waits for it and writes the outcome to a file. So a job's result survives
// a kill -9 of the daemon, and a new LocalBackend on the same state directory adopts what the
// last one left: attempts still running, attempts that ended meanwhile, attempts that were lost
// (the machine restarted). An attempt ends when the process it started (its group's leader)
// ends; whatever that left in its process group is killed then, so its devices are free when
// kExited is reported. Files under `state_dir`:
//   logs/<job>.<attempt>.log   the job's stdout and stderr (appended; kept after the end)
//   run/<job>.<attempt>.pid    job and monitor pids with their start times, a pending Stop
//   run/<job>.<attempt>.exit   "exit <code>" or "signal <number>", written by the monitor
// The run/ files are removed by the Poll after the one that handed out the attempt's kExited:
// the caller records each Poll's events before it polls again, so a daemon killed in between
// hears the outcome again from the next LocalBackend on this folder.
//
// Beside this file: local_launch.cc (Start), monitor_process.h (the forked monitor and job),
// run_records.h (the run/ files' names and formats).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "util/status.h"

namespace hetsched::svc {

struct LocalBackendOptions {
  std::string node_name;  // the one node offered; LaunchSpec::node must name it
  std::string state_dir;  // created if missing
  // Where jobs start; empty: the daemon's working directory.
  std::string working_dir;
};

// Single-threaded: every call comes from the service's control loop; no threads of its own.
// SIGKILL after a Stop's grace period is sent by the first Poll after the deadline.
class LocalBackend final : public Backend {
 public:
  // Creates the state directories and adopts the attempts recorded there. kInvalidArgument for
  // an empty node name or state directory, kIoError when the directories cannot be created.
  static util::Result<std::unique_ptr<LocalBackend>> Create(LocalBackendOptions options);

  // Leaves jobs running on purpose: their monitors keep recording, and the next LocalBackend
  // on this state directory (e.g. after a daemon restart) adopts them. Stop them first to end
  // them.
  ~LocalBackend() override;
  LocalBackend(const LocalBackend&) = delete;
  LocalBackend& operator=(const LocalBackend&) = delete;

  std::string name() const override { return "local"; }
  bool RunsCommands() const override { return true; }

  // Forks the monitor and the job and returns once the job's process exists and its pid record
  // is on disk (kStarted follows from Poll). The job runs spec.command (argv[0] looked up in
  // the job's PATH) in the working directory, stdin from /dev/null, stdout and stderr appended
  // to LogPath(). Its environment is the daemon's, overridden by spec.env, overridden by
  // HETSCHED_JOB, HETSCHED_ATTEMPT, HETSCHED_NODE, HETSCHED_DEVICE_TYPE, HETSCHED_DEVICES (the
  // node_devices, comma-separated) and the vendor's visibility variable listing the
  // visible_devices: CUDA_VISIBLE_DEVICES (nvidia), ASCEND_RT_VISIBLE_DEVICES (huawei),
  // ROCR_VISIBLE_DEVICES (amd; with HIP_VISIBLE_DEVICES=0..n-1, since HIP numbers what ROCR
  // left visible from 0), none for other vendors and CPUs (vendor "").
  // kInvalidArgument: a job name outside [A-Za-z0-9][A-Za-z0-9._-]{0,127}, a negative attempt,
  // another node, an empty command, a negative device index, visible_devices not one per
  // node device for a vendor with a visibility variable, an environment name that is
  // empty or holds '=', an attempt that was started already. kIoError: the log cannot be
  // opened or a fork fails. That the command cannot be executed is no error here: the attempt
  // exits with status 127 and says why in its log.
  util::Status Start(const LaunchSpec& spec) override;
  // SIGTERM to the job's process group now, SIGKILL after `grace_s` (at once when <= 0); a
  // signal sent before the job has exec'd is held and acts then. The stop is recorded, so the
  // kExited that follows has stopped = true and the SIGKILL still comes after a daemon
  // restart. Unknown or ended attempts: OK, nothing happens. kIoError when the record cannot
  // be updated (the signal was sent).
  util::Status Stop(const std::string& job, int64_t attempt, double grace_s) override;
  // Always kInfeasible: this backend cannot switch the machine it runs on.
  util::Status SetNodePower(const std::string& node, bool on) override;
  std::vector<BackendNode> ListNodes() override;
  // Attempts started or adopted whose kExited Poll has not handed out yet (so also one that
  // ended while no backend watched, until the next Poll reports it): the same view the event
  // stream gives, so the service can reconcile the two.
  std::vector<BackendJob> ListJobs() override;
  // Never blocks: reaps ended monitors, reads exit files, sends due SIGKILLs. kExited carries
  // the exit code, 128 + the signal number, or -1 with a message starting "lost:" when neither
  // the job nor its monitor runs and no exit status was recorded. Exits found in one call come
  // in the order their exit files were written, after the kStarted events of Starts since the
  // last call. A kExited is handed out once: a daemon that dies before storing it loses it.
  std::vector<BackendEvent> Poll() override;

  // Where the job's output of that attempt goes (whether or not it exists).
  std::string LogPath(const std::string& job, int64_t attempt) const;

 private:
  struct Attempt {
    std::string job;
    int64_t attempt = 0;
    pid_t pid = 0;            // the job; it leads its process group (pgid == pid)
    uint64_t start_time = 0;  // /proc/<pid>/stat field 22, to tell a reused pid from ours
    pid_t monitor_pid = 0;
    uint64_t monitor_start_time = 0;
    bool own_monitor = false;  // the monitor is this process's child: reap it with waitpid
    bool monitor_reaped = false;
    bool stop_requested = false;
    bool killed = false;  // SIGKILL sent
    std::chrono::steady_clock::time_point kill_at;
    int64_t kill_at_unix_ms = 0;  // the same deadline as written to the pid record
  };

  LocalBackend(LocalBackendOptions options, std::string boot_id);
  void Adopt();
  std::string RunPath(const Attempt& a, const char* suffix) const;
  Attempt* Find(const std::string& job, int64_t attempt);
  bool MonitorRunning(Attempt& a);
  bool GroupIsOurs(Attempt& a);
  // Sends the SIGKILL of a stop whose grace period is over at `now`.
  static void SendDueKill(Attempt& a, std::chrono::steady_clock::time_point now);
  // The attempt's kExited once it has ended, `written` set to when its exit file was written
  // (max() when it is lost); nullopt while it runs (a due SIGKILL is sent then).
  std::optional<BackendEvent> EndOf(Attempt& a, std::chrono::steady_clock::time_point now,
                                    std::filesystem::file_time_type& written);
  util::Status WriteRecord(const Attempt& a) const;

  LocalBackendOptions options_;
  std::string boot_id_;  // this boot's /proc/sys/kernel/random/boot_id; pids of others are gone
  std::vector<Attempt> attempts_;  // in start (or adoption) order
  std::vector<pid_t> unreaped_;    // monitors of reported attempts that had not ended yet
  std::vector<BackendEvent> events_;
  std::vector<std::string> reported_;  // run/ files of the last Poll's kExited events
};

}  // namespace hetsched::svc
