// A SchedulerCore driven directly, without a Scheduler, for the tests of one decision strategy
// (sched/strategy.h) at a time: jobs admitted as Scheduler::Submit admits a rigid job without
// pinned devices or host request, and the driver's events (finish, checkpoint written).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "sched/filters.h"
#include "sched/job_record.h"
#include "sched/policy.h"
#include "sched/preemption_price.h"
#include "sched/scheduler.h"
#include "sched/scheduler_core.h"
#include "sched/scorers.h"
#include "sched/strategy.h"
#include "sched/test_cluster.h"

namespace hetsched::testing {

// Keeps a reference to `cluster`, as SchedulerCore does.
class CoreHarness {
 public:
  CoreHarness(const model::Cluster& cluster, std::string_view policy,
              sched::SchedulerOptions options = {}) {
    auto p = sched::MakePolicy(policy, options.tuning);
    auto scorers = sched::MakeScorers(options.scorers);
    auto filters = sched::MakeFilters(options.filters);
    auto price = sched::PreemptionPrice::FromOptions(options);
    EXPECT_TRUE(p.ok() && scorers.ok() && filters.ok() && price.ok());
    filters_ = std::move(filters).value();
    core_ = std::make_unique<sched::SchedulerCore>(cluster, nullptr, std::move(p).value(),
                                                   std::move(scorers).value(), options, *price);
  }

  sched::SchedulerCore& core() { return *core_; }
  const sched::JobRecord& record(int id) const { return core_->record(id); }

  // Admits `job`: allowed on the types whose filters pass, that know its speed and have its
  // gang; its estimate (Job::estimate_s) in steps on its best type.
  void Admit(const model::Job& job, double now_s) {
    const model::Cluster& cluster = core_->cluster();
    const int32_t types = core_->state().type_count();
    sched::JobRecord r;
    r.speed.assign(types, 0);
    r.allowed.assign(types, 0);
    r.incompatible.assign(types, 0);
    for (int32_t t = 0; t < types; ++t) {
      const model::DeviceType& type = cluster.catalog.Get(model::DeviceTypeId(t));
      const bool passes = std::none_of(filters_.begin(), filters_.end(),
                                       [&](const auto& f) { return f->Reject(job, type); });
      const auto speed = sched::GangSpeed(job, type, nullptr);
      if (!passes || !speed || *speed <= 0 ||
          core_->state().TotalOfType(model::DeviceTypeId(t)) < std::max(1, job.gang_size)) {
        continue;
      }
      r.allowed[t] = 1;
      r.speed[t] = *speed;
      r.best_speed = std::max(r.best_speed, *speed);
    }
    r.ref_speed = r.best_speed;
    auto copy = std::make_unique<model::Job>(job);
    copy->work = 0;  // the scheduler never sees the true size
    r.job = std::move(copy);
    if (job.estimate_s) {
      r.estimated_work = *job.estimate_s * r.ref_speed;
      r.estimate_source = sched::EstimateSource::kUser;
    }
    r.submitted = true;
    r.seq = next_seq_++;
    core_->Grow(job.id.value());
    core_->Admit(job.id.value(), std::move(r), {}, now_s);
  }

  // One decision of `strategy` at `now_s`, as Scheduler::Decide runs it: Decide while jobs
  // are queued, else Upgrade.
  sched::Decision Decide(sched::DecisionStrategy& strategy, double now_s) {
    sched::Decision out;
    core_->BeginDecision(now_s);
    if (!core_->queue().empty()) {
      strategy.Decide(now_s, out);
    } else {
      strategy.Upgrade(now_s, out);
    }
    return out;
  }

  // The job completed (Scheduler::Finish without learning its size).
  void Finish(sched::DecisionStrategy& strategy, int id, double now_s) {
    if (core_->record(id).phase == sched::JobPhase::kRunning) core_->Leave(id, now_s);
    if (core_->record(id).phase == sched::JobPhase::kQueued) core_->Dequeue(id);
    core_->Retire(id);
    strategy.OnJobLeft(id);
  }

  // A preempted job finished writing its checkpoint (Scheduler::Stopped).
  void Stopped(int id, double now_s) {
    sched::JobRecord& r = core_->record(id);
    ASSERT_EQ(r.phase, sched::JobPhase::kStopping);
    core_->Release(id, r.devices);
    r.devices.clear();
    core_->Enqueue(id, now_s);
  }

  // The type name of each placement, by job id ("" where the job was not placed).
  std::vector<std::string> PlacedTypes(const sched::Decision& d, int jobs) const {
    std::vector<std::string> out(jobs);
    for (const sched::Placement& p : d.placed) {
      out[p.job.value()] = core_->cluster().catalog.Get(p.type).name;
    }
    return out;
  }

 private:
  std::vector<std::unique_ptr<sched::Filter>> filters_;
  std::unique_ptr<sched::SchedulerCore> core_;
  int64_t next_seq_ = 0;
};

// A CUDA job of `gang` on type "nv" (1 step/s) with an estimate of `estimate_s` (0: none).
inline model::Job NvJob(int id, double arrival_s, int gang = 1, double estimate_s = 0) {
  model::Job j = MakeJob(id, arrival_s, 0, {{"nv", 1.0}}, gang);
  if (estimate_s > 0) j.estimate_s = estimate_s;
  return j;
}

// Ids of the jobs a decision preempted, in order.
inline std::vector<int> PreemptedIds(const sched::Decision& d) {
  std::vector<int> out;
  for (model::JobId id : d.preempted) out.push_back(id.value());
  return out;
}

// Two decisions preempted the same jobs and placed the same jobs on the same types and devices,
// in the same order (`step` names the decision in a failure).
inline void ExpectSameDecision(const sched::Decision& a, const sched::Decision& b, int step) {
  ASSERT_EQ(PreemptedIds(a), PreemptedIds(b)) << "step " << step;
  ASSERT_EQ(a.placed.size(), b.placed.size()) << "step " << step;
  for (size_t i = 0; i < a.placed.size(); ++i) {
    ASSERT_EQ(a.placed[i].job, b.placed[i].job) << "step " << step;
    ASSERT_EQ(a.placed[i].type, b.placed[i].type) << "step " << step;
    ASSERT_EQ(a.placed[i].devices, b.placed[i].devices) << "step " << step;
  }
}

}  // namespace hetsched::testing
