#include "plan/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hetsched::plan {
namespace {

util::Status Invalid(const std::string& msg) { return util::Status::InvalidArgument(msg); }

}  // namespace

double Makespan(const std::vector<TaskPlacement>& placements) {
  double makespan = 0;
  for (const TaskPlacement& pl : placements) makespan = std::max(makespan, pl.finish);
  return makespan;
}

util::Status ValidateSchedule(const model::TaskGraph& graph, const Schedule& schedule) {
  return ValidateSchedule(DagProblem(graph), schedule);
}

util::Status ValidateSchedule(const DagProblem& problem, const Schedule& schedule) {
  const model::TaskGraph& g = problem.graph();
  const int32_t n = g.num_tasks();
  if (static_cast<int32_t>(schedule.placements.size()) != n) {
    return Invalid(
        fmt::format("schedule places {} tasks, the graph has {}", schedule.placements.size(), n));
  }
  const double scale = std::max(1.0, schedule.makespan);
  const double tol = 1e-9 * scale;
  for (int32_t t = 0; t < n; ++t) {
    const TaskPlacement& pl = schedule.placements[t];
    const std::string& name = g.tasks[t].name;
    if (pl.processor < 0 || pl.processor >= g.num_processors()) {
      return Invalid(fmt::format("task '{}' is on no valid processor", name));
    }
    if (!g.CanRun(t, pl.processor)) {
      return Invalid(fmt::format("task '{}' is on {}, which cannot run it", name,
                                 g.processors[pl.processor].name));
    }
    if (!std::isfinite(pl.start) || pl.start < -tol) {
      return Invalid(fmt::format("task '{}' starts at {}", name, pl.start));
    }
    if (std::abs(pl.finish - pl.start - g.cost(t, pl.processor)) > tol) {
      return Invalid(fmt::format("task '{}' runs {} to {} but costs {} on {}", name, pl.start,
                                 pl.finish, g.cost(t, pl.processor),
                                 g.processors[pl.processor].name));
    }
  }
  for (int32_t k = 0; k < static_cast<int32_t>(g.edges.size()); ++k) {
    const model::DagEdge& e = g.edges[k];
    const TaskPlacement& a = schedule.placements[e.from];
    const TaskPlacement& b = schedule.placements[e.to];
    const double arrival = a.finish + problem.CommTime(k, a.processor, b.processor);
    if (b.start < arrival - tol) {
      return Invalid(fmt::format("task '{}' starts at {} before the data of '{}' arrives at {}",
                                 g.tasks[e.to].name, b.start, g.tasks[e.from].name, arrival));
    }
  }
  std::vector<int32_t> order(n);
  for (int32_t t = 0; t < n; ++t) order[t] = t;
  std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    const TaskPlacement& a = schedule.placements[x];
    const TaskPlacement& b = schedule.placements[y];
    if (a.processor != b.processor) return a.processor < b.processor;
    if (a.start != b.start) return a.start < b.start;
    return a.finish < b.finish;
  });
  for (int32_t i = 1; i < n; ++i) {
    const TaskPlacement& a = schedule.placements[order[i - 1]];
    const TaskPlacement& b = schedule.placements[order[i]];
    if (a.processor == b.processor && b.start < a.finish - tol) {
      return Invalid(fmt::format("tasks '{}' and '{}' overlap on {}", g.tasks[order[i - 1]].name,
                                 g.tasks[order[i]].name, g.processors[a.processor].name));
    }
  }
  if (std::abs(Makespan(schedule.placements) - schedule.makespan) > tol) {
    return Invalid(fmt::format("makespan {} differs from the latest finish {}", schedule.makespan,
                               Makespan(schedule.placements)));
  }
  return util::Status::Ok();
}

}  // namespace hetsched::plan
