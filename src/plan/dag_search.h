// The `best` DAG planner: the list schedulers (HEFT, CPOP, PEFT) seed an iterated local search
// over (task order, processor assignment) pairs, decoded by insertion-based placement. It
// returns the best schedule seen, so it is never worse than HEFT. Pure: the budget is a count
// of schedule evaluations plus an optional injected stop test (e.g. a wall-clock deadline), and
// it ends early once a schedule meets a proved lower bound the caller supplies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

struct SearchOptions {
  // Schedules decoded after the seeds; 0 returns the best seed. Each costs O(V log V + E).
  int64_t max_evaluations = 2000;
  uint64_t seed = 1;  // for the search's random generator; same seed, same result
  // Checked between evaluations when set; returning true ends the search (a time budget).
  std::function<bool()> should_stop;
  // A lower bound on every schedule's makespan (e.g. MakespanLowerBound, plan/dag_exact.h); the
  // search ends as soon as it finds a schedule this short (to a relative 1e-9). 0 (the default)
  // ends it only at a makespan of 0.
  double lower_bound = 0;
};

struct SearchResult {
  Schedule schedule;
  std::string found_by;  // "heft", "cpop", "peft", "one processor" or "local search"
  int64_t evaluations = 0;
  bool reached_lower_bound = false;  // the schedule is optimal: it meets options.lower_bound
};

// Seeds: HEFT, CPOP, PEFT and every processor that can run all tasks alone.
// Moves: reassign a task of the current critical path to another processor (half the time to
// the processor of one of its neighbours in the graph), or raise its
// place in the order; a move is kept when the makespan does not grow. After a stretch without
// improvement the search restarts from the best solution, perturbed by random reassignments or
// by a HEFT pass over noisy upward ranks.
SearchResult BestSchedule(const DagProblem& problem, const SearchOptions& options = {});

}  // namespace hetsched::plan
