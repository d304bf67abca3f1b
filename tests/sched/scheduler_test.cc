#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <memory>
#include <random>
#include <set>

#include "sched/cluster_state.h"
#include "sched/job_slots.h"
#include "sched/placement.h"
#include "sched/policy.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

std::unique_ptr<Scheduler> Make(const model::Cluster& c, std::string_view policy,
                                SchedulerOptions options = {}) {
  auto s = Scheduler::Create(c, nullptr, policy, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(PolicyRegistry, UnknownPolicyListsKnownOnes) {
  auto p = MakePolicy("round-robin");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("unknown policy 'round-robin'"), std::string::npos);
  EXPECT_NE(p.status().message().find("las-het"), std::string::npos);
  EXPECT_NE(p.status().message().find("easy-backfill"), std::string::npos);
}

TEST(PolicyRegistry, DefaultResolvesToTheRecommendedPolicy) {
  auto p = MakePolicy("default");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->name(), kDefaultPolicy);
  for (std::string_view name : {"fifo", "fifo-het", "priority", "easy-backfill", "las", "las-het",
                                "srpt-het", "srpt-het-fair"}) {
    auto q = MakePolicy(name);
    ASSERT_TRUE(q.ok()) << name;
    EXPECT_EQ((*q)->name(), name);
  }
}

TEST(Filters, UnknownFilterAndScorerAreErrors) {
  EXPECT_FALSE(MakeFilters({"compat", "gpu-brand"}).ok());
  EXPECT_FALSE(MakeScorers("speed,luck").ok());
  EXPECT_FALSE(MakeScorers("speed:-1").ok());
  EXPECT_TRUE(MakeScorers("speed:1,energy:0.5").ok());
}

// A driver that decides only at events (the simulator) asks when the next decision that may
// move running jobs falls due, and decides then; the daemon's ticks find it on their own.
TEST(NextDecisionDue, NamesTheNextReallocationWhileItCouldChangeSomething) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  SchedulerOptions o;
  o.preempt_interval_s = 300;
  for (const char* policy : {"las-het", "max-throughput"}) {
    auto s = Make(c, policy, o);
    EXPECT_EQ(s->NextDecisionDue(), kInf) << policy << ": nothing runs";
    ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1e6, {{"fast", 2.0}, {"slow", 1.0}}), 0).accepted);
    ASSERT_TRUE(s->Submit(MakeJob(1, 0, 1e6, {{"fast", 2.0}, {"slow", 1.0}}), 0).accepted);
    ASSERT_EQ(s->Decide(0).placed.size(), 2u) << policy;
    EXPECT_EQ(s->NextDecisionDue(), kInf) << policy << ": nobody waits, nothing is free";
    ASSERT_TRUE(s->Submit(MakeJob(2, 60, 1e6, {{"fast", 2.0}, {"slow", 1.0}}), 60).accepted);
    s->Decide(60);  // a fill: nothing is free
    EXPECT_EQ(s->NextDecisionDue(), 300) << policy << ": the full decision after the one at 0";
    s->Decide(300);
    EXPECT_EQ(s->NextDecisionDue(), 600) << policy;
  }
  // With nobody waiting, a free device that a running job could move to: an upgrade.
  auto s = Make(c, "las-het", o);
  ASSERT_TRUE(s->Submit(MakeJob(0, 0, 100, {{"fast", 2.0}, {"slow", 1.0}}), 0).accepted);
  ASSERT_TRUE(s->Submit(MakeJob(1, 0, 1e6, {{"fast", 2.0}, {"slow", 1.0}}), 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 2u);
  const model::JobId on_fast = *s->JobOn(model::DeviceId(0));
  s->Finish(on_fast, 50);
  s->Decide(50);  // inside the interval: nothing moves yet
  EXPECT_EQ(s->NextDecisionDue(), 300);
  // A family that never moves running jobs names no time.
  auto fifo = Make(c, "fifo", o);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(fifo->Submit(MakeJob(i, 0, 1e6, {{"fast", 2.0}, {"slow", 1.0}}), 0).accepted);
  }
  fifo->Decide(0);
  EXPECT_EQ(fifo->NextDecisionDue(), kInf);
}

