#include "sched/throughput_plan.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include "sched/scheduler_core.h"

namespace hetsched::sched {

using model::DeviceTypeId;

namespace {
// Past this many known classes (jobs whose NewWorkShare moved with their progress each make
// new ones) the known classes and the cache start afresh.
constexpr size_t kMaxKnown = 1 << 16;
}  // namespace

void ThroughputPlan::ForgetIfFull(const SchedulerCore& core) {
  types_ = core.state().type_count();
  if (class_of_.size() < core.slots()) class_of_.resize(core.slots(), -1);
  if (cached_.size() < core.slots()) cached_.resize(core.slots());
  if (known_gang_.size() > kMaxKnown) {
    known_speeds_.clear();
    known_gang_.clear();
    std::fill(known_slots_.begin(), known_slots_.end(), -1);
    row_of_known_.clear();
    std::fill(cached_.begin(), cached_.end(), CachedClass{});
    ++generation_;
  }
  // Room for more classes, made here (in a solve): the fills between solves add the classes
  // of jobs new since, and a table that grew there would reallocate inside a fill decision.
  const size_t known = known_gang_.size();
  if (known_gang_.capacity() < 2 * known + 64) {
    const size_t room = 4 * known + 256;
    known_speeds_.reserve(room * static_cast<size_t>(types_));
    known_gang_.reserve(room);
    row_of_known_.reserve(room);
    size_t slots = 1;
    while (slots < 2 * room) slots *= 2;
    if (known_slots_.size() < slots) Reindex(slots);
  }
}

void ThroughputPlan::Begin(const SchedulerCore& core, const std::vector<int32_t>& capacity,
                           bool may_forget) {
  if (may_forget) ForgetIfFull(core);
  types_ = static_cast<int32_t>(capacity.size());
  std::fill(row_of_known_.begin(), row_of_known_.end(), -1);
  budget_.clear();
  solved_.clear();
}

std::optional<int32_t> ThroughputPlan::FixedClassOf(const SchedulerCore& core, int32_t slot,
                                                    const JobRecord& r) {
  const int32_t known = ClassOf(core, slot, r);
  // ClassOf keeps only fixed classes.
  if (!Holds(cached_[slot], r)) return std::nullopt;
  return known;
}

util::Status ThroughputPlan::SolveByClass(const SchedulerCore& core, std::vector<ClassJobs> classes,
                                          const std::vector<KeptJobs>& kept,
                                          const std::vector<int32_t>& capacity) {
  // The caller's classes were found after its ForgetIfFull.
  Begin(core, capacity, /*may_forget=*/false);
  // Rows in the order of each class's least key, as SolveByKey orders them.
  std::sort(classes.begin(), classes.end(),
            [](const ClassJobs& a, const ClassJobs& b) { return a.least < b.least; });
  AllocationProblem problem;
  problem.capacity.assign(capacity.begin(), capacity.end());
  for (const ClassJobs& c : classes) {
    const int32_t id = std::get<3>(c.least);
    AddToRow(problem, id, core.record(id), c.known);
    problem.jobs.back().count = c.count;
  }
  for (const KeptJobs& k : kept) {
    if (row_of_known_[k.known] < 0) {
      assert(k.first >= 0);  // the caller names the first job of each class new here
      AddToRow(problem, k.first, core.record(k.first), k.known);
      problem.jobs.back().count = 0;
    }
    problem.jobs[row_of_known_[k.known]].count += k.count;
  }
  return SolveRows(problem, core);
}

util::Status ThroughputPlan::Solve(const SchedulerCore& core, const std::vector<int32_t>& jobs,
                                   const std::vector<int32_t>& capacity) {
  Begin(core, capacity);
  for (int32_t id : jobs) class_of_[id] = -1;
  // One LP row per class of identical jobs, standing for all its members (AllocJob::count),
  // weighted by its gang: work is counted per device, so the plan does not favour small jobs
  // (which job runs first is the order's business). The LP's size is that of the job mix,
  // not of the queue. Rows in the order of their first member in `jobs`.
  AllocationProblem problem;
  problem.capacity.assign(capacity.begin(), capacity.end());
  for (int32_t id : jobs) {
    const JobRecord& r = core.record(id);
    const int32_t known = ClassOf(core, id, r);
    if (known >= 0) AddToRow(problem, id, r, known);  // else it waits for its own vendor
  }
  return SolveRows(problem, core);
}

util::Status ThroughputPlan::SolveByKey(const SchedulerCore& core,
                                        const std::vector<SchedulerCore::QueueKey>& keyed,
                                        const std::vector<int32_t>& after,
                                        const std::vector<int32_t>& capacity) {
  Begin(core, capacity);
  for (const auto& key : keyed) class_of_[std::get<3>(key)] = -1;
  for (int32_t id : after) class_of_[id] = -1;
  // Each class's least-keyed job (its first in sorted order) and its place in `keyed`.
  known_of_keyed_.resize(keyed.size());
  std::vector<size_t> firsts;
  for (size_t i = 0; i < keyed.size(); ++i) {
    const int32_t id = std::get<3>(keyed[i]);
    const int32_t known = ClassOf(core, id, core.record(id));
    known_of_keyed_[i] = known;
    if (known < 0) continue;
    if (least_at_.size() < known_gang_.size()) least_at_.resize(known_gang_.size(), -1);
    int32_t& least = least_at_[known];
    if (least < 0) firsts.push_back(static_cast<size_t>(known));
    if (least < 0 || keyed[i] < keyed[least]) least = static_cast<int32_t>(i);
  }
  for (size_t& known : firsts) known = static_cast<size_t>(least_at_[known]);
  std::sort(firsts.begin(), firsts.end(), [&](size_t a, size_t b) { return keyed[a] < keyed[b]; });
  AllocationProblem problem;
  problem.capacity.assign(capacity.begin(), capacity.end());
  for (size_t i : firsts) {
    const int32_t id = std::get<3>(keyed[i]);
    AddToRow(problem, id, core.record(id), known_of_keyed_[i]);
  }
  for (size_t i = 0; i < keyed.size(); ++i) {
    const int32_t known = known_of_keyed_[i];
    if (known < 0 || least_at_[known] == static_cast<int32_t>(i)) continue;
    const int32_t id = std::get<3>(keyed[i]);
    AddToRow(problem, id, core.record(id), known);
  }
  for (size_t i : firsts) least_at_[known_of_keyed_[i]] = -1;
  for (int32_t id : after) {
    const JobRecord& r = core.record(id);
    const int32_t known = ClassOf(core, id, r);
    if (known >= 0) AddToRow(problem, id, r, known);
  }
  return SolveRows(problem, core);
}

void ThroughputPlan::AddToRow(AllocationProblem& problem, int32_t id, const JobRecord& r,
                              int32_t known) {
  int32_t& row = row_of_known_[known];
  if (row < 0) {
    row = static_cast<int32_t>(problem.jobs.size());
    const double* speeds = &known_speeds_[static_cast<size_t>(known) * types_];
    AllocJob job;
    job.name = r.job->name;
    job.speed.assign(speeds, speeds + types_);
    job.gang = known_gang_[known];
    job.weight = known_gang_[known];
    job.count = 0;
    problem.jobs.push_back(std::move(job));
  }
  class_of_[id] = row;
  ++problem.jobs[row].count;
}

util::Status ThroughputPlan::SolveRows(const AllocationProblem& problem,
                                       const SchedulerCore& core) {
  if (problem.jobs.empty()) return util::Status::Ok();
  auto solved =
      ComputeAllocation(problem, Objective::kMaxThroughput, *solver_, core.options().allocation);
  if (!solved.ok()) {
    std::fill(class_of_.begin(), class_of_.end(), -1);
    return solved.status();
  }
  budget_.assign(problem.jobs.size() * types_, 0);
  row_gang_.resize(problem.jobs.size());
  for (size_t c = 0; c < problem.jobs.size(); ++c) {
    row_gang_[c] = problem.jobs[c].gang;
    for (int32_t t = 0; t < types_; ++t) {
      budget_[c * types_ + t] = solved->At(c, t) * problem.jobs[c].gang * problem.jobs[c].count;
    }
  }
  solved_ = budget_;
  planned_.resize(solved_.size());
  for (size_t i = 0; i < solved_.size(); ++i) planned_[i] = solved_[i] > kPlannedMin ? 1 : 0;
  return util::Status::Ok();
}

int32_t ThroughputPlan::ClassOf(const SchedulerCore& core, int32_t slot, const JobRecord& r) {
  const bool running = r.phase == JobPhase::kRunning;
  const int32_t type = r.type.valid() ? r.type.value() : -1;
  // A job admitted since the last solve (the fills between full decisions ask for its class).
  if (cached_.size() < core.slots()) cached_.resize(core.slots());
  CachedClass& cached = cached_[slot];
  if (Holds(cached, r)) return cached.known;
  // Built in a kept key: classes are looked up far more often than new ones are added.
  ClassKey& key = lookup_key_;
  key.speeds.assign(types_, 0);
  key.gang = 0;
  bool fixed = true;
  double best = 0;
  for (int32_t t = 0; t < types_; ++t) {
    if (r.allowed[t] && !r.incompatible[t] && r.speed[t] > 0) {
      fixed = fixed && core.CheckpointLoadsOn(r, DeviceTypeId(t));
      key.speeds[t] = r.speed[t] * core.NewWorkShare(r, DeviceTypeId(t));
    }
  }
  for (double speed : key.speeds) best = std::max(best, speed);
  int32_t known = -1;
  if (best > 0) {
    // The LP counts each class's speeds relative to its best: classes with the same relative
    // speeds are one, and the walk hands out their budget job by job in the policy's order.
    for (double& speed : key.speeds) speed /= best;
    // A running job is worth more on the type it holds (its best included), so the plan moves
    // it only for a gain above the incumbency.
    const double incumbency = core.price().plan_incumbency();
    if (incumbency > 0 && running && key.speeds[type] > 0) key.speeds[type] *= 1 + incumbency;
    key.gang = r.gang;
    known = Known(key);
  }
  if (fixed) cached = CachedClass{r.seq, type, r.gang, running, known};
  return known;
}

int32_t ThroughputPlan::Known(const ClassKey& key) {
  if (known_slots_.empty()) Reindex(64);
  const size_t mask = known_slots_.size() - 1;
  size_t slot = HashOf(key.speeds.data(), key.gang) & mask;
  for (; known_slots_[slot] >= 0; slot = (slot + 1) & mask) {
    const int32_t k = known_slots_[slot];
    const double* speeds = &known_speeds_[static_cast<size_t>(k) * types_];
    if (known_gang_[k] == key.gang && std::equal(key.speeds.begin(), key.speeds.end(), speeds)) {
      return k;
    }
  }
  const int32_t known = static_cast<int32_t>(known_gang_.size());
  known_speeds_.insert(known_speeds_.end(), key.speeds.begin(), key.speeds.end());
  known_gang_.push_back(key.gang);
  row_of_known_.push_back(-1);
  if (2 * known_gang_.size() > known_slots_.size()) {
    Reindex(2 * known_slots_.size());
  } else {
    known_slots_[slot] = known;
  }
  return known;
}

size_t ThroughputPlan::HashOf(const double* speeds, int32_t gang) const {
  size_t h = std::hash<int32_t>()(gang);
  for (int32_t t = 0; t < types_; ++t) h = h * 1000003 ^ std::hash<double>()(speeds[t]);
  return h;
}

void ThroughputPlan::Reindex(size_t size) {
  known_slots_.assign(size, -1);
  const size_t mask = size - 1;
  for (size_t k = 0; k < known_gang_.size(); ++k) {
    size_t slot = HashOf(&known_speeds_[k * types_], known_gang_[k]) & mask;
    while (known_slots_[slot] >= 0) slot = (slot + 1) & mask;
    known_slots_[slot] = static_cast<int32_t>(k);
  }
}

int32_t ThroughputPlan::Pick(int32_t slot, const JobRecord& r, const std::vector<int32_t>& free,
                             const std::vector<int32_t>& held, int32_t prefer) const {
  if (static_cast<size_t>(slot) >= class_of_.size() || class_of_[slot] < 0) return -1;
  const int32_t gang = r.gang;
  const double* budget = &budget_[static_cast<size_t>(class_of_[slot]) * types_];
  // A class's budget is fractional: a job takes a type while at least half its gang is left.
  const auto fits = [&](int32_t t) { return free[t] + held[t] >= gang && budget[t] >= gang * 0.5; };
  if (prefer >= 0 && fits(prefer)) return prefer;
  int32_t best = -1;
  for (int32_t t = 0; t < types_; ++t) {
    if (fits(t) && (best < 0 || budget[t] > budget[best])) best = t;
  }
  return best;
}

void ThroughputPlan::Take(int32_t slot, const JobRecord& r, int32_t type) {
  if (static_cast<size_t>(slot) >= class_of_.size() || class_of_[slot] < 0) return;
  budget_[static_cast<size_t>(class_of_[slot]) * types_ + type] -= r.gang;
}

}  // namespace hetsched::sched
