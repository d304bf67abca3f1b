#include "sched/preemptive_strategy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <utility>

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;

PreemptiveStrategy::PreemptiveStrategy(SchedulerCore& core, bool by_class, bool by_order,
                                       bool by_start)
    : core_(core),
      time_slices_(core.policy().time_slices()),
      gavel_rebuilds_(core.options().gavel_rebuilds && core.policy().in_order_only()),
      by_class_(by_class && core.policy().type_choice() == TypeChoice::kPlanned &&
                !core.policy().in_order_only() && !core.options().space_sharing),
      fill_(core),
      clock_(core.options().preempt_interval_s),
      plan_(core.options().lp_solver ? core.options().lp_solver : MakeClpSolver()) {
  if (core.policy().type_choice() == TypeChoice::kPlanned) {
    fill_types_ = [this](int32_t slot, const JobRecord& r) { return PlannedTypes(slot, r); };
  }
  // The running order needs key floors, and tenants order jobs by turns instead of keys.
  if (by_class_ && by_order && core.tenants() == nullptr && core.policy().has_key_floor()) {
    order_ = std::make_unique<RunningOrder>(core.state().type_count());
    core.TrackRunningChanges();
    queued_order_ = std::make_unique<QueuedByClass>();
    core.TrackQueueChanges();
  }
  // SelectByStart: the jobs inside their quantum stay where they are, and the queue's index
  // holds the queued jobs' keys now. Tenants order by turns, a plan needs every job's key.
  if (by_start && time_slices_ && core.policy().queued_keys_fixed() &&
      core.policy().type_choice() != TypeChoice::kPlanned && !core.policy().in_order_only() &&
      core.tenants() == nullptr && !core.options().elastic && !core.options().space_sharing) {
    by_start_ = std::make_unique<RunningByStart>();
    core.TrackRunningChanges();
  }
  // Each clears the core's running changes as it reads them: one reader at most (the order
  // needs a plan, SelectByStart no plan).
  assert(order_ == nullptr || by_start_ == nullptr);
}

void PreemptiveStrategy::Decide(double now_s, Decision& out) {
  if (gavel_rebuilds_) {
    RebuildAsGavel(now_s, out);
    return;
  }
  const bool fill = !core_.policy().in_order_only();
  if (clock_.FullDue(now_s)) {
    Reallocate(now_s, out);
    // Work conservation: devices the reallocation left free (a selected job that did not fit
    // where it was assigned, capacity counted for gangs that could not be placed) go to
    // queued jobs in policy order, as between reallocations.
    if (!core_.queue().empty()) fill_.StartInOrder(now_s, fill, out, FillTypesNow());
  } else {
    reservations_.StartFree(core_, now_s, out);
    fill_.StartInOrder(now_s, fill, out, FillTypesNow());
  }
}

void PreemptiveStrategy::Fill(double now_s, Decision& out) {
  if (gavel_rebuilds_) return;  // between rebuilds nothing starts
  reservations_.StartFree(core_, now_s, out);
  fill_.StartInOrder(now_s, !core_.policy().in_order_only(), out, FillTypesNow());
}

const QueueOrderStrategy::FillTypes* PreemptiveStrategy::FillTypesNow() const {
  return fill_types_ && plan_.solved() ? &fill_types_ : nullptr;
}

const char* PreemptiveStrategy::PlannedTypes(int32_t slot, const JobRecord& r) {
  // A job inside its tenant's guarantee goes first whatever the plan (as in the full walk).
  if (core_.tenants() != nullptr && core_.tenants()->Guaranteed(slot)) return nullptr;
  // A class the plan did not know (new since, or of the queued jobs past the tenants'
  // capacity, which the plan leaves out) fills in order as before.
  return plan_.PlannedTypes(plan_.KnownClassOf(core_, slot, r));
}

