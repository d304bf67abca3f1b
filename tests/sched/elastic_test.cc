// Elastic training in the scheduler (sched/elastic.h): the sizes a job may take and its speed
// at each, starting at the largest size that fits, growing into idle devices and shrinking for
// a waiting job, on hand-checked cases.
#include "sched/elastic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "model/io/gavel_reader.h"
#include "sched/scheduler.h"
#include "sched/test_cluster.h"
#include "testing/build_paths.h"

namespace hetsched::sched {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

const model::ThroughputProfile& GavelProfile() {
  static const auto profile = model::io::LoadGavelThroughputs(
      std::string(HETSCHED_SOURCE_DIR) + "/data/gavel/simulation_throughputs.json");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

std::unique_ptr<Scheduler> Make(const model::Cluster& c, const std::string& policy,
                                bool elastic = true, bool stop_holds = false) {
  SchedulerOptions o;
  o.elastic = elastic;
  o.stop_holds_devices = stop_holds;
  o.preemption_cost_s = 90;
  auto s = Scheduler::Create(c, nullptr, policy, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

model::Job Elastic(int id, double arrival_s, int gang, int lo, int hi, double estimate_s) {
  model::Job j = MakeJob(id, arrival_s, 1e9, {{"nv", 8.0}}, gang);
  j.min_workers = lo;
  j.max_workers = hi;
  j.estimate_s = estimate_s;
  return j;
}

const Placement* PlacementOf(const Decision& d, int id) {
  for (const Placement& p : d.placed) {
    if (p.job.value() == id) return &p;
  }
  return nullptr;
}

bool Preempted(const Decision& d, int id) {
  return std::find(d.preempted.begin(), d.preempted.end(), model::JobId(id)) != d.preempted.end();
}

TEST(ElasticSizes, MinMaxGangAndPowersOfTwoBetween) {
  model::Job j = MakeJob(0, 0, 1, {}, 4);
  EXPECT_EQ(CandidateSizes(j), (std::vector<int32_t>{4}));
  j.min_workers = 2;
  j.max_workers = 8;
  EXPECT_EQ(CandidateSizes(j), (std::vector<int32_t>{2, 4, 8}));
  j.gang_size = 3;
  j.min_workers = 1;
  j.max_workers = 12;
  EXPECT_EQ(CandidateSizes(j), (std::vector<int32_t>{1, 2, 3, 4, 8, 12}));
}

TEST(ElasticSizes, ThroughputScalesWithSizeProfileOnlyWhereMeasured) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 8}});
  const model::DeviceType& nv = c.catalog.Get(model::DeviceTypeId(0));
  // A throughput table is per gang: a fixed global batch split over more workers.
  const model::Job table = MakeJob(0, 0, 1, {{"nv", 10.0}}, 4);
  EXPECT_DOUBLE_EQ(*SpeedAtSize(table, 8, nv, nullptr), 20.0);
  EXPECT_DOUBLE_EQ(*SpeedAtSize(table, 2, nv, nullptr), 5.0);
  EXPECT_DOUBLE_EQ(*SpeedAtSize(table, 4, nv, nullptr), 10.0);
  EXPECT_FALSE(SpeedAtSize(MakeJob(1, 0, 1, {{"nv", 0.0}}, 4), 8, nv, nullptr));

  const auto gavel = MakeCluster({{"v100-32g", "cuda", 1, 8}});
  const model::DeviceType& v100 = gavel.catalog.Get(model::DeviceTypeId(0));
  model::Job resnet = MakeJob(2, 0, 1, {}, 1);
  resnet.job_type = "ResNet-18 (batch size 16)";
  // The profile's own entries (Gavel measured 1, 2, 4 and 8 workers for this job type).
  EXPECT_DOUBLE_EQ(*SpeedAtSize(resnet, 2, v100, &GavelProfile()),
                   *GavelProfile().Isolated(resnet.job_type, 2, "v100-32g"));
  EXPECT_DOUBLE_EQ(*SpeedAtSize(resnet, 8, v100, &GavelProfile()),
                   *GavelProfile().Isolated(resnet.job_type, 8, "v100-32g"));
  EXPECT_FALSE(SpeedAtSize(resnet, 3, v100, &GavelProfile()));  // never measured
  model::Job a3c = resnet;
  a3c.job_type = "A3C";  // measured at one worker only
  EXPECT_TRUE(SpeedAtSize(a3c, 1, v100, &GavelProfile()));
  EXPECT_FALSE(SpeedAtSize(a3c, 2, v100, &GavelProfile()));
}

