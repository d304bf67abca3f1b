#include "power/node_power.h"

#include <gtest/gtest.h>

#include "power/energy_meter.h"

namespace hetsched::power {
namespace {

TEST(NodePower, FollowsTheSuspendResumeCycle) {
  NodePower p;
  EXPECT_TRUE(p.Enter(NodeState::kOnBusy, 10));
  EXPECT_FALSE(p.Enter(NodeState::kSuspending, 20));  // busy nodes are not suspended
  EXPECT_EQ(p.state, NodeState::kOnBusy);
  EXPECT_TRUE(p.Enter(NodeState::kOnIdle, 30));
  EXPECT_DOUBLE_EQ(p.idle_since_s, 30);
  EXPECT_TRUE(p.Enter(NodeState::kSuspending, 40));
  EXPECT_FALSE(p.Enter(NodeState::kBooting, 41));  // not before it is off
  EXPECT_TRUE(p.Enter(NodeState::kOff, 100));
  EXPECT_FALSE(p.Enter(NodeState::kOnIdle, 101));  // only through booting
  EXPECT_EQ(p.boot_attempt, 0u);
  EXPECT_TRUE(p.Enter(NodeState::kBooting, 200));
  EXPECT_EQ(p.boot_attempt, 1u);
  EXPECT_TRUE(p.Enter(NodeState::kOnIdle, 380));
  EXPECT_DOUBLE_EQ(p.since_s, 380);
  EXPECT_DOUBLE_EQ(p.idle_since_s, 380);
  // A boot that times out ends down, and down is final.
  NodePower q;
  q.state = NodeState::kBooting;
  EXPECT_TRUE(q.Enter(NodeState::kDown, 5));
  for (NodeState s : kAllNodeStates) EXPECT_FALSE(CanTransition(NodeState::kDown, s));
}

TEST(NodePower, DrawsPerState) {
  model::Node node;
  node.base_watts = 1000;
  node.boot_s = 180;
  node.shutdown_s = 60;
  model::DeviceType gpu;
  gpu.idle_watts = 50;
  gpu.peak_watts = 400;
  EXPECT_DOUBLE_EQ(NodePower::Duration(node, NodeState::kBooting), 180);
  EXPECT_DOUBLE_EQ(NodePower::Duration(node, NodeState::kSuspending), 60);
  EXPECT_DOUBLE_EQ(NodePower::Duration(node, NodeState::kOnIdle), 0);
  EXPECT_DOUBLE_EQ(BaseWatts(node, NodeState::kOnBusy, 0.005), 1000);
  EXPECT_DOUBLE_EQ(BaseWatts(node, NodeState::kBooting, 0.005), 1000);
  EXPECT_DOUBLE_EQ(BaseWatts(node, NodeState::kOff, 0.005), 5);
  EXPECT_DOUBLE_EQ(BaseWatts(node, NodeState::kDown, 0.01), 10);
  EXPECT_DOUBLE_EQ(DeviceWatts(gpu, NodeState::kOnBusy, true, 1), 400);
  EXPECT_DOUBLE_EQ(DeviceWatts(gpu, NodeState::kOnBusy, true, 0.75), 300);
  EXPECT_DOUBLE_EQ(DeviceWatts(gpu, NodeState::kOnBusy, true, 0.1), 50);  // never below idle
  EXPECT_DOUBLE_EQ(DeviceWatts(gpu, NodeState::kOnIdle, false, 1), 50);
  EXPECT_DOUBLE_EQ(DeviceWatts(gpu, NodeState::kSuspending, false, 1), 50);
  EXPECT_DOUBLE_EQ(DeviceWatts(gpu, NodeState::kOff, false, 1), 0);
}

TEST(EnergyMeter, IntegratesByStateTypeAndTariff) {
  auto tariff = Tariff::Parse("0-1:0.10,1-24:0.30");
  ASSERT_TRUE(tariff.ok());
  EnergyMeter m({"gpu"}, *tariff);
  m.Add(NodeState::kOnIdle, -1, 1000);
  m.Add(NodeState::kOnIdle, 0, 200);
  m.Advance(1800);  // 1.2 kW for half an hour: 0.6 kWh at 0.10
  m.Add(NodeState::kOnIdle, 0, -200);
  m.Add(NodeState::kOnIdle, -1, -1000);
  m.Add(NodeState::kOff, -1, 5);
  m.Advance(7200);  // 5 W for 1.5 h: 0.0025 kWh at 0.10, then 0.005 kWh at 0.30
  EXPECT_NEAR(m.kwh(), 0.6075, 1e-12);
  EXPECT_NEAR(m.cost(), 0.06 + 0.00025 + 0.0015, 1e-12);
  EXPECT_DOUBLE_EQ(m.peak_watts(), 1200);
  EXPECT_NEAR(m.KwhByState().at("on-idle"), 0.6, 1e-12);
  EXPECT_NEAR(m.KwhByState().at("off"), 0.0075, 1e-12);
  EXPECT_NEAR(m.KwhByType().at("gpu"), 0.1, 1e-12);
  EXPECT_NEAR(m.KwhByType().at(EnergyMeter::kBaseName), 0.5075, 1e-12);
}

}  // namespace
}  // namespace hetsched::power