void PreemptiveStrategy::Upgrade(double now_s, Decision& out) {
  // Running jobs may move up to faster devices that came free (as Gavel re-solves every
  // round), subject to the same stickiness.
  if (gavel_rebuilds_) {
    RebuildAsGavel(now_s, out);
    return;
  }
  if (clock_.UpgradeDue(now_s)) Reallocate(now_s, out);
}

void PreemptiveStrategy::RebuildAsGavel(double now_s, Decision& out) {
  // Gavel recomputes its allocation only when the set of jobs changed, at most every interval;
  // when nothing runs it recomputes at once (queued jobs would otherwise wait for an event
  // that may never come), the interval still counting from the last rebuild.
  if (core_.job_set_version() == rebuilt_version_) return;
  if (!clock_.FullDue(now_s) && !core_.running().empty()) return;
  rebuilt_version_ = core_.job_set_version();
  Reallocate(now_s, out);
}

double PreemptiveStrategy::KeepBonus(const JobRecord& r, double now_s) const {
  if (r.phase != JobPhase::kRunning) return 0;
  const double stickiness = core_.options().stickiness;
  if (!(core_.price().cost_s() > 0 && r.best_speed > 0)) return stickiness;
  return std::max(stickiness, core_.price().MoveMargin(core_.belief().ExpectedRemaining(r, now_s),
                                                       r.speed[r.type.value()] / r.best_speed));
}

std::vector<int32_t> PreemptiveStrategy::AssignByRegret(const std::vector<int32_t>& jobs,
                                                        std::vector<int32_t> capacity,
                                                        double now_s) const {
  const int32_t types = core_.state().type_count();
  const size_t n = jobs.size();
  std::vector<int32_t> result(n, -1);
  struct Item {
    double regret;
    int32_t index;
    int32_t type;
  };
  // Each job's value per type (score plus stickiness), computed once: the heap re-evaluates
  // jobs whenever a type fills, and scoring is the costly part. NaN marks a disallowed type.
  std::vector<double> value(n * types);
  std::vector<int32_t> gangs(n);
  for (size_t i = 0; i < n; ++i) {
    const JobRecord& r = core_.record(jobs[i]);
    gangs[i] = std::max(1, r.job->gang_size);
    const double keep_bonus = KeepBonus(r, now_s);
    for (int32_t t = 0; t < types; ++t) {
      double v = std::numeric_limits<double>::quiet_NaN();
      if (r.allowed[t] && core_.NewWorkShare(r, DeviceTypeId(t)) > 0) {
        v = core_.ScoreOf(r, DeviceTypeId(t));
        if (r.phase == JobPhase::kRunning && r.type.value() == t) v += keep_bonus;
      }
      value[i * types + t] = v;
    }
  }
  const auto evaluate = [&](size_t i) {
    const int32_t gang = gangs[i];
    const double* row = &value[i * types];
    double v1 = -1, v2 = 0;
    int32_t t1 = -1;
    for (int32_t t = 0; t < types; ++t) {
      if (std::isnan(row[t]) || capacity[t] < gang) continue;
      const double v = row[t];
      if (v > v1) {
        v2 = std::max(v2, v1);
        v1 = v;
        t1 = t;
      } else {
        v2 = std::max(v2, v);
      }
    }
    return Item{v1 - v2, static_cast<int32_t>(i), t1};
  };
  const auto cmp = [](const Item& a, const Item& b) {
    if (a.regret != b.regret) return a.regret < b.regret;
    return a.index > b.index;  // earlier in policy order first
  };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
  for (size_t i = 0; i < n; ++i) {
    Item it = evaluate(i);
    if (it.type >= 0) heap.push(it);
  }
  while (!heap.empty()) {
    const Item top = heap.top();
    heap.pop();
    const Item now = evaluate(top.index);
    if (now.type < 0) continue;
    if (now.type != top.type || now.regret < top.regret - 1e-12) {
      heap.push(now);  // stale: a type filled up since it was scored
      continue;
    }
    result[top.index] = now.type;
    capacity[now.type] -= gangs[top.index];
  }
  return result;
}

