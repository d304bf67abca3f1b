// Schedule: where and when every task of a DAG runs, as the DAG planners return it, and the
// check that a schedule is valid (precedence with transfer times, no overlap, right costs).
#pragma once

#include <cstdint>
#include <vector>

#include "model/task_graph.h"
#include "plan/dag_problem.h"
#include "util/status.h"

namespace hetsched::plan {

struct TaskPlacement {
  int32_t processor = -1;
  double start = 0;   // time units of the graph (seconds with a cluster)
  double finish = 0;  // start + cost(task, processor)
};

struct Schedule {
  std::vector<TaskPlacement> placements;  // indexed by task
  double makespan = 0;                    // latest finish
};

// OK, or InvalidArgument naming the first violation: a task not placed or on a processor that
// cannot run it, a duration different from the cost, a start before a predecessor's data can
// arrive, two tasks overlapping on a processor, or a wrong makespan. Comparisons allow a
// relative tolerance of 1e-9 for floating-point rounding. O(V log V + E).
util::Status ValidateSchedule(const DagProblem& problem, const Schedule& schedule);
// The same under the graph's own uniform-bandwidth transfer model.
util::Status ValidateSchedule(const model::TaskGraph& graph, const Schedule& schedule);

// The schedule's latest finish (0 for no tasks).
double Makespan(const std::vector<TaskPlacement>& placements);

}  // namespace hetsched::plan
