// SlurmBackend: hetsched deciding for a real Slurm cluster (docs/slurm.md). Slurm keeps running
// the jobs; hetsched chooses where each one goes and pins it there.
//
//   - Nodes and their states come from `sinfo --json`; GRES types map to catalog device types
//     (slurm::Mapping). Nodes outside the managed partitions are not offered.
//   - Jobs hetsched starts (submitted through its API, with a command) become one Slurm batch
//     job per node of the placement: `sbatch -H --nodelist NODE --gres gpu:TYPE:N` named
//     `hetsched:JOB:ATTEMPT`, then `scontrol release` (one for all placed in a pass).
//   - Jobs submitted to Slurm directly wait held (the managed partitions hold every new job:
//     scripts/slurm-testbed.sh installs a job_submit.lua that does) and are handed to the daemon
//     as kSubmitted, named `slurm-ID`; when the daemon places one, it is pinned with `scontrol
//     update JobId=ID NodeList=NODE AdminComment=hetsched:attempt=N` and released (likewise).
//   - Stops: `scancel` (Slurm signals SIGTERM, SIGKILL after its KillWait) for hetsched's
//     jobs; `scontrol requeuehold` for sbatch jobs, which wait held for their next placement.
//   - Power: `scontrol update NodeName=X State=POWER_DOWN|POWER_UP`; Slurm's SuspendProgram
//     and ResumeProgram do the work, and the node's state in sinfo says when it is done.
// Everything hetsched needs after a restart is in Slurm (job names and admin comments).
//
// Reading Slurm (sinfo, squeue) happens on a thread of its own, so that a Slurm that is slow or
// down never stalls the daemon's control loop (and with it the API); actions (sbatch,
// scontrol, scancel) run on the caller's thread, and none is asked for while Slurm is away.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.h"
#include "backends/slurm/slurm_records.h"
#include "model/catalog.h"
#include "obs/log.h"
#include "util/status.h"
#include "util/subprocess.h"

namespace hetsched::svc {

struct SlurmBackendOptions {
  std::string conf;     // exported as SLURM_CONF to every command ("" : Slurm's default)
  std::string bin_dir;  // where sbatch, scontrol, scancel, sinfo, squeue are ("" : PATH)
  std::vector<std::string> partitions;  // managed; empty: every partition
  slurm::Mapping mapping;
  model::DeviceCatalog catalog;
  // Where jobs hetsched submits start and write JOB.ATTEMPT.NODE.log (a path the compute
  // nodes see: on a real cluster, a shared filesystem).
  std::string output_dir;
  double poll_interval_s = 1;  // at most one sinfo + squeue per interval
  double command_timeout_s = 30;
  // A placement Slurm leaves pending this long after hetsched placed it is taken back: a start
  // failure, with Slurm's pending reason (a reason Slurm never gets over, BadConstraints or
  // PartitionConfig, takes it back at once).
  double start_timeout_s = 120;
  Logger* logger = nullptr;  // Slurm unreachable, jobs it cannot describe; may be null
};

// Every call comes from the service's control loop; the reader thread only hands snapshots
// over.
class SlurmBackend final : public Backend {
 public:
  // Checks that the commands exist and that Slurm answers (sinfo). kUnavailable with Slurm's
  // own message when it does not; kInvalidArgument for missing commands.
  static util::Result<std::unique_ptr<SlurmBackend>> Create(SlurmBackendOptions options);
  ~SlurmBackend() override;  // releases what was placed, stops the reader thread
  SlurmBackend(const SlurmBackend&) = delete;
  SlurmBackend& operator=(const SlurmBackend&) = delete;

  std::string name() const override { return "slurm"; }
  bool RunsCommands() const override { return true; }
  util::Status Start(const LaunchSpec& spec) override;
  // The grace period is Slurm's KillWait, not `grace_s`.
  util::Status Stop(const std::string& job, int64_t attempt, double grace_s) override;
  util::Status SetNodePower(const std::string& node, bool on) override;
  std::vector<BackendNode> ListNodes() override;
  std::vector<BackendJob> ListJobs() override;
  std::vector<BackendEvent> Poll() override;
  void Forget(const std::string& job) override;
  bool Available() const override { return reachable_; }

  // Runs one Slurm command (`tool` from bin_dir) with SLURM_CONF and `extra_env` set; safe
  // from any thread.
  util::Result<util::CommandResult> Run(
      const std::string& tool, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& extra_env = {}) const;

