// ThroughputPlan: how many devices of each type each class of jobs should hold for the most
// work done per second, normalized by each job's best type (the max-throughput LP of Gavel,
// Narayanan et al., OSDI 2020, Section 4.2, over job classes). A policy that orders jobs by
// its own rule (srpt-het-fair) fills the plan in that order: the order decides who runs, the
// plan decides on which type, so that under load slow devices go to the jobs that lose least
// on them instead of to whoever comes next (docs/simulator.md, "Types by throughput plan").
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sched/allocation.h"
#include "sched/job_record.h"
#include "sched/lp_solver.h"
#include "sched/scheduler_core.h"
#include "util/status.h"

namespace hetsched::sched {

class ThroughputPlan {
 public:
  // Budgets (devices) at or below this are the LP's round-off, not a plan (PlannedOn).
  static constexpr double kPlannedMin = 1e-6;

  explicit ThroughputPlan(std::shared_ptr<LpSolver> solver) : solver_(std::move(solver)) {}

  // Plans `jobs` (slots of the core's records) on `capacity` devices per type, at the time of
  // the core's decision under way.
  // Jobs that can progress nowhere get no budget. On a solver failure the plan is empty (every
  // Pick answers -1) and the error is returned for the caller to log.
  util::Status Solve(const SchedulerCore& core, const std::vector<int32_t>& jobs,
                     const std::vector<int32_t>& capacity);
  // The same plan as Solve over the jobs of `keyed` sorted by key followed by `after`, without
  // sorting `keyed` (any order): each class's row comes where its least-keyed job would put it.
  util::Status SolveByKey(const SchedulerCore& core,
                          const std::vector<SchedulerCore::QueueKey>& keyed,
                          const std::vector<int32_t>& after, const std::vector<int32_t>& capacity);
  // One class's jobs for SolveByClass: the least key among them, its known class
  // (FixedClassOf), and how many there are.
  struct ClassJobs {
    SchedulerCore::QueueKey least;
    int32_t known = -1;
    int32_t count = 0;
  };
  // Running jobs of one known class that SolveByClass books as they run, counted: how many,
  // and, where the class has no row from the keyed jobs, the slot of the one of them first in
  // core.running() (-1 elsewhere).
  struct KeptJobs {
    int32_t known = -1;
    int32_t count = 0;
    int32_t first = -1;
  };
  // The same plan as SolveByKey over keyed jobs grouped by class in `classes` (any order),
  // followed by the running jobs booked as they run, in the order of core.running(), grouped
  // by class in `kept`: a class without a row from `classes` gets its row where its first such
  // job would add it, so `kept` lists those classes in the order of their `first` (the others
  // anywhere). Gives no job its row: SetRow does, for the jobs the caller looks at.
  util::Status SolveByClass(const SchedulerCore& core, std::vector<ClassJobs> classes,
                            const std::vector<KeptJobs>& kept,
                            const std::vector<int32_t>& capacity);
  // The job in `slot`, of known class `known`, is planned in its class's row of the last solve
  // (-1 for none).
  void SetRow(int32_t slot, int32_t known) {
    class_of_[slot] = known >= 0 ? row_of_known_[known] : -1;
  }
  // The row of known class `known` in the last solve; -1: none.
  int32_t RowOfClass(int32_t known) const { return row_of_known_[known]; }
  // KnownClassOf when it stays the same while the job runs or waits as now; nullopt when it
  // moves with the job's progress. Both valid until generation() changes.
  std::optional<int32_t> FixedClassOf(const SchedulerCore& core, int32_t slot, const JobRecord& r);
  // Changes when the known classes are forgotten (their indices then mean other classes).
  int64_t generation() const { return generation_; }
  // Forgets the known classes when there are too many (Solve and SolveByKey do it first).
  void ForgetIfFull(const SchedulerCore& core);
  // The known class of `r` (in `slot`) for SolveByClass; -1 when it progresses nowhere.
  int32_t KnownClassOf(const SchedulerCore& core, int32_t slot, const JobRecord& r) {
    return ClassOf(core, slot, r);
  }
  // The type `r` (in `slot`) should take: `prefer` when its class still has budget there, else
  // the type where its class has the most budget left; only types with room for its gang
  // (free[t] + held[t], the devices nobody holds and those it may take). -1 where its class
  // has no budget left on such a type.
  int32_t Pick(int32_t slot, const JobRecord& r, const std::vector<int32_t>& free,
               const std::vector<int32_t>& held, int32_t prefer) const;
  // Books `r`'s gang on type t against its class's budget.
  void Take(int32_t slot, const JobRecord& r, int32_t type);
  // Gives `r`'s gang on type t back to its class's budget (a booked job that moves).
  void Return(int32_t slot, const JobRecord& r, int32_t type) {
    if (static_cast<size_t>(slot) >= class_of_.size() || class_of_[slot] < 0) return;
    budget_[static_cast<size_t>(class_of_[slot]) * types_ + type] += r.gang;
  }
  // Books `jobs` gangs of `row` on type t, one at a time (the roundings of a Take per job).
  void TakeGangs(int32_t row, int32_t type, int32_t jobs) {
    double& budget = budget_[static_cast<size_t>(row) * types_ + type];
    for (int32_t i = 0; i < jobs; ++i) budget -= row_gang_[row];
  }
  // The LP row (class) the last Solve gave the job in `slot`; -1: planned nowhere.
  int32_t RowOf(int32_t slot) const {
    return static_cast<size_t>(slot) < class_of_.size() ? class_of_[slot] : -1;
  }
  int32_t rows() const { return types_ > 0 ? static_cast<int32_t>(budget_.size()) / types_ : 0; }
  // The gang of `row`'s jobs.
  int32_t RowGang(int32_t row) const { return row_gang_[row]; }
  // Devices of type t still to hand out to `row`'s jobs.
  double Budget(int32_t row, int32_t t) const {
    return budget_[static_cast<size_t>(row) * types_ + t];
  }
  // Whether the last successful solve gave known class `known` budget on type t, before any
  // job took from it: the types the plan meant the class for, good until the next solve
  // begins (between full decisions). Any budget counts, a fraction of a gang included (where no
  // class had half a gang, the walk left the devices to the classes that had a fraction);
  // kPlannedMin keeps out the LP's round-off. False for a class the last solve had
  // no row for, and for every class after a failed solve or before the first (Planned).
  bool PlannedOn(int32_t known, int32_t t) const {
    return Planned(known) &&
           solved_[static_cast<size_t>(row_of_known_[known]) * types_ + t] > kPlannedMin;
  }
  // PlannedOn of known class `known` for every type (1: planned), read once per solve: the
  // fills between full decisions ask it for every queued job they pass over. Null where
  // Planned(known) is false; valid until the next solve begins.
  const char* PlannedTypes(int32_t known) const {
    return Planned(known) ? &planned_[static_cast<size_t>(row_of_known_[known]) * types_] : nullptr;
  }
  // Whether PlannedOn can answer for class `known`: the last solve succeeded and had its row.
  bool Planned(int32_t known) const {
    return known >= 0 && static_cast<size_t>(known) < row_of_known_.size() &&
           row_of_known_[known] >= 0 && !solved_.empty();
  }
  // Whether the last solve succeeded with a plan.
  bool solved() const { return !solved_.empty(); }
  // What is left to hand out, for a caller that books tentatively and may need to go back.
  const std::vector<double>& budgets() const { return budget_; }
  void RestoreBudgets(const std::vector<double>& budgets) { budget_ = budgets; }

