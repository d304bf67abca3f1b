#include "plan/model_partition_cost.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/topology.h"
#include "plan/model_partition_test_util.h"

namespace hetsched::plan {
namespace {

using testing::kGiB;
using testing::MakeCluster;
using testing::NodeSpec;
using testing::TypeSpec;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTol = 1e-12;

// Two types: "fast" (100 TFLOPS fp16 x 0.5 = 50e12 FLOP/s, compute-bound) in a node of two in an
// island (100 GB/s, 1 us), and "slow" (20 TFLOPS x 0.5 = 10e12 FLOP/s, 5e7 B/s of memory: memory-
// bound on weights) alone in a node. NICs 10 GB/s, 1 us; 10 GiB per device, 10 % kept back.
model::Cluster TwoTypes() {
  TypeSpec slow{"slow", 20};
  slow.memory_bandwidth = 5e7;
  return MakeCluster({{"fast"}, slow}, {{"fast", 2}, {"slow", 1}});
}

// Three layers, fp16 Adam (2 + 2 + 12 bytes per parameter), global batch 8.
//   L0 embedding:  1e9 FLOPs, 1e6 params, 1e6 B activations, 1e6 B output, no TP all-reduce
//   L1 transformer: 1e12 FLOPs, 1e7 params, 4e6 B activations, 1e6 B output, 4 TP all-reduces
//   L2 head:       5e11 FLOPs, 5e6 params, 2e6 B activations, 5e5 B output
model::ModelSpec Tiny(model::Optimizer optimizer = model::Optimizer::kAdam) {
  model::ModelSpec m;
  m.name = "tiny";
  m.setup.global_batch = 8;
  m.setup.seq_len = 100;
  m.setup.optimizer = optimizer;
  const auto layer = [&](model::LayerKind kind, double flops, uint64_t params, uint64_t act,
                         uint64_t out, int32_t tp) {
    model::LayerSpec l;
    l.name = "l" + std::to_string(m.layers.size());
    l.kind = kind;
    l.fwd_flops = flops;
    l.parameters = params;
    l.activation_bytes = act;
    l.output_bytes = out;
    l.tp_allreduces = tp;
    m.layers.push_back(l);
  };
  layer(model::LayerKind::kEmbedding, 1e9, 1'000'000, 1'000'000, 1'000'000, 0);
  layer(model::LayerKind::kTransformer, 1e12, 10'000'000, 4'000'000, 1'000'000, 4);
  layer(model::LayerKind::kHead, 5e11, 5'000'000, 2'000'000, 500'000, 0);
  return m;
}

// The classes and model of TwoTypes() and Tiny(), kept alive together (StageCostModel keeps
// references to the spec and the classes).
struct Fixture {
  explicit Fixture(int64_t micro_batch = 2, bool allow_offload = false,
                   model::Optimizer optimizer = model::Optimizer::kAdam, HostPool host = {})
      : cluster(TwoTypes()), topology(cluster), spec(Tiny(optimizer)), pool(host) {
    auto built = BuildDeviceClasses(cluster, topology, spec.setup.precision, {});
    EXPECT_TRUE(built.ok()) << built.status().ToString();
    classes = std::move(built).value();
    model.emplace(spec, classes, pool, micro_batch, allow_offload);
  }
  const StageCostModel& cost() const { return *model; }

  model::Cluster cluster;
  model::Topology topology;
  model::ModelSpec spec;
  HostPool pool;
  std::vector<DeviceClass> classes;
  std::optional<StageCostModel> model;
};

constexpr int32_t kFast = 0, kSlow = 1;  // class indices (cluster order)

// CPU servers for offload: 1 TB, 20 GB/s of NIC, 10 us, 100 GB/s of memory.
HostPool Servers() {
  HostPool p;
  p.bytes = 1'000'000'000'000;
  p.nic_bandwidth = 20e9;
  p.nic_latency_s = 1e-5;
  p.memory_bandwidth = 100e9;
  p.nodes = 1;
  return p;
}

TEST(DeviceClasses, OneClassPerTypeAndIslandWithItsLinks) {
  const Fixture f;
  ASSERT_EQ(f.classes.size(), 2u);
  const DeviceClass& fast = f.classes[kFast];
  EXPECT_EQ(fast.type_name, "fast");
  EXPECT_EQ(fast.group_size, 2);
  EXPECT_EQ(fast.groups_per_node, 1);
  EXPECT_EQ(fast.devices(), 2);
  EXPECT_DOUBLE_EQ(fast.intra_bandwidth, 100e9);
  EXPECT_DOUBLE_EQ(fast.flops_per_s, 50e12);
  EXPECT_EQ(fast.memory_bytes, static_cast<uint64_t>(10 * kGiB * 0.9));
  EXPECT_EQ(fast.StageSizes(), (std::vector<int32_t>{1, 2}));
  const DeviceClass& slow = f.classes[kSlow];
  EXPECT_EQ(slow.type_name, "slow");
  EXPECT_EQ(slow.group_size, 1);
  EXPECT_EQ(slow.intra_bandwidth, 0);  // a group of one has no link inside
  EXPECT_DOUBLE_EQ(slow.flops_per_s, 10e12);
  EXPECT_EQ(slow.StageSizes(), (std::vector<int32_t>{1}));
}

TEST(DeviceClasses, UnknownOrMissingTypeIsAnError) {
  const model::Cluster c = TwoTypes();
  const model::Topology t(c);
  ClassOptions o;
  o.only_type = "tpu";
  auto r = BuildDeviceClasses(c, t, model::Precision::kFp16, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), util::StatusCode::kNotFound);
  o.only_type = "slow";
  r = BuildDeviceClasses(c, t, model::Precision::kFp16, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].type_name, "slow");