 private:
  // A command whose failure the next poll settles (a cancel or hold of a job Slurm may have
  // ended meanwhile): run, and a failure logged.
  void RunOrWarn(const std::string& tool, const std::vector<std::string>& args) const;
  // One Slurm job started by hetsched: a node's part of an attempt.
  struct Part {
    std::string job;
    int64_t attempt = 0;
    std::string node;
    bool started = false;
    bool stop_requested = false;
    bool ended = false;  // its kExited is computed
    // When it was submitted: snapshots taken before then do not know it yet.
    std::chrono::steady_clock::time_point since{};
    // What start_timeout_s counts from: its submission, or the first snapshot after a restart.
    std::chrono::steady_clock::time_point placed_at{};
  };
  // A job submitted to Slurm directly, handed to the daemon as `slurm-ID`.
  struct Adopted {
    int64_t slurm_id = 0;
    int64_t attempt = 0;  // the daemon's current attempt; 0: never placed
    bool placed = false;  // released for `attempt` and not ended
    bool started = false;
    bool stop_requested = false;
    int32_t restarts = 0;  // Slurm's restart count when placed
    std::string node;
    // Placed by the daemon while Slurm still ends the last run (a failed node's job is
    // requeued by Slurm seconds later): pinned and released once it is pending again.
    bool deferred = false;
    std::chrono::steady_clock::time_point deferred_since{};
    // When hetsched last acted on it (placed, stopped): older snapshots are not judged by.
    std::chrono::steady_clock::time_point since{};
    // What start_timeout_s counts from: its placement, or the first snapshot after a restart.
    std::chrono::steady_clock::time_point placed_at{};
  };
  // What sinfo and squeue said, and when they were asked.
  struct Snapshot {
    std::vector<slurm::Node> nodes;
    std::vector<slurm::Job> jobs;
    std::chrono::steady_clock::time_point taken_at{};
  };

  explicit SlurmBackend(SlurmBackendOptions options);
  // sinfo + squeue now, or what failed ("sinfo --json: exit status 1: ...").
  util::Result<Snapshot> TakeSnapshot() const;
  // `command` failed, or could not run: kUnavailable naming it, with what Slurm said, and the
  // fix when that says Slurm found no controller (slurm::UnreachableHint).
  util::Status Failed(const std::string& command,
                      const util::Result<util::CommandResult>& result) const;
  // Why Slurm will not start a placed job that it still lists as pending, "" while it may:
  // a reason it never gets over, or a wait past start_timeout_s since `placed_at`.
  std::string NotStarting(const slurm::Job& j,
                          std::chrono::steady_clock::time_point placed_at) const;
  // A placement Slurm will not start is over (NotStarting says why): a kStartFailed, logged.
  void TakeBack(const std::string& job, int64_t attempt, const std::string& node, int64_t slurm_id,
                const std::string& why);
  void ReadLoop();  // the reader thread: a snapshot every poll interval
  // The reader's newest snapshot, if any, becomes the current one (Install), and the events
  // that follow from it are computed.
  void ApplyNewest();
  void Install(Snapshot snapshot);
  void ComputeEvents();
  // ComputeEvents' parts, in its order: hetsched's own jobs, the adopted ones (false: no longer
  // the daemon's, to be dropped; deferred and placed ones have their own), the nodes, and jobs
  // newly submitted to Slurm.
  void OwnJobEvents(int64_t slurm_id, Part& p);
  bool AdoptedJobEvents(const std::string& name, Adopted& a);
  void DeferredEvents(const std::string& name, Adopted& a, const slurm::Job& j);
  void PlacedEvents(const std::string& name, Adopted& a, const slurm::Job& j);
  void NodeEvents();
  void NewJobEvents();
  void Recover();  // own and adopted jobs from Slurm's names and admin comments
  bool Managed(const std::string& partition) const;
  std::string ToolPath(const std::string& tool) const;
  util::Status StartOwn(const LaunchSpec& spec);
  // What sbatch asks for on `node`: the GPUs of the GRES type mapped to the spec's device type,
  // or CPU sockets as their share of the node's CPUs.
  util::Result<std::string> ResourcesOn(const slurm::Node& node, const LaunchSpec& spec) const;
  std::vector<std::string> SbatchArgs(const LaunchSpec& spec, const std::string& partition,
                                      const std::string& resources) const;
  util::Status StartAdopted(Adopted& a, const LaunchSpec& spec);
  // Holds (if needed), pins to a.node with the attempt in the admin comment, releases.
  util::Status Place(Adopted& a);
  // Releases in one `scontrol release ID,ID,...` the jobs placed since the last call (a
  // placement costs one scontrol update, not two); a release that fails is a kStartFailed.
  void ReleasePlaced();
  void Exit(const std::string& job, int64_t attempt, const std::string& node,
            const slurm::Job* record, bool stopped, const std::string& lost_why);

  SlurmBackendOptions options_;
  std::map<std::string, std::string> env_;
  // Handed over by the reader thread.
  std::mutex read_mu_;
  std::condition_variable read_wake_;
  bool stopping_ = false;
  std::optional<Snapshot> newest_;  // not yet applied
  std::atomic<bool> reachable_{true};
  std::thread reader_;
  // The control loop's view: the snapshot applied last.
  std::chrono::steady_clock::time_point taken_at_{};
  std::vector<slurm::Node> nodes_;
  std::map<int64_t, slurm::Job> jobs_;      // by Slurm id
  std::map<int64_t, Part> own_;             // by Slurm id
  std::map<std::string, Adopted> adopted_;  // by the daemon's name, slurm-ID
  std::map<std::string, bool> node_usable_;
  std::set<int64_t> warned_;  // jobs in managed partitions hetsched did not place, said once
  std::vector<BackendEvent> events_;
  // Placed (pinned, or submitted held) and not yet released.
  struct Release {
    int64_t slurm_id = 0;
    std::string job;
    int64_t attempt = 0;
    std::string node;
  };
  std::vector<Release> to_release_;
};

}  // namespace hetsched::svc