void PreemptiveStrategy::Reallocate(double now_s, Decision& out) {
  // What earlier decisions held for their reserved jobs counts as free again.
  reservations_.Replan(core_);
  if (core_.tenants() != nullptr && time_slices_) MarkReclaimed(now_s);
  ++full_decisions_;
  if (scratch_.size() < core_.slots()) scratch_.resize(core_.slots(), -2);
  if (moved_flag_.size() < core_.slots()) moved_flag_.resize(core_.slots(), 0);
  selected_.clear();
  tentative_.clear();
  first_plan_.clear();
  std::optional<Pool> indexed = IndexedPool(now_s);
  if (indexed) ++indexed_decisions_;
  // The running jobs the indexed walk moves, ahead of the queued ones in selected_.
  const size_t moving = selected_.size();
  Pool pool;
  std::vector<int32_t> initial;
  // Who may lose its place: every running job, or those the indexed walk or SelectByClass
  // moves (the others keep their types), in the order of core_.running() either way.
  std::vector<int32_t> candidates;
  displaces_ = false;
  if (by_start_ != nullptr && !indexed) {
    SelectByStart(now_s, pool, initial, candidates);
  } else if (order_ == nullptr || !SelectByOrder(now_s, pool, initial, candidates)) {
    pool = indexed ? std::move(*indexed) : OpenPool(now_s);
    initial.resize(pool.free.size());
    for (size_t t = 0; t < initial.size(); ++t) initial[t] = pool.free[t] + pool.held[t];
    const bool planned = core_.policy().type_choice() == TypeChoice::kPlanned && SolvePlan(pool);
    if (planned && time_slices_ && core_.tenants() != nullptr) MoveKeptByPlan(now_s, pool);
    // A walk by class that found a running job losing its place would find it again.
    if (!(planned && !keys_sorted_ && !displaces_ && SelectByClass(now_s, pool, candidates))) {
      SortKeys(now_s);
      SelectInOrder(now_s, pool, /*queued_only=*/indexed.has_value(), planned);
      if (indexed) {
        candidates.assign(selected_.begin(),
                          selected_.begin() + static_cast<std::ptrdiff_t>(moving));
        SortByRunningPosition(candidates);
      } else {
        candidates = core_.running();
      }
    }
  }
  const std::vector<int32_t> assigned = AssignTypes(initial, now_s);
  // Devices per type that jobs preempted now still hold while they write their checkpoints.
  std::vector<int32_t> releasing(initial.size(), 0);
  const std::vector<int32_t> moved = PreemptDisplaced(now_s, assigned, candidates, releasing, out);
  StartSelected(now_s, assigned, releasing, out);
  // Files the jobs this decision stopped and started while their records are fresh: a re-deal
  // of the cluster changes every running job, and the next decision would read them all again.
  if (by_start_ != nullptr) by_start_->Sync(core_);
  for (int32_t id : moved) moved_flag_[id] = 0;
  for (int32_t id : kept_moves_) kept_move_[id] = 0;
  kept_moves_.clear();
}

