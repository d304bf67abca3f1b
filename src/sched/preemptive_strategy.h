// PreemptiveStrategy: the preemptive policies (fifo-het, priority, las, las-het, srpt-het,
// srpt-het-fair). At most every preempt interval it reconsiders every running job: the policy
// order picks who runs, the policy's type choice (fastest, or max throughput by regret) picks
// where, and running jobs that lose their place or move are preempted, as far as the price of
// a preemption allows (sched/preemption_price.h: a time-slicing policy's running jobs keep
// their devices for a quantum, but for a move up the plan makes with tenants that pays for the
// job itself; moves must pay). In between, queued jobs fill free devices in
// policy order, after the jobs reserved devices that were being checkpointed; under a
// throughput plan, those whose class the last plan gave a free type take it first.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sched/queue_order_strategy.h"
#include "sched/queued_by_class.h"
#include "sched/reservations.h"
#include "sched/running_by_start.h"
#include "sched/running_order.h"
#include "sched/scheduler_core.h"
#include "sched/strategy.h"
#include "sched/throughput_plan.h"

namespace hetsched::sched {

// Keeps a reference to `core`.
class PreemptiveStrategy final : public DecisionStrategy {
 public:
  // `by_class` false: full decisions always walk every job (SelectByClass's reference in tests);
  // `by_order` false: SelectByClass decides without the running order (SelectByOrder off);
  // `by_start` false: SelectByStart off (its reference in tests).
  explicit PreemptiveStrategy(SchedulerCore& core, bool by_class = true, bool by_order = true,
                              bool by_start = true);
  // fill_types_ calls back into this object.
  PreemptiveStrategy(const PreemptiveStrategy&) = delete;
  PreemptiveStrategy& operator=(const PreemptiveStrategy&) = delete;
  // Running jobs started or stopped since the last full decision past which SelectByOrder
  // leaves the decision to the full walk, if they are also more than an eighth of the running
  // jobs (4,096; tests of a small cluster set fewer).
  void set_many_changes(size_t changes) { many_changes_ = changes; }

  void Decide(double now_s, Decision& out) override;
  void Upgrade(double now_s, Decision& out) override;
  void Fill(double now_s, Decision& out) override;
  double NextReallocationAt(bool queued) const override {
    // Gavel's rebuilds wait for a change in the set of jobs, and go by the full clock alone.
    if (gavel_rebuilds_) {
      return core_.job_set_version() == rebuilt_version_ ? std::numeric_limits<double>::infinity()
                                                         : clock_.NextFullAt();
    }
    return queued ? clock_.NextFullAt() : clock_.NextUpgradeAt();
  }
  // Full decisions whose throughput plan (TypeChoice::kPlanned) could not be solved.
  int64_t plan_failures() const { return plan_failures_; }
  // Full decisions made, and how many of them visited only the running jobs that gain
  // somewhere (IndexedPool).
  int64_t full_decisions() const { return full_decisions_; }
  int64_t indexed_decisions() const { return indexed_decisions_; }
  // Full decisions SelectByClass made, and how many of them SelectByOrder.
  int64_t by_class_decisions() const { return by_class_decisions_; }
  int64_t ordered_decisions() const { return ordered_decisions_; }
  // Of the by-class decisions, those whose walked classes' queued jobs asked for more devices
  // than were free (some of them then wait while others run).
  int64_t past_free_decisions() const { return past_free_decisions_; }
  // Full decisions SelectByOrder made by walking every job (the walk displaces running jobs),
  // with the plan and keys it had made.
  int64_t ordered_full_walks() const { return ordered_full_walks_; }
  // Over the full decisions SelectByOrder tried: the running jobs it could have moved, and how
  // many of their keys it evaluated to find each class's least.
  int64_t movable_in_order() const { return movable_in_order_; }
  int64_t least_keys_evaluated() const { return least_keys_evaluated_; }
  // Of those classes' least keys, how many were found by a plain pass over the class's jobs
  // (its floors pruned nothing the time before); and how many times a walk took a class's
  // running keys from the ones keyed for its least instead of keying them again.
  int64_t least_by_pass() const { return least_by_pass_; }
  // Of SelectByOrder's decisions, those with queued jobs whose class moves with their progress
  // (keyed one by one, not from its index of the queue).
  int64_t ordered_with_apart() const { return ordered_with_apart_; }
  int64_t keys_reused() const { return keys_reused_; }
  // The classes of movable running jobs in the held rooms SelectByOrder's walks made
  // (RunningRoom::OfClasses), and of those the ones listed job by job (the others were
  // counted whole).
  int64_t room_classes() const { return room_classes_; }
  int64_t room_classes_listed() const { return room_classes_listed_; }
  // Full decisions SelectByOrder left to the full walk for the many jobs that started or
  // stopped since the last (set_many_changes).
  int64_t many_changes_decisions() const { return many_changes_decisions_; }
  // Throughput plans SelectByOrder solved (its kept running jobs counted by class), and the
  // rows in them of classes only kept jobs were of (placed by each one's first running job).
  int64_t plans_by_order() const { return plans_by_order_; }
  // Full decisions SelectByStart made.
  int64_t by_start_decisions() const { return by_start_decisions_; }
  int64_t kept_only_rows() const { return kept_only_rows_; }
  // The budgets (rows x types) of the first throughput plan the last full decision solved,
  // with the running jobs it kept booked, before any other job took from them; empty when it
  // solved none. For tests that compare the ways to plan.
  const std::vector<double>& first_plan() const { return first_plan_; }

