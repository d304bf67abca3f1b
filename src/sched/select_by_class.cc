// PreemptiveStrategy::SelectByClass and its walk: a full decision under a solved throughput
// plan that walks, in policy order, only the jobs of the classes whose budget does not cover
// them as they run, and stands for the walk over every job only where it is sure to decide the
// same (WalkByClass).
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <optional>
#include <utility>

#include "sched/preemptive_strategy.h"

namespace hetsched::sched {

PreemptiveStrategy::RowWalk PreemptiveStrategy::RowsToWalk() const {
  const int32_t types = core_.state().type_count();
  const int32_t rows = plan_.rows();
  // Per row: its jobs not running (queued), and its running jobs by the type they hold.
  std::vector<int32_t> waiting(rows, 0), holding(static_cast<size_t>(rows) * types, 0);
  for (const auto& k : keys_) {
    const int32_t id = std::get<3>(k);
    const int32_t row = plan_.RowOf(id);
    if (row < 0) continue;  // planned nowhere: it keeps its devices, or is not selected
    const JobRecord& r = core_.record(id);
    if (r.phase == JobPhase::kRunning) {
      ++holding[static_cast<size_t>(row) * types + r.type.value()];
    } else {
      ++waiting[row];
    }
  }
  return WalkRows(waiting, holding);
}

PreemptiveStrategy::RowWalk PreemptiveStrategy::WalkRows(
    const std::vector<int32_t>& waiting, const std::vector<int32_t>& holding) const {
  const int32_t types = core_.state().type_count();
  const int32_t rows = plan_.rows();
  RowWalk walk;
  walk.rows.assign(rows, 0);
  for (int32_t row = 0; row < rows; ++row) {
    const int32_t gang = plan_.RowGang(row);
    bool covered = waiting[row] == 0;
    // The last of n running jobs on type t keeps it when the budget left after the n - 1
    // before it (each taking its gang, in whatever order) is at least half a gang, as Pick
    // asks. (Subtracting whole gangs from a positive budget is exact in doubles.)
    for (int32_t t = 0; t < types && covered; ++t) {
      const int32_t n = holding[static_cast<size_t>(row) * types + t];
      covered = n == 0 || plan_.Budget(row, t) - (n - 1) * gang >= gang * 0.5;
    }
    if (covered) continue;
    walk.rows[row] = 1;
    walk.waiting_devices += static_cast<int64_t>(waiting[row]) * gang;
  }
  return walk;
}

bool PreemptiveStrategy::SelectByClass(double now_s, Pool& pool, std::vector<int32_t>& candidates) {
  if (core_.tenants() != nullptr) return false;
  // Each row's least-keyed queued job, and the least key of the running jobs (OpenPool keyed
  // the queued jobs first).
  std::vector<const SchedulerCore::QueueKey*> first(plan_.rows(), nullptr);
  const SchedulerCore::QueueKey* running_least = nullptr;
  for (size_t i = 0; i < keys_.size(); ++i) {
    const SchedulerCore::QueueKey& k = keys_[i];
    if (i >= core_.queue().size()) {
      if (running_least == nullptr || k < *running_least) running_least = &k;
    } else if (const int32_t row = plan_.RowOf(std::get<3>(k)); row >= 0) {
      if (first[row] == nullptr || k < *first[row]) first[row] = &k;
    }
  }
  if (running_least != nullptr && SurelyDisplaces(first, *running_least, pool)) {
    displaces_ = true;
    return false;
  }
  const RowWalk walk = RowsToWalk();
  std::vector<SchedulerCore::QueueKey> order;
  size_t queued_in_order = 0;
  for (size_t i = 0; i < keys_.size(); ++i) {
    const int32_t row = plan_.RowOf(std::get<3>(keys_[i]));
    if (row < 0 || !walk.rows[row]) continue;
    order.push_back(keys_[i]);
    if (i < core_.queue().size()) queued_in_order = order.size();
  }
  // The movable running jobs are keys_'s running ones, after the queued.
  const auto running_keys = [&](std::vector<SchedulerCore::QueueKey>& keys) {
    keys.insert(keys.end(), keys_.begin() + static_cast<std::ptrdiff_t>(core_.queue().size()),
                keys_.end());
  };
  const auto make_room = [&](const std::vector<int32_t>& held) {
    return RunningRoom::Of(running_keys, core_, held);
  };
  return WalkByClass(now_s, walk, std::move(order), queued_in_order, make_room, pool, candidates);
}

std::vector<int64_t> PreemptiveStrategy::QueuedTakes(int64_t room) const {
  const int32_t types = core_.state().type_count();
  const int32_t rows = plan_.rows();
  std::vector<int64_t> takes(rows, 0);
  for (int32_t row = 0; row < rows; ++row) {
    const double gang = plan_.RowGang(row);
    for (int32_t t = 0; t < types; ++t) {
      const double budget = plan_.Budget(row, t);
      if (budget < gang * 0.5) continue;
      takes[row] += static_cast<int64_t>((budget - gang * 0.5) / gang) + 2;
    }
    takes[row] = std::min(takes[row], room / plan_.RowGang(row) + 1);
  }
  return takes;
}

void PreemptiveStrategy::DropQueuedPastBudget(std::vector<SchedulerCore::QueueKey>& order,
                                              size_t queued_count, int64_t room) const {
  const int32_t rows = plan_.rows();
  const std::vector<int64_t> takes = QueuedTakes(room);
  std::vector<int64_t> queued(rows, 0);
  // The queued jobs lead `order`: their rows are read from the plan, not from their records
  // (a record read per job is a cache miss at 100,000 jobs).
  const auto row_of_queued = [&](size_t i) {
    return i < queued_count ? plan_.RowOf(std::get<3>(order[i])) : -1;
  };
  bool over = false;
  for (size_t i = 0; i < queued_count; ++i) {
    const int32_t row = row_of_queued(i);
    if (row >= 0) over = ++queued[row] > takes[row] || over;
  }
  if (!over) return;
  // Each row's queued jobs together (a counting sort by row), its `takes` least kept.
  std::vector<int64_t> at(rows + 1, 0);
  for (int32_t row = 0; row < rows; ++row) at[row + 1] = at[row] + queued[row];
  std::vector<SchedulerCore::QueueKey> by_row(static_cast<size_t>(at[rows]));
  std::vector<int64_t> next(at.begin(), at.end() - 1);
  size_t kept = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const int32_t row = row_of_queued(i);
    if (row >= 0) {
      by_row[next[row]++] = order[i];
    } else {
      order[kept++] = order[i];  // running (or planned nowhere): every one is walked
    }
  }
  order.resize(kept);
  for (int32_t row = 0; row < rows; ++row) {
    const auto first = by_row.begin() + at[row];
    const auto end = by_row.begin() + at[row + 1];
    const auto last = first + std::min(takes[row], queued[row]);
    std::nth_element(first, last, end);
    order.insert(order.end(), first, last);
  }
}