  TypeSpec cpu{"cpu", 1, 64 * kGiB, model::DeviceKind::kCpu};
  const model::Cluster cpus = MakeCluster({cpu}, {{"cpu", 1}});
  const model::Topology ct(cpus);
  EXPECT_EQ(BuildDeviceClasses(cpus, ct, model::Precision::kFp16, {}).status().code(),
            util::StatusCode::kInvalidArgument);
}

TEST(DeviceClasses, StageSizesAreSubGroupsThenWholeGroups) {
  DeviceClass c;
  c.group_size = 8;
  c.groups.assign(7, {});
  // 1, 2, 4 inside a group; 1, 2, 3, 4, 6 groups; then all 7.
  EXPECT_EQ(c.StageSizes(), (std::vector<int32_t>{1, 2, 4, 8, 16, 24, 32, 48, 56}));
  c.groups_per_node = 2;
  EXPECT_EQ(c.NodesFor(8), 1);
  EXPECT_EQ(c.NodesFor(9), 1);   // two groups, one node
  EXPECT_EQ(c.NodesFor(17), 2);  // three groups
}

TEST(HostPool, OnlyCpuNodesWithHostMemoryCount) {
  TypeSpec cpu{"cpu", 1, 64 * kGiB, model::DeviceKind::kCpu};
  cpu.memory_bandwidth = 200e9;
  NodeSpec server{"cpu", 2, 0, 12.5e9, 100 * kGiB};
  NodeSpec gpu_node{"gpu", 1, 0, 10e9, 500 * kGiB};  // has an accelerator: not in the pool
  const model::Cluster c = MakeCluster({{"gpu"}, cpu}, {gpu_node, server, server});
  const HostPool p = BuildHostPool(c, 0.25);
  EXPECT_EQ(p.nodes, 2);
  EXPECT_EQ(p.bytes, 2 * static_cast<uint64_t>(100 * kGiB * 0.75));
  EXPECT_DOUBLE_EQ(p.nic_bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(p.memory_bandwidth, 4 * 200e9);  // two sockets per server
  EXPECT_TRUE(p.usable());
  EXPECT_FALSE(HostPool{}.usable());
}

TEST(StageCost, OneDeviceTwoLayersByHand) {
  const Fixture f;  // micro-batch 2: B = 4 micro-batches
  EXPECT_EQ(f.cost().micro_batches(), 4);
  EXPECT_EQ(f.cost().layers(), 3);
  const StageCost s = f.cost().EvaluateConfig(kFast, 1, 3, 1, 1, kOffloadNone, 2, NextLink::kNone);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.dp, 1);
  EXPECT_EQ(s.samples_per_replica, 2);
  // 1.5e7 parameters: 2, 2 and 12 bytes each; 2 in flight x 2 samples x 6e6 B.
  EXPECT_EQ(s.memory.weights, 30'000'000u);
  EXPECT_EQ(s.memory.gradients, 30'000'000u);
  EXPECT_EQ(s.memory.optimizer, 180'000'000u);
  EXPECT_EQ(s.memory.activations, 24'000'000u);
  // 3 passes x 2 samples x 1.5e12 FLOPs at 50e12 FLOP/s; weight traffic 9e7 B at 1e15 B/s is
  // far below.
  EXPECT_NEAR(s.compute_s, 0.18, kTol);
  EXPECT_EQ(s.tp_comm_s, 0);
  EXPECT_EQ(s.p2p_s, 0);
  EXPECT_NEAR(s.latency_s, 0.18, kTol);
  EXPECT_EQ(s.tail_s, 0);
}

TEST(StageCost, EmbeddingWeightsAreNotStreamedOtherWeightsAre) {
  const Fixture f;
  // On "slow" (5e7 B/s): the head streams 3 x 1e7 B of weights = 0.6 s, more than its
  // 3 x 2 x 5e11 / 10e12 = 0.3 s of compute.
  const StageCost head =
      f.cost().EvaluateConfig(kSlow, 2, 3, 1, 1, kOffloadNone, 1, NextLink::kNone);
  EXPECT_NEAR(head.compute_s, 0.6, kTol);
  // The embedding's lookups touch rows, not its 2e6 B table: compute alone,
  // 3 x 2 x 1e9 / 10e12 = 6e-4 s (streaming the table would take 0.12 s).
  const StageCost embed =
      f.cost().EvaluateConfig(kSlow, 0, 1, 1, 1, kOffloadNone, 1, NextLink::kNone);
  EXPECT_NEAR(embed.compute_s, 6e-4, kTol);
}

TEST(StageCost, TransferToTheNextStageOverTheIslandOrTheNic) {
  const Fixture f;
  // Layer 0 sends micro-batch x output = 2 x 1e6 B forward and the same gradient back.
  const auto p2p = [&](NextLink next) {
    return f.cost().EvaluateConfig(kFast, 0, 1, 1, 1, kOffloadNone, 1, next).p2p_s;
  };
  EXPECT_NEAR(p2p(NextLink::kSameGroup), 2 * (1e-6 + 2e6 / 100e9), kTol);
  EXPECT_NEAR(p2p(NextLink::kNetwork), 2 * (1e-6 + 2e6 / 10e9), kTol);
  EXPECT_EQ(p2p(NextLink::kNone), 0);
  const StageCost s =
      f.cost().EvaluateConfig(kFast, 0, 1, 1, 1, kOffloadNone, 1, NextLink::kNetwork);
  EXPECT_NEAR(s.latency_s, s.compute_s + s.p2p_s, kTol);
}

TEST(StageCost, TensorParallelSplitsMemoryAndComputeAndPaysRingAllReduces) {
  const Fixture f;
  const StageCost s = f.cost().EvaluateConfig(kFast, 1, 2, 2, 2, kOffloadNone, 1, NextLink::kNone);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.tp, 2);
  EXPECT_EQ(s.dp, 1);
  EXPECT_EQ(s.memory.weights, 10'000'000u);  // 1e7 x 2 B / 2
  EXPECT_EQ(s.memory.optimizer, 60'000'000u);
  EXPECT_EQ(s.memory.activations, 4'000'000u);  // 2 samples x 4e6 B / 2
  EXPECT_NEAR(s.compute_s, 3 * 2 * 1e12 / 2 / 50e12, kTol);
  // 4 all-reduces of 2 samples x 1e6 B between 2 devices: 2(n-1)/n x 8e6 B / 100e9 B/s plus
  // 4 x 2(n-1) x 1 us.
  EXPECT_NEAR(s.tp_comm_s, 8e6 / 100e9 + 4 * 2 * 1e-6, kTol);
  EXPECT_EQ(s.tail_s, 0);  // one replica: no gradient all-reduce
}