 private:
  // Devices a full decision hands out, by type: `free`, nobody holds them; `held`, running
  // jobs it may stop or move hold them, those not yet reached in policy order (the ones
  // reached last lose them first).
  struct Pool {
    std::vector<int32_t> free, held;
    int32_t total = 0;  // free and held of every type
    // Takes `gang` devices of type t, free ones first.
    void Take(int32_t t, int32_t gang);
  };

  // The fill's restriction (QueueOrderStrategy::FillTypes) while a throughput plan is known:
  // null without one.
  const QueueOrderStrategy::FillTypes* FillTypesNow() const;
  // FillTypes under the last solved plan: a queued job whose class it planned fills first
  // only the types its class had budget on. A fill that put it on another type would keep it
  // there for its quantum (an hour with the default preemption costs), where the plan meant
  // that type for a class that loses less on it: between full decisions (every preempt
  // interval) the plan is the best guide to who should take a freed device.
  const char* PlannedTypes(int32_t slot, const JobRecord& r);
  // The full decision: who runs where; preempts and starts accordingly.
  void Reallocate(double now_s, Decision& out);
  // SchedulerOptions::gavel_rebuilds: Reallocate when the set of jobs changed since the last
  // rebuild and the clock allows; otherwise nothing.
  void RebuildAsGavel(double now_s, Decision& out);
  // The pool of a full decision that visits, of the running jobs, only those that gain from a
  // move (SchedulerCore::move_candidates), when every queued job comes after all running ones
  // in the policy's order: selected_ gets the running jobs that move, keys_ the queued jobs in
  // policy order, and the pool what the full walk leaves for them. nullopt when that cannot
  // be told without visiting every running job. The decision it leads to is the full walk's.
  std::optional<Pool> IndexedPool(double now_s);
  // Greedy-fastest's move of running `r`: the best type with room in `free` when it scores
  // more than its own by the stickiness and the move pays; -1 when it stays.
  int32_t FasterFreeType(const JobRecord& r, const std::vector<int32_t>& free, double now_s) const;
  // A running job this decision may stop or move: preemptible, holding its devices, and
  // (under a time-slicing policy) past its quantum, reclaimed for a tenant whose guarantee it
  // borrows (reclaim_), or moved up by the plan inside it (kept_move_). The others keep their
  // devices as they are.
  bool Movable(int32_t id, double now_s) const;
  // Tenants under a solved plan: moves kept running jobs (inside their quantum) whose class
  // holds more of their type than the plan gives it to the type the plan gives it instead,
  // where the pool has room, the job runs faster and the move pays for the job itself
  // (SchedulerCore::MovePays); of those types the fastest. Selects them ahead of the walk and
  // marks them in kept_move_. The quantum keeps a job its place, not a misfit type: a job a
  // fill or a narrow plan (the few jobs the turns grant) put on a type that slows it down
  // 5-10x would keep it for an hour (docs/simulator.md, "Types by throughput plan").
  void MoveKeptByPlan(double now_s, Pool& pool);
  // Fills reclaim_ (TenantShares::Reclaimable) for the queued jobs in policy order.
  void MarkReclaimed(double now_s);
  // The pool at `now_s`; keys_: the queued jobs (in the order of core_.queue()), then the
  // movable running ones, sorted in policy order unless by_class_ (SortKeys sorts them when
  // needed); lists in scratch_ids_ the running jobs holding devices it may not move.
  Pool OpenPool(double now_s);
  // Sorts keys_ in policy order (tenants: their turns) unless they are.
  void SortKeys(double now_s);
  // Which jobs run: walks the sorted keys_ while the pool lasts, appending to selected_, with the
  // type each takes in tentative_. `queued_only`: keys_ holds no running job. `planned`: types
  // come from the solved throughput plan.
  void SelectInOrder(double now_s, Pool& pool, bool queued_only, bool planned);
  // TypeChoice::kPlanned: solves the throughput plan over keys_ (sorted or not) and `pool`, and
  // the running jobs OpenPool kept (inside their quantum, or not preemptible) on the devices they
  // hold (booked to their classes); false (plan_ok_ false) when PlanCanMatter says no or the
  // LP failed (counted).
  bool SolvePlan(const Pool& pool);
  // Whether a throughput plan can change a decision that hands out `offered` devices, planned
  // over `capacity` per type (the whole cluster's: the kept jobs' devices count). It can with
  // one type on offer too: it leaves that type to the classes that lose most elsewhere, and a
  // job nearly as fast on a type that kept jobs hold waits for it. It cannot with nothing to
  // hand out, or with one type in the whole plan (every class worth the same per device there).
  static bool PlanCanMatter(int32_t offered, const std::vector<int32_t>& capacity);
  // SelectInOrder's result under a solved plan without sorting keys_, when the pool has room
  // enough that no job's type depends on another class's jobs: only the jobs of classes whose
  // budget does not cover them as they are (those with a waiting job, or fewer devices on a
  // type than their running jobs hold there) are walked, in policy order, and of their queued
  // jobs only those the budgets could give a type (DropQueuedPastBudget); the others keep
  // their types. `candidates` gets the running jobs that move, in the order of
  // core_.running(). False, with the pool and the plan as they were and nothing selected, when
  // a walked job could take devices a running job holds (the caller then walks everyone).
  bool SelectByClass(double now_s, Pool& pool, std::vector<int32_t>& candidates);
  // SelectByClass's first step: per plan row, whether its jobs must be walked (1) or all keep
  // the types they run on (0); the devices the queued jobs of the rows walked ask for.
  struct RowWalk {
    std::vector<char> rows;
    int64_t waiting_devices = 0;
    // Where known: a key below every movable running job's, whose keys account for every held
    // device (a job keyed below it finds them all held; RunningRoom is not needed).
    std::optional<SchedulerCore::QueueKey> all_held_below;
  };
  RowWalk RowsToWalk() const;
  // RowsToWalk's rule on the counts: per row, its queued jobs (`waiting`), and its running
  // jobs by the type they hold (`holding`, rows x types).
  RowWalk WalkRows(const std::vector<int32_t>& waiting, const std::vector<int32_t>& holding) const;
  // Leaves in `order` (keyed jobs of walked rows: its first `queued_count` queued, then the
  // running ones) every running job and, of each row's queued jobs, only the QueuedTakes least
  // keyed: the walk gives the others nothing.
  void DropQueuedPastBudget(std::vector<SchedulerCore::QueueKey>& order, size_t queued_count,
                            int64_t room) const;
  // Per plan row, how many of its least-keyed queued jobs WalkByClass can reach before one
  // finds no type: the first that finds none leaves none for those behind it (budgets and room
  // only shrink), so it walks no more than one past those that take a type. They are at most
  // as many as its budgets give (one per gang a type holds at least half of, plus one for
  // rounding), and as fit in `room` devices, the free ones: a walk that does not give up takes
  // no held device beyond those running jobs moved away from, and each job that moves takes as
  // many as it vacates, so what the queued jobs take comes out of the free devices.
  std::vector<int64_t> QueuedTakes(int64_t room) const;
  // Lists the keys of the running jobs a full decision may move (all of them, any order).
  using RunningKeys = std::function<void(std::vector<SchedulerCore::QueueKey>&)>;
  // The devices the full walk finds held when it reaches a job, while no running job has lost
  // its place: by type, those of the movable running jobs keyed at or after it.
  class RunningRoom {
   public:
    // Every job listed from `running_keys`; ok() false when their devices fall short of
    // `held` (by type: a running job was left out).
    static RunningRoom Of(const RunningKeys& running_keys, const SchedulerCore& core,
                          const std::vector<int32_t>& held);
    // A class of movable running jobs, its jobs not listed: their least key and the devices
    // they hold by type.
    struct Unlisted {
      SchedulerCore::QueueKey least;
      int32_t cls = -1;
      std::vector<int32_t> devices;
    };
    // Lists class `cls`'s jobs into `room` (List).
    using ListClass = std::function<void(int32_t cls, RunningRoom& room)>;
    // The jobs of `classes` counted by class: a class's jobs are listed (by `list`) only when
    // a job keyed above its least asks; every job of a class keyed at or below the asking one
    // is held from it. ok() false when the classes' devices fall short of `held`.
    static RunningRoom OfClasses(std::vector<Unlisted> classes, ListClass list,
                                 const std::vector<int32_t>& held);
    void List(int32_t type, const SchedulerCore::QueueKey& key, int32_t devices) {
      keys_[type].emplace_back(key, devices);
      sorted_ = false;
    }
    // Held devices of type t of the jobs keyed `k` or later.
    int32_t HeldFrom(int32_t t, const SchedulerCore::QueueKey& k);
    bool ok() const { return ok_; }
    // Classes listed so far (OfClasses).
    size_t listed() const { return listed_; }

