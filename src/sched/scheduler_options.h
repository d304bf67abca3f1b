// SchedulerOptions: how a sched::Scheduler decides, beyond its policy. Its own header so that
// the pieces behind the Scheduler (sched/scheduler_core.h, sched/strategy.h) read the options
// without including sched/scheduler.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/tenant.h"
#include "sched/allocation.h"
#include "sched/lp_solver.h"
#include "sched/placement.h"
#include "sched/policy.h"

namespace hetsched::sched {

struct SchedulerOptions {
  std::vector<std::string> filters = {"compat", "memory"};
  std::string scorers = "speed";  // see MakeScorers
  // The naive baseline: any free device will do; the compat filter only records which types
  // would fail (the driver fails such starts after a start-up time).
  bool ignore_compat = false;
  // Gang placement (sched/placement.h): topology- and data-aware (islands, nodes, racks, the
  // job's data first), or agnostic (the free devices of the type in id order: what a scheduler
  // that knows no topology does; the demo's ablation ladder uses it).
  PlacementMode placement = PlacementMode::kTopology;
  // Score bonus that keeps a running job on its current type under kMaxThroughput unless
  // moving gains more than this (a fraction of its best speed): avoids needless migrations.
  double stickiness = 0.05;
  // Preemptive policies reconsider every running job at most this often (virtual seconds);
  // decisions in between only start queued jobs on free devices, in policy order (cheap:
  // O(placed + skipped) instead of O(queued + running)). 0: every decision reconsiders.
  // 300 s by default: a preemption costs a checkpoint and restore (tens of seconds to
  // minutes), so reshuffling more often rarely pays, and at 100,000 jobs a full reallocation
  // takes ~0.2 s while a fill decision takes microseconds (docs/benchmarks.md).
  double preempt_interval_s = 300;
  // Fidelity to Gavel's simulator for the in-order policies (fifo-het, as its fifo_perf); off
  // by default (docs/results.md, "Side by side with Gavel's own simulator"). A full decision
  // happens only when a job arrived or left since the last one and preempt_interval_s passed
  // (Gavel: 1920 s) or nothing runs, and nothing starts in between, so freed devices stay
  // idle. It rebuilds the assignment in arrival order with no claim of a running job on its
  // devices: an earlier job can push a later running one to a slower type, and the walk ends
  // at the first job that fits nowhere, stopping the running jobs behind it.
  bool gavel_rebuilds = false;
  PolicyTuning tuning;
  // Allocation policies (sched/allocation_policy.h): LP options and the solver (null: CLP).
  AllocationOptions allocation;
  std::shared_ptr<LpSolver> lp_solver;
  // Space sharing (Gavel's packing): after each decision, a queued job may join a running job
  // alone on devices of a type it may use, with the same gang size, when the profile's pair
  // entry for the two jobs there says the pair beats running apart: the sum of each job's pair
  // throughput relative to alone exceeds 1 + space_sharing_min_gain. Never more than two jobs
  // on a device. Needs a profile with pair (co-located) entries.
  bool space_sharing = false;
  double space_sharing_min_gain = 0.1;
  // A job without an estimate of its own gets the mean size of completed jobs of the same type
  // and gang size (SizeBelief::HistoryMean), once one has completed.
  bool history_estimates = false;
  // Use what jobs declare (Job::estimate_s, time_limit_s). False: the driver alone says what
  // is known (a study of what estimates are worth).
  bool declared_estimates = true;
  // A preempted job keeps its devices (JobPhase::kStopping) until the driver reports it
  // stopped (Stopped): its checkpoint is being written. False: devices free at once.
  bool stop_holds_devices = false;
  // Elastic training (sched/elastic.h): jobs with `elastic: {min, max}` run at a gang size the
  // scheduler picks in that range, start at the fastest that fits, grow into devices nobody
  // waits for and shrink so that a waiting job can start, each resize a restart from
  // checkpoint. Not under the LP allocation policies (they plan fixed gangs). False: every job
  // runs at its gang_size.
  bool elastic = false;
  // What the scheduler expects one stop and resume of a job to cost: seconds without progress
  // on its devices (checkpoint write plus restore). The simulator sets it from --checkpoint-save
  // and --restore. Policies stop or move a running job only when that pays (PreemptionPrice,
  // sched/preemption_price.h); an elastic job grows only when the time it saves is worth
  // several of these.
  double preemption_cost_s = 90;
  // Time-slicing policies (least attained service, Gittins ranks, the LP shares) let a started
  // job run at least this long before they stop it for another job, so that preemptions cost
  // at most cost / quantum of the time jobs run. Negative: PreemptionPrice::kQuantumPerCost x
  // preemption_cost_s (0 when preemption is free, as in Gavel's simulator). Set by hand it
  // must be at least preemption_cost_s.
  double preempt_quantum_s = -1;
  // Hysteresis of `default`'s throughput plan where preemptions cost something: a running
  // job's speed on the type it holds counts this fraction more. Negative:
  // PreemptionPrice::kPlanIncumbency. Ignored when preemption is free.
  double plan_incumbency = -1;
  // Teams sharing the cluster (model/tenant.h), resolved against it: the preemptive and
  // queue-order policies let tenants take turns by fair share within their quotas
  // (sched/tenant_shares.h); the LP allocation policies refuse them. Null: one queue.
  std::shared_ptr<const model::Tenants> tenants;
};

}  // namespace hetsched::sched