void PreemptiveStrategy::MoveKeptByPlan(double now_s, Pool& pool) {
  if (kept_move_.size() < core_.slots()) kept_move_.resize(core_.slots(), 0);
  const int32_t types = static_cast<int32_t>(pool.free.size());
  // SolvePlan booked the kept jobs on the types they hold: a class below zero on its own type
  // holds more of it than the plan gives it.
  for (int32_t id : scratch_ids_) {
    const JobRecord& r = core_.record(id);
    const int32_t row = plan_.RowOf(id);
    if (!r.preemptible || row < 0) continue;
    const int32_t own = r.type.value();
    const int32_t gang = std::max(1, r.job->gang_size);
    // Half a gang, as ThroughputPlan::Pick counts a budget: less is the LP's rounding.
    if (plan_.Budget(row, own) > -0.5 * gang) continue;
    int32_t to = -1;
    for (int32_t t = 0; t < types; ++t) {
      if (t == own || pool.free[t] + pool.held[t] < gang || plan_.Budget(row, t) < 0.5 * gang) {
        continue;
      }
      // Only where the job itself repays the stop (so only up): inside its quantum no job is
      // made slower or stopped for a gain of others.
      if (!core_.MovePays(r, DeviceTypeId(t), now_s)) continue;
      if (to < 0 || r.speed[t] > r.speed[to]) to = t;
    }
    if (to < 0) continue;
    // It goes ahead of the walk, as kept jobs count first in the tenants' turns; the devices
    // it leaves go to the walk (reserved while it writes its checkpoint).
    pool.Take(to, gang);
    pool.free[own] += gang;
    pool.total += gang;
    plan_.Return(id, r, own);
    plan_.Take(id, r, to);
    selected_.push_back(id);
    tentative_.push_back(to);
    kept_move_[id] = 1;
    kept_moves_.push_back(id);
  }
}

void PreemptiveStrategy::MarkReclaimed(double now_s) {
  std::vector<int32_t> free(core_.state().type_count());
  for (size_t t = 0; t < free.size(); ++t) free[t] = core_.state().FreeOfType(DeviceTypeId(t));
  // The queue in policy order, the order in which TenantShares::Order gives each tenant's jobs
  // their turns: what is owed is counted for the jobs the walk takes inside their guarantees.
  std::vector<SchedulerCore::QueueKey> keys;
  keys.reserve(core_.queue().size());
  for (int32_t id : core_.queue()) keys.push_back(core_.KeyOf(core_.record(id), now_s));
  std::sort(keys.begin(), keys.end());
  std::vector<int32_t> queue;
  queue.reserve(keys.size());
  for (const auto& k : keys) queue.push_back(std::get<3>(k));
  core_.tenants()->Reclaimable(core_.records(), queue, core_.running(), free, reclaim_);
}

std::optional<PreemptiveStrategy::Pool> PreemptiveStrategy::IndexedPool(double now_s) {
  const MoveCandidates* moves = core_.move_candidates();
  if (moves == nullptr || gavel_rebuilds_ || core_.tenants() != nullptr || !moves->Exact()) {
    return std::nullopt;
  }
  const std::set<SchedulerCore::QueueKey>& queued = core_.sorted_queue();
  if (!queued.empty() && moves->LastKey() != nullptr && !(*moves->LastKey() < *queued.begin())) {
    return std::nullopt;
  }
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  Pool pool;
  pool.free.resize(types);
  pool.held.assign(types, 0);
  for (int32_t t = 0; t < types; ++t) {
    pool.free[t] = state.FreeOfType(DeviceTypeId(t));
    pool.total += pool.free[t];
  }
  // The full walk reaches every movable running job first (they all come before the queued
  // ones). Each holds exactly its gang, so it keeps its devices or moves up to a free type;
  // only one that gains somewhere can move, and none once no type it gains on has room.
  for (const auto& key : moves->gainers()) {
    if (!moves->AnyMayMove(pool.free)) break;
    const int32_t id = std::get<3>(key);
    const JobRecord& r = core_.record(id);
    const int32_t to = FasterFreeType(r, pool.free, now_s);
    if (to < 0) continue;
    const int32_t gang = std::max(1, r.job->gang_size);
    pool.free[r.type.value()] += gang;
    pool.free[to] -= gang;
    selected_.push_back(id);
    tentative_.push_back(to);
  }
  // What is left for the queued jobs is the free devices. The queue index's keys are the
  // policy's keys now: this policy's keys do not change in time. An in-order policy's walk
  // ends at the first job that does not fit, or when the devices run out, each job before
  // taking one at least: it reaches no further than the first `total` jobs.
  auto end = queued.end();
  if (core_.policy().in_order_only()) {
    end = queued.begin();
    for (int32_t n = 0; n < pool.total && end != queued.end(); ++n) ++end;
  }
  keys_.assign(queued.begin(), end);
  keys_sorted_ = true;
  return pool;
}

