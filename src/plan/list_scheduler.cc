#include "plan/list_scheduler.h"

#include <algorithm>
#include <limits>

namespace hetsched::plan {

ListScheduler::ListScheduler(const DagProblem& problem)
    : problem_(problem), placements_(problem.num_tasks()), timelines_(problem.num_processors()) {}

double ListScheduler::ReadyTime(int32_t task, int32_t p) const {
  const model::TaskGraph& g = problem_.graph();
  double ready = 0;
  for (int32_t k : g.in_edges(task)) {
    const TaskPlacement& pred = placements_[g.edges[k].from];
    ready = std::max(ready, pred.finish + problem_.CommTime(k, pred.processor, p));
  }
  return ready;
}

double ListScheduler::EarliestStart(int32_t p, double ready, double duration) const {
  const std::vector<Interval>& line = timelines_[p];
  // Intervals finishing at or before `ready` cannot block; finishes are sorted like starts.
  auto it = std::upper_bound(line.begin(), line.end(), ready,
                             [](double r, const Interval& iv) { return r < iv.finish; });
  double candidate = ready;
  for (; it != line.end(); ++it) {
    if (candidate + duration <= it->start) return candidate;
    candidate = std::max(candidate, it->finish);
  }
  return candidate;
}

ListScheduler::Choice ListScheduler::OnProcessor(int32_t task, int32_t p) const {
  const double cost = problem_.cost(task, p);
  if (cost == model::kCannotRun) {
    return {p, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
  const double start = EarliestStart(p, ReadyTime(task, p), cost);
  return {p, start, start + cost};
}

ListScheduler::Choice ListScheduler::EarliestFinish(int32_t task) const {
  Choice best{-1, 0, std::numeric_limits<double>::infinity()};
  for (int32_t p = 0; p < problem_.num_processors(); ++p) {
    const Choice c = OnProcessor(task, p);
    if (c.finish < best.finish) best = c;
  }
  return best;
}

void ListScheduler::Place(int32_t task, int32_t p, double start) {
  const double finish = start + problem_.cost(task, p);
  placements_[task] = {p, start, finish};
  std::vector<Interval>& line = timelines_[p];
  // Ordered by (start, finish) so that finishes stay sorted even with zero-length tasks.
  const Interval iv{start, finish};
  auto it =
      std::upper_bound(line.begin(), line.end(), iv, [](const Interval& a, const Interval& b) {
        return a.start < b.start || (a.start == b.start && a.finish < b.finish);
      });
  line.insert(it, iv);
}

Schedule ListScheduler::TakeSchedule() {
  Schedule s;
  s.makespan = Makespan(placements_);
  s.placements = std::move(placements_);
  return s;
}

Schedule ScheduleEarliestFinish(const DagProblem& problem, std::span<const int32_t> order) {
  ListScheduler ls(problem);
  for (int32_t t : order) {
    const ListScheduler::Choice c = ls.EarliestFinish(t);
    ls.Place(t, c.processor, c.start);
  }
  return ls.TakeSchedule();
}

Schedule ScheduleFixed(const DagProblem& problem, std::span<const int32_t> order,
                       std::span<const int32_t> assignment) {
  ListScheduler ls(problem);
  for (int32_t t : order) {
    const ListScheduler::Choice c = ls.OnProcessor(t, assignment[t]);
    ls.Place(t, c.processor, c.start);
  }
  return ls.TakeSchedule();
}

std::vector<int32_t> OrderByPriority(const DagProblem& problem,
                                     const std::vector<double>& priority) {
  const std::vector<int32_t>& pos = problem.graph().topological_position();
  std::vector<int32_t> order(problem.num_tasks());
  for (int32_t t = 0; t < problem.num_tasks(); ++t) order[t] = t;
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (priority[a] != priority[b]) return priority[a] > priority[b];
    return pos[a] < pos[b];
  });
  return order;
}

ReadyQueue::ReadyQueue(const DagProblem& problem, const std::vector<double>& priority)
    : graph_(problem.graph()), priority_(priority) {
  const int32_t n = static_cast<int32_t>(priority.size());
  missing_.resize(n);
  for (int32_t t = 0; t < n; ++t) {
    missing_[t] = static_cast<int32_t>(graph_.in_edges(t).size());
    if (missing_[t] == 0) heap_.push_back(t);
  }
  std::make_heap(heap_.begin(), heap_.end(), [this](int32_t a, int32_t b) { return Lower(a, b); });
}

bool ReadyQueue::Lower(int32_t a, int32_t b) const {
  if (priority_[a] != priority_[b]) return priority_[a] < priority_[b];
  const std::vector<int32_t>& pos = graph_.topological_position();
  return pos[a] > pos[b];
}

int32_t ReadyQueue::Pop() {
  auto lower = [this](int32_t a, int32_t b) { return Lower(a, b); };
  std::pop_heap(heap_.begin(), heap_.end(), lower);
  const int32_t top = heap_.back();
  heap_.pop_back();
  return top;
}

void ReadyQueue::Release(int32_t task) {
  auto lower = [this](int32_t a, int32_t b) { return Lower(a, b); };
  for (int32_t k : graph_.out_edges(task)) {
    const int32_t succ = graph_.edges[k].to;
    if (--missing_[succ] == 0) {
      heap_.push_back(succ);
      std::push_heap(heap_.begin(), heap_.end(), lower);
    }
  }
}

}  // namespace hetsched::plan
