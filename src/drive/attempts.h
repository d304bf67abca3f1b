// Attempts: carrying the scheduler's decisions out on an exec::Backend, and turning what the
// backend reports into the scheduler's state, with one set of rules for both drivers (the
// simulator's engine and the daemon). Each driver is a loop that feeds it decisions, backend
// events and a clock; what only one driver does around an attempt (the simulator's model of
// rates and links, the daemon's store and log) it does in its Effects.
//
// The rules (docs/architecture.md, "What happens to an attempt"):
// - A decision's stops go out before its starts. A preempted job the scheduler holds while it
//   writes its checkpoint (JobPhase::kStopping) gets Rules::stop_grace_s to exit; one the
//   scheduler already freed is stopped at once.
// - A placement starts as one backend start per node its devices span, under the job's next
//   attempt number. It restores its checkpoint (Rules::restore_s of start-up) when the
//   placement resumes the job.
// - A start failure ends the attempt at once (its other parts are stopped). After
//   Rules::start_failures_per_type failures in a row on a device type the job never goes
//   there again; it fails when no type it can use is left. Otherwise it is queued again.
// - A lost attempt (kLost, its node down, a device fault, vanished from the backend) ends at
//   once: its other parts are stopped, the work since its last checkpoint is lost, the job is
//   queued again. It is not a start failure.
// - A part of a gang that exits with an error stops the others.
// - Cancelling a queued job ends it; a running or stopping one is stopped and ends cancelled
//   when it exits (or is lost).
// - A job whose run time, summed over its attempts, reaches its time limit is stopped
//   (Rules::stop_grace_s) and fails with the reason. Backends that enforce limits themselves
//   (Slurm) are given the time left in LaunchSpec::time_limit_s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/backend.h"
#include "model/cluster.h"
#include "sched/scheduler.h"
#include "util/status.h"

namespace hetsched::drive {

// Why the driver asked an attempt to end.
enum class StopCause : uint8_t { kNone, kPreempt, kCancel, kTimeLimit };

// How an attempt ended.
enum class AttemptEnd : uint8_t {
  kCompleted,    // every part exited 0 on its own
  kFailed,       // a part exited with an error, or the job was stopped for its time limit
  kStartFailed,  // a part could not be started
  kPreempted,    // stopped for a preemption
  kCancelled,    // stopped because the job was cancelled
  kLost,         // gone through no fault of its own (node down, device fault)
};

// How a job ended.
enum class JobEnd : uint8_t { kCompleted, kFailed, kCancelled };

struct Rules {
  // Start failures in a row on one device type after which the job never goes there again.
  int32_t start_failures_per_type = 3;
  // How long a job asked to stop (a preemption it writes a checkpoint for, a cancel, a time
  // limit) may take before it is killed.
  double stop_grace_s = 30;
  // Start-up of an attempt that resumes from a checkpoint (reading it back).
  double restore_s = 0;
};

// The current (or last) attempt of one job.
struct Attempt {
  int64_t number = 0;    // 0: never launched
  bool active = false;   // launched and not over
  bool running = false;  // every part reported started
  bool adopted = false;  // recovered by Adopt, not launched by this book
  int32_t parts_to_start = 0;
  int32_t parts_left = 0;  // parts not yet exited
  StopCause stop = StopCause::kNone;
  model::DeviceTypeId type;
  double running_since_s = 0;  // when every part had started
  int first_failure = 0;       // the first nonzero exit status of a part
};

// What a driver does around the rules. Every method is called after the rules have updated
// the attempt, and (except Ended) before the scheduler hears of the change.
class Effects {
 public:
  virtual ~Effects() = default;
  // Before the backend hears of a decision (the daemon writes it ahead). An error cancels the
  // whole decision: its starts go back to the queue, its stops are taken back.
  virtual util::Status Record(const sched::Decision& decision, double now_s) {
    (void)decision, (void)now_s;
    return util::Status::Ok();
  }
  // Placement `p` is about to start as `specs` (one per node; job, attempt, node, devices and
  // startup_s filled in): the driver adds what it knows (command, modeled run time).
  virtual void Launching(const sched::Placement& p, std::vector<exec::LaunchSpec>& specs,
                         double now_s) = 0;
  // A running job is asked to stop for a preemption (its checkpoint write begins).
  virtual void Stopping(model::JobId job, double now_s) { (void)job, (void)now_s; }
  // Every part of the attempt runs.
  virtual void Running(model::JobId job, double now_s) = 0;
  // The steps a lost attempt keeps: what its last checkpoint saved. Called once per loss,
  // before AttemptOver.
  virtual double WorkKept(model::JobId job, double now_s) = 0;
  // The attempt is over; `message` says why when it did not complete. For kPreempted the
  // driver may hold the devices until the checkpoint is where it belongs: it returns false and
  // calls Attempts::CheckpointWritten later.
  virtual bool AttemptOver(model::JobId job, AttemptEnd end, const std::string& message,
                           double now_s) = 0;
  // The job is back in the scheduler's queue after its attempt ended as `end` (kPreempted,
  // kLost, kStartFailed).
  virtual void Requeued(model::JobId job, AttemptEnd end, const std::string& why, double now_s) {
    (void)job, (void)end, (void)why, (void)now_s;
  }
  // The job has left the scheduler.
  virtual void Ended(model::JobId job, JobEnd end, std::optional<int> exit_status,
                     const std::string& message, double now_s) = 0;
  // A backend event that is not about a tracked job's attempt: node up or down, a job
  // submitted to or withdrawn from the backend itself, a job the book does not know. True when
  // a decision is due.
  virtual bool OtherEvent(const exec::BackendEvent& ev, double now_s) = 0;
  // A backend call failed (Stop; a Start failure is a start failure).
  virtual void BackendFailed(model::JobId job, const std::string& call,
                             const util::Status& status) = 0;
  // The job the driver knows by backend name `name` (nullopt for none), for the backend's
  // events: the driver's own index of its jobs, so that a daemon holds one index of names, not
  // one here too (each was a tenth of a restart's CPU at 229,540 jobs). Attempts takes the
  // answer only when it tracks that job under that name.
  virtual std::optional<model::JobId> JobNamed(const std::string& name) const = 0;
};

// Not thread-safe; one caller (the driver's loop). The book is indexed by the scheduler's job
// id; the backend knows jobs by the names the driver tracks them under (Effects::JobNamed).
class Attempts {
 public:
  // `cluster`, `scheduler`, `backend` and `effects` are not owned and outlive the book.
  Attempts(const model::Cluster& cluster, sched::Scheduler& scheduler, exec::Backend& backend,
           Effects& effects, Rules rules);