int32_t PreemptiveStrategy::FasterFreeType(const JobRecord& r, const std::vector<int32_t>& free,
                                           double now_s) const {
  const int32_t best = core_.BestType(r, TypeChoice::kFastest, free);
  const bool gains = best >= 0 && best != r.type.value() &&
                     core_.ScoreOf(r, DeviceTypeId(best)) >
                         core_.ScoreOf(r, r.type) + core_.options().stickiness &&
                     core_.MovePays(r, DeviceTypeId(best), now_s);
  return gains ? best : -1;
}

bool PreemptiveStrategy::Movable(int32_t id, double now_s) const {
  const JobRecord& r = core_.record(id);
  const bool reclaimed = static_cast<size_t>(id) < reclaim_.size() && reclaim_[id] != 0;
  const bool kept_move = static_cast<size_t>(id) < kept_move_.size() && kept_move_[id] != 0;
  return r.preemptible && SchedulerCore::HoldsDevices(r) &&
         (!time_slices_ || core_.QuantumOver(r, now_s) || reclaimed || kept_move);
}

void PreemptiveStrategy::Pool::Take(int32_t t, int32_t gang) {
  const int32_t from_free = std::min(free[t], gang);
  free[t] -= from_free;
  held[t] -= gang - from_free;
  total -= gang;
}

PreemptiveStrategy::Pool PreemptiveStrategy::OpenPool(double now_s) {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  Pool pool;
  pool.free.resize(types);
  pool.held.assign(types, 0);
  for (int32_t t = 0; t < types; ++t) pool.free[t] = state.FreeOfType(DeviceTypeId(t));
  std::vector<SchedulerCore::QueueKey>& keys = keys_;
  keys.clear();
  keys.reserve(core_.queue().size() + core_.running().size());
  for (int32_t id : core_.queue()) keys.push_back(core_.KeyOf(core_.record(id), now_s));
  // The running jobs this decision may not move, for SolvePlan: it books them as they are.
  std::vector<int32_t>& kept = scratch_ids_;
  kept.clear();
  for (int32_t id : core_.running()) {
    const JobRecord& r = core_.record(id);
    if (!Movable(id, now_s)) {
      if (r.phase == JobPhase::kRunning && SchedulerCore::HoldsDevices(r)) kept.push_back(id);
      continue;
    }
    pool.held[r.type.value()] += static_cast<int32_t>(r.devices.size());
    keys.push_back(core_.KeyOf(r, now_s));
  }
  keys_sorted_ = false;
  if (!by_class_ || core_.tenants() != nullptr) SortKeys(now_s);
  for (int32_t t = 0; t < types; ++t) pool.total += pool.free[t] + pool.held[t];
  return pool;
}

void PreemptiveStrategy::SortKeys(double now_s) {
  if (keys_sorted_) return;
  std::sort(keys_.begin(), keys_.end());
  if (core_.tenants() != nullptr) {
    core_.tenants()->Order(core_.records(), core_.running(), now_s, keys_);
  }
  keys_sorted_ = true;
}

