// PreemptiveStrategy::SelectByOrder and its steps: SelectByClass's full decision with the
// running jobs' part taken from the running order (sched/running_order.h), kept up to date as
// jobs start and stop, instead of a pass over every running job.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <utility>

#include "sched/preemptive_strategy.h"

namespace hetsched::sched {

using model::DeviceTypeId;

namespace {

// A floor is under the key in real numbers; the key as computed is a few roundings away.
double Slack(double floor, double drift, double least) {
  return 1e-6 + 1e-9 * (std::abs(floor) + std::abs(drift) + std::abs(least));
}

}  // namespace

void PreemptiveStrategy::SyncRunningOrder(double now_s) {
  const std::vector<int32_t>& changes = core_.running_changes();
  if (!order_filed_ || plan_.generation() != order_generation_ ||
      changes.size() > core_.running().size()) {
    order_->Clear();
    unpreemptible_.clear();
    unfixed_.clear();
    order_filed_ = true;
    order_generation_ = plan_.generation();
    for (int32_t id : core_.running()) FileRunning(id, now_s);
  } else {
    if (synced_.size() < core_.slots()) synced_.resize(core_.slots(), 0);
    for (int32_t id : changes) {
      if (synced_[id]) continue;
      synced_[id] = 1;
      order_->Remove(id);
      unpreemptible_.erase(id);
      unfixed_.erase(id);
      if (core_.record(id).phase == JobPhase::kRunning) FileRunning(id, now_s);
    }
    for (int32_t id : changes) synced_[id] = 0;
  }
  core_.ClearRunningChanges();
}

void PreemptiveStrategy::SyncQueuedOrder() {
  const std::vector<int32_t>& changes = core_.queue_changes();
  if (!queued_filed_ || plan_.generation() != queued_generation_ ||
      changes.size() > core_.queue().size()) {
    queued_order_->Clear();
    unfixed_queued_.clear();
    queued_filed_ = true;
    queued_generation_ = plan_.generation();
    for (const SchedulerCore::QueueKey& key : core_.sorted_queue()) FileQueued(key);
  } else {
    if (synced_.size() < core_.slots()) synced_.resize(core_.slots(), 0);
    for (int32_t id : changes) {
      if (synced_[id]) continue;
      synced_[id] = 1;
      queued_order_->Remove(id);
      unfixed_queued_.erase(id);
      if (core_.InQueue(id)) FileQueued(core_.queue_key(id));
    }
    for (int32_t id : changes) synced_[id] = 0;
    // Every queued job has a new key (the jobs just filed have theirs already).
    if (core_.queue_refiles() != queued_refiles_) {
      queued_order_->Rekey([&](int32_t id) { return core_.queue_key(id); });
    }
  }
  queued_refiles_ = core_.queue_refiles();
  core_.ClearQueueChanges();
}

void PreemptiveStrategy::FileQueued(const SchedulerCore::QueueKey& key) {
  const int32_t id = std::get<3>(key);
  const std::optional<int32_t> known = plan_.FixedClassOf(core_, id, core_.record(id));
  if (!known) {
    unfixed_queued_.insert(id);
  } else if (*known >= 0) {
    queued_order_->Add(*known, key, core_.keyed_as_new(id));
  }
}

void PreemptiveStrategy::LeastQueued(int32_t cls, double now_s, int64_t k,
                                     std::vector<SchedulerCore::QueueKey>& keys) {
  if (k <= 0) return;
  // The class's jobs by key at time 0: a queued job's key now is that less the same shift for
  // all (up to rounding), read off the first. Once k are keyed, a job whose key at time 0 less
  // the shift lies above the greatest of the first k keyed (so above the k-th least) cannot be
  // among the k least, nor can any after it.
  std::vector<SchedulerCore::QueueKey> keyed;
  double shift = 0, cut = -std::numeric_limits<double>::infinity();
  const auto new_key = [&](const SchedulerCore::QueueKey& filed) { return core_.NewJobKey(filed); };
  queued_order_->VisitInOrder(cls, new_key, [&](const SchedulerCore::QueueKey& at_zero) {
    const double zero = std::get<0>(at_zero);
    if (static_cast<int64_t>(keyed.size()) >= k && zero - shift > cut + Slack(zero, shift, cut)) {
      return false;
    }
    const int32_t id = std::get<3>(at_zero);
    keyed.push_back(core_.KeyOf(core_.record(id), now_s));
    if (keyed.size() == 1) shift = zero - std::get<0>(keyed.back());
    if (static_cast<int64_t>(keyed.size()) <= k) cut = std::max(cut, std::get<0>(keyed.back()));
    return true;
  });
  const auto end =
      keyed.begin() + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(k), std::ssize(keyed));
  std::nth_element(keyed.begin(), end, keyed.end());
  keys.insert(keys.end(), keyed.begin(), end);
}

