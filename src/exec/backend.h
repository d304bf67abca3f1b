// Backend: what a driver (the daemon's control loop, the simulator's engine) asks of the
// machines that run jobs, and what they report back. Small on purpose: start a placement, stop
// a job, switch a node's power, list nodes and jobs; events come back through Poll. Every
// action is asynchronous: Start returning OK means the request was taken, not that the job runs
// (kStarted says so, or kStartFailed why not).
//
// Implementations: sim::SimBackend (virtual time, the simulator's event queue),
// svc::VirtualBackend (modeled run times in real time), svc::LocalBackend (processes on this
// machine), svc::SlurmBackend (jobs of a Slurm cluster).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace hetsched::exec {

// One attempt at running a job on a set of devices of one node (gangs across nodes are started
// as one placement per node by the caller, with the same attempt number; exec/launch.h builds
// them).
struct LaunchSpec {
  std::string job;      // the job's name (the simulator names jobs by their workload id)
  int64_t attempt = 0;  // increases with every start of the job; events carry it back
  std::string node;
  std::string device_type;            // catalog name, e.g. "v100"
  std::string vendor;                 // "nvidia", "amd", "huawei", "intel", ... ("" for CPUs)
  std::vector<int32_t> node_devices;  // positions within the node (HETSCHED_DEVICES, the API's)
  // The same devices as the vendor's runtime numbers them, i.e. what *_VISIBLE_DEVICES lists:
  // each one's position among the node's devices of that vendor that are not CPUs. It differs
  // from node_devices on a node holding CPUs or other vendors' devices ahead of them (a node of
  // [a100-80g x2, mi100 x2] has the MI100s at positions 2 and 3, ROCm devices 0 and 1).
  std::vector<int32_t> visible_devices;
  std::vector<std::string> command;        // argv; empty: the backend has nothing to run (virtual)
  std::map<std::string, std::string> env;  // extra environment (HETSCHED_* set by the backend)
  // Modeled backends (virtual, sim) run the attempt for startup_s without progress (reading its
  // checkpoint, restarting its framework), then modeled_s: its remaining work at its speed
  // there (infinity: it does not end by itself). Backends that run the command ignore both.
  double startup_s = 0;
  double modeled_s = 0;
  // The job's run time left under its time limit (nullopt: none). The driver stops it when
  // that is reached; a backend with limits of its own (Slurm) sets one from it, a little later,
  // as a backstop.
  std::optional<double> time_limit_s;
};

enum class BackendEventKind {
  kStarted,      // the attempt runs
  kStartFailed,  // it could not be started (message says why)
  kExited,       // it ended: on its own, or after Stop
  // It is gone through no fault of its own (its node failed, the backend requeued it): the
  // driver runs it again. Other parts of a gang may still run; the driver stops them.
  kLost,
  kNodeUp,
  kNodeDown,
  // A job was submitted to the backend itself (e.g. with sbatch), for the driver to decide
  // where it runs: `spec` is its request in the daemon's job format (docs/api.md), or empty
  // with `message` saying why the backend cannot describe it. Repeated after a driver
  // restart for jobs still waiting; the driver ignores names it knows.
  kSubmitted,
  // A job submitted to the backend was withdrawn there (e.g. scancel) before it ended.
  kWithdrawn,
};

struct BackendEvent {
  BackendEventKind kind = BackendEventKind::kStarted;
  std::string job;  // kStarted, kStartFailed, kExited
  int64_t attempt = 0;
  std::string node;      // kNodeUp, kNodeDown (and the job's node otherwise)
  int exit_status = 0;   // kExited: the exit code, or 128 + signal number when killed
  bool stopped = false;  // kExited: it ended because Stop asked it to
  std::string message;
  std::string spec;  // kSubmitted
};

// A job attempt the backend is running now (reconciliation compares these with the driver's
// own view).
struct BackendJob {
  std::string job;
  int64_t attempt = 0;
  std::string node;
};

struct BackendNode {
  std::string name;
  bool up = true;
  // What the node holds, when the backend knows: (catalog device type, count), in device
  // order, and its rack ("" for none). A node the daemon does not know joins the cluster only
  // with a description; a node it knew that is no longer listed has left.
  std::vector<std::pair<std::string, int32_t>> devices;
  std::string rack;
  // Why the backend could not describe the node's devices (e.g. a GPU type no catalog type is
  // mapped to); the driver reports it instead of adding the node.
  std::string problem;
  // Drained by the backend's own operators: its jobs run on, nothing new starts there.
  bool drained = false;
  // Where the node is reached over the network, as the backend knows it (Slurm's NodeAddr);
  // "" when it says none (the local backend: this machine).
  std::string address;
};

// Called from one thread (the driver's loop); implementations may run their own threads and
// hand events over through Poll.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "sim", "virtual", "local", ...
  // Whether an attempt runs the job's `command` (local, Slurm): a job without one cannot start
  // here, so the daemon refuses it at submission. Backends that model jobs need none.
  virtual bool RunsCommands() const { return false; }

  virtual util::Status Start(const LaunchSpec& spec) = 0;
  // Asks the attempt to end: SIGTERM (the job may write a checkpoint), SIGKILL after
  // `grace_s`. Unknown or already ended attempts are not an error (kExited may follow or not).
  virtual util::Status Stop(const std::string& job, int64_t attempt, double grace_s) = 0;
  // kInfeasible where the backend cannot switch power (e.g. the machine it runs on). Switching
  // takes time: kNodeUp / kNodeDown report when it is done.
  virtual util::Status SetNodePower(const std::string& node, bool on) = 0;
  virtual std::vector<BackendNode> ListNodes() = 0;
  virtual std::vector<BackendJob> ListJobs() = 0;
  // Events since the last call, in the order they happened.
  virtual std::vector<BackendEvent> Poll() = 0;
  // False while the backend cannot be reached (e.g. Slurm does not answer): the driver then
  // decides nothing, rather than count failed starts against jobs.
  virtual bool Available() const { return true; }
  // The driver is done with the job (it ended): what the backend still keeps of it goes, e.g.
  // a job submitted to it that waits held. Backends that keep nothing ignore it.
  virtual void Forget(const std::string& job) { (void)job; }
};

}  // namespace hetsched::exec
