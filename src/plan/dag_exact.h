// The `exact` DAG planner: a depth-first branch and bound that finds a makespan-optimal
// schedule (the oracle for the heuristics' tests), and the lower bound on the makespan it proves.
// Proves most 20-task, 4-processor random DAGs within seconds, some in minutes
// (docs/results.md). A node budget and an injected stop test keep larger inputs in check.
#pragma once

#include <cstdint>
#include <functional>

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

struct ExactOptions {
  int64_t max_nodes = 50'000'000;  // search nodes before giving up the proof
  // Checked before every search node and between the incumbent search's evaluations when set;
  // returning true ends the search with the best schedule found so far (a time budget: the
  // caller owns the clock, this layer reads none).
  std::function<bool()> should_stop;
};

struct ExactResult {
  Schedule schedule;
  // False when max_nodes ran out or should_stop ended the search: `schedule` is then the best
  // found.
  bool optimal = false;
  // Proved: no valid schedule is shorter. The schedule's makespan when optimal; otherwise the
  // largest of MakespanLowerBound and the smallest bound over the search nodes left open, rounded
  // up when the problem has IntegerTimes().
  double lower_bound = 0;
  bool stopped = false;  // should_stop ended the search
  int64_t nodes = 0;
};

// Why it is exact: for a fixed assignment and order on each processor, starting every task as
// early as its inputs and its processor allow is never worse, and such a schedule is built by
// appending tasks in order of start time (ties by topological position). The search branches
// on (ready task, processor) pairs appended in that order, so it enumerates every such
// schedule. Pruning, all by bounds valid for every schedule: the incumbent (best of HEFT, CPOP,
// PEFT and four seeded local searches); each unplaced task's earliest finish over processors
// plus its tail (predecessors and descendants either pay a transfer or share its processor and
// run one after another there, whichever is shorter); machine bounds (from one processor's
// view, each task either ends elsewhere no earlier than its best finish and tail there, or
// runs on it, one at a time with the others kept; with a task fixed on that processor, its
// relatives elsewhere also pay a transfer; the smallest over the fixed task's processors); an
// energetic bound (tasks that cannot start before a time, or have a long tail, share the
// processors' remaining time); and symmetry between identical empty processors. Optimal to a
// relative 1e-9.
ExactResult ExactSchedule(const DagProblem& problem, const ExactOptions& options = {});

// A lower bound on the makespan of every valid schedule, before any search: the largest of the
// longest path at smallest costs, the smallest total work over the processors, and the branch
// and bound's bound at its root (earliest finish plus tail, machine and energetic bounds); rounded
// up when the problem has IntegerTimes(). O(V (V + E) + E deg P^2) for graphs of up to 256 tasks
// (larger ones skip the all-pairs part), plus one bound at the root.
double MakespanLowerBound(const DagProblem& problem);

}  // namespace hetsched::plan
