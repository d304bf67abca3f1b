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

TEST(K8sReplay, NodesHetschedCannotDescribeAreRefused) {
  std::vector<Node> nodes = ExampleCluster();
  nodes[0].labels["nvidia.com/gpu.product"] = "NVIDIA-B200";
  auto r = Replay(nodes, GeneratePods(5, 60, 1), ReplayOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node a100-00: its device 'NVIDIA-B200' maps to no catalog"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace hetsched::svc::k8s