TEST(ElasticScheduler, AdmittedByItsSmallestSizeAndStartsAsLargeAsFits) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  // Eight workers never fit in four devices; two or four do.
  const model::Job big = Elastic(0, 0, 8, 2, 8, 1000);
  auto rigid = Make(c, "fifo", /*elastic=*/false);
  const Admission no = rigid->Submit(big, 0);
  EXPECT_FALSE(no.accepted);
  EXPECT_NE(no.reason.find("the gang needs 8"), std::string::npos) << no.reason;

  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(big, 0).accepted);
  const Decision d = s->Decide(0);
  const Placement* p = PlacementOf(d, 0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->devices.size(), 4u);
  EXPECT_FALSE(p->resized);
  EXPECT_DOUBLE_EQ(s->SpeedNow(model::JobId(0)), 4.0);  // 8 steps/s at 8 workers, scaled

  // Rejected, the reason is what its smallest size lacks.
  const auto one = MakeCluster({{"nv", "cuda", 1, 1}});
  auto tiny = Make(one, "fifo");
  const Admission rejected = tiny->Submit(big, 0);
  EXPECT_FALSE(rejected.accepted);
  EXPECT_EQ(rejected.reason,
            "no device in the cluster can run it: nv has 1 device(s), the gang needs 2");
}

// A job the caller shares (Submit of a shared_ptr) is copied when the scheduler changes it:
// an elastic job's copy has its largest size as gang size, the caller's keeps its own.
TEST(ElasticScheduler, ASharedJobWhoseSizeChangesIsCopied) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  auto s = Make(c, "fifo");
  model::Job job = Elastic(0, 0, 2, 1, 4, 1000);
  job.work = 0;
  auto shared = std::make_shared<const model::Job>(std::move(job));
  ASSERT_TRUE(s->Submit(shared, 0).accepted);
  EXPECT_NE(s->record(model::JobId(0)).job, shared);
  EXPECT_EQ(s->record(model::JobId(0)).job->gang_size, 4);
  EXPECT_EQ(shared->gang_size, 2);
}

// A resize swaps in the job at that size, made once (the queue walk resizes queued jobs before
// every decision): back and forth makes no new copy, and each size's job is the job's own
// with that gang size.
TEST(ElasticScheduler, ResizesReuseOneJobPerSize) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(Elastic(0, 0, 2, 1, 4, 1000), 0).accepted);
  JobRecord r = s->record(model::JobId(0));
  ASSERT_EQ(r.sizes.size(), 3u);  // 1, 2, 4 workers
  const model::Job* largest = r.job.get();
  ApplySize(r, 0);
  const model::Job* smallest = r.job.get();
  EXPECT_EQ(r.job->gang_size, 1);
  EXPECT_EQ(r.gang, 1);
  EXPECT_EQ(r.job->name, largest->name);
  EXPECT_EQ(r.job->estimate_s, largest->estimate_s);
  ApplySize(r, 2);
  EXPECT_EQ(r.job.get(), largest);
  EXPECT_EQ(r.job->gang_size, 4);
  ApplySize(r, 0);
  EXPECT_EQ(r.job.get(), smallest);
  ApplySize(r, 1);
  EXPECT_EQ(r.job->gang_size, 2);
  EXPECT_EQ(r.gang, 2);
}

TEST(ElasticScheduler, AdoptTakesAnyOfItsSizes) {
  // A daemon restarting finds an elastic job running at a size other than its gang size.
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(Elastic(0, 0, 4, 1, 4, 1000), 0).accepted);
  ASSERT_TRUE(s->Adopt(model::JobId(0), {model::DeviceId(0), model::DeviceId(1)}, 0, 0).ok());
  EXPECT_DOUBLE_EQ(s->SpeedNow(model::JobId(0)), 4.0);  // 8 steps/s at 4 workers, at 2
  ASSERT_TRUE(s->Submit(Elastic(1, 0, 4, 2, 4, 1000), 0).accepted);
  const util::Status three =
      s->Adopt(model::JobId(1), {model::DeviceId(2), model::DeviceId(3), model::DeviceId(0)}, 0, 0);
  EXPECT_FALSE(three.ok());
  EXPECT_NE(three.message().find("needs 4 device(s), not 3"), std::string::npos) << three.message();
}

TEST(ElasticScheduler, TakesWhatTheJobsAheadLeave) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  for (const char* policy : {"fifo", "easy-backfill", "default", "las-het"}) {
    SCOPED_TRACE(policy);
    auto s = Make(c, policy);
    ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1e6, {{"nv", 1.0}}, 3), 0).accepted);
    ASSERT_TRUE(s->Submit(Elastic(1, 1, 4, 1, 8, 1000), 1).accepted);
    const Decision d = s->Decide(1);
    ASSERT_NE(PlacementOf(d, 0), nullptr);
    const Placement* p = PlacementOf(d, 1);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->devices.size(), 4u);  // 5 free: sizes are 1, 2, 4, 8
  }
}

