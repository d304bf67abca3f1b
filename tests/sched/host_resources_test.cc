// Host cores and memory: jobs that reserve them per worker take them on their devices' nodes
// while they run, nodes that lack them are not offered, and 0 on a node means not modelled.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "sched/cluster_state.h"
#include "sched/placement.h"
#include "sched/scheduler.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using model::DeviceId;
using model::JobId;
using model::NodeId;
using testing::MakeCluster;
using testing::MakeJob;

constexpr uint64_t kGiB = 1ull << 30;

std::unique_ptr<Scheduler> Make(const model::Cluster& c, std::string_view policy,
                                SchedulerOptions options = {}) {
  auto s = Scheduler::Create(c, nullptr, policy, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// `nodes` nodes of `per_node` "gpu" devices, each node with `cores` cores and `memory` bytes.
model::Cluster HostCluster(int nodes, int per_node, int32_t cores, uint64_t memory) {
  model::Cluster c = MakeCluster({{"gpu", "cuda", nodes, per_node}});
  for (model::Node& n : c.nodes) {
    n.cores = cores;
    n.host_memory_bytes = memory;
  }
  return c;
}

model::Job HostJob(int id, int gang, int32_t cores, uint64_t memory, double arrival_s = 0) {
  model::Job j = MakeJob(id, arrival_s, 100, {{"gpu", 1.0}}, gang);
  j.cores_per_worker = cores;
  j.host_memory_per_worker = memory;
  return j;
}

// Workers of a placement per node.
std::map<int32_t, int> PerNode(const model::Cluster& c, const Placement& p) {
  std::map<int32_t, int> out;
  for (DeviceId d : p.devices) out[c.device(d).node.value()]++;
  return out;
}

TEST(HostResources, NodeOutOfCoresMakesTheNextJobWaitUntilTheFirstEnds) {
  // Two devices, 16 cores: one job of 12 cores per worker at a time.
  const auto c = HostCluster(1, 2, 16, 0);
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 12, 0), 0).accepted);
  ASSERT_TRUE(s->Submit(HostJob(1, 1, 12, 0), 0).accepted);
  Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(0));
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 4);
  EXPECT_EQ(s->state().FreeOfType(c.devices[0].type), 1);  // a device is free, cores are not
  const std::string why = s->WhyWaiting(JobId(1), 0);
  EXPECT_NE(why.find("each worker with 12 cores on its node"), std::string::npos) << why;
  EXPECT_NE(why.find("waits for host resources: gpu has the free devices but their nodes lack "
                     "free host cores"),
            std::string::npos)
      << why;

  s->Finish(JobId(0), 100);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 16);
  d = s->Decide(100);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(1));
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 4);
  s->Finish(JobId(1), 200);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 16);
}

TEST(HostResources, NodeOutOfMemoryMakesTheNextJobWaitUntilTheFirstEnds) {
  const auto c = HostCluster(1, 2, 0, 256 * kGiB);
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 0, 200 * kGiB), 0).accepted);
  ASSERT_TRUE(s->Submit(HostJob(1, 1, 0, 100 * kGiB), 0).accepted);
  Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(s->state().FreeHostMemory(NodeId(0)), 56 * kGiB);
  const std::string why = s->WhyWaiting(JobId(1), 0);
  EXPECT_NE(why.find("their nodes lack free host memory"), std::string::npos) << why;
  s->Finish(JobId(0), 100);
  d = s->Decide(100);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(1));
  EXPECT_EQ(s->state().FreeHostMemory(NodeId(0)), 156 * kGiB);
}

// A job's fastest type with free devices whose nodes lack its host cores (easy-backfill picks
// the fastest type with room): it starts on the next type in its preference, and a job
// without a host request still takes the fastest.
TEST(HostResources, AJobGoesToItsNextTypeWhenTheFastestLacksHostRoom) {
  model::Cluster c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 2}});
  for (model::Node& n : c.nodes) n.cores = 16;
  auto s = Make(c, "easy-backfill");
  const auto job = [](int id, int32_t cores) {
    model::Job j = MakeJob(id, id, 100, {{"fast", 2.0}, {"slow", 1.0}});
    j.cores_per_worker = cores;
    return j;
  };
  ASSERT_TRUE(s->Submit(job(0, 12), 0).accepted);
  Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "fast");  // 4 of its node's cores left
  ASSERT_TRUE(s->Submit(job(1, 8), 1).accepted);
  ASSERT_TRUE(s->Submit(job(2, 0), 2).accepted);
  d = s->Decide(2);
  ASSERT_EQ(d.placed.size(), 2u);
  EXPECT_EQ(d.placed[0].job, JobId(1));
  EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "slow");
  EXPECT_EQ(d.placed[1].job, JobId(2));
  EXPECT_EQ(c.catalog.Get(d.placed[1].type).name, "fast");
}