TEST(StageCost, DataParallelReplicasAllReduceTheirGradientsPerStep) {
  const Fixture f;
  const StageCost s = f.cost().EvaluateConfig(kFast, 1, 2, 2, 1, kOffloadNone, 1, NextLink::kNone);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.dp, 2);
  EXPECT_EQ(s.samples_per_replica, 1);
  EXPECT_EQ(s.memory.weights, 20'000'000u);  // each replica holds all of it
  EXPECT_EQ(s.memory.activations, 4'000'000u);
  EXPECT_NEAR(s.compute_s, 3 * 1e12 / 50e12, kTol);
  // 2e7 B of gradients in a ring of two over the island.
  EXPECT_NEAR(s.allreduce_s, 2e7 / 100e9 + 2 * 1e-6, kTol);
  EXPECT_NEAR(s.tail_s, s.allreduce_s, kTol);
}

TEST(StageCost, HierarchicalAllReduceAcrossNodes) {
  // Two nodes of two fast devices: a stage of 4 reduces inside each island, then over the NICs.
  const model::Cluster c = MakeCluster({{"fast"}}, {{"fast", 2}, {"fast", 2}});
  const model::Topology t(c);
  auto classes = BuildDeviceClasses(c, t, model::Precision::kFp16, {});
  ASSERT_TRUE(classes.ok());
  ASSERT_EQ(classes->size(), 1u);
  EXPECT_EQ((*classes)[0].groups.size(), 2u);
  const model::ModelSpec m = Tiny();
  const StageCostModel cost(m, *classes, {}, 4, false);
  const StageCost s = cost.EvaluateConfig(0, 1, 2, 4, 1, kOffloadNone, 1, NextLink::kNetwork);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.dp, 4);
  EXPECT_NEAR(s.allreduce_s, (2e7 / 100e9 + 2 * 1e-6) + (2e7 / 10e9 + 2 * 1e-6), kTol);
  // The stage spans two nodes: its output leaves on both NICs (4 samples x 1e6 B, both ways).
  EXPECT_NEAR(s.p2p_s, 2 * (1e-6 + 4e6 / 20e9), kTol);
  // More replicas than samples leave some idle: never a candidate.
  const StageCostModel small(m, *classes, {}, 2, false);
  EXPECT_FALSE(small.EvaluateConfig(0, 1, 2, 4, 1, kOffloadNone, 1, NextLink::kNone).feasible);
}