  // The job's backend name and time limit, before it is first placed or adopted; a job the
  // daemon recovers was started `attempts` times before (its next attempt is one more).
  // Room for `jobs` tracked jobs without growing (a daemon recovering that many).
  void Reserve(size_t jobs);
  void Track(model::JobId job, std::string name, std::optional<double> time_limit_s,
             int64_t attempts = 0);
  // The job is no longer known (it ended): its id may be reused.
  void Untrack(model::JobId job);
  // A recovered attempt (after a daemon restart) the backend may still run: reported running
  // before the restart or not yet, `ran_s` of run time behind the job.
  void Adopt(model::JobId job, int64_t attempt, const std::vector<model::DeviceId>& devices,
             bool running, StopCause stop, double ran_s, double now_s);

  // Carries decision `d` out: stops first, then starts. False when Effects::Record refused it
  // (nothing was carried out).
  bool Apply(const sched::Decision& d, double now_s);
  // Reads the backend's events and applies the rules to them (others go to
  // Effects::OtherEvent). True when the scheduler's state changed: a decision is due.
  bool Poll(double now_s);
  // The attempt of `job` is gone (its node went down, a device failed, it vanished from the
  // backend): see the rules above. False when it had no active attempt.
  bool Lose(model::JobId job, const std::string& why, double now_s);
  // Cancels the job (queued: it ends now; running: it is stopped and ends when it exits, or
  // is lost); `why` becomes its end's message.
  void Cancel(model::JobId job, const std::string& why, double now_s);
  // A preempted job whose Effects::AttemptOver returned false has its checkpoint written: its
  // devices are free.
  void CheckpointWritten(model::JobId job, double now_s);
  // Stops the jobs whose time limit has passed (`stopped` of them now); `next_s`: the earliest
  // limit still ahead (infinity for none), for the driver's timer.
  struct TimeLimits {
    int32_t stopped = 0;
    double next_s = 0;
  };
  TimeLimits EnforceTimeLimits(double now_s);
  bool has_time_limits() const { return !limited_.empty(); }

  // Null for a job that is not tracked.
  const Attempt* attempt(model::JobId job) const;
  // The number the job's next launch gives its attempt (a driver writes it ahead).
  int64_t next_attempt(model::JobId job) const { return books_[job.value()].attempt.number + 1; }
  // Run time of the job over its attempts, the current one up to `now_s`.
  double RunTime(model::JobId job, double now_s) const;
  const Rules& rules() const { return rules_; }

 private:
  struct Book {
    std::string name;
    std::optional<double> time_limit_s;
    double ran_s = 0;  // run time of the attempts that ended
    Attempt attempt;
    std::vector<int32_t> start_failures;  // in a row, by device type
    std::string cancel_message;
    bool tracked = false;
  };
  Book& book(model::JobId job) { return books_[job.value()]; }
  double RunTime(const Book& b, double now_s) const;
  // Events the backend reports now, until it has none (actions taken while reacting report
  // theirs in the same pass, after the ones before them).
  bool Drain(double now_s);
  bool OnJobEvent(model::JobId job, const exec::BackendEvent& ev, double now_s);
  void Launch(const sched::Placement& p, double now_s);
  void Stop(model::JobId job, double grace_s, double now_s);
  void StartFailed(model::JobId job, const std::string& why, double now_s);
  // Every part exited: the attempt's end by its stop cause and exit status. True when the
  // scheduler's state changed.
  bool Exited(model::JobId job, bool stopped, double now_s);
  bool Released(model::JobId job, double now_s);
  // The job leaves the scheduler (Finish for a completed one, Drop otherwise).
  void EndJob(model::JobId job, JobEnd how, std::optional<int> exit_status,
              const std::string& message, double now_s);
  std::string TimeLimitMessage(const Book& b) const;

  const model::Cluster& cluster_;
  sched::Scheduler& sched_;
  exec::Backend& backend_;
  Effects& effects_;
  Rules rules_;
  std::vector<Book> books_;       // by scheduler job id
  std::vector<int32_t> limited_;  // tracked jobs with a time limit
  bool draining_ = false;
};

}  // namespace hetsched::drive
