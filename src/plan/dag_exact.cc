#include "plan/dag_exact.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "plan/cpop.h"
#include "plan/dag_search.h"
#include "plan/heft.h"
#include "plan/peft.h"

namespace hetsched::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class BranchAndBound {
 public:
  BranchAndBound(const DagProblem& problem, const ExactOptions& options)
      : problem_(problem),
        g_(problem.graph()),
        options_(options),
        n_(problem.num_tasks()),
        np_(problem.num_processors()) {}

  ExactResult Run() {
    // A tight incumbent prunes most of the tree: a few seeded searches are cheap next to it.
    best_ = Heft(problem_);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SearchOptions search;
      search.max_evaluations = std::max<int64_t>(1000, 50 * n_);
      search.seed = seed;
      Schedule s = BestSchedule(problem_, search).schedule;
      if (s.makespan < best_.makespan) best_ = std::move(s);
    }
    for (const Schedule& s : {Cpop(problem_), Peft(problem_)}) {
      if (s.makespan < best_.makespan) best_ = s;
    }
    // sym_[p]: processors q < p that are interchangeable with p.
    sym_.assign(np_, {});
    for (int32_t p = 0; p < np_; ++p) {
      for (int32_t q = 0; q < p; ++q) {
        bool same = problem_.transfer().Interchangeable(p, q);
        for (int32_t t = 0; t < n_ && same; ++t) same = problem_.cost(t, p) == problem_.cost(t, q);
        if (same) sym_[p].push_back(q);
      }
    }
    placed_.assign(n_, false);
    proc_.assign(n_, -1);
    start_.assign(n_, 0);
    finish_.assign(n_, 0);
    missing_.assign(n_, 0);
    for (int32_t t = 0; t < n_; ++t) missing_[t] = static_cast<int32_t>(g_.in_edges(t).size());
    avail_.assign(np_, 0);
    count_on_.assign(np_, 0);
    eft_.assign(static_cast<size_t>(n_) * np_, 0);
    min_work_left_ = 0;
    for (int32_t t = 0; t < n_; ++t) min_work_left_ += problem_.min_cost(t);
    const std::vector<int32_t>& pos = g_.topological_position();
    pos_ = &pos;
    Dfs(0, 0, -kInf, -1);
    ExactResult r;
    r.schedule = best_;
    r.optimal = nodes_ <= options_.max_nodes;
    r.nodes = nodes_;
    return r;
  }

 private:
  double Threshold() const { return best_.makespan * (1 - 1e-9); }

  double LowerBound(double last_start) {
    double lb = 0;
    double load = min_work_left_;
    for (int32_t p = 0; p < np_; ++p) load += avail_[p];
    lb = load / np_;
    for (int32_t t : g_.topological_order()) {
      if (placed_[t]) continue;
      double best_t = kInf;
      for (int32_t p = 0; p < np_; ++p) {
        double& e = eft_[static_cast<size_t>(t) * np_ + p];
        const double w = problem_.cost(t, p);
        if (w == model::kCannotRun) {
          e = kInf;
          continue;
        }
        double ready = std::max(last_start, avail_[p]);
        for (int32_t k : g_.in_edges(t)) {
          const int32_t u = g_.edges[k].from;
          if (placed_[u]) {
            ready = std::max(ready, finish_[u] + problem_.CommTime(k, proc_[u], p));
          } else {
            double arrive = kInf;
            for (int32_t q = 0; q < np_; ++q) {
              arrive = std::min(
                  arrive, eft_[static_cast<size_t>(u) * np_ + q] + problem_.CommTime(k, q, p));
            }
            ready = std::max(ready, arrive);
          }
        }
        e = ready + w;
        best_t = std::min(best_t, e);
      }
      lb = std::max(lb, best_t);
    }
    return lb;
  }

  void Dfs(int32_t depth, double makespan, double last_start, int32_t last_pos) {
    if (++nodes_ > options_.max_nodes) return;
    if (depth == n_) {
      if (makespan < best_.makespan) {
        best_.placements.assign(n_, {});
        for (int32_t t = 0; t < n_; ++t) best_.placements[t] = {proc_[t], start_[t], finish_[t]};
        best_.makespan = makespan;
      }
      return;
    }
    if (std::max(makespan, LowerBound(std::max(0.0, last_start))) >= Threshold()) return;

    struct Child {
      double finish;
      double start;
      int32_t task;
      int32_t p;
    };
    std::vector<Child> children;
    for (int32_t t = 0; t < n_; ++t) {
      if (placed_[t] || missing_[t] != 0) continue;
      for (int32_t p = 0; p < np_; ++p) {
        const double w = problem_.cost(t, p);
        if (w == model::kCannotRun) continue;
        if (count_on_[p] == 0) {
          bool twin = false;  // an identical empty processor with a lower index is tried instead
          for (int32_t q : sym_[p]) twin = twin || count_on_[q] == 0;
          if (twin) continue;
        }
        double s = avail_[p];
        for (int32_t k : g_.in_edges(t)) {
          const int32_t u = g_.edges[k].from;
          s = std::max(s, finish_[u] + problem_.CommTime(k, proc_[u], p));
        }
        if (s < last_start || (s == last_start && (*pos_)[t] < last_pos)) continue;
        children.push_back({s + w, s, t, p});
      }
    }
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
      if (a.finish != b.finish) return a.finish < b.finish;
      if (a.task != b.task) return a.task < b.task;
      return a.p < b.p;
    });
    for (const Child& c : children) {
      if (std::max(makespan, c.finish) >= Threshold()) continue;
      if (nodes_ > options_.max_nodes) return;
      const double old_avail = avail_[c.p];
      placed_[c.task] = true;
      proc_[c.task] = c.p;
      start_[c.task] = c.start;
      finish_[c.task] = c.finish;
      avail_[c.p] = c.finish;
      ++count_on_[c.p];
      min_work_left_ -= problem_.min_cost(c.task);
      for (int32_t k : g_.out_edges(c.task)) --missing_[g_.edges[k].to];
      Dfs(depth + 1, std::max(makespan, c.finish), c.start, (*pos_)[c.task]);
      for (int32_t k : g_.out_edges(c.task)) ++missing_[g_.edges[k].to];
      min_work_left_ += problem_.min_cost(c.task);
      --count_on_[c.p];
      avail_[c.p] = old_avail;
      placed_[c.task] = false;
      proc_[c.task] = -1;
    }
  }

  const DagProblem& problem_;
  const model::TaskGraph& g_;
  const ExactOptions& options_;
  const int32_t n_, np_;
  const std::vector<int32_t>* pos_ = nullptr;
  Schedule best_;
  std::vector<std::vector<int32_t>> sym_;
  std::vector<bool> placed_;
  std::vector<int32_t> proc_, missing_, count_on_;
  std::vector<double> start_, finish_, avail_, eft_;
  double min_work_left_ = 0;
  int64_t nodes_ = 0;
};

}  // namespace

ExactResult ExactSchedule(const DagProblem& problem, const ExactOptions& options) {
  return BranchAndBound(problem, options).Run();
}

}  // namespace hetsched::plan