void PreemptiveStrategy::FileRunning(int32_t id, double now_s) {
  const JobRecord& r = core_.record(id);
  if (!r.preemptible) {
    unpreemptible_.insert(id);
    return;
  }
  const std::optional<int32_t> known = plan_.FixedClassOf(core_, id, r);
  if (!known) {
    unfixed_.insert(id);
    return;
  }
  // A job past its quantum stays past it while it runs.
  const bool in_quantum = time_slices_ && !core_.QuantumOver(r, now_s);
  order_->Add(id, *known, r.type.value(), static_cast<int32_t>(r.devices.size()),
              core_.policy().KeyFloor(r), in_quantum ? r.run_start_s : -1, RunningKeyInputs::Of(r));
}

void PreemptiveStrategy::KeptRunning(double now_s, std::vector<int32_t>& kept_count,
                                     std::vector<int32_t>& kept_devices,
                                     std::vector<int32_t>& kept_unplanned) {
  const int32_t types = core_.state().type_count();
  order_->ForgetPastQuantum(
      [&](double start_s) { return core_.price().InQuantum(start_s, now_s); });
  kept_count.resize(static_cast<size_t>(order_->classes()) * types);
  kept_devices.resize(kept_count.size());
  kept_unplanned.resize(types);
  for (int32_t t = 0; t < types; ++t) {
    kept_unplanned[t] = order_->in_quantum_unplanned_held(t);
    for (int32_t cls = 0; cls < order_->classes(); ++cls) {
      const size_t at = static_cast<size_t>(cls) * types + t;
      kept_count[at] = order_->in_quantum_count(cls, t);
      kept_devices[at] = order_->in_quantum_devices(cls, t);
    }
  }
}

std::vector<ThroughputPlan::KeptJobs> PreemptiveStrategy::KeptByClass(
    const std::vector<ThroughputPlan::ClassJobs>& classes, const std::vector<int32_t>& kept_count) {
  const int32_t types = core_.state().type_count();
  std::vector<ThroughputPlan::KeptJobs> by_known(order_->classes());
  const auto keep = [&](int32_t known, int32_t count) {
    if (by_known.size() <= static_cast<size_t>(known)) by_known.resize(known + 1);
    by_known[known].known = known;
    by_known[known].count += count;
  };
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    for (int32_t t = 0; t < types; ++t) keep(cls, kept_count[static_cast<size_t>(cls) * types + t]);
  }
  std::vector<std::pair<int32_t, int32_t>> unpreemptible;  // (slot, known class)
  for (int32_t id : unpreemptible_) {
    const int32_t known = plan_.KnownClassOf(core_, id, core_.record(id));
    if (known < 0) continue;
    unpreemptible.emplace_back(id, known);
    keep(known, 1);
  }
  // A class of the keyed jobs has its row already; the others' rows come in the order of their
  // first kept jobs. Every job such a class has in order_ is kept (it has no movable one).
  std::vector<char> keyed(by_known.size(), 0);
  for (const ThroughputPlan::ClassJobs& c : classes) {
    if (static_cast<size_t>(c.known) < keyed.size()) keyed[c.known] = 1;
  }
  const auto earlier = [&](int32_t known, int32_t id) {
    int32_t& first = by_known[known].first;
    if (first < 0 || core_.running_position(id) < core_.running_position(first)) first = id;
  };
  for (const auto& [id, known] : unpreemptible) {
    if (!keyed[known]) earlier(known, id);
  }
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    if (keyed[cls] || by_known[cls].count == 0) continue;
    order_->VisitAll(cls,
                     [&](double /*floor*/, const RunningKeyInputs& job) { earlier(cls, job.id); });
  }
  std::vector<ThroughputPlan::KeptJobs> kept, kept_only;
  for (const ThroughputPlan::KeptJobs& k : by_known) {
    if (k.count > 0) (keyed[k.known] ? kept : kept_only).push_back(k);
  }
  std::sort(kept_only.begin(), kept_only.end(), [&](const auto& a, const auto& b) {
    return core_.running_position(a.first) < core_.running_position(b.first);
  });
  kept_only_rows_ += static_cast<int64_t>(kept_only.size());
  kept.insert(kept.end(), kept_only.begin(), kept_only.end());
  return kept;
}

