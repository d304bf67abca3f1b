#include "sched/throughput_plan.h"

#include <algorithm>

#include "sched/scheduler_core.h"

namespace hetsched::sched {

using model::DeviceTypeId;

util::Status ThroughputPlan::Solve(const SchedulerCore& core, const std::vector<int32_t>& jobs,
                                   const std::vector<int32_t>& capacity) {
  types_ = static_cast<int32_t>(capacity.size());
  if (class_of_.size() < core.slots()) class_of_.resize(core.slots(), -1);
  for (int32_t id : jobs) class_of_[id] = -1;
  budget_.clear();
  // One LP row per class of identical jobs, standing for all its members (AllocJob::count),
  // weighted by its gang: work is counted per device, so the plan does not favour small jobs
  // (which job runs first is the order's business). The LP's size is that of the job mix,
  // not of the queue.
  std::unordered_map<ClassKey, int32_t, ClassKeyHash> classes;
  AllocationProblem problem;
  problem.capacity.assign(capacity.begin(), capacity.end());
  const double incumbency = core.price().plan_incumbency();
  ClassKey key;
  for (int32_t id : jobs) {
    const JobRecord& r = core.record(id);
    key.speeds.assign(types_, 0);
    bool any = false;
    for (int32_t t = 0; t < types_; ++t) {
      if (r.allowed[t] && !r.incompatible[t] && r.speed[t] > 0) {
        key.speeds[t] = r.speed[t] * core.NewWorkShare(r, DeviceTypeId(t));
      }
      any = any || key.speeds[t] > 0;
    }
    if (!any) continue;  // it waits for its own vendor: no budget anywhere
    key.gang = std::max(1, r.job->gang_size);
    key.own = -1;
    if (incumbency > 0 && r.phase == JobPhase::kRunning && key.speeds[r.type.value()] > 0) {
      // Running jobs are a class of their own per type they hold, worth more there.
      key.own = r.type.value();
      key.speeds[key.own] *= 1 + incumbency;
    }
    auto it = classes.find(key);
    if (it == classes.end()) {
      it = classes.emplace(key, static_cast<int32_t>(problem.jobs.size())).first;
      AllocJob row;
      row.name = r.job->name;
      row.speed = key.speeds;
      row.gang = key.gang;
      row.weight = key.gang;
      row.count = 0;
      problem.jobs.push_back(std::move(row));
    }
    class_of_[id] = it->second;
    ++problem.jobs[it->second].count;
  }
  if (problem.jobs.empty()) return util::Status::Ok();
  auto solved =
      ComputeAllocation(problem, Objective::kMaxThroughput, *solver_, core.options().allocation);
  if (!solved.ok()) {
    for (int32_t id : jobs) class_of_[id] = -1;
    return solved.status();
  }
  budget_.assign(problem.jobs.size() * types_, 0);
  for (size_t c = 0; c < problem.jobs.size(); ++c) {
    for (int32_t t = 0; t < types_; ++t) {
      budget_[c * types_ + t] = solved->At(c, t) * problem.jobs[c].gang * problem.jobs[c].count;
    }
  }
  return util::Status::Ok();
}

size_t ThroughputPlan::ClassKeyHash::operator()(const ClassKey& key) const {
  size_t h = std::hash<int32_t>()(key.gang * 31 + key.own);
  for (double speed : key.speeds) h = h * 1000003 ^ std::hash<double>()(speed);
  return h;
}

int32_t ThroughputPlan::Pick(int32_t slot, const JobRecord& r, const std::vector<int32_t>& free,
                             const std::vector<int32_t>& held, int32_t prefer) const {
  if (static_cast<size_t>(slot) >= class_of_.size() || class_of_[slot] < 0) return -1;
  const int32_t gang = std::max(1, r.job->gang_size);
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
  budget_[static_cast<size_t>(class_of_[slot]) * types_ + type] -= std::max(1, r.job->gang_size);
}

}  // namespace hetsched::sched