TEST(Compat, CudaJobNeverLandsOnAmd) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 2}, {"amd", "rocm", 4, 2}});
  std::vector<model::Job> jobs;
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(MakeJob(i, 0, 100, {{"nv", 1.0}, {"amd", 5.0}}, 1 + i % 2));
  }
  jobs.push_back(MakeJob(20, 0, 100, {{"nv", 1.0}, {"amd", 1.0}}, 2, "rocm"));
  for (std::string_view policy :
       {"fifo", "fifo-het", "las", "las-het", "srpt-het", "default", "easy-backfill", "priority"}) {
    auto s = Make(c, policy);
    for (const auto& j : jobs) ASSERT_TRUE(s->Submit(j, 0).accepted);
    const Decision d = s->Decide(0);
    ASSERT_FALSE(d.placed.empty()) << policy;
    for (const Placement& p : d.placed) {
      const std::string& type = c.catalog.Get(p.type).name;
      if (p.job.value() == 20) {
        EXPECT_EQ(type, "amd") << policy;
      } else {
        EXPECT_EQ(type, "nv") << policy << " job " << p.job.value();
      }
      for (model::DeviceId d : p.devices) EXPECT_EQ(c.device(d).type, p.type);
    }
  }
}

TEST(Admission, JobNoDeviceCanRunIsRejectedWithReason) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  auto s = Make(c, "fifo");
  const model::Job too_big = MakeJob(0, 0, 10, {{"nv", 1.0}}, 8);
  const Admission a = s->Submit(too_big, 0);
  EXPECT_FALSE(a.accepted);
  EXPECT_NE(a.reason.find("nv has 4 device(s), the gang needs 8"), std::string::npos) << a.reason;
  const model::Job rocm = MakeJob(1, 0, 10, {{"nv", 1.0}}, 1, "rocm");
  const Admission b = s->Submit(rocm, 0);
  EXPECT_FALSE(b.accepted);
  EXPECT_NE(b.reason.find("job needs rocm"), std::string::npos) << b.reason;
  const model::Job unknown = MakeJob(2, 0, 10, {}, 1);
  EXPECT_FALSE(s->Submit(unknown, 0).accepted);
  EXPECT_EQ(s->queued(), 0u);
}

// A daemon keeps each job too: one without its size is shared, not copied (a restart admits
// hundreds of thousands); one with a size is copied without it, as Submit(const Job&) does.
TEST(Admission, AJobWithoutItsSizeIsSharedAndOneWithItIsCopiedWithout) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  auto s = Make(c, "fifo");
  auto sized = std::make_shared<const model::Job>(MakeJob(0, 0, 10, {{"nv", 1.0}}));
  auto unsized = std::make_shared<const model::Job>(MakeJob(1, 0, 0, {{"nv", 1.0}}));
  ASSERT_TRUE(s->Submit(sized, 0).accepted);
  ASSERT_TRUE(s->Submit(unsized, 0).accepted);
  EXPECT_NE(s->record(model::JobId(0)).job, sized);
  EXPECT_EQ(s->record(model::JobId(0)).job->work, 0);
  EXPECT_EQ(s->record(model::JobId(0)).job->name, "job-0");
  EXPECT_EQ(sized->work, 10) << "the caller's job keeps its size";
  EXPECT_EQ(s->record(model::JobId(1)).job, unsized);
  // A rejected job is not kept.
  auto too_big = std::make_shared<const model::Job>(MakeJob(2, 0, 0, {{"nv", 1.0}}, 8));
  EXPECT_FALSE(s->Submit(too_big, 0).accepted);
  EXPECT_EQ(too_big.use_count(), 1);
}

