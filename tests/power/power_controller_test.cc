// PowerController driven by hand, without the simulator: the node state machine under
// Slurm-like timeouts and rates, the commands and deadlines it hands the driver, and the draw.
#include "power/power_controller.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sched/test_cluster.h"

namespace hetsched::power {
namespace {

// `nodes` nodes of 2 devices of type 0 (50 W idle, 300 W peak), 100 W base, 180 s boot and
// 60 s shutdown.
model::Cluster Nodes(int nodes) { return testing::MakePowerCluster(nodes, 2); }

PowerOptions Options(const std::string& policy, double suspend_time_s) {
  PowerOptions o;
  o.policy = policy;
  o.suspend_time_s = suspend_time_s;
  return o;
}

PowerController Make(const model::Cluster& c, const PowerOptions& o) {
  auto r = PowerController::Create(c, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

// What a driver would pass: every device usable, the free devices of nodes that are on (the
// `busy` ones excepted), and queued jobs of `gangs` devices of type 0.
DemandView View(const model::Cluster& c, const PowerController& p, int busy,
                std::vector<int32_t> gangs = {}) {
  DemandView v;
  v.warm_free = {-busy};
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    v.usable.push_back({{0, c.nodes[n].device_count}});
    if (IsOn(p.node(static_cast<int32_t>(n)).state)) v.warm_free[0] += c.nodes[n].device_count;
  }
  for (int32_t g : gangs) v.demands.push_back(Demand{g, {0}, {}});
  return v;
}

std::vector<model::DeviceId> DevicesOf(const model::Cluster& c, int node) {
  return {c.device_of(model::NodeId(node), 0), c.device_of(model::NodeId(node), 1)};
}

std::vector<int32_t> NodesOf(const std::vector<NodeCommand>& commands) {
  std::vector<int32_t> out;
  for (const NodeCommand& c : commands) out.push_back(c.node);
  return out;
}

TEST(PowerController, SuspendsAfterTheIdleTimeAndIsOffAfterItsShutdown) {
  const auto c = Nodes(2);
  PowerController p = Make(c, Options("idle-timeout", 300));
  p.SetBusy(DevicesOf(c, 0), true, 1, 0);
  EXPECT_EQ(p.node(0).state, NodeState::kOnBusy);
  PowerCommands a = p.Decide(View(c, p, 2), 0);
  EXPECT_TRUE(a.suspend.empty());
  EXPECT_DOUBLE_EQ(a.next_check_s, 300);  // node 1 is due then
  a = p.Decide(View(c, p, 2), 299.5);
  EXPECT_TRUE(a.suspend.empty());
  a = p.Decide(View(c, p, 2), 300);
  ASSERT_EQ(NodesOf(a.suspend), std::vector<int32_t>{1});
  EXPECT_DOUBLE_EQ(a.suspend[0].deadline_s, 360);  // its 60 s shutdown
  EXPECT_EQ(p.node(1).state, NodeState::kSuspending);
  // SuspendTimeout (120 s) is longer than the shutdown: no resume before 420.
  EXPECT_DOUBLE_EQ(p.node(1).resumable_at_s, 420);
  EXPECT_EQ(p.transitions(), 1);
  EXPECT_FALSE(p.OnSuspended(1, a.suspend[0].attempt + 1, 360));  // stale
  EXPECT_TRUE(p.OnSuspended(1, a.suspend[0].attempt, 360));
  EXPECT_EQ(p.node(1).state, NodeState::kOff);
  EXPECT_FALSE(p.OnSuspended(1, a.suspend[0].attempt, 361));  // already off
  // Node 0 busy (2 x 300 W + 100 W), node 1 in standby (0.5 % of 100 W).
  p.Advance(400);
  EXPECT_NEAR(p.meter().watts(), 700.5, 1e-9);
  // Booked: 0-360 both on (700 + 200 W), then 700.5 W.
  EXPECT_NEAR(p.meter().joules(), 900.0 * 360 + 700.5 * 40, 1e-6);
}

TEST(PowerController, TheIdleTimerStartsWhenTheLastDeviceIsFreed) {
  const auto c = Nodes(1);
  PowerController p = Make(c, Options("idle-timeout", 300));
  p.SetBusy(DevicesOf(c, 0), true, 1, 0);
  p.SetBusy({c.device_of(model::NodeId(0), 0)}, false, 1, 50);
  EXPECT_EQ(p.node(0).state, NodeState::kOnBusy);  // one device still works
  p.SetBusy({c.device_of(model::NodeId(0), 1)}, false, 1, 100);
  EXPECT_EQ(p.node(0).state, NodeState::kOnIdle);
  EXPECT_DOUBLE_EQ(p.Decide(View(c, p, 0), 100).next_check_s, 400);
  EXPECT_TRUE(p.Decide(View(c, p, 0), 399).suspend.empty());
  EXPECT_EQ(NodesOf(p.Decide(View(c, p, 0), 400).suspend), std::vector<int32_t>{0});
}

TEST(PowerController, WakesOffNodesForDemandAfterTheSuspendTimeout) {
  const auto c = Nodes(2);
  PowerController p = Make(c, Options("idle-timeout", 300));
  p.SetBusy(DevicesOf(c, 0), true, 1, 0);
  PowerCommands a = p.Decide(View(c, p, 2), 300);
  p.OnSuspended(1, a.suspend[0].attempt, 360);
  // A job of 2 devices arrives at 400: node 1 is needed but cannot be resumed before 420.
  a = p.Decide(View(c, p, 2, {2}), 400);
  EXPECT_TRUE(a.resume.empty());
  EXPECT_TRUE(p.CapacityPending());
  EXPECT_DOUBLE_EQ(a.next_check_s, 420);
  a = p.Decide(View(c, p, 2, {2}), 420);
  ASSERT_EQ(NodesOf(a.resume), std::vector<int32_t>{1});
  EXPECT_DOUBLE_EQ(a.resume[0].deadline_s, 420 + 600);  // ResumeTimeout
  EXPECT_EQ(p.node(1).state, NodeState::kBooting);
  EXPECT_TRUE(p.CapacityPending());
  EXPECT_EQ(p.transitions(), 2);
  // Booting counts as coming capacity: the same demand wakes nothing more.
  EXPECT_TRUE(p.Decide(View(c, p, 2, {2}), 430).resume.empty());
  EXPECT_TRUE(p.OnBooted(1, a.resume[0].attempt, 600));
  EXPECT_EQ(p.node(1).state, NodeState::kOnIdle);
  EXPECT_DOUBLE_EQ(p.node(1).idle_since_s, 600);
  EXPECT_FALSE(p.CapacityPending());
  EXPECT_FALSE(p.OnResumeTimeout(1, a.resume[0].attempt, 1020));  // it came up in time
  EXPECT_EQ(p.boot_failures(), 0);
}

TEST(PowerController, ANodeNotUpWithinTheResumeTimeoutIsMarkedDown) {
  const auto c = Nodes(2);
  PowerController p = Make(c, Options("idle-timeout", 300));
  p.SetBusy(DevicesOf(c, 0), true, 1, 0);
  PowerCommands a = p.Decide(View(c, p, 2), 300);
  p.OnSuspended(1, a.suspend[0].attempt, 360);
  a = p.Decide(View(c, p, 2, {2}), 420);
  ASSERT_EQ(a.resume.size(), 1u);
  const uint32_t attempt = a.resume[0].attempt;
  EXPECT_DOUBLE_EQ(a.resume[0].deadline_s, 1020);
  EXPECT_FALSE(p.OnResumeTimeout(1, attempt - 1, 1020));  // stale
  EXPECT_EQ(p.node(1).state, NodeState::kBooting);
  EXPECT_TRUE(p.OnResumeTimeout(1, attempt, 1020));
  EXPECT_EQ(p.node(1).state, NodeState::kDown);
  EXPECT_EQ(p.boot_failures(), 1);
  EXPECT_FALSE(p.CapacityPending());
  // A boot reported late changes nothing: down is final.
  EXPECT_FALSE(p.OnBooted(1, attempt, 1100));
  EXPECT_EQ(p.node(1).state, NodeState::kDown);
  // Down nodes draw standby power only and are never woken again.
  EXPECT_TRUE(p.Decide(View(c, p, 2, {2}), 1100).resume.empty());
  p.Advance(1200);
  EXPECT_NEAR(p.meter().watts(), 700.5, 1e-9);
}

TEST(PowerController, TheResumeTimeoutReportedPerNode) {
  const auto c = Nodes(2);
  PowerController p = Make(c, Options("idle-timeout", 300));
  p.SetBusy(DevicesOf(c, 0), true, 1, 0);
  PowerCommands a = p.Decide(View(c, p, 2), 300);
  p.OnSuspended(1, a.suspend[0].attempt, 360);
  a = p.Decide(View(c, p, 2, {2}), 420);
  EXPECT_FALSE(p.OnResumeTimeout(1, a.resume[0].attempt - 1, 1020));  // an older boot
  EXPECT_TRUE(p.OnResumeTimeout(1, a.resume[0].attempt, 1020));
  EXPECT_EQ(p.node(1).state, NodeState::kDown);
  EXPECT_EQ(p.boot_failures(), 1);
}

TEST(PowerController, SuspendsAtMostSuspendRatePerMinute) {
  const auto c = Nodes(3);
  PowerOptions o = Options("idle-timeout", 60);
  o.suspend_rate = 1;
  PowerController p = Make(c, o);
  PowerCommands a = p.Decide(View(c, p, 0), 60);
  EXPECT_EQ(NodesOf(a.suspend), std::vector<int32_t>{0});
  EXPECT_DOUBLE_EQ(a.next_check_s, 120);  // when the window lets the next one go
  EXPECT_TRUE(p.Decide(View(c, p, 0), 119).suspend.empty());
  EXPECT_EQ(NodesOf(p.Decide(View(c, p, 0), 120).suspend), std::vector<int32_t>{1});
  EXPECT_EQ(NodesOf(p.Decide(View(c, p, 0), 180).suspend), std::vector<int32_t>{2});
  EXPECT_EQ(p.transitions(), 3);
}

TEST(PowerController, ResumesAtMostResumeRatePerMinute) {
  const auto c = Nodes(3);
  PowerOptions o = Options("idle-timeout", 60);
  o.resume_rate = 2;
  PowerController p = Make(c, o);
  PowerCommands a = p.Decide(View(c, p, 0), 60);
  ASSERT_EQ(a.suspend.size(), 3u);
  for (const NodeCommand& s : a.suspend) p.OnSuspended(s.node, s.attempt, s.deadline_s);
  // Six devices wanted: all three nodes, two now and the third a minute later.
  a = p.Decide(View(c, p, 0, {6}), 200);
  EXPECT_EQ(NodesOf(a.resume), (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(p.CapacityPending());
  EXPECT_DOUBLE_EQ(a.next_check_s, 260);
  EXPECT_TRUE(p.Decide(View(c, p, 0, {6}), 259).resume.empty());
  EXPECT_EQ(NodesOf(p.Decide(View(c, p, 0, {6}), 260).resume), std::vector<int32_t>{2});
}

TEST(PowerController, NeverSuspendsExcludedNodes) {
  const auto c = Nodes(3);
  PowerOptions o = Options("idle-timeout", 60);
  o.exclude_nodes = {"gpu-n0", "gpu-n2"};
  PowerController p = Make(c, o);
  PowerCommands a = p.Decide(View(c, p, 0), 1000);
  EXPECT_EQ(NodesOf(a.suspend), std::vector<int32_t>{1});
  EXPECT_TRUE(p.Decide(View(c, p, 0), 5000).suspend.empty());
  EXPECT_EQ(p.node(0).state, NodeState::kOnIdle);
  EXPECT_EQ(p.node(2).state, NodeState::kOnIdle);
}

TEST(PowerController, AlwaysOnNeverCommandsAnything) {
  const auto c = Nodes(2);
  PowerController p = Make(c, Options("always-on", 60));
  EXPECT_FALSE(p.suspends());
  const PowerCommands a = p.Decide(View(c, p, 0, {8}), 10000);
  EXPECT_TRUE(a.suspend.empty());
  EXPECT_TRUE(a.resume.empty());
  EXPECT_FALSE(std::isfinite(a.next_check_s));
  EXPECT_EQ(p.node(1).state, NodeState::kOnIdle);
}

TEST(PowerController, CapsOnlyUnderACapPolicyAndBooksTheCappedDraw) {
  const auto c = Nodes(1);
  const model::DeviceTypeId gpu = c.devices[0].type;
  PowerController off = Make(c, Options("idle-timeout", 60));
  EXPECT_DOUBLE_EQ(off.CapFor(gpu, std::nullopt, 0, 100).cap, 1);
  PowerController p = Make(c, Options("cap", 60));
  EXPECT_TRUE(p.caps());
  const CapPoint cap = p.CapFor(gpu, std::nullopt, 0, 100);
  EXPECT_LT(cap.cap, 1);
  EXPECT_GE(cap.throughput, 0.95);  // --cap-max-slowdown 5 %
  // A deadline that needs full speed gets it.
  EXPECT_DOUBLE_EQ(p.CapFor(gpu, 100.0, 0, 100).cap, 1);
  p.SetBusy(DevicesOf(c, 0), true, cap.power, 0);
  EXPECT_NEAR(p.meter().watts(), 100 + 2 * std::max(50.0, 300 * cap.power), 1e-9);
}

TEST(PowerController, CreateChecksTheOptions) {
  const auto c = Nodes(1);
  auto bad = PowerController::Create(c, Options("sleepy", 60));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown power policy"), std::string::npos);
  PowerOptions o = Options("idle-timeout", 60);
  o.resume_timeout_s = 100;  // below the 180 s boot
  EXPECT_FALSE(PowerController::Create(c, o).ok());
}

}  // namespace
}  // namespace hetsched::power

namespace hetsched::power {
namespace {

// A daemon's controller starts at its own clock: idle timers and the meter start there.
TEST(PowerControllerStart, IdleTimeAndEnergyCountFromTheStartTime) {
  const model::Cluster c = Nodes(2);
  auto r = PowerController::Create(c, Options("idle-timeout", 600), 1e6);
  ASSERT_TRUE(r.ok());
  PowerController& p = *r;
  // Idle since 1e6, not since 0: nothing is due yet.
  EXPECT_TRUE(p.Decide(View(c, p, 0), 1e6 + 10).suspend.empty());
  p.Advance(1e6 + 10);
  // Two nodes at 100 W base + 2 x 50 W idle for 10 s.
  EXPECT_NEAR(p.meter().joules(), 2 * 200 * 10, 1e-6);
  EXPECT_EQ(p.Decide(View(c, p, 0), 1e6 + 600).suspend.size(), 2u);
}

// A node found off (after a daemon restart) is off at once, and woken like any off node.
TEST(PowerControllerStart, ANodeFoundOffIsOffAndCanBeResumed) {
  const model::Cluster c = Nodes(2);
  PowerController p = Make(c, Options("idle-timeout", 600));
  p.SetBusy(DevicesOf(c, 1), true, 1, 0);
  EXPECT_FALSE(p.AssumeOff(1, 0));  // busy: not idle
  ASSERT_TRUE(p.AssumeOff(0, 0));
  EXPECT_EQ(p.node(0).state, NodeState::kOff);
  EXPECT_FALSE(p.AssumeOff(0, 0));
  EXPECT_EQ(p.transitions(), 0);
  const PowerCommands cmd = p.Decide(View(c, p, 2, {2}), 1);
  ASSERT_EQ(cmd.resume.size(), 1u);
  EXPECT_EQ(cmd.resume[0].node, 0);
  EXPECT_TRUE(p.OnBooted(0, cmd.resume[0].attempt, 181));
  EXPECT_TRUE(IsOn(p.node(0).state));
}

}  // namespace
}  // namespace hetsched::power
