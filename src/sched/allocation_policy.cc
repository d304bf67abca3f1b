#include "sched/allocation_policy.h"

#include <fmt/format.h>

namespace hetsched::sched {
namespace {

// Absolute SLO deadline of a job, or a negative value when it has none.
double Deadline(const JobRecord& r) { return r.job->deadline_s.value_or(-1); }

}  // namespace

double AllocationPolicy::SloRate(const JobRecord& r, double now_s, double remaining) const {
  if (objective_ != Objective::kMinCost) return 0;
  const double deadline = Deadline(r);
  if (deadline < 0) return 0;
  const double left = deadline - now_s;
  // Past the deadline: as fast as it can (the best speed); the miss is reported.
  if (left <= 0) return r.best_speed;
  return std::min(r.best_speed, remaining / left);
}

std::optional<std::string> AllocationPolicy::RejectAtSubmit(const JobRecord& r, double now_s,
                                                            double remaining) const {
  if (objective_ != Objective::kMinCost) return std::nullopt;
  const double deadline = Deadline(r);
  if (deadline < 0 || r.best_speed <= 0) return std::nullopt;
  const double need_s = remaining / r.best_speed;
  if (now_s + need_s <= deadline * (1 + 1e-9)) return std::nullopt;
  return fmt::format(
      "job '{}': SLO infeasible: it needs {:.0f} s on its fastest device type, but its deadline "
      "({:.0f} s) leaves {:.0f} s from now ({:.0f} s)",
      r.job->name, need_s, deadline, deadline - now_s, now_s);
}

std::unique_ptr<Policy> MakeAllocationPolicy(std::string_view name) {
  static constexpr std::pair<std::string_view, Objective> kObjectives[] = {
      {"maxmin-het", Objective::kMaxMinFairness},  {"max-throughput", Objective::kMaxThroughput},
      {"min-makespan", Objective::kMinMakespan},   {"min-cost", Objective::kMinCost},
      {"ftf-het", Objective::kFinishTimeFairness},
  };
  if (name == "maxmin") {
    return std::make_unique<AllocationPolicy>(Objective::kMaxMinFairness, "maxmin", true);
  }
  for (const auto& [n, objective] : kObjectives) {
    if (n == name) return std::make_unique<AllocationPolicy>(objective, n);
  }
  return nullptr;
}

}  // namespace hetsched::sched
