// SimBackend: the machines of a simulated cluster as an exec::Backend in virtual time. What it
// is asked to do it schedules in the simulator's event queue (an attempt's end or start-up
// failure, a stop's exit after the checkpoint is written, a node's boot or shutdown); the
// engine hands those events back through Fire when the clock reaches them, and Poll reports
// what happened, as any backend would.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "exec/backend.h"
#include "model/cluster.h"
#include "model/job.h"
#include "sim/event_queue.h"

namespace hetsched::sim {

struct SimBackendOptions {
  // A stopped attempt writes its checkpoint for this long (cut short by Stop's grace), then
  // exits. 0: it exits at once.
  double checkpoint_save_s = 0;
  // An attempt on a device type that has none of the job's stacks crashes after this long in
  // start-up (kStartFailed); only a scheduler that ignores compatibility places one there.
  double compat_startup_s = 120;
  // Nodes that never finish booting (injected boot failures): switched on, they stay down.
  std::vector<std::string> boot_failure_nodes;
  // Injected start failures (Fault::start_failure): every start on `node` in [from_s, until_s)
  // fails at once.
  struct StartFailureWindow {
    std::string node;
    double from_s = 0;
    double until_s = 0;
  };
  std::vector<StartFailureWindow> start_failures;
};

// Jobs are named by their id in the workload ("17"; names in a trace need not be unique).
// Timing: an attempt is reported started at once (its processes run from the launch: restoring
// the checkpoint is the first LaunchSpec::startup_s of its run) and exits 0 at
// now + startup_s + modeled_s. A gang across nodes is one attempt started by one Start per node;
// the first part's times hold for all, and every part reports its own events.
// Not thread-safe; one caller (the engine).
class SimBackend final : public exec::Backend {
 public:
  // `cluster`, `workload` and `queue` are not owned and must outlive the backend. Every node
  // starts on.
  SimBackend(const model::Cluster& cluster, const model::Workload& workload, EventQueue& queue,
             SimBackendOptions options);

  // A job's name for the backend, and back (nullopt for anything else).
  static std::string JobName(int32_t id);
  static std::optional<int32_t> JobIdOf(const std::string& name);

  // The driver's clock in virtual seconds (never decreasing): actions are timed from it.
  void AdvanceTo(double now_s) { now_s_ = now_s; }
  // Takes an event popped from the queue; false when it is none of the backend's kinds. What it
  // brings about (stale ones bring nothing) comes out of the next Poll.
  bool Fire(const Event& e);
  // What no real backend is told: the attempt's speed changed (space sharing), so it now ends
  // at `end_s` (infinity: not by itself). Ignored for an attempt that is not running or is
  // being stopped.
  void MoveEnd(const std::string& job, int64_t attempt, double end_s);

  std::string name() const override { return "sim"; }
  // Errors: an unknown job, node or device type (kNotFound), a node that is not on
  // (kInfeasible), another attempt of the job running, or this one already on the node
  // (kInvalidArgument).
  util::Status Start(const exec::LaunchSpec& spec) override;
  // The attempt exits after min(checkpoint_save_s, grace_s) (with status 137 when the grace cut
  // its checkpoint short); at once when that is 0.
  util::Status Stop(const std::string& job, int64_t attempt, double grace_s) override;
  // kNodeDown after the node's shutdown time, kNodeUp after its boot time (never for a node
  // with an injected boot failure). Asking for the state a node is in or heading to is a no-op.
  util::Status SetNodePower(const std::string& node, bool on) override;
  std::vector<exec::BackendNode> ListNodes() override;  // up: on, not switching
  std::vector<exec::BackendJob> ListJobs() override;    // one entry per part
  std::vector<exec::BackendEvent> Poll() override;

 private:
  static constexpr Micros kNever = std::numeric_limits<Micros>::max();
  struct Run {  // the current (or last) attempt of one job
    int64_t attempt = 0;
    bool active = false;
    bool stopping = false;
    int exit_status = 0;         // its exit status when the pending exit comes
    uint32_t token = 0;          // bumped whenever its pending event is superseded
    Micros pending_at = kNever;  // that event's time
    std::vector<int32_t> nodes;  // its parts, in launch order
    std::string failure;         // why it fails at start-up ("" when it does not)
  };
  enum class Power { kOn, kShuttingDown, kOff, kBooting };
  struct NodeRun {
    Power power = Power::kOn;
    bool boots = true;  // false: an injected boot failure
    uint32_t token = 0;
    std::vector<std::pair<double, double>> failing;  // injected start failures [from, until)
  };

  std::optional<int32_t> FindJob(const std::string& job) const;
  Run* Running(const std::string& job, int64_t attempt, int32_t* id);
  // Supersedes the job's pending event and schedules `kind` at `at_s` (none when infinite).
  void Schedule(int32_t id, double at_s, EventKind kind);
  void Report(exec::BackendEventKind kind, int32_t id, const Run& run, int32_t node);
  void Exit(int32_t id, bool stopped);

  const model::Cluster& cluster_;
  const model::Workload& workload_;
  EventQueue& queue_;
  SimBackendOptions options_;
  double now_s_ = 0;
  std::vector<Run> runs_;       // by job id
  std::vector<NodeRun> nodes_;  // by node id
  std::vector<exec::BackendEvent> ready_;
};

}  // namespace hetsched::sim
