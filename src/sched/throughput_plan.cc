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
  // ComputeAllocation solves one LP row per class of identical jobs; the budget is kept per
  // class too, and the policy's order decides which of a class's jobs use it.
  std::map<ClassKey, int32_t> classes;
  AllocationProblem problem;
  problem.capacity.assign(capacity.begin(), capacity.end());
  std::vector<int32_t> class_of_row;
  for (int32_t id : jobs) {
    const JobRecord& r = core.record(id);
    AllocJob j;
    j.speed.assign(types_, 0);
    bool any = false;
    for (int32_t t = 0; t < types_; ++t) {
      if (r.allowed[t] && !r.incompatible[t] && r.speed[t] > 0) {
        j.speed[t] = r.speed[t] * core.NewWorkShare(r, DeviceTypeId(t));
      }
      any = any || j.speed[t] > 0;
    }
    if (!any) continue;  // it waits for its own vendor: no budget anywhere
    j.gang = std::max(1, r.job->gang_size);
    // Work is counted per device: a gang's normalized throughput is worth its size, so the
    // plan does not favour small jobs (which job runs first is the policy's order's business).
    j.weight = j.gang;
    j.name = r.job->name;
    const auto [it, fresh] =
        classes.try_emplace(ClassKey{j.speed, j.gang}, static_cast<int32_t>(classes.size()));
    class_of_[id] = it->second;
    class_of_row.push_back(it->second);
    problem.jobs.push_back(std::move(j));
  }
  if (problem.jobs.empty()) return util::Status::Ok();
  auto solved =
      ComputeAllocation(problem, Objective::kMaxThroughput, *solver_, core.options().allocation);
  if (!solved.ok()) {
    for (int32_t id : jobs) class_of_[id] = -1;
    return solved.status();
  }
  budget_.assign(classes.size() * types_, 0);
  for (size_t row = 0; row < problem.jobs.size(); ++row) {
    for (int32_t t = 0; t < types_; ++t) {
      budget_[class_of_row[row] * types_ + t] += solved->At(row, t) * problem.jobs[row].gang;
    }
  }
  return util::Status::Ok();
}

int32_t ThroughputPlan::Pick(int32_t slot, const JobRecord& r, const std::vector<int32_t>& room,
                             int32_t prefer) const {
  if (static_cast<size_t>(slot) >= class_of_.size() || class_of_[slot] < 0) return -1;
  const int32_t gang = std::max(1, r.job->gang_size);
  const double* budget = &budget_[static_cast<size_t>(class_of_[slot]) * types_];
  // A class's budget is fractional: a job takes a type while at least half its gang is left.
  const auto fits = [&](int32_t t) { return room[t] >= gang && budget[t] >= gang * 0.5; };
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