std::vector<ThroughputPlan::ClassJobs> PreemptiveStrategy::ClassesToPlan(
    double now_s, const std::vector<int32_t>& kept_count, KeyedQueued& least, KeyedQueued& apart,
    std::optional<SchedulerCore::QueueKey>& running_least) {
  const int32_t types = core_.state().type_count();
  std::vector<ThroughputPlan::ClassJobs> classes;
  std::vector<int32_t> index;  // by known class: its place in `classes`; -1: none yet
  const auto add = [&](int32_t known, const SchedulerCore::QueueKey& key, int32_t count) {
    if (index.size() <= static_cast<size_t>(known)) index.resize(known + 1, -1);
    if (index[known] < 0) {
      index[known] = static_cast<int32_t>(classes.size());
      classes.push_back({key, known, 0});
    }
    ThroughputPlan::ClassJobs& c = classes[index[known]];
    c.least = std::min(c.least, key);
    c.count += count;
  };
  std::vector<SchedulerCore::QueueKey> first;
  for (int32_t cls = 0; cls < queued_order_->classes(); ++cls) {
    if (queued_order_->count(cls) == 0) continue;
    first.clear();
    LeastQueued(cls, now_s, 1, first);
    least.emplace_back(first.front(), cls);
    add(cls, first.front(), queued_order_->count(cls));
  }
  for (int32_t id : unfixed_queued_) {
    const JobRecord& r = core_.record(id);
    const int32_t known = plan_.KnownClassOf(core_, id, r);
    apart.emplace_back(core_.KeyOf(r, now_s), known);
    if (known >= 0) add(known, apart.back().first, 1);
  }
  int64_t evaluated = 0, movable_jobs = 0;
  movable_keys_.resize(order_->classes());
  movable_keyed_.assign(order_->classes(), 0);
  movable_least_.assign(order_->classes(), std::nullopt);
  // A class new to the order, or whose floors pruned nothing at the last decision, is keyed by
  // a plain pass over its jobs (the visit in floor order costs a heap step per job, and right
  // after a re-deal every class is new and prunes nothing); the least is the same either way.
  floors_prune_.resize(order_->classes(), 0);
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    int32_t movable = 0;
    for (int32_t t = 0; t < types; ++t) {
      movable += order_->count(cls, t) - kept_count[static_cast<size_t>(cls) * types + t];
    }
    movable_keys_[cls].clear();
    movable_keyed_[cls] = 1;  // until the floors stop the visit
    if (movable == 0) continue;
    const SchedulerCore::QueueKey least = LeastMovableKey(cls, now_s, evaluated);
    movable_least_[cls] = least;
    add(cls, least, movable);
    if (!running_least || least < *running_least) running_least = least;
    movable_jobs += movable;
  }
  least_keys_evaluated_ += evaluated;
  movable_in_order_ += movable_jobs;
  return classes;
}

