// Host cores and memory bind in a simulation: jobs that reserve them wait for a node's host even
// when its devices are free, and run side by side when they ask for nothing.
#include <gtest/gtest.h>

#include "sched/test_cluster.h"
#include "sim/engine.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using testing::ExpectAllAccounted;
using testing::MakeCluster;
using testing::MakeJob;
using testing::RunSim;

constexpr uint64_t kGiB = 1ull << 30;

// One node of 2 devices, 16 cores and 256 GiB; two jobs of 100 s each at t = 0.
SimResult RunTwo(int32_t cores, uint64_t memory) {
  auto c = MakeCluster({{"gpu", "cuda", 1, 2}});
  c.nodes[0].cores = 16;
  c.nodes[0].host_memory_bytes = 256 * kGiB;
  model::Workload w;
  for (int i = 0; i < 2; ++i) {
    model::Job j = MakeJob(i, 0, 100, {{"gpu", 1.0}});
    j.cores_per_worker = cores;
    j.host_memory_per_worker = memory;
    w.jobs.push_back(j);
  }
  SimOptions o;
  o.policy = "fifo";
  o.record_jobs = true;
  return RunSim(c, w, o);
}

TEST(SimulateHostResources, CoresAndMemoryBind) {
  // Nothing asked: both run at once.
  SimResult r = RunTwo(0, 0);
  EXPECT_EQ(r.jobs_completed, 2);
  EXPECT_DOUBLE_EQ(r.makespan_s, 100);
  ExpectAllAccounted(r);
  // 12 of 16 cores each: one after the other, though a device stays free.
  r = RunTwo(12, 0);
  EXPECT_EQ(r.jobs_completed, 2);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 100);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 200);
  EXPECT_DOUBLE_EQ(r.makespan_s, 200);
  ExpectAllAccounted(r);
  // 8 cores each fit together.
  EXPECT_DOUBLE_EQ(RunTwo(8, 0).makespan_s, 100);
  // 200 of 256 GiB each: one after the other.
  r = RunTwo(0, 200 * kGiB);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 200);
  ExpectAllAccounted(r);
}

TEST(SimulateHostResources, AJobNoNodeHoldsIsRejected) {
  SimResult r = RunTwo(32, 0);
  EXPECT_EQ(r.jobs_completed, 0);
  EXPECT_EQ(r.jobs_rejected, 2);
  ExpectAllAccounted(r);
}

}  // namespace
}  // namespace hetsched::sim
