// Where replicas go and which go (sched/replica_placement.h): the shapes a service may use
// (stacks, memory, the SLO), best-fit placement on nodes, and the drains and starts toward a
// plan's counts.
#include "sched/replica_placement.h"

#include <gtest/gtest.h>

#include "model/io/cluster_reader.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

model::Cluster Shorthand(const std::string& spec) {
  auto c = model::io::ParseClusterShorthand(spec);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

model::Job Service(const std::vector<std::string>& stacks) {
  model::Job job;
  job.name = "chat";
  job.kind = model::JobKind::kService;
  for (const std::string& s : stacks) job.stacks.push_back(*model::ParseStackRequirement(s));
  return job;
}

ReplicaSizing Sizing(const std::string& model) {
  ReplicaSizing sizing;
  sizing.served = *cost::ServedPreset(model);
  sizing.slo = {2, 0.1, 99};
  sizing.mean_input = 1000;
  sizing.mean_output = 100;
  return sizing;
}

const cost::ServingCalibrations kRoofline = cost::MakeCalibrations({});

std::vector<std::string> TypeNames(const model::Cluster& c, const std::vector<ServiceShape>& s) {
  std::vector<std::string> names;
  for (const ServiceShape& sh : s) names.push_back(c.catalog.Get(sh.type).name);
  return names;
}

TEST(ChooseServiceShapes, OnlyTypesWhoseStacksRunTheService) {
  const model::Cluster c = Shorthand("a100-80g=4:per_node=4,mi250x=4:per_node=4");
  auto rocm = ChooseServiceShapes(c, Service({"rocm>=6.0"}), Sizing("llama-7b"), kRoofline, {});
  ASSERT_TRUE(rocm.ok()) << rocm.status().ToString();
  EXPECT_EQ(TypeNames(c, *rocm), std::vector<std::string>{"mi250x"});
  auto both = ChooseServiceShapes(c, Service({"cuda>=12.0", "rocm>=6.0"}), Sizing("llama-7b"),
                                  kRoofline, {});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(TypeNames(c, *both), (std::vector<std::string>{"a100-80g", "mi250x"}));
  auto none = ChooseServiceShapes(c, Service({"cann"}), Sizing("llama-7b"), kRoofline, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "its stacks match no device type of the cluster");
}

TEST(ChooseServiceShapes, LeavesOutTypesTheWeightsDoNotFitAndSaysWhy) {
  // Llama 2 70B's 138 GB of weights: four 16 GB T4s cannot hold them, one 80 GB A100 neither.
  const model::Cluster c = Shorthand("a100-80g=8:per_node=8,t4=4:per_node=4");
  auto shapes = ChooseServiceShapes(c, Service({"cuda>=12.0"}), Sizing("llama-70b"), kRoofline, {});
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  ASSERT_EQ(TypeNames(c, *shapes), std::vector<std::string>{"a100-80g"});
  EXPECT_GE((*shapes)[0].tp, 2);
  const model::Cluster t4_only = Shorthand("t4=4:per_node=4");
  auto miss =
      ChooseServiceShapes(t4_only, Service({"cuda>=12.0"}), Sizing("llama-70b"), kRoofline, {});
  ASSERT_FALSE(miss.ok());
  EXPECT_NE(miss.status().message().find("no device type meets its SLO (TTFT 2 s, TPOT 0.1 s): "
                                         "t4 (tp 4): the weights (138 GB) do not fit"),
            std::string::npos)
      << miss.status().message();
}

TEST(ChooseServiceShapes, TheTpWithTheLeastCostPerRequestAndItsHourlyCost) {
  const model::Cluster c = Shorthand("a100-80g=8:per_node=8");
  const ReplicaSizing sizing = Sizing("llama-70b");
  const std::map<std::string, double> training_value = {{"a100-80g", 1}};
  const ReplicaPricing pricing{0.5, &training_value};
  auto shapes = ChooseServiceShapes(c, Service({"cuda>=12.0"}), sizing, kRoofline, pricing);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  ASSERT_EQ(shapes->size(), 1u);
  const ServiceShape& chosen = (*shapes)[0];
  const model::DeviceType& a100 = c.catalog.Get(chosen.type);
  // A device-hour: its price twice (once for the training it displaces), and its peak energy.
  const double device_hour = 2 * a100.price_per_hour + a100.peak_watts / 1000 * 0.5;
  EXPECT_DOUBLE_EQ(chosen.usd_per_hour, chosen.tp * device_hour);
  // No feasible degree serves a request/s for less.
  double chosen_rate = 0;
  for (const cost::ReplicaOption& o :
       cost::ReplicaOptions(sizing.served, a100, 8, chosen.link_bandwidth, kRoofline, sizing.slo,
                            sizing.mean_input, sizing.mean_output, sizing.long_input)) {
    if (o.tp == chosen.tp) chosen_rate = o.capacity.requests_per_s;
  }
  ASSERT_GT(chosen_rate, 0);
  for (const cost::ReplicaOption& o :
       cost::ReplicaOptions(sizing.served, a100, 8, chosen.link_bandwidth, kRoofline, sizing.slo,
                            sizing.mean_input, sizing.mean_output, sizing.long_input)) {
    if (!o.capacity.feasible) continue;
    EXPECT_GE(o.tp * device_hour / o.capacity.requests_per_s, chosen.usd_per_hour / chosen_rate)
        << "tp " << o.tp;
  }
}

TEST(StrongestShapes, KeepsTheTypeWithTheHighestFp16Peak) {
  const model::Cluster c = Shorthand("a100-80g=4:per_node=4,h100-80g=4:per_node=4");
  auto shapes = ChooseServiceShapes(c, Service({"cuda>=12.0"}), Sizing("llama-7b"), kRoofline, {});
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  ASSERT_EQ(shapes->size(), 2u);
  EXPECT_EQ(TypeNames(c, StrongestShapes(c.catalog, *shapes)),
            std::vector<std::string>{"h100-80g"});
}

// Three nodes of four "a" devices, then one of four "b".
model::Cluster Pools() { return testing::MakeCluster({{"a", "cuda", 3, 4}, {"b", "cuda", 1, 4}}); }

std::vector<int32_t> Ids(const std::vector<model::DeviceId>& devices) {
  std::vector<int32_t> ids;
  for (model::DeviceId d : devices) ids.push_back(d.value());
  return ids;
}

TEST(PlaceReplica, BestFitOnTheNodeWithTheFewestFreeDevicesThatHoldIt) {
  const model::Cluster c = Pools();
  const model::DeviceTypeId a = c.devices[0].type;
  const model::DeviceTypeId b = c.devices[12].type;
  // Free "a" devices: node 0 all four, node 1 three (1 held), node 2 two (8 and 10 held).
  std::vector<char> held(c.devices.size(), 0);
  held[5] = held[8] = held[10] = 1;
  EXPECT_EQ(Ids(PlaceReplica(c, held, a, 2)), (std::vector<int32_t>{9, 11}));
  EXPECT_EQ(Ids(PlaceReplica(c, held, a, 3)), (std::vector<int32_t>{4, 6, 7}));
  EXPECT_EQ(Ids(PlaceReplica(c, held, a, 4)), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(PlaceReplica(c, held, a, 5).empty());  // a replica stays within one node
  // Only devices of the replica's type: node 3's are "b".
  EXPECT_EQ(Ids(PlaceReplica(c, held, b, 4)), (std::vector<int32_t>{12, 13, 14, 15}));
  // Equally tight nodes: the first.
  held.assign(c.devices.size(), 0);
  held[0] = held[4] = 1;
  EXPECT_EQ(Ids(PlaceReplica(c, held, a, 3)), (std::vector<int32_t>{1, 2, 3}));
}

TEST(ChangesToward, DrainsTheLeastLoadedAndStartsTheWidestFirst) {
  // Service 0: shape 0 (tp 1) has three replicas, the plan keeps one; shape 1 (tp 4) has none,
  // the plan wants one. Service 1: shape 0 (tp 2) has one, the plan wants three.
  const std::vector<std::vector<ShapeReplicas>> live = {
      {{1, {{10, 5}, {11, 0}, {12, 2}}}, {4, {}}},
      {{2, {{20, 7}}}},
  };
  const ReplicaChanges changes = ChangesToward(live, {{1, 1}, {3}});
  ASSERT_EQ(changes.drain.size(), 2u);
  EXPECT_EQ(changes.drain[0], (std::vector<int32_t>{11, 12}));  // 0 and 2 outstanding; 5 stays
  EXPECT_TRUE(changes.drain[1].empty());
  const std::vector<std::pair<int32_t, int32_t>> starts = {{0, 1}, {1, 0}, {1, 0}};
  EXPECT_EQ(changes.start, starts);
  // Counts already at the plan's: nothing moves.
  const ReplicaChanges none = ChangesToward(live, {{3, 0}, {1}});
  EXPECT_TRUE(none.drain[0].empty() && none.drain[1].empty() && none.start.empty());
}

}  // namespace
}  // namespace hetsched::sched