   private:
    explicit RunningRoom(int32_t types) : keys_(types), after_(types) {}
    void Sort();
    bool ok_ = true;
    // By type: the listed jobs' keys with their devices, in key order once sorted_, and the
    // devices from each on.
    std::vector<std::vector<std::pair<SchedulerCore::QueueKey, int32_t>>> keys_;
    std::vector<std::vector<int64_t>> after_;
    bool sorted_ = false;
    // OfClasses: the classes by least key, the first listed_ of them listed; the devices of
    // the unlisted ones from each on (by class, then type); how to list one.
    std::vector<Unlisted> unlisted_;
    size_t listed_ = 0;
    std::vector<int64_t> unlisted_after_;
    ListClass list_;
  };
  // Makes the RunningRoom of the movable running jobs, given the devices held at the walk's
  // start.
  using RoomMaker = std::function<RunningRoom(const std::vector<int32_t>& held)>;
  // WalkByClass's held room for the job keyed `k`, by type, into `full_held`: the held devices
  // (`before_held`) of the movable running jobs keyed k or later (RunningRoom, made into `room`
  // by `make_room` the first time it is needed; all of them below walk.all_held_below), plus
  // `vacated`, less `taken`. False when the room leaves some held devices out.
  bool HeldRoomAt(const SchedulerCore::QueueKey& k, const RowWalk& walk, const RoomMaker& make_room,
                  const std::vector<int32_t>& before_held, const std::vector<int32_t>& vacated,
                  const std::vector<int32_t>& taken, std::optional<RunningRoom>& room,
                  std::vector<int32_t>& full_held) const;
  // Whether a job of plan row `row` (running on `own`, or -1) may be offered a type, other than
  // its own, that lacks a gang's free devices: its room there is in held devices.
  bool ShortOfFree(int32_t row, int32_t own, const Pool& pool) const;
  // SelectByClass's walk of `order` (the keyed jobs of the rows `walk` walks: the first
  // `queued_count` queued, then the running ones, each part in any order); `make_room` makes
  // the movable running jobs' RunningRoom.
  bool WalkByClass(double now_s, const RowWalk& walk, std::vector<SchedulerCore::QueueKey> order,
                   size_t queued_count, const RoomMaker& make_room, Pool& pool,
                   std::vector<int32_t>& candidates);
  // The full decision of SelectByClass, its pool (`initial`: free and held by type, as
  // Reallocate counts it) and plan made from the running order (order_) instead of every
  // running job: what the decision needs of the jobs it may move is each class's count on
  // each type and least key. Where the full walk displaces running jobs it walks every job
  // itself, with that plan (WalkEveryJob). False, with nothing selected, where it cannot tell,
  // or many running jobs started or stopped since the last full decision (the caller walks).
  bool SelectByOrder(double now_s, Pool& pool, std::vector<int32_t>& initial,
                     std::vector<int32_t>& candidates);
  // A queued job's key (or a class's least) with its known class (-1: planned nowhere).
  using KeyedQueued = std::vector<std::pair<SchedulerCore::QueueKey, int32_t>>;
  // SelectByOrder's plan rows: per row, walked or not (RowsToWalk's rule), with the keys of the
  // walked rows' jobs appended to `order`, each given its row: the queued ones first
  // (`queued_count` of them: of each row only the QueuedTakes least, from queued_order_, and
  // the jobs filed apart, `apart`), then the running ones. `pool`: the decision's.
  RowWalk OrderRows(double now_s, const KeyedQueued& apart, const std::vector<int32_t>& kept_count,
                    const Pool& pool, std::vector<SchedulerCore::QueueKey>& order,
                    size_t& queued_count);
  // Whether the full walk surely displaces a running job: some row's least-keyed queued job
  // (`first`, by row; null: none) comes before every movable running job (`running_least`)
  // and finds room only in held devices. A guess that spares the walk by class where it would
  // give up (the full walk decides either way).
  bool SurelyDisplaces(const std::vector<const SchedulerCore::QueueKey*>& first,
                       const SchedulerCore::QueueKey& running_least, const Pool& pool) const;
  // SelectByOrder's full walk where the full walk displaces running jobs (found by the walk by
  // class, or SurelyDisplaces): SelectInOrder over `queued` and the movable running jobs, with
  // the plan and pool as they are. False, with nothing selected, when the keys do not account
  // for every held device.
  bool WalkEveryJob(double now_s, const RunningKeys& running_keys, Pool& pool,
                    std::vector<int32_t>& candidates);
  // Books SelectByOrder's kept running jobs (KeptRunning's `kept_count`, and the unpreemptible
  // ones) against their classes' budgets in the plan just solved.
  void BookKeptRunning(const std::vector<int32_t>& kept_count);
  // SelectByOrder's pool, `initial` as Reallocate counts it and the capacity SolvePlan plans,
  // from order_ (less its jobs inside their quantum) and the unpreemptible running jobs; false
  // when no plan can matter (PlanCanMatter).
  bool OpenOrderPool(Pool& pool, std::vector<int32_t>& initial,
                     std::vector<int32_t>& capacity) const;
  // Brings order_ up to the core's running jobs: files those that changed since the last call,
  // or every running job afresh when the plan's known classes changed.
  void SyncRunningOrder(double now_s);
  // Files running `id` in order_, or with the jobs it keeps apart.
  void FileRunning(int32_t id, double now_s);
  // Brings queued_order_ up to the core's queue: files the jobs queued or taken off it since
  // the last call, or every queued job afresh when the queue was re-filed (new keys) or the
  // plan's known classes changed.
  void SyncQueuedOrder();
  // Files queued job std::get<3>(key) in queued_order_ under `key` (its key at time 0), or
  // apart (unfixed_queued_) when its class moves with its progress; not at all when it is
  // planned nowhere.
  void FileQueued(const SchedulerCore::QueueKey& key);
  // Appends the keys at `now_s` of class `cls`'s `k` least-keyed queued jobs (all when fewer).
  void LeastQueued(int32_t cls, double now_s, int64_t k,
                   std::vector<SchedulerCore::QueueKey>& keys);
  // The running jobs SelectByOrder may not move are those not preemptible (unpreemptible_)
  // and those of order_ inside their quantum, read here by count from order_ (after it forgot
  // those past their quantum at `now_s`): per class and type in `kept_count`, with their
  // devices in `kept_devices`, and the devices of those planned nowhere by type in
  // `kept_unplanned`.
  void KeptRunning(double now_s, std::vector<int32_t>& kept_count,
                   std::vector<int32_t>& kept_devices, std::vector<int32_t>& kept_unplanned);
  // The kept running jobs by known class for SolveByClass: order_'s inside their quantum
  // (`kept_count`) and the unpreemptible ones; for each class none of `classes` is of, its
  // first job in core_.running(), those classes last in that order.
  std::vector<ThroughputPlan::KeptJobs> KeptByClass(
      const std::vector<ThroughputPlan::ClassJobs>& classes,
      const std::vector<int32_t>& kept_count);
  // SelectByOrder's RunningRoom: the movable running jobs counted by class (ClassesToPlan's
  // least keys, the order's devices less `kept_devices`), a class listed when asked.
  RunningRoom RoomByClass(double now_s, const std::vector<int32_t>& kept_devices,
                          const std::vector<int32_t>& held);
  // Each class's keyed jobs for the plan: the queued (counted in queued_order_, with their
  // least keys listed in `least`, and those filed apart, keyed one by one into `apart`) and the
  // running ones SelectByOrder may move, each class's least key found by the floors.
  // `running_least`: the least key of the running jobs it may move (none: no such job).
  std::vector<ThroughputPlan::ClassJobs> ClassesToPlan(
      double now_s, const std::vector<int32_t>& kept_count, KeyedQueued& least, KeyedQueued& apart,
      std::optional<SchedulerCore::QueueKey>& running_least);
  // The least key of class `cls`'s running jobs SelectByOrder may move (it has some), keying
  // them in floor order as far as the floors allow (movable_keys_, movable_keyed_), or all of
  // them where the floors pruned nothing the last time; `evaluated` counts the keys.
  SchedulerCore::QueueKey LeastMovableKey(int32_t cls, double now_s, int64_t& evaluated);
  // Appends the keys of class `cls`'s running jobs SelectByOrder may move, giving each its row:
  // those ClassesToPlan keyed when it keyed them all, else keyed now.
  void AppendMovableKeys(int32_t cls, double now_s, std::vector<SchedulerCore::QueueKey>& keys);
  // Calls visit(key) for each of class `cls`'s running jobs SelectByOrder may move, keyed as
  // AppendMovableKeys keys them.
  void VisitMovableKeys(int32_t cls, double now_s,
                        const std::function<void(const SchedulerCore::QueueKey&)>& visit);
  // The full walk of a time-slicing policy whose queued jobs' keys do not change in time
  // (Policy::queued_keys_fixed), without tenants or a plan, visiting only the jobs it can
  // reach: of the running jobs those past their quantum (by_start_; the others are not
  // Movable), keyed and sorted, merged with the core's sorted queue as the walk goes
  // (SelectInOrder on each next stretch of the order, until the pool is spent). Sets the pool,
  // `initial` (free and held by type) and `candidates` (the movable running jobs, in the order
  // of core_.running()) as OpenPool and the full walk would, and selects what it selects.
  void SelectByStart(double now_s, Pool& pool, std::vector<int32_t>& initial,
                     std::vector<int32_t>& candidates);
  // Orders running job ids as core_.running() does.
  void SortByRunningPosition(std::vector<int32_t>& ids) const;
  // SelectInOrder's step for one job under kPlanned: the type the plan gives it (its own when
  // it runs and its class keeps budget there), -1 when none. Takes from `pool`; the plan looks
  // for room in pool.free and `held` (pool.held, or what the full walk would hold).
  int32_t SelectPlanned(int32_t id, double now_s, Pool& pool, const std::vector<int32_t>& held);
  // SelectPlanned for `chosen`, the job at keys_[at]; where the plan gives it no type and
  // `turns` is set (tenants), its tenant keeps its turn: each of its next jobs in keys_ is
  // tried in turn (taken), up to one that takes a type, which `chosen` then names.
  int32_t SelectPlannedInTurn(size_t at, double now_s, Pool& pool, TenantTurnsKept* turns,
                              int32_t& chosen);
  // The type of each selected job (-1: none): tentative_, or under kMaxThroughput the regret
  // pass over the `initial` pool (by type), its misfits keeping their tentative type where
  // that still has room.
  std::vector<int32_t> AssignTypes(const std::vector<int32_t>& initial, double now_s) const;
  // Type per selected job maximizing summed score (greedy on regret); -1 where none fits.
  std::vector<int32_t> AssignByRegret(const std::vector<int32_t>& jobs,
                                      std::vector<int32_t> capacity, double now_s) const;
  // What running `r`'s own type is worth to it on top of its score: it keeps its type unless
  // a move gains more than the stickiness and than what the move costs over its expected
  // remaining time (PreemptionPrice::MoveMargin, in the normalized speed of the default
  // scorer). 0 for a queued job.
  double KeepBonus(const JobRecord& r, double now_s) const;
  // Preempts the movable running jobs of `candidates` that lost their place or move to another
  // type (not in selected_ with their own type in `assigned`), adding the devices of those
  // still writing their checkpoints to `releasing` (by type). Returns those that move (flagged
  // in moved_flag_).
  std::vector<int32_t> PreemptDisplaced(double now_s, const std::vector<int32_t>& assigned,
                                        const std::vector<int32_t>& candidates,
                                        std::vector<int32_t>& releasing, Decision& out);
  // Starts the selected jobs that are not running, in policy order. A job that moves, or whose
  // devices the jobs it displaced still hold while they write their checkpoints, gets them
  // reserved (sched/reservations.h).
  void StartSelected(double now_s, const std::vector<int32_t>& assigned,
                     const std::vector<int32_t>& releasing, Decision& out);

