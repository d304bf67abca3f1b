// Shared links in the simulator (sim/network.h): which links a read or a ring crosses, and
// jobs that slow each other down on them, against hand-computed times.
#include "sim/network.h"

#include <gtest/gtest.h>

#include "model/io/cluster_reader.h"
#include "model/io/workload_reader.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using model::DeviceId;
using model::NodeId;

// Two racks of two one-GPU nodes; storage in rack r0, a filesystem on the core. Latencies are
// zero so that times are bytes over bandwidth.
constexpr const char* kCluster = R"(
name: two-racks
network: {core_latency: 0s, spine_bandwidth: 4GB/s}
racks:
  - {name: r0, uplink_bandwidth: 100GB/s, latency: 0s}
  - {name: r1, uplink_bandwidth: 100GB/s, latency: 0s}
storage:
  - {name: store, rack: r0, bandwidth: 10GB/s}
  - {name: shared-fs, bandwidth: 1GB/s}
nodes:
  - name: a[0-1]
    rack: r0
    devices: [{type: a100-80g, count: 1}]
    host_link: {bandwidth: 32GB/s, latency: 0s}
    nic: {bandwidth: 10GB/s, latency: 0s}
  - name: b[0-1]
    rack: r1
    devices: [{type: a100-80g, count: 1}]
    host_link: {bandwidth: 32GB/s, latency: 0s}
    nic: {bandwidth: 10GB/s, latency: 0s}
)";

model::Cluster TwoRacks() {
  auto c = model::io::ParseClusterYaml(kCluster, "two-racks.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

model::Workload Jobs(const std::string& yaml, const model::Cluster& c) {
  auto w = model::io::ParseWorkloadYaml(yaml, "w.yaml", c.catalog);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return std::move(w).value();
}

int32_t Weight(const Network::LinkUses& uses, size_t i) { return uses[i].weight; }

TEST(Network, PathsCrossTheLinksBetweenTheirEnds) {
  const model::Cluster c = TwoRacks();
  Network net(c);
  const NodeId a0 = *c.FindNode("a0"), a1 = *c.FindNode("a1"), b0 = *c.FindNode("b0");
  // Same node: nothing; a node of the same rack: its NIC out and the other's in.
  EXPECT_TRUE(net.ReadPath(net.SourceOf("a0"), a0).empty());
  EXPECT_EQ(net.ReadPath(net.SourceOf("a0"), a1).size(), 2u);
  // Another rack: NIC, uplink, spine, downlink, NIC.
  EXPECT_EQ(net.ReadPath(net.SourceOf("a0"), b0).size(), 5u);
  // Storage in r0 to a node of r0: storage, NIC; to r1: storage, uplink, spine, down, NIC.
  EXPECT_EQ(net.ReadPath(net.SourceOf("store"), a1).size(), 2u);
  EXPECT_EQ(net.ReadPath(net.SourceOf("store"), b0).size(), 5u);
  // A filesystem on the core: storage, spine, downlink, NIC.
  EXPECT_EQ(net.ReadPath(net.SourceOf("shared-fs"), a0).size(), 4u);
  // Writes go back the other way: NIC up (and uplink, spine, downlink) and the storage's input.
  EXPECT_EQ(net.WritePath(a1, net.SourceOf("store")).size(), 2u);
  EXPECT_EQ(net.WritePath(b0, net.SourceOf("store")).size(), 5u);
  EXPECT_EQ(net.WritePath(a0, net.SourceOf("shared-fs")).size(), 4u);
  EXPECT_TRUE(net.WritePath(a0, net.SourceOf("a0")).empty());
  // No location: the first storage. An unknown one: nothing to read.
  EXPECT_EQ(net.SourceOf("").kind, DataSource::kStorage);
  EXPECT_EQ(net.SourceOf("nowhere").kind, DataSource::kNone);
  // A ring over a0, b0: two hops, each crossing the spine once.
  const auto ring = net.RingPath({c.device_of(a0, 0), c.device_of(b0, 0)});
  ASSERT_EQ(ring.size(), 9u);  // 2 NICs out, 2 in, 2 uplinks, 2 downlinks, the spine
  int32_t spine = 0;
  for (size_t i = 0; i < ring.size(); ++i) spine = std::max(spine, Weight(ring, i));
  EXPECT_EQ(spine, 2);
  EXPECT_TRUE(net.RingPath({c.device_of(a0, 0)}).empty());
}

TEST(Network, TransfersShareTheirCommonLinkAndFinishWhenTheirBytesAreMoved) {
  const model::Cluster c = TwoRacks();
  Network net(c);
  const NodeId a1 = *c.FindNode("a1");
  // Two reads of 20 GB from the storage onto a1 share its 10 GB/s NIC: 5 GB/s each, 4 s.
  const int32_t f = net.Add(net.ReadPath(net.SourceOf("store"), a1), Network::kForever, 20e9, 0);
  const int32_t g = net.Add(net.ReadPath(net.SourceOf("store"), a1), Network::kForever, 20e9, 0);
  EXPECT_EQ(net.Reshare(0).size(), 2u);
  EXPECT_DOUBLE_EQ(net.Rate(f), 5e9);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 4);
  net.Advance(2);
  net.Remove(g, 2);  // the other leaves half-way: 10 GB left at 10 GB/s
  net.Reshare(2);
  EXPECT_DOUBLE_EQ(net.Rate(f), 10e9);
  EXPECT_DOUBLE_EQ(net.NextCompletion(), 3);
  net.Advance(3);
  EXPECT_EQ(net.Finished(), std::vector<int32_t>{f});
  EXPECT_DOUBLE_EQ(net.spine_bytes(), 0);
}

// A gang of two across the racks: each step moves 1 GB over each of its two hops, and both
// hops cross the 4 GB/s spine, so it can do at most 2 steps/s whatever its compute speed.
// Two such gangs share the spine: 1 step/s each.
constexpr const char* kRingJobs = R"(
jobs:
  - name: ring-1
    gang_size: 2
    stacks: [cuda]
    throughput: {a100-80g: 1000000}
    sync_bytes_per_step: 1GB
    work: 200
  - name: ring-2
    gang_size: 2
    stacks: [cuda]
    throughput: {a100-80g: 1000000}
    sync_bytes_per_step: 1GB
    work: 200
)";

