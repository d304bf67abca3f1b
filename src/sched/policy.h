// Policy: the queue order and the way a job's device type is chosen, by name. The scheduler
// (sched/scheduler.h) runs the shared pipeline; a policy only supplies these choices.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "sched/job_record.h"
#include "sched/size_belief.h"
#include "util/status.h"

namespace hetsched::sched {

// How a policy picks the device type for a job it lets run.
enum class TypeChoice {
  kAgnostic,       // any allowed type; the one with most free capacity (spreads load)
  kFastest,        // the best-scoring allowed type with room, job by job in queue order
  kMaxThroughput,  // among the jobs let run, types go where they gain most (regret greedy)
  // Each class of jobs gets the devices per type the max-throughput LP gives it
  // (sched/throughput_plan.h); the policy's order decides which of its jobs use them.
  kPlanned,
};

// How a non-preemptive policy treats a job that cannot start now.
enum class Blocking {
  kStrict,    // nobody behind it starts (FIFO's head-of-line blocking)
  kBackfill,  // EASY: the head gets a reservation; others start if they do not delay it
};

struct PolicyTuning {
  // srpt-het-fair: a job's key is its remaining time on its best type minus aging x the time
  // since it arrived, so no job waits much longer than remaining / aging behind newer ones.
  double aging = 0.25;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // True when it may take devices from running preemptible jobs (re-deciding every event or
  // round). False: it only starts queued jobs.
  virtual bool preemptive() const = 0;
  virtual TypeChoice type_choice() const = 0;
  virtual Blocking blocking() const { return Blocking::kStrict; }
  // True: no job starts before an earlier one in the order that does not fit, even when the
  // policy re-decides running jobs (fifo-het). False: later jobs fill devices others leave.
  virtual bool in_order_only() const { return false; }
  // True when Key reads the size belief: the scheduler then re-sorts its queue whenever the
  // belief is refreshed.
  virtual bool key_uses_belief() const { return false; }
  // True when the order changes as jobs run (attained service, Gittins ranks): the policy
  // shares devices in time, and a started job keeps them for a quantum before it gives way to
  // a job now ahead of it (PreemptionPrice::quantum_s). False: a job loses its place only to
  // one the order put ahead for good (a higher priority), at once.
  virtual bool time_slices() const { return false; }
  // Queue order: smaller runs first; ties by arrival, then id (the scheduler adds those).
  // `belief` is what the scheduler has learned about job sizes (never the true sizes).
  // Contract: for a queued job, Key(job, now) = Key(job, 0) - c(now) with c the same for all
  // jobs while `belief` is unchanged, so the order of queued jobs never changes while they wait
  // and the scheduler keeps them in a sorted index (Key(job, 0)) instead of sorting at every
  // decision; it re-sorts when the belief is refreshed.
  virtual double Key(const JobRecord& job, double now_s, const SizeBelief& belief) const = 0;
  // True when c(now) above is 0: a queued job's Key does not change in time at all, so the
  // scheduler's sorted index holds every queued job's key now, not only its order.
  virtual bool queued_keys_fixed() const { return false; }
  // True when Key reads the job and the belief only through belief.Rank(job, now) and the
  // job's arrival: Key(job, now, belief) is KeyFromRank(belief.Rank(job, now), job.arrival_s,
  // now) bit for bit, and KeyFromRank does not fall as arrival grows. Queued jobs of one rank
  // are then in arrival order whatever the rank, and the scheduler keys those that never ran
  // (SizeBelief::RanksAsNew) with a single Rank after a belief refresh.
  virtual bool keys_by_rank() const { return false; }
  // The key of a job of rank `rank` that arrived at `arrival_s`, when keys_by_rank(); this
  // default is for a policy whose key is the rank itself.
  virtual double KeyFromRank(double rank, double /*arrival_s*/, double /*now_s*/) const {
    return rank;
  }
  // For a full decision that skips running jobs whose keys cannot be least of their class
  // (sched/running_order.h): a floor F with Key(job, t) >= F - KeyDrift() * t at every time t,
  // whatever the belief (up to rounding). -inf (every key may be least) unless
  // has_key_floor().
  virtual double KeyFloor(const JobRecord& /*job*/) const {
    return -std::numeric_limits<double>::infinity();
  }
  virtual bool has_key_floor() const { return false; }
  // How fast every job's key falls with time alike (aging), per second.
  virtual double KeyDrift() const { return 0; }
};

// Names with a one-line description each, for --help and errors.
std::string PolicyNames();
std::string PolicyHelp();
// The policy `default` stands for.
inline constexpr std::string_view kDefaultPolicy = "srpt-het-fair";
// Builds a policy by name ("default" resolves to kDefaultPolicy). Unknown: InvalidArgument
// listing the known ones.
util::Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                                 const PolicyTuning& tuning = {});

}  // namespace hetsched::sched
