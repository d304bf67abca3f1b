#include "sim/sim_backend.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sched/test_cluster.h"
#include "sim/event_queue.h"

namespace hetsched::sim {
namespace {

using exec::BackendEvent;
using exec::BackendEventKind;
using testing::MakeCluster;
using testing::MakeJob;

// Two nodes of two "fast" (cuda) devices; job 0 runs cuda, job 1 only rocm.
class SimBackendTest : public ::testing::Test {
 protected:
  SimBackendTest() : cluster_(MakeCluster({{"fast", "cuda", 2, 2}})) {
    for (model::Node& n : cluster_.nodes) {
      n.shutdown_s = 10;
      n.boot_s = 60;
    }
    workload_.jobs = {MakeJob(0, 0, 100, {{"fast", 1.0}}),
                      MakeJob(1, 0, 100, {{"fast", 1.0}}, 1, "rocm")};
  }

  SimBackend& Backend(std::vector<std::string> boot_failures = {},
                      std::vector<SimBackendOptions::StartFailureWindow> start_failures = {}) {
    backend_.emplace(cluster_, workload_, queue_,
                     SimBackendOptions{.checkpoint_save_s = 30,
                                       .compat_startup_s = 120,
                                       .boot_failure_nodes = std::move(boot_failures),
                                       .start_failures = std::move(start_failures)});
    return *backend_;
  }

  static exec::LaunchSpec Spec(int32_t job, int64_t attempt, const std::string& node,
                               double startup_s, double modeled_s) {
    exec::LaunchSpec s;
    s.job = SimBackend::JobName(job);
    s.attempt = attempt;
    s.node = node;
    s.device_type = "fast";
    s.vendor = "nvidia";
    s.node_devices = s.visible_devices = {0};
    s.startup_s = startup_s;
    s.modeled_s = modeled_s;
    return s;
  }

  // Pops the next event, moves the clock there and hands it to the backend; what it reports.
  std::vector<BackendEvent> Step() {
    EXPECT_FALSE(queue_.empty());
    const Event e = queue_.Pop();
    now_ = e.time;
    backend_->AdvanceTo(ToSeconds(e.time));
    EXPECT_TRUE(backend_->Fire(e));
    return backend_->Poll();
  }

  model::Cluster cluster_;
  model::Workload workload_;
  EventQueue queue_;
  std::optional<SimBackend> backend_;
  Micros now_ = 0;
};

TEST_F(SimBackendTest, StartedAtOnceThenExitsAtTheModeledTime) {
  SimBackend& b = Backend();
  b.AdvanceTo(10);
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 5, 100)).ok());
  std::vector<BackendEvent> events = b.Poll();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kStarted);
  EXPECT_EQ(events[0].job, "0");
  EXPECT_EQ(events[0].attempt, 1);
  EXPECT_EQ(events[0].node, "fast-n0");
  ASSERT_EQ(b.ListJobs().size(), 1u);
  EXPECT_EQ(b.ListJobs()[0].node, "fast-n0");

  // Start-up (restore) plus the modeled work: 10 + 5 + 100.
  events = Step();
  EXPECT_EQ(now_, ToMicros(115));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kExited);
  EXPECT_EQ(events[0].exit_status, 0);
  EXPECT_FALSE(events[0].stopped);
  EXPECT_TRUE(b.ListJobs().empty());
  EXPECT_TRUE(queue_.empty());
}

TEST_F(SimBackendTest, StopExitsAfterTheCheckpointTime) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 1000)).ok());
  b.Poll();
  b.AdvanceTo(50);
  ASSERT_TRUE(b.Stop("0", 1, std::numeric_limits<double>::infinity()).ok());
  EXPECT_TRUE(b.Poll().empty());  // still writing its checkpoint

  std::vector<BackendEvent> events = Step();
  EXPECT_EQ(now_, ToMicros(80));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kExited);
  EXPECT_TRUE(events[0].stopped);
  EXPECT_EQ(events[0].exit_status, 0);
  // The end it had before the stop is stale.
  EXPECT_TRUE(Step().empty());
  EXPECT_TRUE(queue_.empty());
}

TEST_F(SimBackendTest, StopWithoutGraceKillsAtOnce) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 1000)).ok());
  b.Poll();
  ASSERT_TRUE(b.Stop("0", 1, 0).ok());
  const std::vector<BackendEvent> events = b.Poll();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kExited);
  EXPECT_TRUE(events[0].stopped);
  EXPECT_EQ(events[0].exit_status, 137);
  // Unknown and ended attempts are no error, and nothing follows.
  EXPECT_TRUE(b.Stop("0", 1, 0).ok());
  EXPECT_TRUE(b.Stop("0", 7, 0).ok());
  EXPECT_TRUE(b.Poll().empty());
}

TEST_F(SimBackendTest, AFaultCutsACheckpointShort) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 1000)).ok());
  b.Poll();
  ASSERT_TRUE(b.Stop("0", 1, std::numeric_limits<double>::infinity()).ok());
  ASSERT_TRUE(b.Stop("0", 1, 0).ok());  // a second stop with no grace: killed now
  const std::vector<BackendEvent> events = b.Poll();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].exit_status, 137);
  EXPECT_TRUE(Step().empty());  // the checkpoint's exit is stale
}

