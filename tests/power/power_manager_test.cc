#include "power/power_manager.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sched/test_cluster.h"

namespace hetsched::power {
namespace {

// `nodes` nodes of 2 devices of type 0, all idle since 0 and powered on.
PowerView IdleView(int nodes, double now_s) {
  PowerView v;
  v.now_s = now_s;
  v.warm_free = {2 * nodes};
  for (int i = 0; i < nodes; ++i) {
    NodeView n;
    n.state = NodeState::kOnIdle;
    n.devices = {{0, 2}};
    v.nodes.push_back(n);
  }
  return v;
}

PowerOptions Options(double suspend_time_s) {
  PowerOptions o;
  o.suspend_time_s = suspend_time_s;
  return o;
}

TEST(PowerManager, AlwaysOnDoesNothing) {
  PowerManager m(*ParsePowerPolicy("always-on"), Options(10));
  const PowerActions a = m.Decide(IdleView(3, 1000));
  EXPECT_TRUE(a.suspend.empty());
  EXPECT_TRUE(a.resume.empty());
  EXPECT_FALSE(std::isfinite(a.next_check_s));
}

TEST(PowerManager, IdleTimeoutSuspendsAtExactlySuspendTime) {
  PowerManager m(*ParsePowerPolicy("idle-timeout"), Options(600));
  PowerView v = IdleView(2, 599.5);
  v.nodes[1].idle_since_s = 100;
  PowerActions a = m.Decide(v);
  EXPECT_TRUE(a.suspend.empty());
  EXPECT_DOUBLE_EQ(a.next_check_s, 600);  // node 0 is due then
  v.now_s = 600;
  a = m.Decide(v);
  EXPECT_EQ(a.suspend, std::vector<int32_t>{0});
  EXPECT_DOUBLE_EQ(a.next_check_s, 700);  // node 1 next
}

TEST(PowerManager, RespectsExclusionsAndTheSuspendRate) {
  PowerOptions o = Options(60);
  o.suspend_rate = 2;
  PowerManager m(*ParsePowerPolicy("idle-timeout"), o);
  PowerView v = IdleView(4, 100);
  v.nodes[0].excluded = true;
  PowerActions a = m.Decide(v);
  EXPECT_EQ(a.suspend, (std::vector<int32_t>{1, 2}));  // two per minute
  EXPECT_DOUBLE_EQ(a.next_check_s, 160);
  v.nodes[1].state = v.nodes[2].state = NodeState::kSuspending;
  v.now_s = 130;
  EXPECT_TRUE(m.Decide(v).suspend.empty());
  v.now_s = 160;
  EXPECT_EQ(m.Decide(v).suspend, std::vector<int32_t>{3});
}

TEST(PowerManager, ResumesOffNodesForQueuedJobs) {
  PowerManager m(*ParsePowerPolicy("idle-timeout"), Options(600));
  PowerView v = IdleView(3, 100);
  for (auto& n : v.nodes) n.state = NodeState::kOff;
  v.warm_free = {0};
  v.demands = {Demand{3, {0}, {}}};  // 3 devices: two nodes
  PowerActions a = m.Decide(v);
  EXPECT_EQ(a.resume, (std::vector<int32_t>{0, 1}));
  // Once they boot, the same job needs no more.
  v.nodes[0].state = v.nodes[1].state = NodeState::kBooting;
  EXPECT_TRUE(m.Decide(v).resume.empty());
}

TEST(PowerManager, WaitsForSuspendTimeoutAndTheResumeRate) {
  PowerOptions o = Options(600);
  o.resume_rate = 1;
  PowerManager m(*ParsePowerPolicy("idle-timeout"), o);
  PowerView v = IdleView(2, 100);
  v.warm_free = {0};
  for (auto& n : v.nodes) {
    n.state = NodeState::kOff;
    n.resumable_at_s = 150;
  }
  v.demands = {Demand{1, {0}, {}}, Demand{2, {0}, {}}};
  PowerActions a = m.Decide(v);
  EXPECT_TRUE(a.resume.empty());
  EXPECT_TRUE(a.wake_blocked);
  EXPECT_DOUBLE_EQ(a.next_check_s, 150);
  v.now_s = 150;
  a = m.Decide(v);
  EXPECT_EQ(a.resume, std::vector<int32_t>{0});  // one per minute
  EXPECT_TRUE(a.wake_blocked);
  EXPECT_DOUBLE_EQ(a.next_check_s, 210);
}

TEST(PowerManager, WakesPinnedNodes) {
  PowerManager m(*ParsePowerPolicy("idle-timeout"), Options(600));
  PowerView v = IdleView(3, 100);
  v.nodes[2].state = NodeState::kOff;
  v.demands = {Demand{1, {}, {2}}};
  EXPECT_EQ(m.Decide(v).resume, std::vector<int32_t>{2});
}

TEST(PowerManager, ConsolidateKeepsHeadroomWarm) {
  PowerOptions o = Options(60);
  o.headroom = 3;
  PowerManager m(*ParsePowerPolicy("consolidate"), o);
  // Four idle nodes of 2 devices: keeping 3 free devices needs two nodes on.
  PowerView v = IdleView(4, 100);
  PowerActions a = m.Decide(v);
  EXPECT_EQ(a.suspend, (std::vector<int32_t>{0, 1}));
  // Later the two on nodes are busy: wake one off node ahead (3 free needed, 2 per node: two).
  PowerManager m2(*ParsePowerPolicy("consolidate"), o);
  v.nodes[0].state = v.nodes[1].state = NodeState::kOff;
  v.nodes[2].state = v.nodes[3].state = NodeState::kOnBusy;
  v.warm_free = {0};
  a = m2.Decide(v);
  EXPECT_EQ(a.resume, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(a.suspend.empty());
}

TEST(PowerManager, IdleTimeoutDoesNotSuspendWhatTheQueueNeeds) {
  PowerManager m(*ParsePowerPolicy("idle-timeout"), Options(60));
  PowerView v = IdleView(2, 100);
  v.demands = {Demand{3, {0}, {}}};  // needs both nodes' devices (waits on something else)
  EXPECT_TRUE(m.Decide(v).suspend.empty());
}

TEST(PowerOptions, PolicyNames) {
  EXPECT_TRUE(ParsePowerPolicy("consolidate+cap")->caps);
  EXPECT_TRUE(ParsePowerPolicy("consolidate+cap")->consolidate);
  EXPECT_FALSE(ParsePowerPolicy("cap")->suspends);
  auto bad = ParsePowerPolicy("sleepy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("known: always-on"), std::string::npos);
}

TEST(PowerOptions, ValidationNamesTheProblem) {
  auto c = testing::MakeCluster({{"gpu", "cuda", 2, 4}});
  for (auto& n : c.nodes) n.boot_s = 180;
  c.nodes[1].boot_s = 0;
  PowerOptions o;
  EXPECT_TRUE(ValidatePowerOptions(o, c).ok());  // always-on never boots anything
  o.policy = "idle-timeout";
  auto st = ValidatePowerOptions(o, c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'gpu-n1': boot_time 0"), std::string::npos) << st.message();
  o.exclude_nodes = {"gpu-n1"};
  EXPECT_TRUE(ValidatePowerOptions(o, c).ok());
  o.exclude_nodes = {"gpu-n7"};
  st = ValidatePowerOptions(o, c);
  EXPECT_NE(st.message().find("--exclude-nodes 'gpu-n7'"), std::string::npos) << st.message();
  c.nodes[1].boot_s = 180;
  o.exclude_nodes.clear();
  o.resume_timeout_s = 100;
  st = ValidatePowerOptions(o, c);
  EXPECT_NE(st.message().find("every resume would time out"), std::string::npos) << st.message();
  o.resume_timeout_s = 600;
  o.suspend_time_s = -1;
  EXPECT_NE(ValidatePowerOptions(o, c).message().find("--suspend-time -1"), std::string::npos);
  o.suspend_time_s = 600;
  c.nodes[0].base_watts = -5;
  EXPECT_NE(ValidatePowerOptions(o, c).message().find("node 'gpu-n0': base_power -5"),
            std::string::npos);
  c.nodes[0].base_watts = 500;
  model::DeviceType t = c.catalog.Get(model::DeviceTypeId(0));
  t.idle_watts = 400;  // above its 300 W peak
  c.catalog.Upsert(t);
  st = ValidatePowerOptions(o, c);
  EXPECT_NE(st.message().find("peak_watts 300 is below idle_watts 400"), std::string::npos)
      << st.message();
  t.idle_watts = -1;
  c.catalog.Upsert(t);
  EXPECT_NE(ValidatePowerOptions(o, c).message().find("expected watts >= 0"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::power
