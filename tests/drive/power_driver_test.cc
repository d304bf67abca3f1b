// The rules of drive::PowerDriver, one test each, through a real scheduler and power controller
// (idle-timeout), a backend that records the switches it is asked for, and effects that record
// what they are told.
#include "drive/power_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/test_cluster.h"

namespace hetsched::drive {
namespace {

using power::NodeState;

class SwitchingBackend final : public exec::Backend {
 public:
  // "off gpu-n0" / "on gpu-n0", and whether the scheduler still served the node at the call.
  std::vector<std::string> switches;
  std::vector<bool> in_service_at_switch;
  const sched::Scheduler* sched = nullptr;
  const model::Cluster* cluster = nullptr;
  util::Status status = util::Status::Ok();

  std::string name() const override { return "switching"; }
  util::Status Start(const exec::LaunchSpec&) override { return util::Status::Ok(); }
  util::Status Stop(const std::string&, int64_t, double) override { return util::Status::Ok(); }
  util::Status SetNodePower(const std::string& node, bool on) override {
    switches.push_back(std::string(on ? "on " : "off ") + node);
    in_service_at_switch.push_back(sched->state().NodeOn(*cluster->FindNode(node)));
    return status;
  }
  std::vector<exec::BackendNode> ListNodes() override { return {}; }
  std::vector<exec::BackendJob> ListJobs() override { return {}; }
  std::vector<exec::BackendEvent> Poll() override { return {}; }
};

class RecordingPowerEffects final : public PowerEffects {
 public:
  std::vector<std::string> log;  // what happened, in order
  std::vector<PowerTimer> timers;

  void RecordPower(const power::PowerCommands& c, double) override {
    log.push_back("record " + std::to_string(c.suspend.size()) + " suspends " +
                  std::to_string(c.resume.size()) + " resumes");
  }
  void PowerTimerArmed(const PowerTimer& timer) override { timers.push_back(timer); }
  void NodePowerChanged(int32_t node, NodeChange change, double) override {
    static const char* const kNames[] = {"suspending", "booting", "off", "up", "down"};
    log.push_back(std::string(kNames[static_cast<int>(change)]) + " " + std::to_string(node));
  }
  void PowerSwitchFailed(int32_t node, bool on, const util::Status&) override {
    log.push_back(std::string(on ? "resume failed " : "suspend failed ") + std::to_string(node));
  }
};

class PowerDriverTest : public ::testing::Test {
 protected:
  // Two nodes of one device each (180 s boot, 60 s shutdown); idle-timeout after 300 s.
  void SetUp() override { Build({}); }
  void Build(PowerRules rules) {
    cluster_ = testing::MakePowerCluster(2, 1);
    auto created = sched::Scheduler::Create(cluster_, nullptr, "fifo");
    ASSERT_TRUE(created.ok());
    sched_ = std::move(*created);
    power::PowerOptions o;
    o.policy = "idle-timeout";
    o.suspend_time_s = 300;
    o.suspend_timeout_s = 0;
    o.resume_timeout_s = 600;
    auto controller = power::PowerController::Create(cluster_, o);
    ASSERT_TRUE(controller.ok()) << controller.status().ToString();
    controller_ = std::make_unique<power::PowerController>(std::move(*controller));
    backend_ = SwitchingBackend();
    backend_.sched = sched_.get();
    backend_.cluster = &cluster_;
    effects_ = RecordingPowerEffects();
    driver_ =
        std::make_unique<PowerDriver>(cluster_, *sched_, backend_, *controller_, effects_, rules);
  }
  // Both nodes suspended at 300 s; with `report_is_off` the backend's down reports end them.
  void SuspendBoth() {
    driver_->Decide(0);
    ASSERT_EQ(driver_->next_check_s(), 300);
    driver_->Decide(300);
    ASSERT_EQ(backend_.switches.size(), 2u);
  }
  void OffBoth() {
    SuspendBoth();
    driver_->Expire(360);
    ASSERT_EQ(State(0), NodeState::kOff);
    ASSERT_EQ(State(1), NodeState::kOff);
  }
  // A job for one device, queued: the demand that wakes a node.
  void Submit(double now_s) {
    const model::Job job = testing::MakeJob(next_id_++, now_s, 1000, {{"gpu", 1}}, 1);
    ASSERT_TRUE(sched_->Submit(job, now_s).accepted);
  }
  NodeState State(int32_t node) const { return controller_->node(node).state; }
  bool InService(int32_t node) const { return sched_->state().NodeOn(model::NodeId(node)); }
  bool Logged(const std::string& line) const {
    return std::find(effects_.log.begin(), effects_.log.end(), line) != effects_.log.end();
  }