  SchedulerCore& core_;
  const bool time_slices_;     // the policy's time_slices()
  const bool gavel_rebuilds_;  // SchedulerOptions::gavel_rebuilds, for an in-order policy
  // SelectByClass may decide: a planned policy, no space sharing (no tenants is checked as it
  // decides). Elastic jobs change gang only while queued (sched/elastic.h), each resize a queue
  // change (SchedulerCore::NoteQueueChanged).
  const bool by_class_;
  int64_t rebuilt_version_ = -1;  // core's job_set_version() at the last rebuild
  QueueOrderStrategy fill_;
  QueueOrderStrategy::FillTypes fill_types_;  // empty: fills follow the policy's order alone
  ReallocationClock clock_;
  // Reallocate's working lists, kept to reuse their memory (megabytes at scale: fresh ones
  // cost page faults). By JobId: scratch_ the type assigned in a decision (-2: none),
  // moved_flag_ preempted to move in this decision.
  std::vector<SchedulerCore::QueueKey> keys_;
  bool keys_sorted_ = false;
  std::vector<int32_t> selected_, tentative_;
  std::vector<int32_t> scratch_;
  std::vector<int32_t> scratch_ids_;  // OpenPool's kept running jobs, SolvePlan books as they are
  std::vector<char> moved_flag_;
  // Running jobs of borrowers that owners take back in this reallocation despite their quantum
  // (TenantShares::Reclaimable); empty without tenants or time slices.
  std::vector<char> reclaim_;
  // By JobId: running jobs inside their quantum this reallocation moves (MoveKeptByPlan);
  // kept_moves_ lists them, to clear the marks after it.
  std::vector<char> kept_move_;
  std::vector<int32_t> kept_moves_;
  // Jobs the last reallocation placed on devices still being checkpointed.
  Reservations reservations_;
  // kPlanned: the devices per type each class of jobs gets in this reallocation.
  ThroughputPlan plan_;
  bool plan_ok_ = false;  // this reallocation has a plan
  int64_t plan_failures_ = 0;
  int64_t full_decisions_ = 0;
  int64_t indexed_decisions_ = 0;
  int64_t by_class_decisions_ = 0;
  int64_t ordered_decisions_ = 0;
  int64_t past_free_decisions_ = 0;
  int64_t ordered_full_walks_ = 0;
  int64_t ordered_with_apart_ = 0;
  // This full decision's walk by class gave up where a take reached a running job's devices:
  // the full walk displaces running jobs, and walking by class again would give up again.
  bool displaces_ = false;
  int64_t movable_in_order_ = 0, least_keys_evaluated_ = 0, least_by_pass_ = 0, keys_reused_ = 0;
  // SelectByOrder's index of the running jobs (null where it does not decide: a policy
  // without key floors, or SelectByClass off), good while the plan's known classes are those
  // it was filed with.
  std::unique_ptr<RunningOrder> order_;
  bool order_filed_ = false;
  int64_t order_generation_ = -1;
  // Running jobs it files apart: not preemptible (kept where they are), and those whose class
  // moves with their progress (SelectByOrder then does not decide).
  std::set<int32_t> unpreemptible_, unfixed_;
  // SelectByOrder's index of the queued jobs by class (with order_), good while the plan's
  // known classes are those it was filed with and the core has not re-filed its queue; the
  // queued jobs whose class moves with their progress, filed apart.
  std::unique_ptr<QueuedByClass> queued_order_;
  bool queued_filed_ = false;
  int64_t queued_generation_ = -1, queued_refiles_ = -1;
  std::set<int32_t> unfixed_queued_;
  std::vector<char> synced_;  // by JobId: seen in this sync's changes
  // By class of order_, for the full decision under way: the keys of its running jobs that may
  // move, where ClassesToPlan evaluated every one of them (movable_keyed_ 1) to find the least
  // (their floors all lay under it): the walks reuse them instead of keying again.
  std::vector<std::vector<SchedulerCore::QueueKey>> movable_keys_;
  std::vector<char> movable_keyed_;
  // By class of order_, at the last ClassesToPlan: the least key of its movable running jobs
  // (none: it had none).
  std::vector<std::optional<SchedulerCore::QueueKey>> movable_least_;
  int64_t room_classes_ = 0, room_classes_listed_ = 0, many_changes_decisions_ = 0;
  int64_t plans_by_order_ = 0, kept_only_rows_ = 0;
  std::vector<double> first_plan_;
  size_t many_changes_ = 4096;
  // SelectByStart's index of the running jobs (null where it does not decide), and its
  // scratch: the running jobs past their quantum, the movable ones' keys, and by JobId a mark
  // on the movable ones (0 between decisions).
  std::unique_ptr<RunningByStart> by_start_;
  std::vector<int32_t> past_quantum_;
  std::vector<char> movable_mark_;
  std::vector<SchedulerCore::QueueKey> running_keys_;
  int64_t by_start_decisions_ = 0;
  // By class of order_: at the last full decision some floor lay above the least key (1 until
  // a decision found otherwise): visit in floor order, which may stop early.
  std::vector<char> floors_prune_;
};

}  // namespace hetsched::sched