 private:
  // Jobs with the same speeds relative to their best and the same gang are one class (the LP
  // cannot tell them apart); a running job's speed on the type it holds counts
  // PreemptionPrice::plan_incumbency() more.
  struct ClassKey {
    std::vector<double> speeds;  // per type, relative to the best (1)
    int32_t gang = 0;
  };
  // A job's class as the last Solve found it, valid while the job is the same submission
  // (`seq`), holds the same type, runs or waits as then and has the same gang size (an
  // elastic job's speeds and allowed types are those of its size: sched/elastic.h, ApplySize).
  // Kept only for jobs whose class reads nothing else that changes while they wait or run:
  // those whose checkpoint loads on every type they may use (NewWorkShare 1 everywhere).
  struct CachedClass {
    int64_t seq = -1;  // -1: nothing cached
    int32_t type = -1;
    int32_t gang = 0;
    bool running = false;
    int32_t known = -1;  // a known class; -1: the job is planned nowhere
  };
  // Whether `cached` holds the class of `r` as it is now.
  static bool Holds(const CachedClass& cached, const JobRecord& r) {
    return cached.seq == r.seq && cached.type == (r.type.valid() ? r.type.value() : -1) &&
           cached.running == (r.phase == JobPhase::kRunning) && cached.gang == r.gang;
  }
  // The class of record `r` (in `slot`): a known class, -1 when it can progress nowhere.
  int32_t ClassOf(const SchedulerCore& core, int32_t slot, const JobRecord& r);
  // The known class of `key`, added when new.
  int32_t Known(const ClassKey& key);
  // The hash of a class's speeds (types_ of them) and gang.
  size_t HashOf(const double* speeds, int32_t gang) const;
  // Makes the index `size` slots (a power of two) and files every known class in it.
  void Reindex(size_t size);
  // A solve's first step: forgets the last plan's rows, and (`may_forget`) the known classes
  // when there are too many.
  void Begin(const SchedulerCore& core, const std::vector<int32_t>& capacity,
             bool may_forget = true);
  // Counts job `id` of known class `known` in its row, adding the row when new.
  void AddToRow(AllocationProblem& problem, int32_t id, const JobRecord& r, int32_t known);
  // Solves `problem` (its rows added) into budget_.
  util::Status SolveRows(const AllocationProblem& problem, const SchedulerCore& core);

  std::shared_ptr<LpSolver> solver_;
  // Every class seen (forgotten past kMaxKnown, with the cache), and each job's class.
  // A known class's speeds (types_ of them from known * types_) and gang, by known class,
  // and an open-addressed index of them (-1: an empty slot; at most half full). Flat arrays
  // with room made at each solve: a class added by a fill between solves (an elastic job
  // resized at the queue's head) allocates nothing, where a hash map's node did (a malloc
  // that, in a heap full of freed chunks, took milliseconds of a fill decision).
  std::vector<double> known_speeds_;
  std::vector<int32_t> known_gang_;
  std::vector<int32_t> known_slots_;
  ClassKey lookup_key_;              // ClassOf's scratch
  std::vector<CachedClass> cached_;  // by slot
  // The last solve's LP row of each known class (-1: none), reset as each solve begins.
  std::vector<int32_t> row_of_known_;
  // SolveByKey's scratch: by known class, the index in `keyed` of its least-keyed job (-1: none
  // yet); by entry of `keyed`, its known class.
  std::vector<int32_t> least_at_;
  std::vector<int32_t> known_of_keyed_;
  int32_t types_ = 0;
  std::vector<int32_t> class_of_;  // by slot; -1: not planned
  std::vector<double> budget_;     // classes x types: devices still to hand out
  std::vector<double> solved_;     // budget_ as the last solve made it (empty: no plan)
  std::vector<char> planned_;      // by solved_ entry: above kPlannedMin (PlannedTypes)
  std::vector<int32_t> row_gang_;  // by class
  int64_t generation_ = 0;
};

}  // namespace hetsched::sched