SchedulerCore::QueueKey PreemptiveStrategy::LeastMovableKey(int32_t cls, double now_s,
                                                            int64_t& evaluated) {
  // The class's running jobs by floor (less the keys' common drift since time 0): past the
  // first whose floor lies above the least key found, no key can be less.
  const double lower = core_.policy().KeyDrift() * now_s;
  std::vector<SchedulerCore::QueueKey>& keyed = movable_keys_[cls];
  std::optional<SchedulerCore::QueueKey> least;
  // From the copies the order keeps (the records are not read).
  const auto key_of = [&](const RunningKeyInputs& job) {
    if (time_slices_ && !core_.QuantumOver(job, now_s)) return;  // kept
    keyed.push_back(core_.KeyOf(job, now_s));
    ++evaluated;
    if (!least || keyed.back() < *least) least = keyed.back();
  };
  // Past the least found (any job's key, up to rounding), a floor proves the key above it.
  const auto above_least = [&](double floor) {
    const double key = std::get<0>(*least);
    return floor - lower > key + Slack(floor, lower, key);
  };
  if (floors_prune_[cls]) {
    order_->VisitByFloor(cls, [&](double floor, const RunningKeyInputs& job) {
      if (least && above_least(floor)) {
        movable_keyed_[cls] = 0;  // the keys after are not needed for the least
        return false;
      }
      key_of(job);
      return true;
    });
    floors_prune_[cls] = movable_keyed_[cls] ? 0 : 1;
  } else {
    double top_floor = -std::numeric_limits<double>::infinity();
    order_->VisitAll(cls, [&](double floor, const RunningKeyInputs& job) {
      top_floor = std::max(top_floor, floor);
      key_of(job);
    });
    ++least_by_pass_;
    floors_prune_[cls] = above_least(top_floor) ? 1 : 0;
  }
  return *least;
}

void PreemptiveStrategy::BookKeptRunning(const std::vector<int32_t>& kept_count) {
  // Those of the order by their counts (no record read), those the order does not file (not
  // preemptible) one by one.
  for (int32_t id : unpreemptible_) {
    const JobRecord& r = core_.record(id);
    plan_.SetRow(id, plan_.KnownClassOf(core_, id, r));
    plan_.Take(id, r, r.type.value());
  }
  const int32_t types = core_.state().type_count();
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    const int32_t row = plan_.RowOfClass(cls);
    for (int32_t t = 0; t < types && row >= 0; ++t) {
      plan_.TakeGangs(row, t, kept_count[static_cast<size_t>(cls) * types + t]);
    }
  }
  if (first_plan_.empty()) first_plan_ = plan_.budgets();
}

bool PreemptiveStrategy::OpenOrderPool(Pool& pool, std::vector<int32_t>& initial,
                                       std::vector<int32_t>& capacity) const {
  const int32_t types = core_.state().type_count();
  // OpenPool's pool: the devices of the running jobs it may move are held.
  pool = Pool{};
  pool.free.resize(types);
  pool.held.resize(types);
  capacity.resize(types);  // SolvePlan's: the pool, and the kept jobs' devices
  for (int32_t t = 0; t < types; ++t) {
    pool.held[t] = order_->held(t) - order_->in_quantum_held(t);
    capacity[t] = order_->in_quantum_held(t);
  }
  for (int32_t id : unpreemptible_) {
    const JobRecord& r = core_.record(id);
    capacity[r.type.value()] += static_cast<int32_t>(r.devices.size());
  }
  initial.resize(types);
  for (int32_t t = 0; t < types; ++t) {
    pool.free[t] = core_.state().FreeOfType(DeviceTypeId(t));
    pool.total += pool.free[t] + pool.held[t];
    initial[t] = pool.free[t] + pool.held[t];
    capacity[t] += initial[t];
  }
  return PlanCanMatter(pool.total, capacity);
}