bool PreemptiveStrategy::SolvePlan(const Pool& pool) {
  const int32_t types = static_cast<int32_t>(pool.free.size());
  std::vector<int32_t> capacity(types);
  for (int32_t t = 0; t < types; ++t) capacity[t] = pool.free[t] + pool.held[t];
  // Running jobs inside their quantum keep their devices, but the plan is made for the whole
  // cluster: planned over the part left to this decision alone, each class's budget would
  // shift with whichever jobs' quanta happen to be over, and move jobs for nothing.
  // OpenPool listed them (kept).
  const std::vector<int32_t>& kept = scratch_ids_;
  for (int32_t id : kept) {
    capacity[core_.record(id).type.value()] +=
        static_cast<int32_t>(core_.record(id).devices.size());
  }
  plan_ok_ = false;
  if (!PlanCanMatter(pool.total, capacity)) return false;
  // Without a plan this decision assigns types by regret, as kMaxThroughput does; the
  // failures are counted (plan_failures: simulate warns about them).
  if (keys_sorted_) {
    std::vector<int32_t> ids;
    ids.reserve(keys_.size() + kept.size());
    // Tenants: the jobs their turns grant, not the ones kept in the order past the capacity
    // for devices left over; planned over every queued job, classes that some tenants lack
    // would get budget that only the others' jobs can use, off their shares.
    const size_t granted = core_.tenants() != nullptr
                               ? std::min(keys_.size(), core_.tenants()->within_capacity())
                               : keys_.size();
    for (size_t i = 0; i < granted; ++i) ids.push_back(std::get<3>(keys_[i]));
    ids.insert(ids.end(), kept.begin(), kept.end());
    plan_ok_ = plan_.Solve(core_, ids, capacity).ok();
  } else {
    plan_ok_ = plan_.SolveByKey(core_, keys_, kept, capacity).ok();
  }
  if (!plan_ok_) {
    ++plan_failures_;
    return false;
  }
  for (int32_t id : kept) plan_.Take(id, core_.record(id), core_.record(id).type.value());
  if (first_plan_.empty()) first_plan_ = plan_.budgets();
  return true;
}

bool PreemptiveStrategy::PlanCanMatter(int32_t offered, const std::vector<int32_t>& capacity) {
  const auto planned_types =
      std::count_if(capacity.begin(), capacity.end(), [](int32_t c) { return c > 0; });
  return offered > 0 && planned_types > 1;
}

void PreemptiveStrategy::SelectInOrder(double now_s, Pool& pool, bool queued_only, bool planned) {
  const int32_t types = static_cast<int32_t>(pool.free.size());
  const TypeChoice choice = core_.policy().type_choice();
  std::vector<int32_t>& selected = selected_;
  std::vector<int32_t>& tentative = tentative_;
  std::vector<int32_t> both(types);
  bool blocked = false;  // in_order_only: an earlier job did not fit; later queued jobs wait
  // Tenants under a plan: a tenant whose job the plan gives no type keeps its turn for its next
  // job the plan places (sched/tenant_shares.h, TenantTurnsKept).
  std::optional<TenantTurnsKept> kept_turns;
  if (planned && core_.tenants() != nullptr) {
    kept_turns.emplace(*core_.tenants(), core_.records(), keys_);
  }
  for (size_t at = 0; at < keys_.size(); ++at) {
    if (pool.total <= 0) break;
    if (kept_turns && kept_turns->Taken(at)) continue;
    const int32_t id = std::get<3>(keys_[at]);
    const JobRecord& r = core_.record(id);
    const int32_t gang = r.gang;
    // Gavel's rebuild ends its walk there: the running jobs behind get nothing either.
    if (blocked && (gavel_rebuilds_ || r.phase != JobPhase::kRunning)) continue;
    if (planned) {
      const bool guaranteed = core_.tenants() != nullptr && core_.tenants()->Guaranteed(id);
      int32_t chosen = id;
      TenantTurnsKept* turns = kept_turns && !guaranteed ? &*kept_turns : nullptr;
      const int32_t t = SelectPlannedInTurn(at, now_s, pool, turns, chosen);
      if (t >= 0) {
        selected.push_back(chosen);
        tentative.push_back(t);
      }
      // A job in its tenant's guarantee gets devices the plan gave another class: the
      // guarantee comes before throughput (reclaim), on its fastest type with room.
      if (t >= 0 || !guaranteed) continue;
    }
    int32_t t = -1;
    if (r.phase == JobPhase::kRunning && !gavel_rebuilds_) {
      // It keeps its devices unless jobs ahead of it took them (then it competes like a queued
      // job; its devices stay in the held pool of the jobs behind it).
      const int32_t own = r.type.value();
      if (pool.held[own] >= gang) {
        pool.held[own] -= gang;
        pool.total -= gang;
        t = own;
        // Greedy-fastest moves a running job to a free faster type only for a clear gain.
        const int32_t faster =
            choice == TypeChoice::kFastest ? FasterFreeType(r, pool.free, now_s) : -1;
        if (faster >= 0) {
          t = faster;
          pool.free[own] += gang;
          pool.free[t] -= gang;
        }
        selected.push_back(id);
        tentative.push_back(t);
        continue;
      }
    }
    // Agnostic: prefer devices nobody holds; aware: the best type, taking held devices if needed.
    int32_t best = -1;
    if (choice == TypeChoice::kAgnostic) best = core_.BestType(r, choice, pool.free);
    if (best < 0) {
      for (int32_t u = 0; u < types; ++u) both[u] = pool.free[u] + pool.held[u];
      best =
          core_.BestType(r, choice == TypeChoice::kAgnostic ? choice : TypeChoice::kFastest, both);
    }
    if (best < 0) {
      // Head-of-line blocking, as the policy promises; running jobs behind keep their devices.
      if (core_.policy().in_order_only()) blocked = true;
      if (blocked && queued_only) break;  // nobody behind it may start
      continue;
    }
    t = best;
    pool.Take(t, gang);
    selected.push_back(id);
    tentative.push_back(t);
  }
}