TEST(StageCost, MemoryLimitIsInclusive) {
  Fixture f;
  // Layers 1-2 with 2 micro-batches in flight need exactly 264e6 B (see OneDeviceTwoLayersByHand).
  f.classes[kFast].memory_bytes = 264'000'000;
  EXPECT_TRUE(
      f.cost().EvaluateConfig(kFast, 1, 3, 1, 1, kOffloadNone, 2, NextLink::kNone).feasible);
  const StageCost three =
      f.cost().EvaluateConfig(kFast, 1, 3, 1, 1, kOffloadNone, 3, NextLink::kNone);
  EXPECT_FALSE(three.feasible);
  EXPECT_EQ(three.memory.total(), 276'000'000u);  // what it would need is still reported
  // Evaluate finds no configuration either (tp 1 is the only one on one device).
  EXPECT_FALSE(f.cost().Evaluate(kFast, 1, 3, 1, 3, NextLink::kNone, kInf).feasible);
}

TEST(StageCost, OptimizerOffloadByHand) {
  const Fixture f(2, true, model::Optimizer::kAdam, Servers());
  ASSERT_TRUE(f.cost().offload_allowed());
  const StageCost s =
      f.cost().EvaluateConfig(kFast, 1, 2, 1, 1, kOffloadOptimizer, 1, NextLink::kNone);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.memory.optimizer, 0u);
  EXPECT_EQ(s.host_bytes, 120'000'000u);  // 1e7 x 12 B on the servers
  // Per step: 1e7 x (2 + 2) B over min(10 GB/s node NIC, 20 GB/s pool) with 10 us, and the
  // CPUs read and write 1.2e8 B of optimizer state at 100 GB/s.
  const double tail = (1e-5 + 4e7 / 10e9) + 2 * 1.2e8 / 100e9;
  EXPECT_NEAR(s.tail_s, tail, kTol);
  EXPECT_NEAR(s.offload_s, tail, kTol);
  EXPECT_NEAR(s.latency_s, 3 * 2 * 1e12 / 50e12, kTol);  // nothing per micro-batch
}