bool PreemptiveStrategy::SelectByOrder(double now_s, Pool& pool, std::vector<int32_t>& initial,
                                       std::vector<int32_t>& candidates) {
  plan_ok_ = false;
  // Many jobs started or stopped since the last full decision (thousands, and more than an
  // eighth of those running), as after one that displaced many: such decisions come in runs,
  // and the full walk from OpenPool decides them. The orders still take the changes now, so
  // that the first steady decision after the run has only its own to file, not every job.
  const size_t changes = core_.running_changes().size();
  const bool many_changes = changes > many_changes_ && changes > core_.running().size() / 8;
  plan_.ForgetIfFull(core_);
  SyncRunningOrder(now_s);
  SyncQueuedOrder();
  if (many_changes) {
    ++many_changes_decisions_;
    return false;
  }
  if (!unfixed_.empty()) return false;
  std::vector<int32_t> kept_count, kept_devices, kept_unplanned;
  KeptRunning(now_s, kept_count, kept_devices, kept_unplanned);
  std::vector<int32_t> capacity;
  if (!OpenOrderPool(pool, initial, capacity)) return false;
  KeyedQueued least, apart;  // of the queued jobs: each class's least; those filed apart
  std::optional<SchedulerCore::QueueKey> running_least;  // of the movable running jobs
  std::vector<ThroughputPlan::ClassJobs> classes =
      ClassesToPlan(now_s, kept_count, least, apart, running_least);
  const std::vector<ThroughputPlan::KeptJobs> kept = KeptByClass(classes, kept_count);
  if (!plan_.SolveByClass(core_, std::move(classes), kept, capacity).ok()) return false;
  plan_ok_ = true;
  ++plans_by_order_;
  BookKeptRunning(kept_count);
  // The movable running jobs (each given its row), keyed once, where a walk needs them.
  std::optional<std::vector<SchedulerCore::QueueKey>> running;
  const auto running_keys = [&](std::vector<SchedulerCore::QueueKey>& keys) {
    if (!running) {
      running.emplace();
      for (int32_t cls = 0; cls < order_->classes(); ++cls) AppendMovableKeys(cls, now_s, *running);
    }
    keys.insert(keys.end(), running->begin(), running->end());
  };
  std::vector<const SchedulerCore::QueueKey*> first(plan_.rows(), nullptr);
  for (const KeyedQueued* queued : {&least, &apart}) {
    for (const auto& [key, known] : *queued) {
      const int32_t row = known >= 0 ? plan_.RowOfClass(known) : -1;
      if (row >= 0 && (first[row] == nullptr || key < *first[row])) first[row] = &key;
    }
  }
  if (running_least && SurelyDisplaces(first, *running_least, pool)) {
    return WalkEveryJob(now_s, running_keys, pool, candidates);
  }
  std::vector<SchedulerCore::QueueKey> order;
  size_t queued_in_order = 0;
  RowWalk walk = OrderRows(now_s, apart, kept_count, pool, order, queued_in_order);
  // The movable running jobs planned nowhere hold no device: the keyed ones hold them all.
  bool all_keyed = running_least.has_value();
  for (size_t t = 0; t < kept_unplanned.size(); ++t) {
    all_keyed = all_keyed && order_->unplanned_held(static_cast<int32_t>(t)) == kept_unplanned[t];
  }
  if (all_keyed) walk.all_held_below = running_least;
  const auto make_room = [&](const std::vector<int32_t>& held) {
    return RoomByClass(now_s, kept_devices, held);
  };
  if (WalkByClass(now_s, walk, std::move(order), queued_in_order, make_room, pool, candidates)) {
    ++ordered_decisions_;
    if (!apart.empty()) ++ordered_with_apart_;
    return true;
  }
  return displaces_ && WalkEveryJob(now_s, running_keys, pool, candidates);
}

PreemptiveStrategy::RowWalk PreemptiveStrategy::OrderRows(
    double now_s, const KeyedQueued& apart, const std::vector<int32_t>& kept_count,
    const Pool& pool, std::vector<SchedulerCore::QueueKey>& order, size_t& queued_count) {
  // RowsToWalk's counts, then the jobs of the rows walked.
  const int32_t types = core_.state().type_count();
  const int32_t rows = plan_.rows();
  std::vector<int32_t> waiting(rows, 0), holding(static_cast<size_t>(rows) * types, 0);
  for (int32_t cls = 0; cls < queued_order_->classes(); ++cls) {
    if (queued_order_->count(cls) > 0) waiting[plan_.RowOfClass(cls)] += queued_order_->count(cls);
  }
  for (const auto& [key, known] : apart) {
    if (known >= 0) ++waiting[plan_.RowOfClass(known)];
  }
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    const int32_t row = plan_.RowOfClass(cls);
    if (row < 0) continue;
    for (int32_t t = 0; t < types; ++t) {
      holding[static_cast<size_t>(row) * types + t] +=
          order_->count(cls, t) - kept_count[static_cast<size_t>(cls) * types + t];
    }
  }
  const RowWalk walk = WalkRows(waiting, holding);
  // Of each walked row's queued jobs, those WalkByClass can reach (it trims those apart).
  int64_t free_devices = 0;
  for (int32_t t = 0; t < types; ++t) free_devices += pool.free[t];
  const std::vector<int64_t> takes = QueuedTakes(free_devices);
  for (int32_t cls = 0; cls < queued_order_->classes(); ++cls) {
    if (queued_order_->count(cls) == 0) continue;
    const int32_t row = plan_.RowOfClass(cls);
    if (walk.rows[row]) LeastQueued(cls, now_s, takes[row], order);
  }
  for (const auto& [key, known] : apart) {
    if (known >= 0 && walk.rows[plan_.RowOfClass(known)]) order.push_back(key);
  }
  queued_count = order.size();
  for (size_t i = 0; i < queued_count; ++i) {
    const int32_t id = std::get<3>(order[i]);
    plan_.SetRow(id, plan_.KnownClassOf(core_, id, core_.record(id)));
  }
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    const int32_t row = plan_.RowOfClass(cls);
    if (row >= 0 && walk.rows[row]) AppendMovableKeys(cls, now_s, order);
  }
  return walk;
}