bool PreemptiveStrategy::WalkByClass(double now_s, const RowWalk& walk,
                                     std::vector<SchedulerCore::QueueKey> order,
                                     size_t queued_count, const RoomMaker& make_room, Pool& pool,
                                     std::vector<int32_t>& candidates) {
  // Under a plan, a job's type depends on the jobs of other classes only through the pool's
  // room (Pick's free + held; a running job's own devices, held until it is reached). The jobs
  // of covered classes keep their types (RowsToWalk); those of the others are walked here in
  // their policy order, as the full walk would reach them, but with the covered jobs' devices
  // still held. Both walks give every job the same type while no take reaches a device a
  // running job holds (devices of running jobs that moved away excepted): then no running job
  // loses its place, and the full walk's held devices of type t, when it reaches a job of key
  // k, are those of the movable running jobs on t keyed k or later, plus what the jobs that
  // moved away left there, less what was taken of that. Where a gang's devices nobody holds
  // are on offer, both find room alike; elsewhere Pick is asked with those held devices
  // (RunningRoom, made the first time it is needed). Checked at each job; budgets are the
  // same in both, as each class's jobs come in the same order.
  const int32_t types = static_cast<int32_t>(pool.free.size());
  // The queued jobs can take the free devices at most (QueuedTakes).
  DropQueuedPastBudget(order, queued_count,
                       std::accumulate(pool.free.begin(), pool.free.end(), int64_t{0}));
  std::sort(order.begin(), order.end());
  const std::vector<double> budgets = plan_.budgets();
  const Pool before = pool;
  const auto give_up = [&] {
    plan_.RestoreBudgets(budgets);
    pool = before;
    selected_.clear();
    tentative_.clear();
    candidates.clear();
    return false;
  };
  std::optional<RunningRoom> room;
  // By type: devices left held by running jobs that moved away, and devices taken from held.
  std::vector<int32_t> vacated(types, 0), taken_held(types, 0), held_then(types), full_held(types);
  std::vector<char> exhausted(plan_.rows(), 0);  // a queued job of the row found no type
  for (const auto& k : order) {
    const int32_t id = std::get<3>(k);
    const JobRecord& r = core_.record(id);
    const bool running = r.phase == JobPhase::kRunning;
    const int32_t own = running ? r.type.value() : -1;
    const int32_t row = plan_.RowOf(id);
    if (!running && exhausted[row]) continue;  // budgets and room only shrink
    const int32_t gang = plan_.RowGang(row);
    const std::vector<int32_t>* held = &pool.held;
    if (ShortOfFree(row, own, pool)) {
      if (!HeldRoomAt(k, walk, make_room, before.held, vacated, taken_held, room, full_held)) {
        return give_up();
      }
      held = &full_held;
    }
    held_then = pool.held;
    const int32_t t = SelectPlanned(id, now_s, pool, *held);
    if (t < 0) {
      if (running) candidates.push_back(id);  // it loses its place
      if (!running) exhausted[row] = 1;
      continue;
    }
    selected_.push_back(id);
    tentative_.push_back(t);
    if (!running || t != own) {
      taken_held[t] += held_then[t] - pool.held[t];
      if (running) {
        vacated[own] += gang;
        candidates.push_back(id);
      }
      if (taken_held[t] > vacated[t]) {
        displaces_ = true;  // a running job would lose its devices
        return give_up();
      }
    }
  }
  int64_t free_devices = 0;
  for (int32_t t = 0; t < types; ++t) free_devices += before.free[t];
  if (walk.waiting_devices > free_devices) ++past_free_decisions_;
  SortByRunningPosition(candidates);
  ++by_class_decisions_;
  return true;
}

