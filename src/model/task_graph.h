// TaskGraph: one job split into tasks joined by precedence edges, with a cost per processor
// for every task and the data every edge carries. The input of the DAG planners (plan/heft.h ...).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "util/status.h"

namespace hetsched::model {

// The cost of a task on a processor that cannot run it.
inline constexpr double kCannotRun = std::numeric_limits<double>::infinity();

struct DagProcessor {
  std::string name;
  std::string type;  // device type name; empty when the file gives none
};

struct DagTask {
  std::string name;
  // Time to run the task on each processor (index = processor), in the graph's time unit
  // (seconds when it comes from a cluster); kCannotRun where that processor cannot run it.
  std::vector<double> cost;
};

struct DagEdge {
  int32_t from = 0;  // task index
  int32_t to = 0;    // task index
  double data = 0;   // amount moved: bytes, or the file's abstract data unit
};

// A directed acyclic task graph. Fill the public fields, then call Finalize(), which checks
// the structure and builds the adjacency used by the planners; the accessors below are valid
// only after a successful Finalize(). Not thread-safe while being filled; read-only afterwards.
class TaskGraph {
 public:
  std::string name;
  std::vector<DagProcessor> processors;
  std::vector<DagTask> tasks;
  std::vector<DagEdge> edges;
  // Data units per time unit between two distinct processors (1 in the paper's sample). Transfer
  // time is data / bandwidth between distinct processors and 0 on the same one.
  double bandwidth = 1.0;

  // Checks: at least one task and one processor, a cost per processor for every task (finite
  // and >= 0, or kCannotRun), at least one processor able to run each task, edges between known
  // distinct tasks with finite data >= 0, no duplicate edge, no cycle, bandwidth > 0.
  // Messages name the field ("tasks[3].cost[P2]"); readers check first so they can add
  // file positions. O(V + E).
  util::Status Finalize();

  // Edges forming a cycle, in order (each edge's `to` is the next one's `from`); empty when the
  // graph is acyclic. Works before Finalize() on edges with valid endpoints. O(V + E).
  std::vector<int32_t> FindCycle() const;

  int32_t num_tasks() const { return static_cast<int32_t>(tasks.size()); }
  int32_t num_processors() const { return static_cast<int32_t>(processors.size()); }
  double cost(int32_t task, int32_t processor) const { return tasks[task].cost[processor]; }
  bool CanRun(int32_t task, int32_t processor) const {
    return tasks[task].cost[processor] != kCannotRun;
  }
  // Edge indexes leaving / entering a task.
  std::span<const int32_t> out_edges(int32_t task) const {
    return {out_.data() + out_start_[task], out_.data() + out_start_[task + 1]};
  }
  std::span<const int32_t> in_edges(int32_t task) const {
    return {in_.data() + in_start_[task], in_.data() + in_start_[task + 1]};
  }
  // Tasks in a topological order (Kahn's algorithm, lowest index first among ready tasks).
  const std::vector<int32_t>& topological_order() const { return topo_; }
  // Position of each task in topological_order().
  const std::vector<int32_t>& topological_position() const { return topo_pos_; }

 private:
  std::vector<int32_t> out_start_, out_, in_start_, in_;
  std::vector<int32_t> topo_, topo_pos_;
};

}  // namespace hetsched::model
