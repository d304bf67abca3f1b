// Space sharing in the scheduler: random arrivals, completions and faults under every kind of
// policy, with the pairing invariants checked after every step.
#include <gtest/gtest.h>

#include <random>

#include "model/io/cluster_reader.h"
#include "model/io/gavel_reader.h"
#include "sched/scheduler.h"
#include "sched/test_cluster.h"
#include "testing/build_paths.h"

namespace hetsched::sched {
namespace {

const model::ThroughputProfile& GavelProfile() {
  static const auto profile = model::io::LoadGavelThroughputs(
      std::string(HETSCHED_SOURCE_DIR) + "/data/gavel/simulation_throughputs.json");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

// Every device holds at most one job's allocation and one guest; a guest runs on exactly its
// host's devices and the two name each other; busy devices are exactly the held ones.
void ExpectPairsConsistent(const Scheduler& s, const model::Cluster& c,
                           const std::vector<model::Job>& jobs, const std::string& where) {
  std::vector<int> holders(c.devices.size(), 0), guests(c.devices.size(), 0);
  int32_t running = 0;
  for (const model::Job& j : jobs) {
    if (!s.Known(j.id)) continue;
    const JobRecord& r = s.record(j.id);
    if (r.phase != JobPhase::kRunning) {
      EXPECT_EQ(r.partner, -1) << where;
      continue;
    }
    ++running;
    for (model::DeviceId d : r.devices) (r.guest ? guests : holders)[d.value()]++;
    if (r.partner < 0) {
      EXPECT_FALSE(r.guest) << where;
      continue;
    }
    const JobRecord& p = s.record(model::JobId(r.partner));
    ASSERT_EQ(p.phase, JobPhase::kRunning) << where;
    EXPECT_EQ(p.partner, j.id.value()) << where;
    EXPECT_NE(p.guest, r.guest) << where;
    EXPECT_EQ(p.devices, r.devices) << where;
    EXPECT_EQ(p.job->gang_size, r.job->gang_size) << where;
    EXPECT_GT(r.pair_speed, 0) << where;
  }
  EXPECT_EQ(static_cast<size_t>(running), s.running()) << where;
  for (size_t d = 0; d < c.devices.size(); ++d) {
    const model::DeviceId id(static_cast<int32_t>(d));
    EXPECT_LE(holders[d], 1) << where << " device " << d;
    EXPECT_LE(guests[d], holders[d]) << where << " device " << d;
    if (s.state().IsUp(id)) {
      EXPECT_EQ(s.state().IsFree(id), holders[d] == 0) << where;
    }
    if (holders[d] == 1) {
      ASSERT_TRUE(s.JobOn(id).has_value()) << where;
      EXPECT_FALSE(s.record(*s.JobOn(id)).guest) << where;
    }
  }
}

TEST(SpaceSharingScheduler, RandomStepsKeepPairsConsistent) {
  auto cluster = model::io::LoadCluster("v100=4,p100=4,k80=4");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  const std::vector<std::string> types = GavelProfile().JobTypes();
  for (const char* policy : {"default", "las-het", "maxmin-het", "fifo-het", "easy-backfill"}) {
    std::mt19937_64 rng(7);
    std::vector<model::Job> jobs(150);
    for (size_t i = 0; i < jobs.size(); ++i) {
      model::Job& j = jobs[i];
      j.id = model::JobId(static_cast<int32_t>(i));
      j.name = "job-" + std::to_string(i);
      j.job_type = types[rng() % types.size()];
      j.gang_size = j.min_workers = j.max_workers = i % 5 == 0 ? 2 : 1;
      if (!GavelProfile().Isolated(j.job_type, j.gang_size, "v100-32g")) {
        j.gang_size = j.min_workers = j.max_workers = 1;
      }
      j.work = 1000 + static_cast<double>(rng() % 100000);
      j.stacks = {{"cuda", ""}};
      j.arrival_s = static_cast<double>(i) * 30;
    }
    SchedulerOptions o;
    o.space_sharing = true;
    o.preempt_interval_s = 0;  // full reallocations at every decision: the hardest case
    auto made = Scheduler::Create(*cluster, &GavelProfile(), policy, o);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Scheduler& s = **made;
    int64_t pairs = 0;
    double now = 0;
    for (size_t step = 0; step < 400; ++step, now += 30) {
      const std::string where = std::string(policy) + " step " + std::to_string(step);
      if (step < jobs.size()) {
        ASSERT_TRUE(s.Submit(jobs[step], now).accepted) << where;
      }
      // Some running job finishes, another fails with its device (and its partner with it).
      std::vector<int32_t> running;
      for (const model::Job& j : jobs) {
        if (s.Known(j.id) && s.record(j.id).phase == JobPhase::kRunning) {
          running.push_back(j.id.value());
        }
      }
      if (!running.empty() && rng() % 2 == 0) {
        s.Finish(model::JobId(running[rng() % running.size()]), now);
      }
      if (!running.empty() && rng() % 7 == 0) {
        const int32_t id = running[rng() % running.size()];
        const JobRecord& r = s.record(model::JobId(id));
        if (r.phase == JobPhase::kRunning) {
          if (r.partner >= 0) s.Requeue(model::JobId(r.partner), now, 500);
          s.Requeue(model::JobId(id), now, 500);
        }
      }
      s.TakeSpeedChanges();
      ExpectPairsConsistent(s, *cluster, jobs, where + " before");
      const Decision d = s.Decide(now);
      for (const Placement& p : d.placed) pairs += p.partner.valid() ? 1 : 0;
      ExpectPairsConsistent(s, *cluster, jobs, where);
      for (model::JobId j : s.TakeSpeedChanges()) {
        const JobRecord& r = s.record(j);
        if (r.phase != JobPhase::kRunning) continue;
        // The speed a driver applies: the pair speed while paired, else the alone speed.
        EXPECT_DOUBLE_EQ(s.SpeedNow(j), r.partner >= 0 ? r.pair_speed : r.speed[r.type.value()]);
      }
    }
    EXPECT_GT(pairs, 0) << policy;
  }
}

TEST(SpaceSharingScheduler, NeedsAProfile) {
  const auto c = testing::MakeCluster({{"gpu", "cuda", 1, 1}});
  SchedulerOptions o;
  o.space_sharing = true;
  auto s = Scheduler::Create(c, nullptr, "fifo", o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("pair (co-located) entries"), std::string::npos);
  o.space_sharing_min_gain = -1;
  EXPECT_FALSE(Scheduler::Create(c, &GavelProfile(), "fifo", o).ok());
}

}  // namespace
}  // namespace hetsched::sched