TEST(StageCost, EmbeddingOffloadByHand) {
  const Fixture f(2, true, model::Optimizer::kAdam, Servers());
  const StageCost s =
      f.cost().EvaluateConfig(kFast, 0, 1, 1, 1, kOffloadEmbedding, 1, NextLink::kNone);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.memory.weights, 0u);
  EXPECT_EQ(s.host_bytes, 16'000'000u);  // 1e6 parameters x 16 B
  // Per micro-batch: 2 x 1e6 B of activations in, their gradients back.
  EXPECT_NEAR(s.offload_s, 2 * (1e-5 + 2e6 / 10e9), kTol);
  EXPECT_NEAR(s.latency_s, 3 * 2 * 1e9 / 50e12 + s.offload_s, kTol);
}

TEST(StageCost, ConfigsOfferOffloadOnlyWhereItCanApply) {
  StageCostModel::Config configs[StageCostModel::kMaxConfigs];
  const Fixture no_pool(2, true);  // offload asked for, but no CPU servers
  EXPECT_FALSE(no_pool.cost().offload_allowed());
  EXPECT_EQ(no_pool.cost().Configs(kFast, 1, 2, 2, NextLink::kNone, configs), 2);  // tp 1, 2

  const Fixture f(2, true, model::Optimizer::kAdam, Servers());
  // Layer 1 has no embedding: none and optimizer offload, each at tp 1 and 2.
  ASSERT_EQ(f.cost().Configs(kFast, 1, 2, 2, NextLink::kNone, configs), 4);
  EXPECT_EQ(configs[0].offload, kOffloadNone);
  EXPECT_EQ(configs[2].offload, kOffloadOptimizer);
  EXPECT_EQ(configs[3].tp, 2);
  // Layers 0-1 on one device: all four offload choices.
  EXPECT_EQ(f.cost().Configs(kFast, 0, 2, 1, NextLink::kNone, configs), 4);

  const Fixture inference(1, true, model::Optimizer::kNone, Servers());
  // No optimizer to offload; the embedding still may be.
  ASSERT_EQ(inference.cost().Configs(kFast, 0, 2, 1, NextLink::kNone, configs), 2);
  EXPECT_EQ(configs[1].offload, kOffloadEmbedding);
}

