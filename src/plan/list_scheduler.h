// ListScheduler: the state shared by the list-scheduling heuristics (HEFT, CPOP, PEFT and the
// search in dag_search.h): per-processor timelines with insertion into idle gaps, and the
// ready time of a task's inputs on each processor.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

class ListScheduler {
 public:
  // Keeps a reference to `problem`, which must outlive the scheduler.
  explicit ListScheduler(const DagProblem& problem);

  // When every input of `task` can be on processor `p`: max over predecessors of their finish
  // plus the transfer time. All predecessors must be placed. O(in-degree).
  double ReadyTime(int32_t task, int32_t p) const;
  // Earliest start >= `ready` of an idle gap on `p` at least `duration` long (the
  // insertion-based policy of HEFT). O(log k + gaps scanned) for k tasks on p.
  double EarliestStart(int32_t p, double ready, double duration) const;

  struct Choice {
    int32_t processor = -1;
    double start = 0;
    double finish = 0;
  };
  // Insertion-based earliest start and finish of `task` on `p` (finish infinite if p cannot
  // run it).
  Choice OnProcessor(int32_t task, int32_t p) const;
  // HEFT's choice: the processor with the earliest finish; ties go to the lowest index.
  Choice EarliestFinish(int32_t task) const;

  void Place(int32_t task, int32_t p, double start);
  bool placed(int32_t task) const { return placements_[task].processor >= 0; }
  const std::vector<TaskPlacement>& placements() const { return placements_; }
  // The finished schedule; every task must be placed.
  Schedule TakeSchedule();

 private:
  struct Interval {
    double start;
    double finish;
  };
  const DagProblem& problem_;
  std::vector<TaskPlacement> placements_;
  std::vector<std::vector<Interval>> timelines_;  // per processor, sorted by start
};

// Places tasks in `order` (which must list every task after its predecessors), each on the
// processor with the earliest finish: HEFT's second phase for any priority order.
Schedule ScheduleEarliestFinish(const DagProblem& problem, std::span<const int32_t> order);
// Places tasks in `order` on the processors given by `assignment` (indexed by task), each at
// its earliest insertion slot. Every assigned processor must be able to run its task.
Schedule ScheduleFixed(const DagProblem& problem, std::span<const int32_t> order,
                       std::span<const int32_t> assignment);

// Task indexes sorted by decreasing `priority`, ties by topological position; the result lists
// every task after its predecessors when priority(pred) >= priority(succ).
std::vector<int32_t> OrderByPriority(const DagProblem& problem,
                                     const std::vector<double>& priority);

// Tasks whose predecessors have all been placed, highest priority first (ties: earlier in
// topological order): the ready list of CPOP and PEFT, whose priorities need not follow edges.
class ReadyQueue {
 public:
  // Keeps references: `problem` and `priority` (indexed by task) must outlive the queue.
  ReadyQueue(const DagProblem& problem, const std::vector<double>& priority);
  bool empty() const { return heap_.empty(); }
  // Removes and returns the ready task of highest priority.
  int32_t Pop();
  // Marks `task` placed: successors whose last predecessor it was become ready.
  void Release(int32_t task);

 private:
  bool Lower(int32_t a, int32_t b) const;  // a has lower priority than b
  const model::TaskGraph& graph_;
  const std::vector<double>& priority_;
  std::vector<int32_t> missing_;  // predecessors not yet placed, per task
  std::vector<int32_t> heap_;
};

}  // namespace hetsched::plan
