#include "plan/heft.h"

#include <algorithm>

#include "plan/list_scheduler.h"

namespace hetsched::plan {

std::vector<double> UpwardRanks(const DagProblem& problem) {
  const model::TaskGraph& g = problem.graph();
  std::vector<double> rank(problem.num_tasks(), 0);
  const std::vector<int32_t>& topo = g.topological_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const int32_t t = *it;
    double tail = 0;
    for (int32_t k : g.out_edges(t)) {
      tail = std::max(tail, problem.mean_comm(k) + rank[g.edges[k].to]);
    }
    rank[t] = problem.mean_cost(t) + tail;
  }
  return rank;
}

std::vector<double> DownwardRanks(const DagProblem& problem) {
  const model::TaskGraph& g = problem.graph();
  std::vector<double> rank(problem.num_tasks(), 0);
  for (int32_t t : g.topological_order()) {
    double head = 0;
    for (int32_t k : g.in_edges(t)) {
      const int32_t j = g.edges[k].from;
      head = std::max(head, rank[j] + problem.mean_cost(j) + problem.mean_comm(k));
    }
    rank[t] = head;
  }
  return rank;
}

Schedule Heft(const DagProblem& problem) {
  const std::vector<int32_t> order = OrderByPriority(problem, UpwardRanks(problem));
  return ScheduleEarliestFinish(problem, order);
}

}  // namespace hetsched::plan