TEST(StageCost, PickPrefersNoOffloadWhenItFitsThenTheLeastLatencyPlusTail) {
  Fixture f(2, true, model::Optimizer::kAdam, Servers());
  f.classes[kFast].memory_bytes = 130;
  StageCostModel::Config c[4];
  c[0] = {1.0, 0.5, 100, 10, 0, 1, kOffloadNone};      // 1.5
  c[1] = {1.2, 0.0, 100, 10, 0, 2, kOffloadNone};      // 1.2: least latency + tail
  c[2] = {0.5, 0.0, 50, 10, 0, 1, kOffloadOptimizer};  // fastest, but offloads
  c[3] = {0.1, 0.0, 200, 10, 0, 1, kOffloadNone};      // too big below
  EXPECT_EQ(f.cost().Pick(kFast, c, 4, 2, kInf), 1);
  // A latency bound rules out configuration 1.
  EXPECT_EQ(f.cost().Pick(kFast, c, 4, 2, 1.1), 0);
  // Four micro-batches in flight (140 B): only the offloading one fits.
  EXPECT_EQ(f.cost().Pick(kFast, c, 4, 4, kInf), 2);
  EXPECT_EQ(f.cost().Pick(kFast, c, 4, 9, kInf), -1);
}

TEST(StageCost, EvaluatePicksTheConfigurationWithTheLeastLatencyPlusTail) {
  const Fixture f;
  // Layer 1 on both fast devices: tp 1 (dp 2) costs 0.06 + 2.02e-4 s with its all-reduce,
  // tp 2 costs 0.06 + 8.8e-5 s: tp 2 wins (the tail is counted in full, as Pick says).
  const StageCost s = f.cost().Evaluate(kFast, 1, 2, 2, 1, NextLink::kNone, kInf);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.tp, 2);
  EXPECT_NEAR(s.latency_s, 0.06 + 8.8e-5, kTol);
  // The latency bound is inclusive: at 0.06 s only tp 1 qualifies; below, nothing does.
  EXPECT_EQ(f.cost().Evaluate(kFast, 1, 2, 2, 1, NextLink::kNone, 0.06).tp, 1);
  EXPECT_FALSE(f.cost().Evaluate(kFast, 1, 2, 2, 1, NextLink::kNone, 0.059).feasible);
}

TEST(StageCost, InferenceRunsForwardOnlyAndHoldsOneMicroBatch) {
  const Fixture f(2, false, model::Optimizer::kNone);
  EXPECT_EQ(f.cost().InFlight(3), 1);
  const StageCost s =
      f.cost().EvaluateConfig(kFast, 1, 2, 2, 2, kOffloadNone, 1, NextLink::kNetwork);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.memory.gradients, 0u);
  EXPECT_EQ(s.memory.optimizer, 0u);
  EXPECT_NEAR(s.compute_s, 2 * 1e12 / 2 / 50e12, kTol);  // one pass
  // Half of the 4 all-reduces (the forward ones) and activations one way only.
  EXPECT_NEAR(s.tp_comm_s, 0.5 * (8e6 / 100e9 + 4 * 2 * 1e-6), kTol);
  EXPECT_NEAR(s.p2p_s, 1e-6 + 2e6 / 10e9, kTol);
}

TEST(StageCost, InFlightFollowsOneFOneB) {
  const Fixture f;  // 4 micro-batches
  EXPECT_EQ(f.cost().InFlight(1), 1);
  EXPECT_EQ(f.cost().InFlight(3), 3);
  EXPECT_EQ(f.cost().InFlight(6), 4);
}

TEST(PipelineStep, SumPlusBubblesOfTheSlowestStagePlusTheLargestTail) {
  // 0.6 + (4 - 1) x 0.3 + 0.05.
  EXPECT_NEAR(PipelineStepSeconds({0.1, 0.3, 0.2}, {0.05, 0.02, 0}, 4), 1.55, kTol);
  EXPECT_NEAR(PipelineStepSeconds({0.25}, {}, 1), 0.25, kTol);
}

TEST(MicroBatch, CandidatesArePowersOfTwoDividingTheBatch) {
  EXPECT_EQ(MicroBatchCandidates(24, 0), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(MicroBatchCandidates(1024, 0), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(MicroBatchCandidates(8, 3), (std::vector<int64_t>{3}));
}

}  // namespace
}  // namespace hetsched::plan
