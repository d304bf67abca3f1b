#include "plan/dag_search.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "plan/cpop.h"
#include "plan/heft.h"
#include "plan/list_scheduler.h"
#include "plan/peft.h"

namespace hetsched::plan {
namespace {

struct Solution {
  std::vector<int32_t> order;       // precedence-respecting
  std::vector<int32_t> assignment;  // task -> processor
  Schedule schedule;
};

// The order and assignment that reproduce a schedule (or a better one) when decoded: tasks by
// start time, ties by topological position.
Solution FromSchedule(const DagProblem& problem, const Schedule& schedule) {
  const std::vector<int32_t>& pos = problem.graph().topological_position();
  Solution s;
  s.order.resize(problem.num_tasks());
  for (int32_t t = 0; t < problem.num_tasks(); ++t) s.order[t] = t;
  std::sort(s.order.begin(), s.order.end(), [&](int32_t a, int32_t b) {
    const double sa = schedule.placements[a].start, sb = schedule.placements[b].start;
    if (sa != sb) return sa < sb;
    return pos[a] < pos[b];
  });
  s.assignment.resize(problem.num_tasks());
  for (int32_t t = 0; t < problem.num_tasks(); ++t) {
    s.assignment[t] = schedule.placements[t].processor;
  }
  s.schedule = schedule;
  return s;
}

// Tasks on a critical path of the schedule: from the last finisher back through whichever
// constraint fixed each start (an input's arrival or the previous task on the processor).
std::vector<int32_t> CriticalTasks(const DagProblem& problem, const Schedule& schedule) {
  const model::TaskGraph& g = problem.graph();
  const int32_t n = problem.num_tasks();
  const auto& pl = schedule.placements;
  const double tol = 1e-9 * std::max(1.0, schedule.makespan);
  std::vector<int32_t> by_proc(n);
  for (int32_t t = 0; t < n; ++t) by_proc[t] = t;
  std::sort(by_proc.begin(), by_proc.end(), [&](int32_t a, int32_t b) {
    if (pl[a].processor != pl[b].processor) return pl[a].processor < pl[b].processor;
    if (pl[a].start != pl[b].start) return pl[a].start < pl[b].start;
    return pl[a].finish < pl[b].finish;
  });
  std::vector<int32_t> prev_on_proc(n, -1);
  for (int32_t i = 1; i < n; ++i) {
    if (pl[by_proc[i]].processor == pl[by_proc[i - 1]].processor) {
      prev_on_proc[by_proc[i]] = by_proc[i - 1];
    }
  }
  int32_t t = 0;
  for (int32_t u = 1; u < n; ++u) {
    if (pl[u].finish > pl[t].finish) t = u;
  }
  std::vector<int32_t> path;
  std::vector<bool> seen(n, false);
  while (t >= 0 && !seen[t]) {
    seen[t] = true;
    path.push_back(t);
    int32_t next = -1;
    for (int32_t k : g.in_edges(t)) {
      const int32_t u = g.edges[k].from;
      if (pl[u].finish + problem.CommTime(k, pl[u].processor, pl[t].processor) >=
          pl[t].start - tol) {
        next = u;
        break;
      }
    }
    if (next < 0 && prev_on_proc[t] >= 0 && pl[prev_on_proc[t]].finish >= pl[t].start - tol) {
      next = prev_on_proc[t];
    }
    t = next;
  }
  return path;
}

// A precedence-respecting order by upward rank scaled by random noise (Kahn's algorithm
// picking the ready task of highest noisy rank).
std::vector<int32_t> NoisyRankOrder(const DagProblem& problem, const std::vector<double>& rank,
                                    std::mt19937_64& rng, double noise) {
  const model::TaskGraph& g = problem.graph();
  const int32_t n = problem.num_tasks();
  std::uniform_real_distribution<double> u(1.0 - noise, 1.0 + noise);
  std::vector<double> key(n);
  for (int32_t t = 0; t < n; ++t) key[t] = rank[t] * u(rng);
  std::priority_queue<std::pair<double, int32_t>> ready;
  std::vector<int32_t> missing(n);
  for (int32_t t = 0; t < n; ++t) {
    missing[t] = static_cast<int32_t>(g.in_edges(t).size());
    if (missing[t] == 0) ready.push({key[t], -t});
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t t = -ready.top().second;
    ready.pop();
    order.push_back(t);
    for (int32_t k : g.out_edges(t)) {
      const int32_t s = g.edges[k].to;
      if (--missing[s] == 0) ready.push({key[s], -s});
    }
  }
  return order;
}

class Search {
 public:
  Search(const DagProblem& problem, const SearchOptions& options)
      : problem_(problem), options_(options), rng_(options.seed) {}

