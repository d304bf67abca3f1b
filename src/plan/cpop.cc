#include "plan/cpop.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "plan/heft.h"
#include "plan/list_scheduler.h"

namespace hetsched::plan {

Schedule Cpop(const DagProblem& problem) {
  const model::TaskGraph& g = problem.graph();
  const int32_t n = problem.num_tasks();
  const std::vector<double> up = UpwardRanks(problem);
  const std::vector<double> down = DownwardRanks(problem);
  std::vector<double> priority(n);
  for (int32_t t = 0; t < n; ++t) priority[t] = up[t] + down[t];

  // |CP| is the highest priority of an entry task.
  int32_t entry = -1;
  for (int32_t t : g.topological_order()) {
    if (!g.in_edges(t).empty()) continue;
    if (entry < 0 || priority[t] > priority[entry]) entry = t;
  }
  const double cp_length = priority[entry];
  const double tol = 1e-9 * std::max(1.0, cp_length);
  std::vector<bool> critical(n, false);
  for (int32_t t = entry; t >= 0;) {
    critical[t] = true;
    int32_t next = -1;
    for (int32_t k : g.out_edges(t)) {
      const int32_t s = g.edges[k].to;
      if (std::abs(priority[s] - cp_length) > tol) continue;
      if (next < 0 || priority[s] > priority[next]) next = s;
    }
    t = next;
  }
  int32_t cp_processor = -1;
  double best_sum = std::numeric_limits<double>::infinity();
  for (int32_t p = 0; p < problem.num_processors(); ++p) {
    double sum = 0;
    for (int32_t t = 0; t < n; ++t) {
      if (critical[t]) sum += problem.cost(t, p);
    }
    if (sum < best_sum) {
      best_sum = sum;
      cp_processor = p;
    }
  }

  ReadyQueue ready(problem, priority);
  ListScheduler ls(problem);
  while (!ready.empty()) {
    const int32_t t = ready.Pop();
    const ListScheduler::Choice c =
        critical[t] && cp_processor >= 0 ? ls.OnProcessor(t, cp_processor) : ls.EarliestFinish(t);
    ls.Place(t, c.processor, c.start);
    ready.Release(t);
  }
  return ls.TakeSchedule();
}

}  // namespace hetsched::plan