int32_t PreemptiveStrategy::SelectPlannedInTurn(size_t at, double now_s, Pool& pool,
                                                TenantTurnsKept* turns, int32_t& chosen) {
  int32_t t = SelectPlanned(chosen, now_s, pool, pool.held);
  for (size_t next = at; t < 0 && turns != nullptr;) {
    next = turns->NextOfTenant(next);
    if (next >= keys_.size() || core_.tenants()->Guaranteed(std::get<3>(keys_[next]))) break;
    turns->Take(next);
    chosen = std::get<3>(keys_[next]);
    t = SelectPlanned(chosen, now_s, pool, pool.held);
  }
  return t;
}

void PreemptiveStrategy::SortByRunningPosition(std::vector<int32_t>& ids) const {
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return core_.running_position(a) < core_.running_position(b);
  });
}

int32_t PreemptiveStrategy::SelectPlanned(int32_t id, double now_s, Pool& pool,
                                          const std::vector<int32_t>& held) {
  const JobRecord& r = core_.record(id);
  const int32_t gang = r.gang;
  const bool running = r.phase == JobPhase::kRunning;
  const int32_t own = running ? r.type.value() : -1;
  int32_t t = plan_.Pick(id, r, pool.free, held, own);
  if (running && pool.held[own] >= gang) {
    // The plan says where jobs run, not who stops: a running job whose class has no budget
    // left keeps its devices (only the policy's order, past the quantum, stops it). One the
    // plan moves to another type (its class has budget there, not on its own) moves: the gain
    // is the plan's, not the job's own, so the move is priced against the job's expected
    // remaining time only, and one expected to end within kMoveRepays moves' cost stays.
    if (t < 0 || (t != own && core_.belief().ExpectedRemaining(r, now_s) <
                                  PreemptionPrice::kMoveRepays * core_.price().cost_s())) {
      t = own;
    }
  }
  if (t < 0) return -1;
  if (running && t == own) {
    pool.held[own] -= gang;
    pool.total -= gang;
  } else {
    pool.Take(t, gang);
  }
  plan_.Take(id, r, t);
  return t;
}