TEST(Gang, AllOrNothing) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  auto s = Make(c, "fifo");
  const model::Job small = MakeJob(0, 0, 1000, {{"nv", 1.0}}, 3);
  const model::Job gang6 = MakeJob(1, 1, 1000, {{"nv", 1.0}}, 6);
  ASSERT_TRUE(s->Submit(small, 0).accepted);
  ASSERT_TRUE(s->Submit(gang6, 1).accepted);
  Decision d = s->Decide(1);
  ASSERT_EQ(d.placed.size(), 1u);  // 5 devices left: the gang of 6 gets none
  EXPECT_EQ(d.placed[0].devices.size(), 3u);
  EXPECT_EQ(s->state().FreeOfType(model::DeviceTypeId(0)), 5);
  EXPECT_EQ(s->queued(), 1u);
  s->Finish(model::JobId(0), 10);
  d = s->Decide(10);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].devices.size(), 6u);
  EXPECT_EQ(
      std::set<model::DeviceId>(d.placed[0].devices.begin(), d.placed[0].devices.end()).size(), 6u);
}

TEST(Placement, BestFitKeepsGangInsideOneNode) {
  const auto c = MakeCluster({{"nv", "cuda", 3, 4}});
  ClusterState state(c);
  // Node 0 has 1 free, node 1 has 2 free, node 2 has 4 free.
  state.Allocate({model::DeviceId(0), model::DeviceId(1), model::DeviceId(2), model::DeviceId(4),
                  model::DeviceId(5)});
  auto two = PlaceGang(state, model::DeviceTypeId(0), 2);
  ASSERT_TRUE(two.has_value());
  for (model::DeviceId d : *two) EXPECT_EQ(c.device(d).node.value(), 1);  // the tightest fit
  auto three = PlaceGang(state, model::DeviceTypeId(0), 3);
  ASSERT_TRUE(three.has_value());
  for (model::DeviceId d : *three) EXPECT_EQ(c.device(d).node.value(), 2);
  EXPECT_FALSE(PlaceGang(state, model::DeviceTypeId(0), 8).has_value());
  auto seven = PlaceGang(state, model::DeviceTypeId(0), 7);
  ASSERT_TRUE(seven.has_value());
  EXPECT_EQ(seven->size(), 7u);
}

TEST(ClusterState, IndexesFollowAllocationsAndFaults) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 2}, {"amd", "rocm", 1, 2, 0}});
  ClusterState state(c);
  const model::DeviceTypeId nv(0);
  EXPECT_EQ(state.FreeOfType(nv), 4);
  state.Allocate({model::DeviceId(0)});
  EXPECT_EQ(state.FreeOfType(nv), 3);
  EXPECT_EQ(state.FreeInNode(model::NodeId(0), nv), 1);
  state.SetDown(model::DeviceId(3));
  EXPECT_EQ(state.FreeOfType(nv), 2);
  EXPECT_EQ(state.UpOfType(nv), 3);
  state.SetNodeOn(model::NodeId(0), false);
  EXPECT_EQ(state.FreeOfType(nv), 1);
  state.SetNodeOn(model::NodeId(0), true);
  state.Release({model::DeviceId(0)});
  state.SetUp(model::DeviceId(3));
  EXPECT_EQ(state.FreeOfType(nv), 4);
  EXPECT_EQ(state.NodesByFree(nv).size(), 2u);
}