TEST(NetworkSim, GangsOnTheSameSpineSlowEachOtherDown) {
  const model::Cluster c = TwoRacks();
  SimOptions o;
  o.policy = "fifo";
  o.record_jobs = true;
  // Placement would keep each gang in one rack: pin them across the racks.
  model::Workload w = Jobs(kRingJobs, c);
  w.jobs[0].pinned_devices = {"a0", "b0"};
  w.jobs[1].pinned_devices = {"a1", "b1"};
  const SimResult both = testing::RunSim(c, w, o);
  ASSERT_EQ(both.jobs_completed, 2);
  // 200 steps at 1 step/s each (the compute time per step, 1e-6 s, is below a microsecond
  // of the result).
  EXPECT_NEAR(both.jobs[0].completion_s, 200, 0.01);
  EXPECT_NEAR(both.jobs[1].completion_s, 200, 0.01);
  EXPECT_NEAR(both.spine_bytes, 2 * 200 * 2e9, 1e7);

  model::Workload alone = w;
  alone.jobs.pop_back();
  const SimResult one = testing::RunSim(c, alone, o);
  EXPECT_NEAR(one.jobs[0].completion_s, 100, 0.01);
}

// 40 GB of input on the storage in r0, read by a one-GPU job in each rack. The far read
// crosses the 4 GB/s spine, so max-min gives it 4 GB/s and the near one the other 6 GB/s of
// the storage: near is read after 40/6 = 6.67 s; far has 40 - 26.67 = 13.33 GB left, still
// capped at 4 GB/s by the spine: 3.33 s more, 10 s in all. Then 100 s of compute each.
constexpr const char* kStagingJobs = R"(
jobs:
  - name: near
    stacks: [cuda]
    throughput: {a100-80g: 1}
    work: 100
    data: {size: 40GB, location: store}
    pinned_devices: [a1]
  - name: far
    stacks: [cuda]
    throughput: {a100-80g: 1}
    work: 100
    data: {size: 40GB, location: store}
    pinned_devices: [b1]
)";