std::vector<int32_t> PreemptiveStrategy::AssignTypes(const std::vector<int32_t>& initial,
                                                     double now_s) const {
  const std::vector<int32_t>& selected = selected_;
  const std::vector<int32_t>& tentative = tentative_;
  const TypeChoice choice = core_.policy().type_choice();
  const bool by_regret =
      choice == TypeChoice::kMaxThroughput || (choice == TypeChoice::kPlanned && !plan_ok_);
  if (!by_regret) return tentative;
  std::vector<int32_t> assigned = AssignByRegret(selected, initial, now_s);
  // A job the regret pass could not fit keeps its tentative type if that still has room.
  std::vector<int32_t> left = initial;
  for (size_t i = 0; i < selected.size(); ++i) {
    if (assigned[i] >= 0) left[assigned[i]] -= core_.record(selected[i]).job->gang_size;
  }
  for (size_t i = 0; i < selected.size(); ++i) {
    const int32_t gang = std::max(1, core_.record(selected[i]).job->gang_size);
    if (assigned[i] < 0 && left[tentative[i]] >= gang) {
      assigned[i] = tentative[i];
      left[tentative[i]] -= gang;
    }
  }
  return assigned;
}

std::vector<int32_t> PreemptiveStrategy::PreemptDisplaced(double now_s,
                                                          const std::vector<int32_t>& assigned,
                                                          const std::vector<int32_t>& candidates,
                                                          std::vector<int32_t>& releasing,
                                                          Decision& out) {
  for (size_t i = 0; i < selected_.size(); ++i) scratch_[selected_[i]] = assigned[i];
  std::vector<int32_t> moved;
  for (int32_t id : candidates) {
    JobRecord& r = core_.record(id);
    // Those keeping their type first: that test reads no more than the record.
    if (r.phase != JobPhase::kRunning || scratch_[id] == r.type.value()) continue;
    if (!Movable(id, now_s)) continue;
    const DeviceTypeId was = r.type;
    core_.Preempt(id, now_s, out);
    if (r.phase == JobPhase::kStopping) {
      releasing[was.value()] += static_cast<int32_t>(r.devices.size());
    }
    if (scratch_[id] >= 0) {
      moved.push_back(id);
      moved_flag_[id] = 1;
      // Still writing its checkpoint: it starts on its new type after Stopped.
      r.migrating = r.phase == JobPhase::kStopping;
    }
  }
  return moved;
}

void PreemptiveStrategy::StartSelected(double now_s, const std::vector<int32_t>& assigned,
                                       const std::vector<int32_t>& releasing, Decision& out) {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  for (size_t i = 0; i < selected_.size(); ++i) {
    const int32_t id = selected_[i];
    scratch_[id] = -2;
    const JobRecord& r = core_.record(id);
    if (assigned[i] >= 0 && r.phase == JobPhase::kStopping) {
      reservations_.Add(core_, id, DeviceTypeId(assigned[i]));
      continue;
    }
    // Running, or not given a type.
    if (r.phase != JobPhase::kQueued || assigned[i] < 0) continue;
    const bool migrated = moved_flag_[id] != 0;
    std::optional<std::vector<DeviceId>> devs = core_.PlaceOn(r, DeviceTypeId(assigned[i]));
    DeviceTypeId type(assigned[i]);
    // Its devices are still being checkpointed by the jobs it displaced: it waits for them
    // rather than settling on a slower type it would then hold for a quantum.
    if (!devs && releasing[assigned[i]] > 0) {
      reservations_.Add(core_, id, type);
      continue;
    }
    if (!devs) {  // fragmentation: another type with room, in preference order
      std::vector<int32_t> room(types);
      for (int32_t t = 0; t < types; ++t) room[t] = state.FreeOfType(DeviceTypeId(t));
      for (DeviceTypeId t : core_.TypePreference(r, core_.policy().type_choice(), room)) {
        if ((devs = core_.PlaceOn(r, t))) {
          type = t;
          break;
        }
      }
    }
    if (devs) out.placed.push_back(core_.Start(id, type, std::move(*devs), now_s, migrated));
  }
}

}  // namespace hetsched::sched