bool PreemptiveStrategy::HeldRoomAt(const SchedulerCore::QueueKey& k, const RowWalk& walk,
                                    const RoomMaker& make_room,
                                    const std::vector<int32_t>& before_held,
                                    const std::vector<int32_t>& vacated,
                                    const std::vector<int32_t>& taken,
                                    std::optional<RunningRoom>& room,
                                    std::vector<int32_t>& full_held) const {
  const bool all_held = walk.all_held_below && k < *walk.all_held_below;
  if (!all_held && !room) room = make_room(before_held);
  if (!all_held && !room->ok()) return false;
  for (size_t t = 0; t < full_held.size(); ++t) {
    const int32_t t32 = static_cast<int32_t>(t);
    full_held[t] = (all_held ? before_held[t] : room->HeldFrom(t32, k)) + vacated[t] - taken[t];
  }
  return true;
}

bool PreemptiveStrategy::SurelyDisplaces(const std::vector<const SchedulerCore::QueueKey*>& first,
                                         const SchedulerCore::QueueKey& running_least,
                                         const Pool& pool) const {
  const int32_t types = static_cast<int32_t>(pool.free.size());
  // A row's first queued job keyed before every movable running job is reached before any of
  // them and before the other jobs of its row: it finds its row's budgets whole and the
  // running jobs' devices all held. Where every type it has budget on lacks a gang's free
  // devices and one has a gang held, it takes held devices.
  for (int32_t row = 0; row < plan_.rows(); ++row) {
    if (first[row] == nullptr || !(*first[row] < running_least)) continue;
    const int32_t gang = plan_.RowGang(row);
    bool budgeted = false, all_short = true, held = false;
    for (int32_t t = 0; t < types; ++t) {
      if (plan_.Budget(row, t) < gang * 0.5) continue;
      budgeted = true;
      all_short = all_short && pool.free[t] < gang;
      held = held || pool.held[t] >= gang;
    }
    if (budgeted && all_short && held) return true;
  }
  return false;
}

bool PreemptiveStrategy::ShortOfFree(int32_t row, int32_t own, const Pool& pool) const {
  const int32_t gang = plan_.RowGang(row);
  // Pick looks past its own type only when its class has no budget left there.
  if (own >= 0 && plan_.Budget(row, own) >= gang * 0.5) return false;
  for (int32_t t = 0; t < static_cast<int32_t>(pool.free.size()); ++t) {
    if (t != own && plan_.Budget(row, t) >= gang * 0.5 && pool.free[t] < gang) return true;
  }
  return false;
}

}  // namespace hetsched::sched
