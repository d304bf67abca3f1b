#include "k8s/replay.h"

#include <gtest/gtest.h>

#include "testing/build_paths.h"
#include "util/file.h"

namespace hetsched::svc::k8s {
namespace {

std::vector<Node> ExampleCluster() {
  auto text = util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/examples/k8s/mixed-cluster.json");
  EXPECT_TRUE(text.ok());
  auto list = ParseNodeList(text.ok() ? *text : "");
  EXPECT_TRUE(list.ok()) << list.status().message();
  return list.ok() ? list->items : std::vector<Node>{};
}

TEST(K8sReplay, TheExtenderAvoidsStartsThatFailAndEveryPodIsAccountedFor) {
  const std::vector<Node> nodes = ExampleCluster();
  ASSERT_EQ(nodes.size(), 38u);
  const auto pods = GeneratePods(150, 400, 7);
  ASSERT_EQ(pods.size(), 150u);
  ReplayOptions o;
  auto plain = Replay(nodes, pods, o);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  o.use_extender = true;
  auto extended = Replay(nodes, pods, o);
  ASSERT_TRUE(extended.ok()) << extended.status().message();
  // The cluster's older A100s run CUDA 11.4 and its T4s have 16 GB: kube-scheduler alone
  // places pods there that cannot start; the extender never does.
  EXPECT_GT(plain->failed_starts, 0);
  EXPECT_GT(plain->wasted_device_h, 0);
  EXPECT_EQ(extended->failed_starts, 0);
  EXPECT_EQ(extended->failed_jobs, 0);
  for (const ReplayResult* r : {&*plain, &*extended}) {
    EXPECT_EQ(r->completed + r->failed_jobs + r->never_placed, r->pods);
    EXPECT_GT(r->avg_jct_s, 0);
    EXPECT_GE(r->p99_jct_s, r->avg_jct_s);
    const double horizon = std::max(plain->makespan_s, extended->makespan_s);
    EXPECT_GT(r->EnergyKwh(horizon), r->idle_w * horizon / 3.6e6);
    EXPECT_GE(r->EmptyNodeHours(horizon), 0);
    EXPECT_LE(r->EmptyNodeHours(horizon), r->nodes * horizon / 3600);
  }
  // The same stream and seed give the same result.
  auto again = Replay(nodes, pods, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->avg_jct_s, extended->avg_jct_s);
  EXPECT_EQ(again->placed_by_type, extended->placed_by_type);
}

TEST(K8sReplay, AProductOfNoCatalogTypeStopsTheRunUntilTheMappingNamesIt) {
  std::vector<Node> nodes = ExampleCluster();
  nodes[0].labels["nvidia.com/gpu.product"] = "NVIDIA-B200";
  nodes[1].labels["nvidia.com/gpu.product"] = "NVIDIA-B200";
  ReplayOptions o;
  auto r = Replay(nodes, GeneratePods(5, 60, 1), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "the devices of nodes a100-00 ('NVIDIA-B200'), a100-01 ('NVIDIA-B200') map to no "
            "catalog type: map each product to a catalog type under kubernetes.device_types in "
            "the config ('NVIDIA-B200': TYPE; `hetsched catalog` lists the types)");
  o.extender.mapping.device_types["NVIDIA-B200"] = "h100-80g";
  r = Replay(nodes, GeneratePods(50, 60, 1), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->nodes, 38);
  EXPECT_TRUE(r->left_out.empty());
  EXPECT_GT(r->placed_by_type["h100-80g"], 0);
}

TEST(K8sReplay, NodesHetschedCannotDescribeOtherwiseAreLeftOutAndNamed) {
  std::vector<Node> nodes = ExampleCluster();
  nodes[0].labels.erase("nvidia.com/gpu.product");
  auto r = Replay(nodes, GeneratePods(20, 60, 1), ReplayOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->nodes, 37);
  ASSERT_EQ(r->left_out.size(), 1u);
  EXPECT_EQ(r->left_out[0].first, "a100-00");
  EXPECT_NE(r->left_out[0].second.find("no label says its model"), std::string::npos)
      << r->left_out[0].second;
}

TEST(K8sReplay, ANodeListWithNoNodeToPlaceOnIsRefused) {
  auto empty = Replay({}, GeneratePods(5, 60, 1), ReplayOptions{});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "the node list holds no nodes");
  std::vector<Node> nodes = ExampleCluster();
  for (Node& n : nodes) n.unschedulable = true;
  nodes[0].labels.erase("nvidia.com/gpu.product");
  auto cordoned = Replay(nodes, GeneratePods(5, 60, 1), ReplayOptions{});
  ASSERT_FALSE(cordoned.ok());
  EXPECT_EQ(cordoned.status().message(),
            "none of the 38 nodes can take a pod: 1 left out (hetsched cannot describe them), 37 "
            "cordoned or not ready");
}

}  // namespace
}  // namespace hetsched::svc::k8s
