#include "model/task_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <set>
#include <utility>

namespace hetsched::model {
namespace {

util::Status Problem(const std::string& field, const std::string& problem,
                     const std::string& expected = "") {
  std::string msg = field + ": " + problem;
  if (!expected.empty()) msg += " (expected " + expected + ")";
  return util::Status::InvalidArgument(msg);
}

// CSR adjacency: for each task, the indexes of edges selected by `key`.
void BuildCsr(const std::vector<DagEdge>& edges, int32_t n, bool by_from,
              std::vector<int32_t>& start, std::vector<int32_t>& list) {
  start.assign(n + 1, 0);
  for (const DagEdge& e : edges) ++start[(by_from ? e.from : e.to) + 1];
  for (int32_t i = 0; i < n; ++i) start[i + 1] += start[i];
  list.assign(edges.size(), 0);
  std::vector<int32_t> fill(start.begin(), start.end() - 1);
  for (int32_t k = 0; k < static_cast<int32_t>(edges.size()); ++k) {
    const DagEdge& e = edges[k];
    list[fill[by_from ? e.from : e.to]++] = k;
  }
}

// One cost per processor for each task, each a finite number >= 0 or kCannotRun, and at least
// one processor able to run each task.
util::Status CheckTaskCosts(const std::vector<DagTask>& tasks,
                            const std::vector<DagProcessor>& processors) {
  const int32_t p = static_cast<int32_t>(processors.size());
  for (int32_t t = 0; t < static_cast<int32_t>(tasks.size()); ++t) {
    const DagTask& task = tasks[t];
    if (static_cast<int32_t>(task.cost.size()) != p) {
      return Problem(fmt::format("tasks[{}].cost", t),
                     fmt::format("{} costs for {} processors", task.cost.size(), p),
                     "one cost per processor");
    }
    bool runnable = false;
    for (int32_t q = 0; q < p; ++q) {
      const double c = task.cost[q];
      if (c == kCannotRun) continue;
      if (!std::isfinite(c) || c < 0) {
        return Problem(fmt::format("tasks[{}].cost.{}", t, processors[q].name),
                       fmt::format("{} is not a valid cost", c), "a finite number >= 0");
      }
      runnable = true;
    }
    if (!runnable) {
      return Problem(fmt::format("tasks[{}].cost", t),
                     fmt::format("no processor can run task '{}'", task.name),
                     "a finite cost on at least one processor");
    }
  }
  return util::Status::Ok();
}

// Edges between two different known tasks, with a finite amount of data >= 0, none twice.
util::Status CheckEdges(const std::vector<DagTask>& tasks, const std::vector<DagEdge>& edges) {
  const int32_t n = static_cast<int32_t>(tasks.size());
  std::set<std::pair<int32_t, int32_t>> seen;
  for (int32_t k = 0; k < static_cast<int32_t>(edges.size()); ++k) {
    const DagEdge& e = edges[k];
    if (e.from < 0 || e.from >= n || e.to < 0 || e.to >= n) {
      return Problem(fmt::format("edges[{}]", k), "endpoint is not a task of the graph");
    }
    if (e.from == e.to) {
      return Problem(fmt::format("edges[{}]", k),
                     fmt::format("task '{}' depends on itself", tasks[e.from].name));
    }
    if (!std::isfinite(e.data) || e.data < 0) {
      return Problem(fmt::format("edges[{}].data", k),
                     fmt::format("{} is not a valid amount of data", e.data),
                     "a finite number >= 0");
    }
    if (!seen.insert({e.from, e.to}).second) {
      return Problem(fmt::format("edges[{}]", k),
                     fmt::format("duplicate edge {} -> {}", tasks[e.from].name, tasks[e.to].name));
    }
  }
  return util::Status::Ok();
}

}  // namespace

std::vector<int32_t> TaskGraph::FindCycle() const {
  const int32_t n = num_tasks();
  std::vector<int32_t> start, out;
  BuildCsr(edges, n, /*by_from=*/true, start, out);
  // Iterative DFS with colours; `via` remembers the edge that entered each grey task.
  std::vector<int8_t> colour(n, 0);  // 0 white, 1 grey (on stack), 2 black
  std::vector<int32_t> via(n, -1);
  std::vector<std::pair<int32_t, int32_t>> stack;  // task, next out-edge offset
  for (int32_t root = 0; root < n; ++root) {
    if (colour[root] != 0) continue;
    colour[root] = 1;
    stack.push_back({root, start[root]});
    while (!stack.empty()) {
      auto& [t, next] = stack.back();
      if (next == start[t + 1]) {
        colour[t] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t k = out[next++];
      const int32_t s = edges[k].to;
      if (colour[s] == 1) {  // back edge: walk the grey chain from t back to s
        std::vector<int32_t> cycle{k};
        for (int32_t u = t; u != s; u = edges[via[u]].from) cycle.push_back(via[u]);
        std::reverse(cycle.begin(), cycle.end());
        // Start the cycle at its first edge in file order, so messages are stable.
        auto first = std::min_element(cycle.begin(), cycle.end());
        std::rotate(cycle.begin(), first, cycle.end());
        return cycle;
      }
      if (colour[s] == 0) {
        colour[s] = 1;
        via[s] = k;
        stack.push_back({s, start[s]});
      }
    }
  }
  return {};
}

util::Status TaskGraph::Finalize() {
  const int32_t n = num_tasks();
  const int32_t p = num_processors();
  if (n == 0) return Problem("tasks", "the graph has no tasks", "at least one task");
  if (p == 0) return Problem("processors", "there are no processors", "at least one processor");
  if (!(bandwidth > 0) || std::isnan(bandwidth)) {
    return Problem("bandwidth", fmt::format("{} is not a positive number", bandwidth),
                   "data units per time unit > 0");
  }
  RETURN_IF_ERROR(CheckTaskCosts(tasks, processors));
  RETURN_IF_ERROR(CheckEdges(tasks, edges));
  std::vector<int32_t> cycle = FindCycle();
  if (!cycle.empty()) {
    std::string path = tasks[edges[cycle[0]].from].name;
    for (int32_t k : cycle) path += " -> " + tasks[edges[k].to].name;
    return Problem(fmt::format("edges[{}]", cycle[0]), "cycle " + path, "an acyclic graph");
  }

  BuildCsr(edges, n, /*by_from=*/true, out_start_, out_);
  BuildCsr(edges, n, /*by_from=*/false, in_start_, in_);
  std::vector<int32_t> indegree(n);
  for (int32_t t = 0; t < n; ++t) indegree[t] = in_start_[t + 1] - in_start_[t];
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (int32_t t = 0; t < n; ++t) {
    if (indegree[t] == 0) ready.push(t);
  }
  topo_.clear();
  topo_.reserve(n);
  while (!ready.empty()) {
    const int32_t t = ready.top();
    ready.pop();
    topo_.push_back(t);
    for (int32_t k : out_edges(t)) {
      if (--indegree[edges[k].to] == 0) ready.push(edges[k].to);
    }
  }
  topo_pos_.assign(n, 0);
  for (int32_t i = 0; i < n; ++i) topo_pos_[topo_[i]] = i;
  return util::Status::Ok();
}

}  // namespace hetsched::model