  SearchResult Run() {
    const int32_t n = problem_.num_tasks();
    SearchResult result;
    result.schedule = Heft(problem_);
    result.found_by = "heft";
    for (auto [name, s] : {std::pair<const char*, Schedule>{"cpop", Cpop(problem_)},
                           std::pair<const char*, Schedule>{"peft", Peft(problem_)}}) {
      if (s.makespan < result.schedule.makespan) {
        result.schedule = std::move(s);
        result.found_by = name;
      }
    }
    // With heavy communication the best schedule often keeps everything on one processor.
    for (int32_t p = 0; p < problem_.num_processors(); ++p) {
      bool all = true;
      for (int32_t t = 0; t < n && all; ++t) all = problem_.CanRun(t, p);
      if (!all) continue;
      const std::vector<int32_t> assignment(n, p);
      Schedule s = ScheduleFixed(problem_, problem_.graph().topological_order(), assignment);
      if (s.makespan < result.schedule.makespan) {
        result.schedule = std::move(s);
        result.found_by = "one processor";
      }
    }
    best_ = FromSchedule(problem_, result.schedule);
    current_ = best_;
    rank_ = UpwardRanks(problem_);
    const int64_t patience = std::max<int64_t>(50, 2 * n);
    int64_t since_improvement = 0;
    std::uniform_real_distribution<double> coin(0, 1);
    const auto optimal = [&] {
      return result.schedule.makespan <= options_.lower_bound * (1 + 1e-9);
    };
    while (!optimal() && evaluations_ < options_.max_evaluations &&
           !(options_.should_stop && options_.should_stop())) {
      if (since_improvement >= patience) {
        Restart();
        since_improvement = 0;
      } else if (!Move(coin(rng_) < 0.7)) {
        ++since_improvement;
      } else {
        since_improvement = 0;
      }
      if (current_.schedule.makespan < result.schedule.makespan) {
        result.schedule = current_.schedule;
        result.found_by = "local search";
        best_ = current_;
      }
    }
    result.evaluations = evaluations_;
    result.reached_lower_bound = optimal();
    return result;
  }

 private:
  Schedule Decode(const Solution& s) {
    ++evaluations_;
    return ScheduleFixed(problem_, s.order, s.assignment);
  }

  // One local move on current_; true when it lowered the makespan.
  bool Move(bool reassign) {
    const std::vector<int32_t> critical = CriticalTasks(problem_, current_.schedule);
    std::uniform_int_distribution<size_t> pick(0, critical.size() - 1);
    const int32_t t = critical[pick(rng_)];
    Solution next = current_;
    if (reassign) {
      std::vector<int32_t> options;
      std::uniform_int_distribution<int32_t> half(0, 1);
      if (half(rng_) == 0) {
        // Join a neighbour's processor, saving that transfer (helps most at high CCR).
        const model::TaskGraph& g = problem_.graph();
        for (int32_t k : g.in_edges(t)) options.push_back(next.assignment[g.edges[k].from]);
        for (int32_t k : g.out_edges(t)) options.push_back(next.assignment[g.edges[k].to]);
        std::erase_if(options,
                      [&](int32_t p) { return p == next.assignment[t] || !problem_.CanRun(t, p); });
      }
      if (options.empty()) {
        for (int32_t p = 0; p < problem_.num_processors(); ++p) {
          if (p != next.assignment[t] && problem_.CanRun(t, p)) options.push_back(p);
        }
      }
      if (options.empty()) {
        ++evaluations_;  // count the attempt so a budget always ends the search
        return false;
      }
      std::uniform_int_distribution<size_t> q(0, options.size() - 1);
      next.assignment[t] = options[q(rng_)];
    } else {
      // Move t earlier in the order, but after its last predecessor.
      const auto it = std::find(next.order.begin(), next.order.end(), t);
      const int32_t at = static_cast<int32_t>(it - next.order.begin());
      std::vector<int32_t> where(problem_.num_tasks());
      for (int32_t i = 0; i < problem_.num_tasks(); ++i) where[next.order[i]] = i;
      int32_t lo = 0;
      for (int32_t k : problem_.graph().in_edges(t)) {
        lo = std::max(lo, where[problem_.graph().edges[k].from] + 1);
      }
      if (lo >= at) {
        ++evaluations_;
        return false;
      }
      std::uniform_int_distribution<int32_t> to(lo, at - 1);
      const int32_t dest = to(rng_);
      next.order.erase(next.order.begin() + at);
      next.order.insert(next.order.begin() + dest, t);
    }
    next.schedule = Decode(next);
    const double before = current_.schedule.makespan;
    if (next.schedule.makespan <= before) {
      current_ = std::move(next);
      return current_.schedule.makespan < before;
    }
    return false;
  }

  void Restart() {
    std::uniform_real_distribution<double> coin(0, 1);
    Solution s;
    if (coin(rng_) < 0.5) {
      s.order = NoisyRankOrder(problem_, rank_, rng_, 0.3);
      ++evaluations_;
      s = FromSchedule(problem_, ScheduleEarliestFinish(problem_, s.order));
    } else {
      s = best_;
      const int32_t n = problem_.num_tasks();
      const int32_t moves = std::max(1, n / 10);
      std::uniform_int_distribution<int32_t> task(0, n - 1);
      std::uniform_int_distribution<int32_t> proc(0, problem_.num_processors() - 1);
      for (int32_t m = 0; m < moves; ++m) {
        const int32_t t = task(rng_);
        const int32_t p = proc(rng_);
        if (problem_.CanRun(t, p)) s.assignment[t] = p;
      }
      s.schedule = Decode(s);
    }
    current_ = std::move(s);
  }

  const DagProblem& problem_;
  const SearchOptions& options_;
  std::mt19937_64 rng_;
  std::vector<double> rank_;
  Solution best_, current_;
  int64_t evaluations_ = 0;
};

}  // namespace

SearchResult BestSchedule(const DagProblem& problem, const SearchOptions& options) {
  return Search(problem, options).Run();
}

}  // namespace hetsched::plan
