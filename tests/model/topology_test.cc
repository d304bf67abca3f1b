#include "model/topology.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>

namespace hetsched::model {
namespace {

// Builds clusters by hand: racks, then nodes of `devices` devices each.
class ClusterBuilder {
 public:
  ClusterBuilder& AddRack(const std::string& name, double uplink, double latency) {
    Rack r;
    r.name = name;
    r.uplink_bandwidth = uplink;
    r.latency_s = latency;
    cluster_.racks.push_back(r);
    return *this;
  }
  // Adds a node with `devices` devices in rack `rack`; returns its id.
  NodeId AddNode(int rack, int devices, double nic_bw, double nic_lat) {
    NodeId id(static_cast<int32_t>(cluster_.nodes.size()));
    Node n;
    n.name = "n" + std::to_string(id.value());
    n.rack = RackId(rack);
    n.first_device = DeviceId(static_cast<int32_t>(cluster_.devices.size()));
    n.device_count = devices;
    n.host_bandwidth = 31.5e9;
    n.host_latency_s = 1e-6;
    n.nic_bandwidth = nic_bw;
    n.nic_latency_s = nic_lat;
    for (int i = 0; i < devices; ++i) {
      Device d;
      d.node = id;
      d.local_index = i;
      cluster_.devices.push_back(d);
    }
    cluster_.racks[rack].nodes.push_back(id);
    cluster_.nodes.push_back(n);
    return id;
  }
  void AddGroup(NodeId node, bool island, std::vector<int32_t> members, double bw, double lat) {
    Node& n = cluster_.nodes[node.value()];
    auto& groups = island ? n.islands : n.pcie_switches;
    DeviceGroup g;
    g.kind = island ? LinkKind::kNvlink : LinkKind::kPcie;
    g.members = members;
    g.bandwidth = bw;
    g.latency_s = lat;
    groups.push_back(g);
    for (int32_t m : members) {
      Device& d = cluster_.devices[n.first_device.value() + m];
      (island ? d.island : d.pcie_switch) = static_cast<int32_t>(groups.size()) - 1;
    }
  }
  Cluster& cluster() { return cluster_; }
  const Cluster& cluster() const { return cluster_; }

 private:
  Cluster cluster_;
};

constexpr uint64_t kGB = 1'000'000'000;

class TopologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    b_.AddRack("r0", 400e9 / 8, 0.5e-6).AddRack("r1", 100e9 / 8, 1e-6);
    b_.cluster().network_latency_s = 2e-6;
    n0_ = b_.AddNode(0, 8, 25e9, 1e-6);  // 200 Gb/s
    b_.AddGroup(n0_, true, {0, 1, 2, 3}, 300e9, 2e-6);
    b_.AddGroup(n0_, true, {4, 5}, 100e9, 3e-6);
    b_.AddGroup(n0_, false, {0, 1}, 31.5e9, 0.7e-6);  // also in island 0: the island wins
    b_.AddGroup(n0_, false, {5, 6}, 16e9, 0.8e-6);
    n1_ = b_.AddNode(0, 2, 12.5e9, 3e-6);  // 100 Gb/s, same rack
    n2_ = b_.AddNode(1, 2, 25e9, 1e-6);    // other rack, whose uplink is 100 Gb/s
    topo_ = std::make_unique<Topology>(b_.cluster());
  }
  DeviceId Dev(NodeId n, int i) const { return b_.cluster().device_of(n, i); }

  ClusterBuilder b_;
  NodeId n0_, n1_, n2_;
  std::unique_ptr<Topology> topo_;
};

TEST_F(TopologyTest, SameDeviceMovesNothing) {
  Path p = topo_->Between(Dev(n0_, 3), Dev(n0_, 3));
  EXPECT_EQ(p.distance, Distance::kSameDevice);
  EXPECT_EQ(p.bandwidth, std::numeric_limits<double>::infinity());
  EXPECT_EQ(p.TransferSeconds(10 * kGB), 0);
}