TEST(Fifo, HeadOfLineBlocksButEasyBackfillDoesNot) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  const model::Job running = MakeJob(0, 0, 100, {{"nv", 1.0}}, 2);   // ends at 100
  const model::Job big = MakeJob(1, 1, 100, {{"nv", 1.0}}, 4);       // waits for 4
  const model::Job short_job = MakeJob(2, 2, 50, {{"nv", 1.0}}, 2);  // ends at 52 < 100
  const model::Job long_job = MakeJob(3, 3, 500, {{"nv", 1.0}}, 2);  // would delay `big`
  for (std::string_view policy : {"fifo", "easy-backfill"}) {
    auto s = Make(c, policy);
    ASSERT_TRUE(s->Submit(running, 0).accepted);
    ASSERT_EQ(s->Decide(0).placed.size(), 1u);
    ASSERT_TRUE(s->Submit(big, 1).accepted);
    ASSERT_TRUE(s->Submit(long_job, 1).accepted);
    ASSERT_TRUE(s->Submit(short_job, 2).accepted);
    const Decision d = s->Decide(2);
    if (policy == "fifo") {
      EXPECT_TRUE(d.placed.empty());
    } else {
      ASSERT_EQ(d.placed.size(), 1u);
      EXPECT_EQ(d.placed[0].job.value(), 2);
    }
  }
}

TEST(Srpt, ShorterArrivalPreemptsLongerJob) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  SchedulerOptions every_decision;
  every_decision.preempt_interval_s = 0;
  every_decision.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
  auto s = Make(c, "srpt-het", every_decision);
  const model::Job long_job = MakeJob(0, 0, 1000, {{"nv", 1.0}});
  const model::Job short_job = MakeJob(1, 10, 20, {{"nv", 1.0}});
  ASSERT_TRUE(s->Submit(long_job, 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 1u);
  ASSERT_TRUE(s->Submit(short_job, 10).accepted);
  const Decision d = s->Decide(10);
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_EQ(d.preempted[0].value(), 0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
  EXPECT_DOUBLE_EQ(s->record(model::JobId(0)).done_work, 10);
}

TEST(LasHet, FastTypeGoesToTheJobThatGainsMost) {
  // Two jobs, one fast and one slow device. Job 0 gains 1.1x on "fast", job 1 gains 4x:
  // the throughput-aware assignment gives "fast" to job 1 even though job 0 comes first.
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  for (std::string_view policy : {"las-het", "default"}) {
    auto s = Make(c, policy);
    const model::Job a = MakeJob(0, 0, 1000, {{"fast", 1.1}, {"slow", 1.0}});
    const model::Job b = MakeJob(1, 0, 1000, {{"fast", 4.0}, {"slow", 1.0}});
    ASSERT_TRUE(s->Submit(a, 0).accepted);
    ASSERT_TRUE(s->Submit(b, 0).accepted);
    const Decision d = s->Decide(0);
    ASSERT_EQ(d.placed.size(), 2u);
    for (const Placement& p : d.placed) {
      EXPECT_EQ(c.catalog.Get(p.type).name, p.job.value() == 1 ? "fast" : "slow") << policy;
    }
  }
}

TEST(IgnoreCompat, AnyFreeDeviceWillDo) {
  const auto c = MakeCluster({{"amd", "rocm", 1, 1}});
  SchedulerOptions o;
  o.ignore_compat = true;
  auto s = Make(c, "fifo", o);
  const model::Job cuda = MakeJob(0, 0, 10, {{"amd", 1.0}});
  ASSERT_TRUE(s->Submit(cuda, 0).accepted);
  const Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_TRUE(s->record(model::JobId(0)).incompatible[0]);
  s->Requeue(model::JobId(0), 60, 10, model::DeviceTypeId(0));
  EXPECT_FALSE(s->HasAllowedType(model::JobId(0)));
}

// A job requeued off a type it cannot run on (a failed attempt there) is never given that
// type again, by a full decision's plan or by a fill, though its class was known before.
TEST(Requeue, AnExcludedTypeIsNeverPlannedAgain) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  for (const double interval : {0.0, 300.0}) {
    SchedulerOptions o;
    o.preempt_interval_s = interval;
    auto s = Make(c, "default", o);
    ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1000, {{"fast", 4.0}, {"slow", 1.0}}), 0).accepted);
    Decision d = s->Decide(0);
    ASSERT_EQ(d.placed.size(), 1u);
    ASSERT_EQ(c.catalog.Get(d.placed[0].type).name, "fast");
    s->Requeue(model::JobId(0), 60, 10, d.placed[0].type);
    for (const double now : {60.0, 400.0}) {
      d = s->Decide(now);
      for (const Placement& p : d.placed) {
        EXPECT_EQ(c.catalog.Get(p.type).name, "slow") << "interval " << interval << " at " << now;
      }
    }
    EXPECT_EQ(s->record(model::JobId(0)).phase, JobPhase::kRunning) << interval;
  }
}

