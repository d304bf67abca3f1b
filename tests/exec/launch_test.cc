#include "exec/launch.h"

#include <gtest/gtest.h>

#include "sched/test_cluster.h"

namespace hetsched::exec {
namespace {

TEST(SpecsPerNode, OneSpecPerNodeInNodeOrder) {
  const model::Cluster c = testing::MakeCluster({{"cu", "cuda", 2, 2}});
  const std::vector<LaunchSpec> specs =
      SpecsPerNode(c, {model::DeviceId(3), model::DeviceId(0), model::DeviceId(1)});
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].node, "cu-n0");
  EXPECT_EQ(specs[0].device_type, "cu");
  EXPECT_EQ(specs[0].vendor, "nvidia");
  EXPECT_EQ(specs[0].node_devices, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(specs[0].visible_devices, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(specs[1].node, "cu-n1");
  EXPECT_EQ(specs[1].node_devices, (std::vector<int32_t>{1}));
  EXPECT_EQ(specs[1].visible_devices, (std::vector<int32_t>{1}));
}

TEST(SpecsPerNode, DevicesAreNumberedAmongTheirVendorsOnTheNode) {
  // One node of [cu x2, ro x2]: the ROCm devices sit at positions 2 and 3 but are ROCm's
  // devices 0 and 1.
  model::Cluster c = testing::MakeCluster({{"cu", "cuda", 1, 2}, {"ro", "rocm", 1, 2}});
  for (int32_t i = 2; i < 4; ++i) {
    c.devices[i].node = model::NodeId(0);
    c.devices[i].local_index = i;
  }
  c.nodes[0].device_count = 4;
  c.nodes.pop_back();
  c.racks[0].nodes.pop_back();
  c.Reindex();
  const std::vector<LaunchSpec> specs = SpecsPerNode(c, {model::DeviceId(2), model::DeviceId(3)});
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].node, "cu-n0");
  EXPECT_EQ(specs[0].vendor, "amd");
  EXPECT_EQ(specs[0].node_devices, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(specs[0].visible_devices, (std::vector<int32_t>{0, 1}));
}

}  // namespace
}  // namespace hetsched::exec