TEST_F(SimBackendTest, MoveEndReschedulesTheExit) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 1000)).ok());
  b.Poll();
  b.MoveEnd("0", 1, 40);
  std::vector<BackendEvent> events = Step();
  EXPECT_EQ(now_, ToMicros(40));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kExited);
  // Without an end (no progress) nothing is scheduled: the stale exit at 1000 is all.
  ASSERT_TRUE(b.Start(Spec(0, 2, "fast-n0", 0, 1000)).ok());
  b.MoveEnd("0", 2, std::numeric_limits<double>::infinity());
  b.Poll();
  EXPECT_TRUE(Step().empty());
  EXPECT_TRUE(Step().empty());
  EXPECT_TRUE(queue_.empty());
  EXPECT_EQ(b.ListJobs().size(), 1u);
}

TEST_F(SimBackendTest, AJobWithoutAStackForTheDeviceFailsAtStartUp) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.Start(Spec(1, 1, "fast-n1", 0, 100)).ok());
  EXPECT_TRUE(b.Poll().empty());  // never reported started
  const std::vector<BackendEvent> events = Step();
  EXPECT_EQ(now_, ToMicros(120));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kStartFailed);
  EXPECT_EQ(events[0].job, "1");
  EXPECT_NE(events[0].message.find("fast"), std::string::npos) << events[0].message;
  EXPECT_TRUE(b.ListJobs().empty());
}

// Fault::start_failure: starts on the node fail at once inside the window, and run after it.
TEST_F(SimBackendTest, AnInjectedStartFailureFailsStartsOnItsNodeDuringItsWindow) {
  SimBackend& b = Backend({}, {{"fast-n0", 10, 50}});
  b.AdvanceTo(20);
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 100)).ok());
  std::vector<BackendEvent> events = Step();
  EXPECT_EQ(now_, ToMicros(20));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kStartFailed);
  EXPECT_NE(events[0].message.find("injected"), std::string::npos) << events[0].message;
  b.AdvanceTo(50);
  ASSERT_TRUE(b.Start(Spec(0, 2, "fast-n0", 0, 100)).ok());
  events = b.Poll();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kStarted);
}

TEST_F(SimBackendTest, AGangAcrossNodesRunsAsOneAttempt) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 100)).ok());
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n1", 0, 100)).ok());
  EXPECT_EQ(b.Poll().size(), 2u);
  EXPECT_EQ(b.ListJobs().size(), 2u);
  EXPECT_EQ(queue_.size(), 1u);
  const std::vector<BackendEvent> events = Step();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].node, "fast-n0");
  EXPECT_EQ(events[1].node, "fast-n1");
  EXPECT_EQ(events[1].kind, BackendEventKind::kExited);
}

TEST_F(SimBackendTest, BadStartsAreRefused) {
  SimBackend& b = Backend();
  EXPECT_EQ(b.Start(Spec(7, 1, "fast-n0", 0, 1)).code(), util::StatusCode::kNotFound);
  EXPECT_EQ(b.Start(Spec(0, 1, "nowhere", 0, 1)).code(), util::StatusCode::kNotFound);
  ASSERT_TRUE(b.Start(Spec(0, 1, "fast-n0", 0, 1)).ok());
  EXPECT_EQ(b.Start(Spec(0, 2, "fast-n1", 0, 1)).code(), util::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.Start(Spec(0, 1, "fast-n0", 0, 1)).code(), util::StatusCode::kInvalidArgument);
}

TEST_F(SimBackendTest, NodesSwitchOffAndOnAfterTheirShutdownAndBootTimes) {
  SimBackend& b = Backend();
  ASSERT_TRUE(b.SetNodePower("fast-n0", false).ok());
  EXPECT_FALSE(b.ListNodes()[0].up);
  EXPECT_TRUE(b.ListNodes()[1].up);
  EXPECT_EQ(b.Start(Spec(0, 1, "fast-n0", 0, 1)).code(), util::StatusCode::kInfeasible);
  std::vector<BackendEvent> events = Step();
  EXPECT_EQ(now_, ToMicros(10));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kNodeDown);
  EXPECT_EQ(events[0].node, "fast-n0");

  b.AdvanceTo(20);
  ASSERT_TRUE(b.SetNodePower("fast-n0", true).ok());
  ASSERT_TRUE(b.SetNodePower("fast-n0", true).ok());  // booting already: no second boot
  EXPECT_EQ(queue_.size(), 1u);
  events = Step();
  EXPECT_EQ(now_, ToMicros(80));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kNodeUp);
  EXPECT_TRUE(b.ListNodes()[0].up);
  EXPECT_EQ(b.SetNodePower("nowhere", true).code(), util::StatusCode::kNotFound);
}

TEST_F(SimBackendTest, ANodeWithABootFailureNeverComesUp) {
  SimBackend& b = Backend({"fast-n1"});
  ASSERT_TRUE(b.SetNodePower("fast-n1", false).ok());
  EXPECT_EQ(Step()[0].kind, BackendEventKind::kNodeDown);
  ASSERT_TRUE(b.SetNodePower("fast-n1", true).ok());
  EXPECT_TRUE(queue_.empty());
  EXPECT_FALSE(b.ListNodes()[1].up);
}

}  // namespace
}  // namespace hetsched::sim