TEST(Srpt, PreemptIntervalOnlyFillsFreeDevicesInBetween) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  SchedulerOptions o;
  o.preempt_interval_s = 100;
  o.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
  auto s = Make(c, "srpt-het", o);
  const model::Job long_job = MakeJob(0, 0, 1000, {{"nv", 1.0}});
  const model::Job short_job = MakeJob(1, 10, 20, {{"nv", 1.0}});
  const model::Job tiny = MakeJob(2, 20, 5, {{"nv", 1.0}});
  ASSERT_TRUE(s->Submit(long_job, 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 1u);  // full decision at 0
  ASSERT_TRUE(s->Submit(short_job, 10).accepted);
  Decision d = s->Decide(10);  // fill: the free device
  EXPECT_TRUE(d.preempted.empty());
  ASSERT_EQ(d.placed.size(), 1u);
  ASSERT_TRUE(s->Submit(tiny, 20).accepted);
  d = s->Decide(20);  // nothing free, no preemption before t = 100
  EXPECT_TRUE(d.placed.empty());
  EXPECT_TRUE(d.preempted.empty());
  d = s->Decide(100);  // full: the tiny job displaces the long one
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_EQ(d.preempted[0].value(), 0);
}

// Running jobs are reconsidered every five minutes, and (preemption costing 90 s by default) a
// started job keeps its device for a quantum of an hour.
TEST(Srpt, ByDefaultRunningJobsAreReconsideredEveryFiveMinutesAfterTheirQuantum) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  EXPECT_DOUBLE_EQ(SchedulerOptions{}.preempt_interval_s, 300);
  EXPECT_DOUBLE_EQ(SchedulerOptions{}.preemption_cost_s, 90);
  auto s = Make(c, "srpt-het");
  const model::Job long_job = MakeJob(0, 0, 10000, {{"nv", 1.0}});
  const model::Job short_job = MakeJob(1, 10, 20, {{"nv", 1.0}});
  ASSERT_TRUE(s->Submit(long_job, 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 1u);
  ASSERT_TRUE(s->Submit(short_job, 10).accepted);
  EXPECT_TRUE(s->Decide(10).preempted.empty());
  EXPECT_TRUE(s->Decide(300).preempted.empty());
  EXPECT_TRUE(s->Decide(3300).preempted.empty());
  EXPECT_EQ(s->Decide(3600).preempted.size(), 1u);
}

TEST(Scheduler, WhyWaitingNamesTheTypesAndTheQueue) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  auto s = Make(c, "fifo");
  const model::Job a = MakeJob(0, 0, 100, {{"nv", 1.0}});
  const model::Job b = MakeJob(1, 1, 100, {{"nv", 1.0}});
  ASSERT_TRUE(s->Submit(a, 0).accepted);
  ASSERT_TRUE(s->Submit(b, 1).accepted);
  s->Decide(1);
  const std::string why = s->WhyWaiting(model::JobId(1), 1);
  EXPECT_NE(why.find("nv (0 free)"), std::string::npos) << why;
}

}  // namespace
}  // namespace hetsched::sched