TEST(HostResources, ZeroOnTheNodeMeansNotModelledAndZeroOnTheJobTakesNothing) {
  // A node that declares no cores or memory holds any request.
  const auto open = HostCluster(1, 2, 0, 0);
  auto s = Make(open, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 1000, 1000 * kGiB), 0).accepted);
  ASSERT_TRUE(s->Submit(HostJob(1, 1, 1000, 1000 * kGiB), 0).accepted);
  EXPECT_EQ(s->Decide(0).placed.size(), 2u);

  // A job that asks nothing runs on a node whose cores are all taken, and takes none.
  const auto c = HostCluster(1, 2, 8, 64 * kGiB);
  s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 8, 64 * kGiB), 0).accepted);
  ASSERT_TRUE(s->Submit(HostJob(1, 1, 0, 0), 0).accepted);
  EXPECT_EQ(s->Decide(0).placed.size(), 2u);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 0);
  EXPECT_EQ(s->state().FreeHostMemory(NodeId(0)), 0u);
  s->Finish(JobId(1), 10);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 0);
  s->Finish(JobId(0), 20);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 8);
  EXPECT_EQ(s->state().FreeHostMemory(NodeId(0)), 64 * kGiB);
}

TEST(HostResources, AGangSplitAcrossNodesNeedsTheResourcesOnEach) {
  // Two nodes of 8 devices and 16 cores: a gang of 6 workers of 4 cores fits on no one node
  // (4 workers each) and splits 4 + 2.
  const auto c = HostCluster(2, 8, 16, 0);
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 10, 0), 0).accepted);  // leaves node 0 one 4-core worker
  ASSERT_TRUE(s->Submit(HostJob(1, 6, 4, 0, 1), 1).accepted);
  Decision d = s->Decide(1);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(0));
  EXPECT_EQ(PerNode(c, d.placed[0]), (std::map<int32_t, int>{{0, 1}}));
  // 15 free devices, but host room for 1 + 4 workers: the gang waits.
  EXPECT_TRUE(s->Decide(2).placed.empty());
  EXPECT_NE(s->WhyWaiting(JobId(1), 2).find("lack free host cores"), std::string::npos);

  s->Finish(JobId(0), 100);
  d = s->Decide(100);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(1));
  EXPECT_EQ(PerNode(c, d.placed[0]), (std::map<int32_t, int>{{0, 4}, {1, 2}}));
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 0);
  EXPECT_EQ(s->state().FreeCores(NodeId(1)), 8);
}

TEST(HostResources, AgnosticPlacementPutsOnANodeOnlyWhatItsHostHolds) {
  SchedulerOptions o;
  o.placement = PlacementMode::kAgnostic;
  const auto c = HostCluster(2, 8, 16, 0);
  auto s = Make(c, "fifo", o);
  ASSERT_TRUE(s->Submit(HostJob(0, 6, 4, 0), 0).accepted);
  const Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(PerNode(c, d.placed[0]), (std::map<int32_t, int>{{0, 4}, {1, 2}}));
}

TEST(HostResources, BestFitPassesOverNodesWithoutHostRoom) {
  // Node 0 has the fewest free devices that fit (best fit) but no cores left.
  model::Cluster c = HostCluster(3, 4, 8, 0);
  ClusterState state(c);
  state.Allocate({DeviceId(0), DeviceId(1)});  // node 0: 2 devices free
  state.TakeHost({DeviceId(0), DeviceId(1)}, HostRequest{4, 0});
  const model::DeviceTypeId gpu = c.devices[0].type;
  auto plain = PlaceGang(state, gpu, 2);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(c.device(plain->front()).node, NodeId(0));
  auto hosted = PlaceGang(state, gpu, 2, {}, HostRequest{4, 0});
  ASSERT_TRUE(hosted.has_value());
  for (DeviceId d : *hosted) EXPECT_EQ(c.device(d).node, NodeId(1));
  // 8 cores per worker: one worker per node at most, 2 nodes with room, so 3 is too many.
  EXPECT_TRUE(PlaceGang(state, gpu, 2, {}, HostRequest{8, 0}).has_value());
  EXPECT_FALSE(PlaceGang(state, gpu, 3, {}, HostRequest{8, 0}).has_value());
  EXPECT_FALSE(PlaceGangAgnostic(state, gpu, 3, HostRequest{8, 0}).has_value());
  // The data's node is passed over too when its host is full.
  PlacementHints hints;
  hints.data_node = NodeId(0);
  hosted = PlaceGang(state, gpu, 1, hints, HostRequest{1, 0});
  ASSERT_TRUE(hosted.has_value());
  EXPECT_NE(c.device(hosted->front()).node, NodeId(0));
}