TEST_F(TopologyTest, Island) {
  Path p = topo_->Between(Dev(n0_, 0), Dev(n0_, 3));
  EXPECT_EQ(p.distance, Distance::kIsland);
  EXPECT_DOUBLE_EQ(p.TransferSeconds(3 * kGB), 2e-6 + 0.01);
  // Devices 0 and 1 share both island 0 and switch 0: the island is the faster path.
  EXPECT_EQ(topo_->DistanceBetween(Dev(n0_, 0), Dev(n0_, 1)), Distance::kIsland);
  EXPECT_DOUBLE_EQ(topo_->TransferSeconds(Dev(n0_, 4), Dev(n0_, 5), kGB), 3e-6 + 0.01);
}

TEST_F(TopologyTest, PcieSwitch) {
  Path p = topo_->Between(Dev(n0_, 6), Dev(n0_, 5));
  EXPECT_EQ(p.distance, Distance::kPcieSwitch);
  EXPECT_DOUBLE_EQ(p.TransferSeconds(16 * kGB), 0.8e-6 + 1.0);
}

TEST_F(TopologyTest, SameNodeThroughHost) {
  Path p = topo_->Between(Dev(n0_, 3), Dev(n0_, 4));  // different islands
  EXPECT_EQ(p.distance, Distance::kNode);
  EXPECT_DOUBLE_EQ(p.TransferSeconds(63 * kGB), 1e-6 + 2.0);
  EXPECT_EQ(topo_->DistanceBetween(Dev(n0_, 7), Dev(n0_, 0)), Distance::kNode);
}

TEST_F(TopologyTest, SameRackBottleneckIsTheSlowerNic) {
  Path p = topo_->Between(Dev(n0_, 0), Dev(n1_, 1));
  EXPECT_EQ(p.distance, Distance::kRack);
  EXPECT_DOUBLE_EQ(p.bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(p.latency_s, 1e-6 + 0.5e-6 + 3e-6);
  EXPECT_DOUBLE_EQ(p.TransferSeconds(25 * kGB), 4.5e-6 + 2.0);
  // Symmetric.
  EXPECT_DOUBLE_EQ(topo_->TransferSeconds(Dev(n1_, 1), Dev(n0_, 0), 25 * kGB), 4.5e-6 + 2.0);
}

TEST_F(TopologyTest, OtherRackBottleneckIncludesUplinks) {
  Path p = topo_->Between(Dev(n0_, 2), Dev(n2_, 0));
  EXPECT_EQ(p.distance, Distance::kNetwork);
  EXPECT_DOUBLE_EQ(p.bandwidth, 12.5e9);  // rack r1's uplink, below both NICs (25 GB/s)
  EXPECT_DOUBLE_EQ(p.latency_s, 1e-6 + 0.5e-6 + 2e-6 + 1e-6 + 1e-6);
  EXPECT_DOUBLE_EQ(p.TransferSeconds(50 * kGB), 5.5e-6 + 4.0);
}

TEST_F(TopologyTest, BetweenNodes) {
  EXPECT_EQ(topo_->BetweenNodes(n1_, n1_).distance, Distance::kSameDevice);
  EXPECT_EQ(topo_->BetweenNodes(n1_, n1_).TransferSeconds(kGB), 0);
  Path rack = topo_->BetweenNodes(n0_, n1_);
  EXPECT_EQ(rack.distance, Distance::kRack);
  EXPECT_DOUBLE_EQ(rack.TransferSeconds(kGB), 4.5e-6 + 0.08);
  Path net = topo_->BetweenNodes(n2_, n1_);
  EXPECT_EQ(net.distance, Distance::kNetwork);
  EXPECT_DOUBLE_EQ(net.latency_s, 1e-6 + 1e-6 + 2e-6 + 0.5e-6 + 3e-6);
  EXPECT_DOUBLE_EQ(net.bandwidth, 12.5e9);
}

TEST(TopologyNamesTest, DistancesAreOrderedAndNamed) {
  EXPECT_LT(Distance::kSameDevice, Distance::kIsland);
  EXPECT_LT(Distance::kIsland, Distance::kPcieSwitch);
  EXPECT_LT(Distance::kPcieSwitch, Distance::kNode);
  EXPECT_LT(Distance::kNode, Distance::kRack);
  EXPECT_LT(Distance::kRack, Distance::kNetwork);
  EXPECT_EQ(DistanceName(Distance::kIsland), "island");
  EXPECT_EQ(DistanceName(Distance::kNetwork), "network");
}

}  // namespace
}  // namespace hetsched::model