namespace hetsched::sched {
namespace {

// Work conservation of the preemptive policies: after a full reallocation, no queued job is
// left waiting while enough devices of a type it may use sit free. (A reallocation can leave
// devices free when a gang it selected cannot be placed where it was assigned; the fill pass
// after it hands them out.)
TEST(Preemptive, NoQueuedJobWaitsBesideFreeDevicesItCouldUse) {
  const auto c =
      MakeCluster({{"fast", "cuda", 4, 2}, {"mid", "cuda", 3, 3}, {"slow", "cuda", 6, 1}});
  for (const char* policy : {"srpt-het", "srpt-het-fair", "las-het", "las", "priority"}) {
    std::mt19937 rng(11);
    std::vector<model::Job> jobs;
    for (int i = 0; i < 60; ++i) {
      const int gang = std::array<int, 4>{1, 1, 2, 4}[rng() % 4];
      const double base = 1 + rng() % 5;
      jobs.push_back(MakeJob(i, i * 50.0, 200 + rng() % 2000,
                             {{"fast", 4 * base}, {"mid", 2 * base}, {"slow", base}}, gang));
    }
    SchedulerOptions o;
    o.preempt_interval_s = 0;  // every decision is a full reallocation
    auto s = Make(c, policy, o);
    for (const model::Job& j : jobs) {
      ASSERT_TRUE(s->Submit(j, j.arrival_s).accepted);
      if (j.id.value() % 3 == 2) {  // churn: some running job finishes
        for (int32_t id = 0; id < j.id.value(); ++id) {
          if (s->record(model::JobId(id)).phase == JobPhase::kRunning && rng() % 2 == 0) {
            s->Finish(model::JobId(id), j.arrival_s);
            break;
          }
        }
      }
      s->Decide(j.arrival_s);
      for (int32_t id = 0; id <= j.id.value(); ++id) {
        const JobRecord& r = s->record(model::JobId(id));
        if (r.phase != JobPhase::kQueued) continue;
        for (int32_t t = 0; t < s->state().type_count(); ++t) {
          if (!r.allowed[t]) continue;
          EXPECT_LT(s->state().FreeOfType(model::DeviceTypeId(t)), r.job->gang_size)
              << policy << ": job " << id << " waits at " << j.arrival_s << " beside free "
              << c.catalog.Get(model::DeviceTypeId(t)).name << " devices";
        }
      }
    }
  }
}

TEST(JobSlots, EndedJobsGiveTheirIdsToNewOnes) {
  JobSlots slots;
  const model::JobId a = slots.Acquire();
  const model::JobId b = slots.Acquire();
  EXPECT_EQ(a.value(), 0);
  EXPECT_EQ(b.value(), 1);
  slots.Release(a);
  EXPECT_EQ(slots.live(), 1u);
  const model::JobId c = slots.Acquire();
  EXPECT_EQ(c.value(), 0) << "the freed id is reused";
  EXPECT_EQ(slots.Acquire().value(), 2) << "none free: a new one";
  EXPECT_EQ(slots.live(), 3u);
  EXPECT_EQ(slots.capacity(), 3u);
}

// A daemon submits thousands of jobs over time through a few slots: every decision must be
// the one a scheduler with fresh ids would make.
TEST(SlotReuse, ReusedIdsDecideLikeFreshOnes) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 2}});
  for (std::string_view policy : {"fifo", "default", "las-het", "max-throughput", "maxmin-het"}) {
    auto reused = Make(c, policy);
    auto fresh = Make(c, policy);
    JobSlots slots;
    std::vector<int32_t> fresh_of_slot;
    double now = 0;
    for (int i = 0; i < 40; ++i, now += 10) {
      model::Job j = MakeJob(i, now, 100, {{"fast", 2.0 + i % 3}, {"slow", 1.0}}, 1 + i % 2);
      ASSERT_TRUE(fresh->Submit(j, now).accepted);
      j.id = slots.Acquire();
      if (fresh_of_slot.size() <= static_cast<size_t>(j.id.value())) {
        fresh_of_slot.resize(j.id.value() + 1);
      }
      fresh_of_slot[j.id.value()] = i;
      ASSERT_TRUE(reused->Submit(j, now).accepted) << policy;
      const Decision a = fresh->Decide(now);
      const Decision b = reused->Decide(now);
      ASSERT_EQ(a.placed.size(), b.placed.size()) << policy << " at job " << i;
      for (size_t k = 0; k < a.placed.size(); ++k) {
        EXPECT_EQ(a.placed[k].job.value(), fresh_of_slot[b.placed[k].job.value()]) << policy;
        EXPECT_EQ(a.placed[k].devices, b.placed[k].devices) << policy;
      }
      ASSERT_EQ(a.preempted.size(), b.preempted.size()) << policy;
      // The oldest running job finishes every other step.
      if (i % 2 == 1 && reused->running() > 0) {
        int32_t oldest = -1;
        for (size_t slot = 0; slot < fresh_of_slot.size(); ++slot) {
          if (!reused->Known(model::JobId(slot))) continue;
          if (reused->record(model::JobId(slot)).phase != JobPhase::kRunning) continue;
          if (oldest < 0 || fresh_of_slot[slot] < fresh_of_slot[oldest]) oldest = slot;
        }
        fresh->Finish(model::JobId(fresh_of_slot[oldest]), now);
        reused->Finish(model::JobId(oldest), now);
        slots.Release(model::JobId(oldest));
      }
    }
    EXPECT_LT(slots.capacity(), 40u) << policy << ": ids were reused";
  }
}

