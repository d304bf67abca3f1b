#include "plan/peft.h"

#include <algorithm>
#include <limits>

#include "plan/list_scheduler.h"

namespace hetsched::plan {

std::vector<double> OptimisticCostTable(const DagProblem& problem) {
  const model::TaskGraph& g = problem.graph();
  const int32_t n = problem.num_tasks();
  const int32_t np = problem.num_processors();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> oct(static_cast<size_t>(n) * np, 0);
  const std::vector<int32_t>& topo = g.topological_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int32_t t = *it;
    double* row = &oct[static_cast<size_t>(t) * np];
    for (int32_t k : g.out_edges(t)) {
      const int32_t s = g.edges[k].to;
      const double* srow = &oct[static_cast<size_t>(s) * np];
      // Smallest and second smallest OCT(s, q) + w(s, q), over processors able to run s.
      double min1 = kInf, min2 = kInf;
      int32_t arg1 = -1;
      for (int32_t q = 0; q < np; ++q) {
        const double x = srow[q] + problem.cost(s, q);
        if (x < min1) {
          min2 = min1;
          min1 = x;
          arg1 = q;
        } else if (x < min2) {
          min2 = x;
        }
      }
      const double comm = problem.mean_comm(k);
      for (int32_t p = 0; p < np; ++p) {
        const double other = (arg1 == p ? min2 : min1) + comm;
        const double own = srow[p] + problem.cost(s, p);
        row[p] = std::max(row[p], std::min(own, other));
      }
    }
  }
  return oct;
}

Schedule Peft(const DagProblem& problem) {
  const int32_t n = problem.num_tasks();
  const int32_t np = problem.num_processors();
  const std::vector<double> oct = OptimisticCostTable(problem);
  std::vector<double> rank(n, 0);
  for (int32_t t = 0; t < n; ++t) {
    double sum = 0;
    for (int32_t p = 0; p < np; ++p) sum += oct[static_cast<size_t>(t) * np + p];
    rank[t] = sum / np;
  }
  ReadyQueue ready(problem, rank);
  ListScheduler ls(problem);
  while (!ready.empty()) {
    const int32_t t = ready.Pop();
    ListScheduler::Choice best{-1, 0, 0};
    double best_key = std::numeric_limits<double>::infinity();
    for (int32_t p = 0; p < np; ++p) {
      const ListScheduler::Choice c = ls.OnProcessor(t, p);
      const double key = c.finish + oct[static_cast<size_t>(t) * np + p];
      if (key < best_key) {
        best_key = key;
        best = c;
      }
    }
    ls.Place(t, best.processor, best.start);
    ready.Release(t);
  }
  return ls.TakeSchedule();
}

}  // namespace hetsched::plan