TEST(ElasticScheduler, GrowsIntoDevicesNobodyWaitsFor) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  for (bool stop_holds : {false, true}) {
    for (const char* policy : {"fifo", "default"}) {
      SCOPED_TRACE(std::string(policy) + (stop_holds ? " stop holds devices" : ""));
      auto s = Make(c, policy, true, stop_holds);
      ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1e6, {{"nv", 1.0}}, 4), 0).accepted);
      ASSERT_TRUE(s->Submit(Elastic(1, 0, 4, 1, 8, 1e5), 0).accepted);
      Decision d = s->Decide(0);
      ASSERT_EQ(d.placed.size(), 2u);
      EXPECT_EQ(PlacementOf(d, 1)->devices.size(), 4u);
      s->Finish(model::JobId(0), 100);
      // Not before the interval since the last resize decision (at 0).
      d = s->Decide(100);
      EXPECT_TRUE(d.preempted.empty());
      d = s->Decide(400);
      ASSERT_TRUE(Preempted(d, 1));
      if (stop_holds) {
        EXPECT_EQ(PlacementOf(d, 1), nullptr);  // writing its checkpoint on its 4 devices
        s->Stopped(model::JobId(1), 430);
        d = s->Decide(430);
      }
      const Placement* p = PlacementOf(d, 1);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(p->devices.size(), 8u);
      EXPECT_TRUE(p->resumed);
      EXPECT_TRUE(p->resized);
      EXPECT_DOUBLE_EQ(s->SpeedNow(model::JobId(1)), 16.0);  // 8 steps/s at 4 workers
      // Grown to its maximum: nothing more to do.
      d = s->Decide(800);
      EXPECT_TRUE(d.preempted.empty());
    }
  }
}

TEST(ElasticScheduler, DoesNotGrowWhenTheRestartWouldNotPay) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1e6, {{"nv", 1.0}}, 4), 0).accepted);
  // 200 s expected in all: doubling saves at most 100 s, less than 3 restarts of 90 s.
  ASSERT_TRUE(s->Submit(Elastic(1, 0, 4, 1, 8, 200), 0).accepted);
  s->Decide(0);
  s->Finish(model::JobId(0), 100);
  EXPECT_TRUE(s->Decide(400).preempted.empty());
}

TEST(ElasticScheduler, ShrinksSoThatAWaitingJobStarts) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  for (const char* policy : {"fifo", "default"}) {
    SCOPED_TRACE(policy);
    auto s = Make(c, policy);
    ASSERT_TRUE(s->Submit(Elastic(0, 0, 8, 1, 8, 1e5), 0).accepted);
    Decision d = s->Decide(0);
    ASSERT_EQ(PlacementOf(d, 0)->devices.size(), 8u);
    // A rigid job of 4 arrives: the elastic one loses half its speed (0.5 of its best) plus a
    // restart, the newcomer gains its whole speed (1): it shrinks to 4.
    ASSERT_TRUE(s->Submit(MakeJob(1, 10, 1e6, {{"nv", 1.0}}, 4), 10).accepted);
    d = s->Decide(10);
    EXPECT_TRUE(d.placed.empty());
    d = s->Decide(400);
    ASSERT_TRUE(Preempted(d, 0));
    ASSERT_NE(PlacementOf(d, 0), nullptr);
    EXPECT_EQ(PlacementOf(d, 0)->devices.size(), 4u);
    EXPECT_TRUE(PlacementOf(d, 0)->resized);
    ASSERT_NE(PlacementOf(d, 1), nullptr);
    EXPECT_EQ(PlacementOf(d, 1)->devices.size(), 4u);
    EXPECT_EQ(s->queued(), 0u);
  }
}

TEST(ElasticScheduler, KeepsItsSizeWhenTheRestartCostsMoreThanTheWaiterGains) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  SchedulerOptions o;
  o.elastic = true;
  // A restart as long as the interval: the elastic job would lose 0.5 of its best speed plus
  // 1.0 for the restart, more than the waiting job's 1.0.
  o.preemption_cost_s = 300;
  auto s = Scheduler::Create(c, nullptr, "fifo", o);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Submit(Elastic(0, 0, 8, 1, 8, 1e5), 0).accepted);
  (*s)->Decide(0);
  ASSERT_TRUE((*s)->Submit(MakeJob(1, 10, 1e6, {{"nv", 1.0}}, 4), 10).accepted);
  EXPECT_TRUE((*s)->Decide(400).preempted.empty());
  EXPECT_EQ((*s)->queued(), 1u);
}

