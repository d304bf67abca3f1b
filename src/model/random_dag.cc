#include "model/random_dag.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace hetsched::model {
namespace {

double Round3(double x) { return std::round(x * 1000.0) / 1000.0; }

util::Status CheckOptions(const RandomDagOptions& o) {
  if (o.tasks < 1 || o.tasks > 1'000'000) {
    return util::Status::InvalidArgument(fmt::format("--tasks {}: expected 1 to 1000000", o.tasks));
  }
  if (o.processors < 1 || o.processors > 10'000) {
    return util::Status::InvalidArgument(
        fmt::format("--procs {}: expected 1 to 10000", o.processors));
  }
  if (!(o.ccr >= 0) || !std::isfinite(o.ccr)) {
    return util::Status::InvalidArgument(fmt::format("--ccr {}: expected a number >= 0", o.ccr));
  }
  if (!(o.alpha > 0) || !std::isfinite(o.alpha)) {
    return util::Status::InvalidArgument(fmt::format("--alpha {}: expected a number > 0", o.alpha));
  }
  if (!(o.beta >= 0 && o.beta < 2)) {
    return util::Status::InvalidArgument(fmt::format("--beta {}: expected 0 <= beta < 2", o.beta));
  }
  if (o.out_degree < 1) {
    return util::Status::InvalidArgument(
        fmt::format("--out-degree {}: expected at least 1", o.out_degree));
  }
  if (!(o.mean_cost > 0) || !std::isfinite(o.mean_cost)) {
    return util::Status::InvalidArgument(
        fmt::format("--mean-cost {}: expected a number > 0", o.mean_cost));
  }
  return util::Status::Ok();
}

// The one random stream a DAG is drawn from, in a fixed order (levels, task costs, edges, edge
// data), so that a seed gives the same DAG.
struct Draws {
  explicit Draws(uint64_t seed) : rng(seed) {}
  double Unit() { return unit(rng); }
  int32_t Between(int32_t lo, int32_t hi) {  // inclusive
    std::uniform_int_distribution<int32_t> d(lo, hi);
    return d(rng);
  }

  std::mt19937_64 rng;
  std::uniform_real_distribution<double> unit{0.0, 1.0};
};

// The first task of each of `height` levels of `v` tasks, and v at the end. Level sizes: one
// task each, the rest spread in proportion to U(0, 2) weights.
std::vector<int32_t> LevelStarts(int32_t v, int32_t height, Draws& draw) {
  std::vector<double> weight(height);
  double total = 0;
  for (double& w : weight) total += (w = 2.0 * draw.Unit() + 1e-9);
  std::vector<int32_t> size(height, 1);
  int32_t left = v - height;
  std::vector<int32_t> extra(height);
  int32_t given = 0;
  for (int32_t l = 0; l < height; ++l) {
    extra[l] = static_cast<int32_t>(std::floor(left * weight[l] / total));
    given += extra[l];
  }
  for (int32_t k = 0; given < left; ++k, ++given) ++extra[k % height];
  std::vector<int32_t> first(height + 1, 0);
  for (int32_t l = 0; l < height; ++l) {
    size[l] += extra[l];
    first[l + 1] = first[l] + size[l];
  }
  return first;
}

// Each task's cost on each processor: a mean w_i ~ U(0, 2 mean_cost), spread by beta around it.
void DrawTaskCosts(const RandomDagOptions& o, TaskGraph& g, Draws& draw) {
  g.tasks.resize(o.tasks);
  for (int32_t t = 0; t < o.tasks; ++t) {
    g.tasks[t].name = fmt::format("t{}", t);
    const double mean = 2.0 * o.mean_cost * draw.Unit();
    g.tasks[t].cost.resize(o.processors);
    for (double& c : g.tasks[t].cost) {
      c = Round3(mean * (1.0 - o.beta / 2 + o.beta * draw.Unit()));
    }
  }
}

// The edges (parent, child) between the levels that start at `first`.
std::set<std::pair<int32_t, int32_t>> DrawEdges(const RandomDagOptions& o,
                                                const std::vector<int32_t>& first, Draws& draw) {
  const int32_t v = o.tasks;
  const int32_t height = static_cast<int32_t>(first.size()) - 1;
  std::set<std::pair<int32_t, int32_t>> edges;
  auto level_of = [&](int32_t t) {
    return static_cast<int32_t>(std::upper_bound(first.begin(), first.end(), t) - first.begin()) -
           1;
  };
  auto pick_in = [&](int32_t level) { return draw.Between(first[level], first[level + 1] - 1); };
  for (int32_t t = 0; t < v; ++t) {
    const int32_t l = level_of(t);
    if (l + 1 >= height) continue;
    const int32_t d = draw.Between(1, o.out_degree);
    for (int32_t k = 0; k < d; ++k) {
      int32_t child_level = l + 1;
      if (l + 2 < height && draw.Unit() < 0.25) child_level = draw.Between(l + 2, height - 1);
      edges.insert({t, pick_in(child_level)});
    }
  }
  // Every task below the top level has a parent in the level above.
  std::vector<bool> has_parent(v, false);
  for (const auto& [a, b] : edges) has_parent[b] = true;
  for (int32_t t = first[std::min(1, height)]; t < v; ++t) {
    if (!has_parent[t]) edges.insert({pick_in(level_of(t) - 1), t});
  }
  return edges;
}

}  // namespace

util::Result<TaskGraph> GenerateRandomDag(const RandomDagOptions& o) {
  RETURN_IF_ERROR(CheckOptions(o));
  Draws draw(o.seed);
  const int32_t v = o.tasks;
  const double root = std::sqrt(static_cast<double>(v));
  const int32_t height = std::clamp(static_cast<int32_t>(std::lround(root / o.alpha)), 1, v);
  const std::vector<int32_t> first = LevelStarts(v, height, draw);

  TaskGraph g;
  g.name = fmt::format("random-v{}-ccr{}-a{}-b{}-p{}-s{}", v, o.ccr, o.alpha, o.beta, o.processors,
                       o.seed);
  g.bandwidth = 1.0;
  for (int32_t p = 0; p < o.processors; ++p)
    g.processors.push_back({fmt::format("P{}", p + 1), ""});
  DrawTaskCosts(o, g, draw);
  for (const auto& [a, b] : DrawEdges(o, first, draw)) {
    g.edges.push_back({a, b, Round3(2.0 * o.ccr * o.mean_cost * draw.Unit())});
  }
  RETURN_IF_ERROR(g.Finalize());
  return g;
}

}  // namespace hetsched::model