void PreemptiveStrategy::AppendMovableKeys(int32_t cls, double now_s,
                                           std::vector<SchedulerCore::QueueKey>& keys) {
  if (movable_keyed_[cls]) ++keys_reused_;
  VisitMovableKeys(cls, now_s, [&](const SchedulerCore::QueueKey& key) {
    plan_.SetRow(std::get<3>(key), cls);
    keys.push_back(key);
  });
}

void PreemptiveStrategy::VisitMovableKeys(
    int32_t cls, double now_s, const std::function<void(const SchedulerCore::QueueKey&)>& visit) {
  if (movable_keyed_[cls]) {
    for (const SchedulerCore::QueueKey& key : movable_keys_[cls]) visit(key);
    return;
  }
  order_->VisitAll(cls, [&](double /*floor*/, const RunningKeyInputs& job) {
    if (time_slices_ && !core_.QuantumOver(job, now_s)) return;  // kept
    visit(core_.KeyOf(job, now_s));
  });
}

PreemptiveStrategy::RunningRoom PreemptiveStrategy::RoomByClass(
    double now_s, const std::vector<int32_t>& kept_devices, const std::vector<int32_t>& held) {
  const int32_t types = static_cast<int32_t>(held.size());
  std::vector<RunningRoom::Unlisted> classes;
  for (int32_t cls = 0; cls < order_->classes(); ++cls) {
    if (!movable_least_[cls]) continue;
    RunningRoom::Unlisted& c = classes.emplace_back();
    c.least = *movable_least_[cls];
    c.cls = cls;
    c.devices.resize(types);
    for (int32_t t = 0; t < types; ++t) {
      c.devices[t] = order_->devices(cls, t) - kept_devices[static_cast<size_t>(cls) * types + t];
    }
  }
  room_classes_ += static_cast<int64_t>(classes.size());
  // A class's jobs with the type and devices they were filed with (those of their records).
  const auto list = [this, now_s](int32_t cls, RunningRoom& room) {
    ++room_classes_listed_;
    VisitMovableKeys(cls, now_s, [&](const SchedulerCore::QueueKey& key) {
      const int32_t id = std::get<3>(key);
      room.List(order_->type_of(id), key, order_->devices_of(id));
    });
  };
  return RunningRoom::OfClasses(std::move(classes), list, held);
}

bool PreemptiveStrategy::WalkEveryJob(double now_s, const RunningKeys& running_keys, Pool& pool,
                                      std::vector<int32_t>& candidates) {
  keys_.clear();
  for (int32_t id : core_.queue()) {
    const JobRecord& r = core_.record(id);
    plan_.SetRow(id, plan_.KnownClassOf(core_, id, r));
    keys_.push_back(core_.KeyOf(r, now_s));
  }
  const size_t queued_count = keys_.size();
  running_keys(keys_);
  // OpenPool's keys: every held device is a keyed job's, unless a running job planned nowhere
  // (filed apart) holds some; then the caller walks from OpenPool.
  std::vector<int32_t> held(pool.held.size(), 0);
  for (size_t i = queued_count; i < keys_.size(); ++i) {
    const JobRecord& r = core_.record(std::get<3>(keys_[i]));
    held[r.type.value()] += static_cast<int32_t>(r.devices.size());
  }
  if (held != pool.held) return false;
  keys_sorted_ = false;
  SortKeys(now_s);
  SelectInOrder(now_s, pool, /*queued_only=*/false, /*planned=*/true);
  candidates = core_.running();
  ++ordered_full_walks_;
  return true;
}

}  // namespace hetsched::sched
