// A SchedulerCore driven directly, without a Scheduler, for the tests of one decision strategy
// (sched/strategy.h) at a time: jobs admitted as Scheduler::Submit admits a job without pinned
// devices, host request or profile (elastic ones under options.elastic, resized as the
// Scheduler resizes them), and the driver's events (finish, checkpoint written).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "sched/elastic.h"
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
    if (options.elastic) elastic_ = std::make_unique<sched::ElasticResizer>(*core_);
  }

  sched::SchedulerCore& core() { return *core_; }
  const sched::JobRecord& record(int id) const { return core_->record(id); }

  // Admits `job`: allowed on the types whose filters pass, that know its speed and have its
  // gang; its estimate (Job::estimate_s) in steps on its best type.
  // An elastic job (min_workers < max_workers, under options.elastic) gets a size option per
  // candidate size that runs somewhere and starts at its largest, as Scheduler::Submit does.
  void Admit(const model::Job& job, double now_s) {
    const int32_t types = core_->state().type_count();
    sched::JobRecord r;
    r.incompatible.assign(types, 0);
    auto copy = std::make_unique<model::Job>(job);
    copy->work = 0;  // the scheduler never sees the true size
    if (elastic_ != nullptr && job.min_workers < job.max_workers) {
      for (int32_t workers : sched::CandidateSizes(job)) {
        sched::JobRecord::SizeOption o;
        o.workers = workers;
        Rate(job, workers, o.speed, o.allowed, [&](const model::DeviceType& type) {
          return sched::SpeedAtSize(job, workers, type, nullptr);
        });
        if (std::find(o.allowed.begin(), o.allowed.end(), 1) != o.allowed.end()) {
          r.sizes.push_back(std::move(o));
        }
      }
    }
    if (r.sizes.empty()) {
      Rate(job, std::max(1, job.gang_size), r.speed, r.allowed,
           [&](const model::DeviceType& type) { return sched::GangSpeed(job, type, nullptr); });
    } else {
      r.speed = r.sizes.back().speed;
      r.allowed = r.sizes.back().allowed;
      r.size_cap = r.sizes.back().workers;
      copy->gang_size = r.sizes.back().workers;
      elastic_->OnAdmitted();
    }
    for (int32_t t = 0; t < types; ++t) {
      if (r.allowed[t]) r.best_speed = std::max(r.best_speed, r.speed[t]);
      for (const sched::JobRecord::SizeOption& o : r.sizes) {
        if (o.allowed[t]) r.best_speed = std::max(r.best_speed, o.speed[t]);
      }
    }
    r.ref_speed = r.best_speed;
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
  // are queued, else Upgrade; under options.elastic with the resizes around them.
  sched::Decision Decide(sched::DecisionStrategy& strategy, double now_s) {
    sched::Decision out;
    core_->BeginDecision(now_s);
    if (elastic_) elastic_->SizeQueued();
    if (!core_->queue().empty()) {
      strategy.Decide(now_s, out);
    } else {
      strategy.Upgrade(now_s, out);
    }
    if (elastic_) {
      elastic_->Resize(now_s, out);
      if (!core_->queue().empty() && core_->TotalFree() > 0) {
        elastic_->SizeQueued();
        strategy.Fill(now_s, out);
      }
    }
    return out;
  }

  // The job completed (Scheduler::Finish, learning its size only when `learn`).
  void Finish(sched::DecisionStrategy& strategy, int id, double now_s, bool learn = false) {
    if (!core_->record(id).sizes.empty()) elastic_->OnLeft();
    if (core_->record(id).phase == sched::JobPhase::kRunning) {
      core_->Leave(id, now_s);
      if (learn) core_->belief().Observe(core_->record(id));
    }
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
  // `job` at `gang` workers: allowed on the types whose filters pass, that know its speed
  // there (speed_on) and have the gang.
  template <typename SpeedOn>
  void Rate(const model::Job& job, int32_t gang, std::vector<double>& speed,
            std::vector<char>& allowed, const SpeedOn& speed_on) const {
    const int32_t types = core_->state().type_count();
    speed.assign(types, 0);
    allowed.assign(types, 0);
    for (int32_t t = 0; t < types; ++t) {
      const model::DeviceType& type = core_->cluster().catalog.Get(model::DeviceTypeId(t));
      const bool passes = std::none_of(filters_.begin(), filters_.end(),
                                       [&](const auto& f) { return f->Reject(job, type); });
      const std::optional<double> s = speed_on(type);
      if (!passes || !s || *s <= 0 || core_->state().TotalOfType(model::DeviceTypeId(t)) < gang) {
        continue;
      }
      allowed[t] = 1;
      speed[t] = *s;
    }
  }

  std::vector<std::unique_ptr<sched::Filter>> filters_;
  std::unique_ptr<sched::SchedulerCore> core_;
  std::unique_ptr<sched::ElasticResizer> elastic_;  // null unless options.elastic
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