TEST(Drain, NothingNewStartsOnADrainedNodeAndItsJobsContinue) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 2}});
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(MakeJob(0, 0, 100, {{"nv", 1.0}}, 2), 0).accepted);
  Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  const model::NodeId busy = c.device(d.placed[0].devices[0]).node;
  const model::NodeId idle(1 - busy.value());
  s->SetNodeDrained(busy, true);
  s->SetNodeDrained(idle, true);
  EXPECT_EQ(s->state().UpOfType(model::DeviceTypeId(0)), 0) << "drained capacity is not offered";
  EXPECT_EQ(s->record(model::JobId(0)).phase, JobPhase::kRunning) << "a drain stops nothing";
  ASSERT_TRUE(s->Submit(MakeJob(1, 0, 100, {{"nv", 1.0}}, 1), 0).accepted);
  EXPECT_TRUE(s->Decide(1).placed.empty());
  s->Finish(model::JobId(0), 2);
  EXPECT_TRUE(s->Decide(2).placed.empty()) << "freed devices of a drained node stay unused";
  s->SetNodeDrained(idle, false);
  d = s->Decide(3);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(c.device(d.placed[0].devices[0]).node, idle);
  // Power and drain are separate: powering a drained node on does not undrain it.
  s->SetNodeOn(busy, false);
  s->SetNodeOn(busy, true);
  EXPECT_TRUE(s->state().NodeDrained(busy));
  EXPECT_EQ(s->state().FreeInNode(busy, model::DeviceTypeId(0)), 0);
}

TEST(Pinned, AFinishedJobsPinnedDevicesReturnToEveryone) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  auto s = Make(c, "fifo");
  model::Job pinned = MakeJob(0, 0, 100, {{"nv", 1.0}}, 1);
  pinned.pinned_devices = {"nv-n0/0"};
  model::Job also = MakeJob(1, 0, 100, {{"nv", 1.0}}, 1);
  also.pinned_devices = {"nv-n0/0"};
  ASSERT_TRUE(s->Submit(pinned, 0).accepted);
  ASSERT_TRUE(s->Submit(also, 0).accepted);
  EXPECT_EQ(s->state().FreeOfType(model::DeviceTypeId(0)), 1);
  s->Finish(model::JobId(0), 1);
  EXPECT_EQ(s->state().FreeOfType(model::DeviceTypeId(0)), 1) << "job 1 still pins it";
  s->Finish(model::JobId(1), 1);
  EXPECT_EQ(s->state().FreeOfType(model::DeviceTypeId(0)), 2);
}

}  // namespace
}  // namespace hetsched::sched
