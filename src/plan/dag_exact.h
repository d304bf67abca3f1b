// The `exact` DAG planner: a depth-first branch and bound that finds a makespan-optimal
// schedule (the oracle for the heuristics' tests). Proves most 20-task, 4-processor random DAGs
// within seconds, some in minutes (docs/results.md). A node budget keeps larger inputs in check.
#pragma once

#include <cstdint>

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

struct ExactOptions {
  int64_t max_nodes = 50'000'000;  // search nodes before giving up the proof
};

struct ExactResult {
  Schedule schedule;
  bool optimal = false;  // false when max_nodes ran out: `schedule` is then the best found
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

}  // namespace hetsched::plan