  model::Cluster cluster_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<power::PowerController> controller_;
  SwitchingBackend backend_;
  RecordingPowerEffects effects_;
  std::unique_ptr<PowerDriver> driver_;
  int next_id_ = 0;
};

TEST_F(PowerDriverTest, IdleNodesAreRecordedTakenOutOfServiceThenSwitchedOff) {
  driver_->Decide(299);
  EXPECT_TRUE(backend_.switches.empty());
  EXPECT_EQ(driver_->next_check_s(), 300);  // the idle timeout, asked for by the controller
  driver_->Decide(300);
  EXPECT_EQ(backend_.switches, (std::vector<std::string>{"off gpu-n0", "off gpu-n1"}));
  EXPECT_EQ(backend_.in_service_at_switch, (std::vector<bool>{false, false}));
  ASSERT_GE(effects_.log.size(), 3u);
  EXPECT_EQ(effects_.log[0], "record 2 suspends 0 resumes");  // written ahead
  EXPECT_EQ(effects_.log[1], "suspending 0");
  EXPECT_EQ(State(0), NodeState::kSuspending);
  EXPECT_FALSE(InService(0));
}

TEST_F(PowerDriverTest, ASuspendIsDoneAtItsShutdownDeadlineWhateverTheBackendReports) {
  SuspendBoth();
  ASSERT_EQ(effects_.timers.size(), 2u);
  EXPECT_EQ(effects_.timers[0].kind, PowerTimerKind::kShutdown);
  EXPECT_EQ(driver_->next_timer_s(), 360);  // 300 s + the 60 s shutdown
  // Slurm reports the node down as its power-off begins: not off yet.
  EXPECT_EQ(driver_->Reported(0, false, 301), NodeReport::kNoChange);
  EXPECT_EQ(State(0), NodeState::kSuspending);
  EXPECT_FALSE(driver_->Expire(359));
  EXPECT_EQ(State(0), NodeState::kSuspending);
  EXPECT_FALSE(driver_->Expire(360));
  EXPECT_EQ(State(0), NodeState::kOff);
  EXPECT_EQ(State(1), NodeState::kOff);
  EXPECT_TRUE(Logged("off 0"));
  EXPECT_EQ(driver_->next_timer_s(), std::numeric_limits<double>::infinity());
}

TEST_F(PowerDriverTest, ABackendThatReportsSwitchesDoneEndsTheSuspendWithItsReport) {
  Build({.down_report_is_off = true});
  SuspendBoth();
  EXPECT_TRUE(effects_.timers.empty());  // no shutdown timer: the report ends it
  EXPECT_EQ(driver_->Reported(1, false, 360), NodeReport::kNoChange);
  EXPECT_EQ(State(1), NodeState::kOff);
  EXPECT_EQ(State(0), NodeState::kSuspending);
  EXPECT_TRUE(Logged("off 1"));
}

TEST_F(PowerDriverTest, DemandWakesAnOffNodeWhichServesAgainOnceReportedUp) {
  OffBoth();
  Submit(400);
  driver_->Decide(400);
  ASSERT_EQ(backend_.switches.size(), 3u);
  EXPECT_EQ(backend_.switches.back().substr(0, 3), "on ");
  const int32_t woken = backend_.switches.back() == "on gpu-n0" ? 0 : 1;
  EXPECT_EQ(State(woken), NodeState::kBooting);
  EXPECT_FALSE(InService(woken));  // not before it is up
  ASSERT_EQ(effects_.timers.back().kind, PowerTimerKind::kResumeTimeout);
  EXPECT_EQ(effects_.timers.back().due_s, 1000);  // 400 s + the 600 s resume timeout
  EXPECT_EQ(driver_->Reported(woken, true, 580), NodeReport::kBooted);
  EXPECT_EQ(State(woken), NodeState::kOnIdle);
  EXPECT_TRUE(InService(woken));
  EXPECT_TRUE(Logged("up " + std::to_string(woken)));
  EXPECT_EQ(sched_->Decide(580).placed.size(), 1u);
  // Its timer is gone with the boot.
  EXPECT_FALSE(driver_->Expire(1000));
  EXPECT_EQ(State(woken), NodeState::kOnIdle);
}

TEST_F(PowerDriverTest, ANodeNotUpByItsResumeTimeoutIsMarkedDownForGood) {
  OffBoth();
  Submit(400);
  driver_->Decide(400);
  const int32_t woken = backend_.switches.back() == "on gpu-n0" ? 0 : 1;
  EXPECT_EQ(driver_->next_timer_s(), 1000);
  // Down while booting: its resume timeout decides.
  EXPECT_EQ(driver_->Reported(woken, false, 500), NodeReport::kNoChange);
  EXPECT_FALSE(driver_->Expire(999));
  EXPECT_EQ(State(woken), NodeState::kBooting);
  EXPECT_TRUE(driver_->Expire(1000));
  EXPECT_EQ(State(woken), NodeState::kDown);
  EXPECT_TRUE(Logged("down " + std::to_string(woken)));
  EXPECT_EQ(controller_->boot_failures(), 1);
  // Up too late: held off, not used.
  EXPECT_EQ(driver_->Reported(woken, true, 1100), NodeReport::kUpWhileHeldOff);
  EXPECT_FALSE(InService(woken));
}

TEST_F(PowerDriverTest, TimersOfAnOlderSwitchChangeNothing) {
  OffBoth();
  Submit(400);
  driver_->Decide(400);
  const PowerTimer resume = effects_.timers.back();
  EXPECT_FALSE(driver_->OnTimer(resume.node, resume.attempt - 1, 1000));  // an older attempt
  EXPECT_EQ(State(resume.node), NodeState::kBooting);
  EXPECT_TRUE(driver_->OnTimer(resume.node, resume.attempt, 1000));
  EXPECT_EQ(State(resume.node), NodeState::kDown);
  EXPECT_FALSE(driver_->OnTimer(resume.node, resume.attempt, 1000));  // applied once
}

TEST_F(PowerDriverTest, ReportsAboutNodesThatAreOnAreTheDriversOwn) {
  EXPECT_EQ(driver_->Reported(0, false, 10), NodeReport::kNotPower);
  EXPECT_EQ(driver_->Reported(0, true, 20), NodeReport::kNotPower);
  EXPECT_EQ(State(0), NodeState::kOnIdle);
  EXPECT_TRUE(effects_.log.empty());
}

TEST_F(PowerDriverTest, ANodeFoundOffIsOutOfServiceAndSwitchedOffAgain) {
  EXPECT_TRUE(driver_->FoundOff(1, 5));
  EXPECT_EQ(State(1), NodeState::kOff);
  EXPECT_FALSE(InService(1));
  EXPECT_EQ(backend_.switches, (std::vector<std::string>{"off gpu-n1"}));
  EXPECT_FALSE(driver_->FoundOff(1, 6));  // not on and idle any more
  EXPECT_EQ(backend_.switches.size(), 1u);
}

TEST_F(PowerDriverTest, ASwitchTheBackendRefusesIsReportedAndTheTimersStillRun) {
  backend_.status = util::Status::Unavailable("scontrol: no route");
  SuspendBoth();
  EXPECT_TRUE(Logged("suspend failed 0"));
  EXPECT_TRUE(Logged("suspend failed 1"));
  driver_->Expire(360);
  EXPECT_EQ(State(0), NodeState::kOff);
}

}  // namespace
}  // namespace hetsched::drive
