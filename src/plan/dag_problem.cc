#include "plan/dag_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace hetsched::plan {

DagProblem::DagProblem(const model::TaskGraph& graph)
    : DagProblem(graph, TransferModel::Uniform(graph.num_processors(), graph.bandwidth)) {}

DagProblem::DagProblem(const model::TaskGraph& graph, TransferModel transfer)
    : graph_(graph), transfer_(std::move(transfer)) {
  const int32_t n = graph.num_tasks();
  mean_cost_.assign(n, 0);
  min_cost_.assign(n, std::numeric_limits<double>::infinity());
  for (int32_t t = 0; t < n; ++t) {
    double sum = 0;
    int32_t count = 0;
    for (double c : graph.tasks[t].cost) {
      if (c == model::kCannotRun) continue;
      sum += c;
      ++count;
      min_cost_[t] = std::min(min_cost_[t], c);
    }
    mean_cost_[t] = count > 0 ? sum / count : 0;
  }
  mean_comm_.resize(graph.edges.size());
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    mean_comm_[k] = transfer_.MeanTime(graph.edges[k].data);
  }
}

double DagProblem::MinCostCriticalPath() const {
  std::vector<double> finish(num_tasks(), 0);
  double longest = 0;
  for (int32_t t : graph_.topological_order()) {
    double start = 0;
    for (int32_t k : graph_.in_edges(t)) start = std::max(start, finish[graph_.edges[k].from]);
    finish[t] = start + min_cost_[t];
    longest = std::max(longest, finish[t]);
  }
  return longest;
}

double DagProblem::BestSequentialTime() const {
  double best = std::numeric_limits<double>::infinity();
  for (int32_t p = 0; p < num_processors(); ++p) {
    double sum = 0;
    for (int32_t t = 0; t < num_tasks(); ++t) sum += cost(t, p);
    best = std::min(best, sum);
  }
  return best;
}

bool DagProblem::IntegerTimes() const {
  const auto whole = [](double x) { return std::isfinite(x) && x == std::floor(x); };
  for (int32_t t = 0; t < num_tasks(); ++t) {
    for (double c : graph_.tasks[t].cost) {
      if (c != model::kCannotRun && !whole(c)) return false;
    }
  }
  for (size_t k = 0; k < graph_.edges.size(); ++k) {
    for (int32_t a = 0; a < num_processors(); ++a) {
      for (int32_t b = 0; b < num_processors(); ++b) {
        if (a != b && !whole(CommTime(static_cast<int32_t>(k), a, b))) return false;
      }
    }
  }
  return true;
}

}  // namespace hetsched::plan
