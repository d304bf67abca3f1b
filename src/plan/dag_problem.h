// DagProblem: a finalized task graph together with the transfer model it is scheduled under,
// plus the per-task and per-edge means that the list schedulers' priorities use.
#pragma once

#include <cstdint>
#include <vector>

#include "model/task_graph.h"
#include "plan/transfer_model.h"

namespace hetsched::plan {

// Keeps a reference to `graph`, which must be finalized and outlive the problem. Read-only and
// safe to share between threads after construction.
class DagProblem {
 public:
  DagProblem(const model::TaskGraph& graph, TransferModel transfer);
  // The graph's own model: uniform bandwidth between distinct processors.
  explicit DagProblem(const model::TaskGraph& graph);

  const model::TaskGraph& graph() const { return graph_; }
  const TransferModel& transfer() const { return transfer_; }
  int32_t num_tasks() const { return graph_.num_tasks(); }
  int32_t num_processors() const { return graph_.num_processors(); }
  double cost(int32_t task, int32_t processor) const { return graph_.cost(task, processor); }
  bool CanRun(int32_t task, int32_t processor) const { return graph_.CanRun(task, processor); }

  // Time for edge `edge`'s data to go from processor `from` to `to` (0 when equal).
  double CommTime(int32_t edge, int32_t from, int32_t to) const {
    return transfer_.Time(from, to, graph_.edges[edge].data);
  }
  // w-bar: mean cost over the processors that can run the task.
  double mean_cost(int32_t task) const { return mean_cost_[task]; }
  // Smallest cost over processors.
  double min_cost(int32_t task) const { return min_cost_[task]; }
  // c-bar: mean transfer time of the edge over ordered pairs of distinct processors.
  double mean_comm(int32_t edge) const { return mean_comm_[edge]; }

  // Longest path using every task's smallest cost and no communication: the denominator of
  // the schedule length ratio (SLR) of Topcuoglu et al.
  double MinCostCriticalPath() const;
  // Smallest total cost of running every task on one processor (infinity if no processor can
  // run them all): the numerator of the speedup.
  double BestSequentialTime() const;
  // True when every cost of a task on a processor that can run it and every transfer time between
  // distinct processors is a whole number: then every makespan is one, and a lower bound on it
  // rounds up. O(V P + E P^2).
  bool IntegerTimes() const;

 private:
  const model::TaskGraph& graph_;
  TransferModel transfer_;
  std::vector<double> mean_cost_, min_cost_, mean_comm_;
};

}  // namespace hetsched::plan