TEST(NetworkSim, JobsReadTheirInputBeforeComputingAndShareTheStorage) {
  const model::Cluster c = TwoRacks();
  SimOptions o;
  o.record_jobs = true;
  const SimResult r = testing::RunSim(c, Jobs(kStagingJobs, c), o);
  ASSERT_EQ(r.jobs_completed, 2);
  EXPECT_NEAR(r.jobs[0].completion_s, 100 + 40.0 / 6, 0.01);
  EXPECT_NEAR(r.jobs[1].completion_s, 110, 0.01);
  EXPECT_NEAR(r.staged_bytes, 80e9, 1);
  EXPECT_NEAR(r.avg_staging_s, (40.0 / 6 + 10) / 2, 0.01);
  EXPECT_NEAR(r.spine_bytes, 40e9, 1e3);  // the far job's read crosses the spine
}

// One GPU in rack r1, the storage in r0, a 4 GB/s spine between them. A long job (100 s of
// work, 40 GB checkpoints on the storage) is preempted at 10 s by a short one (10 s). Its
// checkpoint crosses the spine at 4 GB/s: 10 s, longer than the 5 s --checkpoint-save, so the
// device is free at 20 and the short job runs 20-30. The long job resumes at 30: a 3 s restore,
// but its checkpoint is read back over the spine until 40; its 90 steps left end at 130.
constexpr const char* kOneGpu = R"(
name: one-gpu
network: {core_latency: 0s, spine_bandwidth: 4GB/s}
racks:
  - {name: r0, uplink_bandwidth: 100GB/s, latency: 0s}
  - {name: r1, uplink_bandwidth: 100GB/s, latency: 0s}
storage:
  - {name: store, rack: r0, bandwidth: 10GB/s}
nodes:
  - name: g0
    rack: r1
    devices: [{type: a100-80g, count: 1}]
    nic: {bandwidth: 10GB/s, latency: 0s}
)";

constexpr const char* kPreemptedJobs = R"(
jobs:
  - name: long
    stacks: [cuda]
    throughput: {a100-80g: 1}
    work: 100
    data: {checkpoint: 40GB, location: store}
  - name: short
    stacks: [cuda]
    throughput: {a100-80g: 1}
    work: 10
    arrival: 10
)";

TEST(NetworkSim, APreemptedJobWritesItsCheckpointBackAndReadsItAgain) {
  auto c = model::io::ParseClusterYaml(kOneGpu, "one-gpu.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  SimOptions o;
  o.policy = "srpt-het";
  o.record_jobs = true;
  o.sched.preempt_interval_s = 0;
  o.estimates.kind = EstimateMode::kOracle;
  o.checkpoint_save_s = 5;
  o.restore_s = 3;
  o.sched.preempt_quantum_s = 8;  // one cost: it may be preempted at once
  const SimResult r = testing::RunSim(*c, Jobs(kPreemptedJobs, *c), o);
  ASSERT_EQ(r.jobs_completed, 2);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_NEAR(r.jobs[1].first_start_s, 20, 1e-6);
  EXPECT_NEAR(r.jobs[1].completion_s, 30, 1e-6);
  EXPECT_NEAR(r.jobs[0].completion_s, 130, 1e-6);
  EXPECT_NEAR(r.checkpoint_bytes, 40e9, 1);
  EXPECT_NEAR(r.staged_bytes, 40e9, 1);  // read back once
  EXPECT_NEAR(r.spine_bytes, 80e9, 1e3);

  // Without checkpoint bytes the 5 s write time alone holds the device: the short job runs
  // 15-25, and the long one ends at 25 + 3 + 90.
  model::Workload w = Jobs(kPreemptedJobs, *c);
  w.jobs[0].checkpoint_bytes = 0;
  const SimResult plain = testing::RunSim(*c, w, o);
  EXPECT_NEAR(plain.jobs[1].first_start_s, 15, 1e-6);
  EXPECT_NEAR(plain.jobs[0].completion_s, 118, 1e-6);
  EXPECT_DOUBLE_EQ(plain.checkpoint_bytes, 0);
}

}  // namespace
}  // namespace hetsched::sim