TEST(HostResources, PreemptionReturnsTheHostResources) {
  // One device, 16 cores: the short job preempts the long one and takes its cores.
  const auto c = HostCluster(1, 1, 16, 0);
  SchedulerOptions o;
  o.preempt_interval_s = 0;
  o.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
  auto s = Make(c, "srpt-het", o);
  model::Job longer = HostJob(0, 1, 12, 0);
  longer.estimate_s = 1000;
  model::Job shorter = HostJob(1, 1, 12, 0, 10);
  shorter.estimate_s = 10;
  ASSERT_TRUE(s->Submit(longer, 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 1u);
  ASSERT_TRUE(s->Submit(shorter, 10).accepted);
  const Decision d = s->Decide(10);
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_EQ(d.preempted[0], JobId(0));
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(1));
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 4);
}

TEST(HostResources, StoppingJobKeepsItsHostResourcesUntilStopped) {
  const auto c = HostCluster(1, 1, 16, 0);
  SchedulerOptions o;
  o.preempt_interval_s = 0;
  o.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
  o.stop_holds_devices = true;
  auto s = Make(c, "srpt-het", o);
  model::Job longer = HostJob(0, 1, 12, 0);
  longer.estimate_s = 1000;
  model::Job shorter = HostJob(1, 1, 12, 0, 10);
  shorter.estimate_s = 10;
  ASSERT_TRUE(s->Submit(longer, 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 1u);
  ASSERT_TRUE(s->Submit(shorter, 10).accepted);
  EXPECT_EQ(s->Decide(10).preempted.size(), 1u);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 4);  // still writing its checkpoint
  s->Stopped(JobId(0), 20);
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 16);
  const Decision d = s->Decide(20);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job, JobId(1));
  EXPECT_EQ(s->state().FreeCores(NodeId(0)), 4);
}

TEST(HostResources, AdmissionRejectsARequestNoNodeHolds) {
  const auto c = HostCluster(2, 4, 16, 128 * kGiB);
  auto s = Make(c, "fifo");
  Admission a = s->Submit(HostJob(0, 1, 32, 0), 0);
  EXPECT_FALSE(a.accepted);
  EXPECT_NE(a.reason.find("the nodes with gpu hold 0 worker(s) with 32 cores each, the gang "
                          "needs 1"),
            std::string::npos)
      << a.reason;
  // Each worker fits, but 2 nodes x 2 workers of 8 cores and 64 GiB is short of a gang of 5.
  a = s->Submit(HostJob(1, 5, 8, 64 * kGiB), 0);
  EXPECT_FALSE(a.accepted);
  EXPECT_NE(a.reason.find("hold 4 worker(s) with 8 cores and 64 GiB of host memory each"),
            std::string::npos)
      << a.reason;
  EXPECT_TRUE(s->Submit(HostJob(2, 4, 8, 64 * kGiB), 0).accepted);
  // Pinned devices count only their own nodes.
  model::Job pinned = HostJob(3, 2, 16, 0);
  pinned.pinned_devices = {"gpu-n0/0", "gpu-n0/1"};
  a = s->Submit(pinned, 0);
  EXPECT_FALSE(a.accepted);
  EXPECT_NE(a.reason.find("on the pinned devices"), std::string::npos) << a.reason;
}

TEST(HostResources, AdoptChecksTheHostResources) {
  const auto c = HostCluster(1, 2, 16, 0);
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 12, 0), 0).accepted);
  ASSERT_TRUE(s->Submit(HostJob(1, 1, 12, 0), 0).accepted);
  ASSERT_TRUE(s->Adopt(JobId(0), {DeviceId(0)}, 0, 0).ok());
  const util::Status st = s->Adopt(JobId(1), {DeviceId(1)}, 0, 0);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("lack the free host cores or memory for 12 cores per worker"),
            std::string::npos)
      << st.message();
}

TEST(HostResources, PinnedJobWaitsForItsNodesHost) {
  const auto c = HostCluster(2, 2, 16, 0);
  auto s = Make(c, "fifo");
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 12, 0), 0).accepted);
  Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  const NodeId busy = c.device(d.placed[0].devices[0]).node;
  model::Job pinned = HostJob(1, 1, 8, 0, 1);
  pinned.pinned_devices = {c.node(busy).name};
  ASSERT_TRUE(s->Submit(pinned, 1).accepted);
  EXPECT_TRUE(s->Decide(1).placed.empty());
  s->Finish(JobId(0), 5);
  d = s->Decide(5);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(c.device(d.placed[0].devices[0]).node, busy);
}

TEST(HostResources, NodesThatJoinBringTheirHost) {
  model::Cluster c = HostCluster(1, 1, 4, 0);
  auto s = Make(c, "fifo");
  EXPECT_FALSE(s->Submit(HostJob(0, 1, 8, 0), 0).accepted);
  model::Node n;
  n.name = "big";
  n.rack = model::RackId(0);
  n.cores = 32;
  const NodeId id = model::AddNode(c, n, {c.devices[0].type});
  s->AddNode(id);
  ASSERT_TRUE(s->Submit(HostJob(0, 1, 8, 0), 0).accepted);
  const Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(c.device(d.placed[0].devices[0]).node, id);
  EXPECT_EQ(s->state().FreeCores(id), 24);
}

}  // namespace
}  // namespace hetsched::sched
