#include "plan/dag_exact.h"

#include <algorithm>
#include <cmath>
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

  // Everything the bounds need, before any task is placed. O(V (V + E) + E deg P^2).
  void Prepare() {
    integer_ = problem_.IntegerTimes();
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
    through_.assign(static_cast<size_t>(n_) * np_, 0);
    free_.assign(np_, 0);
    ComputeTails();
    for (int32_t t = 0; t < n_ && n_ <= kMaxDescendantTasks; ++t) {
      Paths(t, /*to_descendants=*/false);
      path_gap_.insert(path_gap_.end(), gap_.begin(), gap_.end());
      path_cut_.insert(path_cut_.end(), cut_.begin(), cut_.end());
    }
    pos_ = &g_.topological_position();
  }

  // The bound before any task is placed (see MakespanLowerBound). Call after Prepare() and
  // before there is an incumbent.
  double RootBound() {
    best_.makespan = kInf;  // no incumbent: every bound runs to the end
    double work = 0;
    for (int32_t t = 0; t < n_; ++t) work += problem_.min_cost(t);
    return RoundUp(std::max({LowerBound(0), problem_.MinCostCriticalPath(), work / np_}));
  }

  ExactResult Run() {
    Prepare();
    const double root = RootBound();
    const auto proved = [&] { return best_.makespan <= root * (1 + 1e-9); };
    // A tight incumbent prunes most of the tree, and once it is optimal the search only has to
    // prove it: a few seeded searches are cheap next to the tree (0.1-0.5 s at 20 tasks). Past
    // 20 tasks each search gets fewer evaluations (1e6 / tasks: each costs O(V log V + E)), so
    // that at 50-100 tasks they take about a quarter of a 10 s time limit, not all of it.
    best_ = Heft(problem_);
    for (const Schedule& s : {Cpop(problem_), Peft(problem_)}) {
      if (s.makespan < best_.makespan) best_ = s;
    }
    for (uint64_t seed = 1; seed <= 4 && !proved() && !Stop(); ++seed) {
      SearchOptions search;
      search.max_evaluations =
          std::min<int64_t>(125 * int64_t{n_} * n_, 1'000'000 / std::max(n_, 1));
      search.seed = seed;
      search.lower_bound = root;
      search.should_stop = options_.should_stop;
      Schedule s = BestSchedule(problem_, search).schedule;
      if (s.makespan < best_.makespan) best_ = std::move(s);
    }
    // The smallest bound over the part of the tree left unexplored; infinite once all of it is.
    const double open = proved() ? kInf : Dfs(0, 0, -kInf, -1, root);
    ExactResult r;
    r.schedule = best_;
    r.optimal = open == kInf;
    r.lower_bound = r.optimal ? best_.makespan : RoundUp(std::max(root, open));
    r.stopped = stopped_by_caller_;
    r.nodes = nodes_;
    return r;
  }

 private:
  struct Succ {
    double remote;  // earliest end (from the start of the tail) via another processor
    double cost;    // on the processor (infinite if it cannot run it)
    double tail;    // after it on the processor
  };
  double Threshold() const { return best_.makespan * (1 - 1e-9); }

  // tail_[t * np_ + p]: time that must pass after `t` finishes on `p` before the last task can
  // finish, in any schedule. A successor either runs elsewhere (after its transfer) or on `p`,
  // where the successors kept there run one after another: the bound is the best split, and a
  // set kept on `p` is ordered by decreasing tail (Jackson's rule). Costs O(E * deg * P^2).
  void ComputeTails() {
    tail_.assign(static_cast<size_t>(n_) * np_, 0);
    const std::vector<int32_t>& order = g_.topological_order();
    std::vector<Succ> succ;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int32_t t = *it;
      for (int32_t p = 0; p < np_; ++p) {
        succ.clear();
        for (int32_t k : g_.out_edges(t)) {
          const int32_t v = g_.edges[k].to;
          double remote = kInf;
          for (int32_t q = 0; q < np_; ++q) {
            if (q == p || !problem_.CanRun(v, q)) continue;
            remote = std::min(remote, problem_.CommTime(k, p, q) + problem_.cost(v, q) +
                                          tail_[static_cast<size_t>(v) * np_ + q]);
          }
          succ.push_back({remote, problem_.cost(v, p), tail_[static_cast<size_t>(v) * np_ + p]});
        }
        const double best = SplitBound(succ);
        tail_[static_cast<size_t>(t) * np_ + p] = best;
      }
      if (n_ <= kMaxDescendantTasks) DescendantTail(t);
    }
  }

  // Raises tail_ of `t` with all its descendants (not only the direct successors): one that
  // does not run on t's processor starts after the longest path of smallest costs between
  // them plus the cheapest transfer on any path from t to it. O(V + E) for one task.
  void DescendantTail(int32_t t) {
    Paths(t, /*to_descendants=*/true);
    std::vector<Succ>& desc = succ_;
    for (int32_t p = 0; p < np_; ++p) {
      desc.clear();
      for (int32_t d = 0; d < n_; ++d) {
        if (gap_[d] == -kInf) continue;
        double remote = kInf;
        for (int32_t q = 0; q < np_; ++q) {
          if (q == p || !problem_.CanRun(d, q)) continue;
          remote = std::min(remote, problem_.cost(d, q) + tail_[static_cast<size_t>(d) * np_ + q]);
        }
        desc.push_back({gap_[d] + cut_[d] + remote, problem_.cost(d, p),
                        tail_[static_cast<size_t>(d) * np_ + p]});
      }
      double& tail = tail_[static_cast<size_t>(t) * np_ + p];
      tail = std::max(tail, SplitBound(desc));
    }
  }

  // Smallest over splits of `succ` into tasks kept on one processor (run one after another
  // from time 0, decreasing tail first) and the others (done at `remote`) of the later end.
  double SplitBound(std::vector<Succ>& succ) {
    std::sort(succ.begin(), succ.end(),
              [](const Succ& x, const Succ& y) { return x.remote > y.remote; });
    double best = kInf;
    local_succ_.clear();
    for (size_t j = 0; j <= succ.size(); ++j) {
      const double remote = j < succ.size() ? succ[j].remote : 0;
      double end = 0;
      double busy = 0;
      for (const Succ& s : local_succ_) {
        busy += s.cost;
        end = std::max(end, busy + s.tail);
      }
      best = std::min(best, std::max(remote, end));
      if (j == succ.size() || end >= best) break;
      const Succ s = succ[j];
      local_succ_.insert(
          std::upper_bound(local_succ_.begin(), local_succ_.end(), s,
                           [](const Succ& x, const Succ& y) { return x.tail > y.tail; }),
          s);
    }
    return best;
  }

  // gap_[x] for each descendant (or ancestor) `x` of `t`: the longest path of smallest costs
  // strictly between them; cut_[x]: the cheapest transfer on any path between them. -kInf and
  // kInf elsewhere. O(V + E).
  void Paths(int32_t t, bool to_descendants) {
    gap_.assign(n_, -kInf);
    cut_.assign(n_, kInf);
    const auto edges_of = [&](int32_t x) {
      return to_descendants ? g_.out_edges(x) : g_.in_edges(x);
    };
    const auto far_end = [&](int32_t k) {
      return to_descendants ? g_.edges[k].to : g_.edges[k].from;
    };
    for (int32_t k : edges_of(t)) {
      const int32_t v = far_end(k);
      gap_[v] = 0;
      cut_[v] = std::min(cut_[v], problem_.transfer().MinTime(g_.edges[k].data));
    }
    const std::vector<int32_t>& order = g_.topological_order();
    const int32_t step = to_descendants ? 1 : -1;
    for (int32_t i = g_.topological_position()[t] + step;
         i >= 0 && i < static_cast<int32_t>(order.size()); i += step) {
      const int32_t x = order[i];
      if (gap_[x] == -kInf) continue;
      for (int32_t k : edges_of(x)) {
        const int32_t v = far_end(k);
        gap_[v] = std::max(gap_[v], gap_[x] + problem_.min_cost(x));
        cut_[v] = std::min({cut_[v], cut_[x], problem_.transfer().MinTime(g_.edges[k].data)});
      }
    }
  }

  // Smallest L with sum over processors of max(0, L - max(from, free_[p])) >= work: the earliest
  // time `work` units of processing can be done by when nothing starts before `from`.
  // free_ is sorted ascending.
  double WaterLevel(double from, double work) const {
    double sum = 0;
    for (int32_t k = 0; k < np_; ++k) {
      sum += std::max(from, free_[k]);
      const double level = (work + sum) / (k + 1);
      if (k + 1 == np_ || level <= std::max(from, free_[k + 1])) return level;
    }
    return from;
  }

  // A lower bound on the makespan of every completion of the current partial schedule, in
  // which nothing starts before `last_start`: the earliest finish plus tail of each unplaced
  // task over processors (finishes propagated in topological order), and the energetic bound
  // below. O(E * P^2 + V log V).
  double LowerBound(double last_start) {
    double lb = 0;
    window_.clear();
    for (int32_t t : g_.topological_order()) {
      if (placed_[t]) continue;
      double best_t = kInf;
      double head = kInf;
      double after = kInf;
      for (int32_t p = 0; p < np_; ++p) {
        double& e = eft_[static_cast<size_t>(t) * np_ + p];
        const double w = problem_.cost(t, p);
        if (w == model::kCannotRun) {
          e = kInf;
          through_[static_cast<size_t>(t) * np_ + p] = kInf;
          continue;
        }
        // A predecessor still to place either sends its data from another processor or runs
        // on p, where those kept on p run one after another: take the best split.
        double ready = std::max(last_start, avail_[p]);
        pred_.clear();
        for (int32_t k : g_.in_edges(t)) {
          const int32_t u = g_.edges[k].from;
          if (placed_[u]) {
            ready = std::max(ready, finish_[u] + problem_.CommTime(k, proc_[u], p));
            continue;
          }
          double remote = kInf;
          for (int32_t q = 0; q < np_; ++q) {
            if (q == p) continue;
            remote = std::min(remote,
                              eft_[static_cast<size_t>(u) * np_ + q] + problem_.CommTime(k, q, p));
          }
          const double cost = problem_.cost(u, p);
          pred_.push_back(
              {remote,
               cost == model::kCannotRun ? kInf : eft_[static_cast<size_t>(u) * np_ + p] - cost,
               cost});
        }
        if (!pred_.empty()) {
          std::sort(pred_.begin(), pred_.end(),
                    [](const Pred& x, const Pred& y) { return x.remote > y.remote; });
          double best = kInf;
          double end = -kInf;
          local_.clear();
          for (size_t j = 0; j <= pred_.size(); ++j) {
            const double remote = j < pred_.size() ? pred_[j].remote : -kInf;
            best = std::min(best, std::max(remote, end));
            if (j == pred_.size() || end >= kInf) break;
            // Kept on p: one machine with release dates, earliest release first.
            const Pred x = pred_[j];
            local_.insert(std::upper_bound(
                              local_.begin(), local_.end(), x,
                              [](const Pred& a, const Pred& b) { return a.release < b.release; }),
                          x);
            end = -kInf;
            for (const Pred& l : local_) end = std::max(end, l.release) + l.cost;
          }
          ready = std::max(ready, best);
        }
        e = ready + w;
        const double tl = tail_[static_cast<size_t>(t) * np_ + p];
        through_[static_cast<size_t>(t) * np_ + p] = e + tl;
        best_t = std::min(best_t, e + tl);
        head = std::min(head, ready);
        after = std::min(after, tl);
      }
      lb = std::max(lb, best_t);
      window_.push_back({head, after, problem_.min_cost(t)});
    }
    for (int32_t p = 0; p < np_ && lb < Threshold(); ++p) {
      lb = std::max(lb, MachineBound(p, -1, lb));
    }
    // Each unplaced task runs on some processor: the smallest bound over its choices.
    for (int32_t a = 0; a < n_ && lb < Threshold() && !path_gap_.empty(); ++a) {
      if (placed_[a]) continue;
      double least = kInf;
      for (int32_t p = 0; p < np_ && least > lb; ++p) {
        if (problem_.CanRun(a, p)) least = std::min(least, MachineBound(p, a, lb));
      }
      lb = std::max(lb, least);
    }
    // Energetic bound: the tasks that cannot start before `a` need their work done after
    // max(a, free time) on some processor, and the smallest of their tails after that.
    for (int32_t p = 0; p < np_; ++p) free_[p] = avail_[p];
    std::sort(free_.begin(), free_.end());
    std::sort(window_.begin(), window_.end(),
              [](const Window& x, const Window& y) { return x.head > y.head; });
    double work = 0;
    double tail = kInf;
    for (const Window& w : window_) {
      work += w.work;
      tail = std::min(tail, w.tail);
      lb = std::max(lb, WaterLevel(w.head, work) + tail);
    }
    std::sort(window_.begin(), window_.end(),
              [](const Window& x, const Window& y) { return x.tail > y.tail; });
    work = 0;
    double head = kInf;
    for (const Window& w : window_) {
      work += w.work;
      head = std::min(head, w.head);
      lb = std::max(lb, WaterLevel(head, work) + w.tail);
    }
    return lb;
  }

  // A bound from processor p's point of view, for when moving tasks off p is dear (high CCR):
  // each unplaced task either runs elsewhere, ending no earlier than its best finish plus tail
  // there, or on p, where the tasks kept run one at a time between their earliest starts and
  // tails. Takes the best split (those that end latest elsewhere are kept first). With an
  // `anchor` task (-1: none) the bound holds for the schedules that run the anchor on p. Returns
  // at most `lb` once it can no longer exceed it. Uses eft_ and through_ of the current node.
  double MachineBound(int32_t p, int32_t anchor, double lb) {
    double forced = 0;  // tasks that cannot run on p
    stay_.clear();
    for (int32_t t = 0; t < n_; ++t) {
      if (placed_[t]) continue;
      double off = kInf;
      double finish = kInf;
      for (int32_t q = 0; q < np_; ++q) {
        if (q == p) continue;
        off = std::min(off, through_[static_cast<size_t>(t) * np_ + q]);
        finish = std::min(finish, eft_[static_cast<size_t>(t) * np_ + q]);
      }
      if (anchor >= 0) {
        // With `anchor` on p, a relative elsewhere also pays a transfer on the way between
        // them, after the intermediate tasks' smallest costs.
        const size_t a = static_cast<size_t>(anchor) * np_ + p;
        const size_t up = static_cast<size_t>(anchor) * n_ + t;    // t an ancestor
        const size_t down = static_cast<size_t>(t) * n_ + anchor;  // t a descendant
        if (t == anchor) {
          off = kInf;
        } else if (path_gap_[up] != -kInf) {
          off = std::max(
              off, finish + path_gap_[up] + path_cut_[up] + problem_.cost(anchor, p) + tail_[a]);
        } else if (path_gap_[down] != -kInf) {
          double rest = kInf;
          for (int32_t q = 0; q < np_; ++q) {
            if (q == p || !problem_.CanRun(t, q)) continue;
            rest = std::min(rest, problem_.cost(t, q) + tail_[static_cast<size_t>(t) * np_ + q]);
          }
          off = std::max(off, eft_[a] + path_gap_[down] + path_cut_[down] + rest);
        }
      }
      const double w = problem_.cost(t, p);
      if (w == model::kCannotRun) {
        forced = std::max(forced, off);
        continue;
      }
      stay_.push_back({off, eft_[static_cast<size_t>(t) * np_ + p] - w, w,
                       tail_[static_cast<size_t>(t) * np_ + p]});
    }
    if (forced >= lb || stay_.empty()) return forced;
    std::sort(stay_.begin(), stay_.end(),
              [](const Stay& x, const Stay& y) { return x.off > y.off; });
    double best = kInf;
    double machine = 0;  // kept only grows, so every bound met stays valid: keep the largest
    kept_.clear();
    for (size_t j = 0; j <= stay_.size(); ++j) {
      // Kept on p, by earliest start: those starting at or after each head need their summed
      // work after it, then the smallest of their tails.
      double work = 0;
      double tail = kInf;
      for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
        work += it->work;
        tail = std::min(tail, it->tail);
        machine = std::max(machine, it->head + work + tail);
      }
      const double off = j < stay_.size() ? stay_[j].off : 0;
      best = std::min(best, std::max({forced, off, machine}));
      if (j == stay_.size() || machine >= best || best <= lb) break;
      kept_.insert(std::upper_bound(kept_.begin(), kept_.end(), stay_[j],
                                    [](const Stay& a, const Stay& b) { return a.head < b.head; }),
                   stay_[j]);
    }
    return best;
  }

  // True once the node budget is spent or the caller asked to stop; stays true.
  bool Stop() {
    if (halted_) return true;
    if (nodes_ >= options_.max_nodes) {
      halted_ = true;
    } else if (options_.should_stop && options_.should_stop()) {
      halted_ = stopped_by_caller_ = true;
    }
    return halted_;
  }

  // Rounds a bound up to a whole number when every makespan is one; the tolerance keeps a bound
  // computed a rounding error above an integer from rising to the next one.
  double RoundUp(double bound) const {
    if (!integer_ || !std::isfinite(bound)) return bound;
    return std::ceil(bound - 1e-9 * std::max(1.0, std::abs(bound)));
  }

  // Explores the completions of the current partial schedule, `bound` being a lower bound on
  // all of them. Returns the smallest lower bound over those it left unexplored when the search
  // stopped, or infinity when it explored (or pruned) them all.
  double Dfs(int32_t depth, double makespan, double last_start, int32_t last_pos, double bound) {
    if (Stop()) return bound;
    ++nodes_;
    if (depth == n_) {
      if (makespan < best_.makespan) {
        best_.placements.assign(n_, {});
        for (int32_t t = 0; t < n_; ++t) best_.placements[t] = {proc_[t], start_[t], finish_[t]};
        best_.makespan = makespan;
      }
      return kInf;
    }
    const double lb = std::max({bound, makespan, LowerBound(std::max(0.0, last_start))});
    if (lb >= Threshold()) return kInf;

    struct Child {
      double finish;
      double start;
      double bound;  // finish plus tail: a bound on every completion through this child
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
        // In any completion, the makespan is at least this child's finish plus its tail.
        const double through = s + w + tail_[static_cast<size_t>(t) * np_ + p];
        if (through >= Threshold()) continue;
        children.push_back({s + w, s, std::max(lb, through), t, p});
      }
    }
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
      if (a.finish != b.finish) return a.finish < b.finish;
      if (a.task != b.task) return a.task < b.task;
      return a.p < b.p;
    });
    double open = kInf;
    for (const Child& c : children) {
      if (c.bound >= Threshold()) continue;
      if (Stop()) {
        open = std::min(open, c.bound);
        continue;
      }
      const double old_avail = avail_[c.p];
      placed_[c.task] = true;
      proc_[c.task] = c.p;
      start_[c.task] = c.start;
      finish_[c.task] = c.finish;
      avail_[c.p] = c.finish;
      ++count_on_[c.p];
      for (int32_t k : g_.out_edges(c.task)) --missing_[g_.edges[k].to];
      open = std::min(
          open, Dfs(depth + 1, std::max(makespan, c.finish), c.start, (*pos_)[c.task], c.bound));
      for (int32_t k : g_.out_edges(c.task)) ++missing_[g_.edges[k].to];
      --count_on_[c.p];
      avail_[c.p] = old_avail;
      placed_[c.task] = false;
      proc_[c.task] = -1;
    }
    return open;
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
  std::vector<double> start_, finish_, avail_, eft_, through_;
  struct Window {
    double head;  // earliest start over processors
    double tail;  // smallest tail after it
    double work;  // smallest cost
  };
  std::vector<Window> window_;
  struct Stay {
    double off;   // earliest end if it runs on another processor
    double head;  // earliest start on this processor
    double work;  // cost on this processor
    double tail;  // after it on this processor
  };
  std::vector<Stay> stay_, kept_;
  std::vector<Succ> succ_, local_succ_;
  std::vector<double> gap_, cut_;
  // Paths(t, to ancestors) at [t * n_ + ancestor], for every task: O(V^2).
  std::vector<double> path_gap_, path_cut_;
  static constexpr int32_t kMaxDescendantTasks = 256;  // O(V (V + E)) once
  struct Pred {
    double remote;   // earliest arrival of its data from another processor
    double release;  // earliest start on this processor (infinite if it cannot run there)
    double cost;     // on this processor
  };
  std::vector<Pred> pred_, local_;
  std::vector<double> tail_, free_;
  int64_t nodes_ = 0;
  bool integer_ = false;  // problem_.IntegerTimes()
  bool halted_ = false;   // Stop() said so
  bool stopped_by_caller_ = false;
};

}  // namespace

ExactResult ExactSchedule(const DagProblem& problem, const ExactOptions& options) {
  return BranchAndBound(problem, options).Run();
}

double MakespanLowerBound(const DagProblem& problem) {
  const ExactOptions options;
  BranchAndBound bb(problem, options);
  bb.Prepare();
  return bb.RootBound();
}

}  // namespace hetsched::plan