TEST(ElasticScheduler, LpPoliciesRunElasticJobsAtTheirGangSize) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}});
  auto s = Make(c, "max-throughput");
  ASSERT_TRUE(s->Submit(Elastic(0, 0, 2, 1, 8, 1e5), 0).accepted);
  const Decision d = s->Decide(0);
  ASSERT_NE(PlacementOf(d, 0), nullptr);
  EXPECT_EQ(PlacementOf(d, 0)->devices.size(), 2u);
}

// Random arrivals and completions of rigid and elastic Gavel jobs under every non-LP family:
// after each decision, a job's devices are as many as its gang size (one of its sizes), busy
// devices are exactly the held ones, and a decision never stops a job it started itself
// (the driver would stop a run it never launched).
TEST(ElasticScheduler, RandomStepsKeepGangsAndDecisionsConsistent) {
  auto cluster = MakeCluster({{"v100-32g", "cuda", 3, 4}, {"k80", "cuda", 3, 4}});
  const std::vector<std::string> types = GavelProfile().JobTypes();
  for (const char* policy : {"default", "las-het", "fifo-het", "fifo", "easy-backfill"}) {
    for (bool stop_holds : {false, true}) {
      SCOPED_TRACE(std::string(policy) + (stop_holds ? " stop holds" : ""));
      SchedulerOptions o;
      o.elastic = true;
      o.stop_holds_devices = stop_holds;
      o.preempt_interval_s = 60;
      auto made = Scheduler::Create(cluster, &GavelProfile(), policy, o);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      Scheduler& s = **made;
      std::mt19937_64 rng(11);
      std::vector<model::Job> jobs(80);
      std::vector<char> stopping(jobs.size(), 0);
      int resizes = 0;
      double now = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        model::Job& j = jobs[i];
        j.id = model::JobId(static_cast<int32_t>(i));
        j.name = "job-" + std::to_string(i);
        j.job_type = types[rng() % types.size()];
        j.gang_size = j.min_workers = j.max_workers = 1;
        if (i % 2 == 0) j.max_workers = 8;  // elastic 1..8 where measured
        j.stacks = {{"cuda", ""}};
        j.arrival_s = now;
        ASSERT_TRUE(s.Submit(j, now).accepted) << j.job_type;
        for (int step = 0; step < 3; ++step) {
          now += 30 + static_cast<double>(rng() % 300);
          // Some running jobs finish; jobs writing their checkpoint are done writing.
          for (size_t k = 0; k <= i; ++k) {
            if (!s.Known(jobs[k].id)) continue;
            const JobRecord& r = s.record(jobs[k].id);
            if (r.phase == JobPhase::kStopping && stopping[k]) {
              s.Stopped(jobs[k].id, now);
              stopping[k] = 0;
            } else if (r.phase == JobPhase::kRunning && rng() % 5 == 0) {
              s.Finish(jobs[k].id, now);
            }
          }
          std::vector<int32_t> running_before;
          for (size_t k = 0; k <= i; ++k) {
            if (s.Known(jobs[k].id) && s.record(jobs[k].id).phase == JobPhase::kRunning) {
              running_before.push_back(static_cast<int32_t>(k));
            }
          }
          const Decision d = s.Decide(now);
          for (const Placement& p : d.placed) resizes += p.resized ? 1 : 0;
          for (model::JobId stopped : d.preempted) {
            EXPECT_TRUE(std::count(running_before.begin(), running_before.end(), stopped.value()) ==
                        1)
                << "stopped job " << stopped.value() << " was not running before the decision";
            if (s.record(stopped).phase == JobPhase::kStopping) stopping[stopped.value()] = 1;
          }
          std::vector<int> held(cluster.devices.size(), 0);
          for (size_t k = 0; k <= i; ++k) {
            if (!s.Known(jobs[k].id)) continue;
            const JobRecord& r = s.record(jobs[k].id);
            if (r.phase == JobPhase::kQueued || r.phase == JobPhase::kDone) continue;
            EXPECT_EQ(static_cast<int32_t>(r.devices.size()), r.job->gang_size) << "job " << k;
            if (!r.sizes.empty()) {
              EXPECT_TRUE(std::any_of(r.sizes.begin(), r.sizes.end(), [&](const auto& opt) {
                return opt.workers == r.job->gang_size;
              }));
            }
            for (model::DeviceId dev : r.devices) held[dev.value()]++;
          }
          for (size_t dev = 0; dev < cluster.devices.size(); ++dev) {
            EXPECT_LE(held[dev], 1);
            EXPECT_EQ(s.state().IsFree(model::DeviceId(static_cast<int32_t>(dev))), held[dev] == 0);
          }
        }
      }
      EXPECT_GT(resizes, 0);
    }
  }
}

}  // namespace
}  // namespace hetsched::sched
