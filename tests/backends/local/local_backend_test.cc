#include "backends/local/local_backend.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace hetsched::svc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

constexpr double kWaitS = 10;  // generous for sanitizer builds; passing runs take far less

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WaitForFile(const std::string& path, double timeout_s = kWaitS) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

class LocalBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hetsched_local_backend_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    state_ = dir_ + "/state";
  }

  // Kills whatever the test left running (job groups and monitors named by the pid records not
  // yet reported), then reaps the monitors this test started (children of this process,
  // reaped already where a backend reported their attempt) and fails the test if any of them
  // is still running.
  void TearDown() override {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(state_ + "/run", ec)) {
      if (entry.path().extension() != ".pid") continue;
      std::istringstream in(ReadText(entry.path().string()));
      std::string key;
      long value = 0;
      while (in >> key >> value) {
        if (key == "pgid" && value > 1) kill(static_cast<pid_t>(-value), SIGKILL);
        if (key == "monitor_pid" && value > 1) kill(static_cast<pid_t>(value), SIGKILL);
      }
    }
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    for (pid_t monitor : monitors_) {
      while (true) {
        const pid_t r = waitpid(monitor, nullptr, WNOHANG);
        if (r == monitor || (r < 0 && errno == ECHILD)) break;
        if (Clock::now() >= deadline) {
          ADD_FAILURE() << "monitor " << monitor << " is still running";
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    fs::remove_all(dir_, ec);
  }

  // Starts the attempt and notes its monitor's pid from the pid record, which exists once
  // Start returns.
  util::Status Start(LocalBackend& b, const LaunchSpec& spec) {
    util::Status st = b.Start(spec);
    if (st.ok()) {
      std::istringstream in(
          ReadText(fmt::format("{}/run/{}.{}.pid", state_, spec.job, spec.attempt)));
      std::string key, value;
      while (in >> key >> value) {
        if (key == "monitor_pid") monitors_.push_back(static_cast<pid_t>(std::stol(value)));
      }
    }
    return st;
  }

  std::unique_ptr<LocalBackend> NewBackend(const std::string& working_dir = "") {
    auto b = LocalBackend::Create({"host1", state_, working_dir});
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(b).value() : nullptr;
  }

  static LaunchSpec Spec(const std::string& job, int64_t attempt, const std::string& script) {
    LaunchSpec s;
    s.job = job;
    s.attempt = attempt;
    s.node = "host1";
    s.command = {"/bin/sh", "-c", script};
    return s;
  }

  // Polls until the attempt's kExited has arrived (every event is kept in events_, so an
  // earlier wait may have collected it) or time is up.
  std::optional<BackendEvent> WaitExit(LocalBackend& b, const std::string& job, int64_t attempt,
                                       double timeout_s = kWaitS) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      const int at = IndexOf(BackendEventKind::kExited, job, attempt);
      if (at >= 0) return events_[at];
      if (Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      for (BackendEvent& e : b.Poll()) events_.push_back(std::move(e));
    }
  }

  // Index in events_ of the first event of that kind for the attempt; -1 when none.
  int IndexOf(BackendEventKind kind, const std::string& job, int64_t attempt) const {
    for (size_t i = 0; i < events_.size(); ++i) {
      if (events_[i].kind == kind && events_[i].job == job && events_[i].attempt == attempt) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  std::string dir_;
  std::string state_;
  std::vector<BackendEvent> events_;
  std::vector<pid_t> monitors_;
};

TEST_F(LocalBackendTest, ReportsExitCodesInOrder) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->name(), "local");
  ASSERT_TRUE(Start(*b, Spec("ok", 1, "exit 0")).ok());
  ASSERT_TRUE(Start(*b, Spec("three", 1, "exit 3")).ok());
  auto ok = WaitExit(*b, "ok", 1);
  auto three = WaitExit(*b, "three", 1);
  ASSERT_TRUE(ok.has_value());
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(ok->exit_status, 0);
  EXPECT_EQ(three->exit_status, 3);
  EXPECT_FALSE(three->stopped);
  EXPECT_EQ(three->node, "host1");
  EXPECT_EQ(three->message, "exited with status 3");
  for (const char* job : {"ok", "three"}) {
    const int started = IndexOf(BackendEventKind::kStarted, job, 1);
    ASSERT_GE(started, 0) << job;
    EXPECT_LT(started, IndexOf(BackendEventKind::kExited, job, 1)) << job;
  }
  EXPECT_TRUE(b->ListJobs().empty());
  EXPECT_FALSE(fs::is_empty(state_ + "/run")) << "kept until the caller polls again";
  EXPECT_TRUE(b->Poll().empty());
  EXPECT_TRUE(fs::is_empty(state_ + "/run")) << "removed by the Poll after the report";
}

// A daemon killed after a Poll reported an exit but before it recorded it: the next backend on
// the folder reports the exit again, so the outcome is not lost (and the job not run twice).
TEST_F(LocalBackendTest, AnExitIsReportedAgainUntilTheNextPoll) {
  auto a = NewBackend();
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(Start(*a, Spec("once", 1, "exit 4")).ok());
  auto first = WaitExit(*a, "once", 1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->exit_status, 4);
  a.reset();
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  std::vector<BackendEvent> again = b->Poll();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].kind, BackendEventKind::kExited);
  EXPECT_EQ(again[0].exit_status, 4);
  EXPECT_TRUE(b->Poll().empty());
  EXPECT_TRUE(fs::is_empty(state_ + "/run"));
}

TEST_F(LocalBackendTest, ListsRunningAttempts) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(Start(*b, Spec("sleeper", 4, "sleep 30")).ok());
  auto jobs = b->ListJobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job, "sleeper");
  EXPECT_EQ(jobs[0].attempt, 4);
  EXPECT_EQ(jobs[0].node, "host1");
  const std::string record = ReadText(state_ + "/run/sleeper.4.pid");
  EXPECT_THAT(record, HasSubstr("\npgid "));
  EXPECT_THAT(record, HasSubstr("\nstart_time "));
  ASSERT_TRUE(b->Stop("sleeper", 4, 0).ok());
  ASSERT_TRUE(WaitExit(*b, "sleeper", 4).has_value());
}

TEST_F(LocalBackendTest, SetsDeviceVisibilityPerVendor) {
  setenv("HETSCHED_TEST_INHERITED", "yes", 1);
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("ROCR_VISIBLE_DEVICES");
  unsetenv("ASCEND_RT_VISIBLE_DEVICES");
  unsetenv("CUDA_DEVICE_ORDER");
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  struct Case {
    const char* vendor;
    std::vector<std::string> present;
    std::vector<std::string> absent;
  };
  const std::vector<Case> cases = {
      {"nvidia",
       {"CUDA_VISIBLE_DEVICES=1,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
       {"ROCR_VISIBLE_DEVICES="}},
      {"amd",
       {"ROCR_VISIBLE_DEVICES=1,3", "HIP_VISIBLE_DEVICES=0,1"},
       {"CUDA_VISIBLE_DEVICES=", "CUDA_DEVICE_ORDER="}},
      {"huawei", {"ASCEND_RT_VISIBLE_DEVICES=1,3"}, {"CUDA_VISIBLE_DEVICES="}},
      {"intel", {}, {"CUDA_VISIBLE_DEVICES=", "ROCR_VISIBLE_DEVICES=", "ASCEND_RT_VISIBLE"}},
  };
  int64_t attempt = 0;
  for (const Case& c : cases) {
    ++attempt;
    const std::string out = fmt::format("{}/env.{}", dir_, c.vendor);
    LaunchSpec s = Spec("envjob", attempt, "env > '" + out + "'");
    s.vendor = c.vendor;
    s.device_type = "v100";
    // Positions 5 and 7 of the node, devices 1 and 3 of their vendor (other devices come first).
    s.node_devices = {5, 7};
    s.visible_devices = {1, 3};
    s.env = {{"FOO", "bar baz"}, {"HETSCHED_DEVICES", "9"}};  // the backend's value wins
    ASSERT_TRUE(Start(*b, s).ok());
    auto e = WaitExit(*b, "envjob", attempt);
    ASSERT_TRUE(e.has_value());
    ASSERT_EQ(e->exit_status, 0);
    const std::string env = "\n" + ReadText(out);
    for (const std::string& line :
         {std::string("HETSCHED_JOB=envjob"), "HETSCHED_ATTEMPT=" + std::to_string(attempt),
          std::string("HETSCHED_NODE=host1"), std::string("HETSCHED_DEVICE_TYPE=v100"),
          std::string("HETSCHED_DEVICES=5,7"), std::string("FOO=bar baz"),
          std::string("HETSCHED_TEST_INHERITED=yes")}) {
      EXPECT_THAT(env, HasSubstr("\n" + line + "\n")) << c.vendor;
    }
    for (const std::string& line : c.present) {
      EXPECT_THAT(env, HasSubstr("\n" + line + "\n")) << c.vendor;
    }
    for (const std::string& prefix : c.absent) {
      EXPECT_THAT(env, ::testing::Not(HasSubstr("\n" + prefix))) << c.vendor;
    }
  }
  unsetenv("HETSCHED_TEST_INHERITED");
}

TEST_F(LocalBackendTest, LogGetsStdoutAndStderrAppended) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  const std::string log = b->LogPath("talker", 2);
  EXPECT_EQ(log, state_ + "/logs/talker.2.log");
  {
    std::ofstream earlier(log);
    earlier << "earlier line\n";
  }
  ASSERT_TRUE(Start(*b, Spec("talker", 2, "echo to-stdout; echo to-stderr >&2")).ok());
  ASSERT_TRUE(WaitExit(*b, "talker", 2).has_value());
  EXPECT_EQ(ReadText(log), "earlier line\nto-stdout\nto-stderr\n");
}

TEST_F(LocalBackendTest, RunsInTheWorkingDirectory) {
  const std::string wd = dir_ + "/wd";
  fs::create_directories(wd);
  auto b = NewBackend(wd);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(Start(*b, Spec("where", 1, "pwd > here")).ok());
  auto e = WaitExit(*b, "where", 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_status, 0);
  EXPECT_EQ(ReadText(wd + "/here"), fs::canonical(wd).string() + "\n");
}

TEST_F(LocalBackendTest, StopLetsAJobThatHandlesTermExitCleanly) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  const std::string ready = dir_ + "/ready";
  ASSERT_TRUE(Start(*b, Spec("polite", 1,
                             "trap 'echo checkpointed; exit 0' TERM; touch '" + ready +
                                 "'; while :; do sleep 0.05; done"))
                  .ok());
  ASSERT_TRUE(WaitForFile(ready));
  ASSERT_TRUE(b->Stop("polite", 1, 5).ok());
  auto e = WaitExit(*b, "polite", 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_status, 0);
  EXPECT_TRUE(e->stopped);
  EXPECT_THAT(ReadText(b->LogPath("polite", 1)), HasSubstr("checkpointed"));
}

TEST_F(LocalBackendTest, StopKillsAJobThatIgnoresTermAfterTheGrace) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  const std::string ready = dir_ + "/ready";
  ASSERT_TRUE(Start(*b, Spec("stubborn", 1, "trap '' TERM; touch '" + ready + "'; sleep 30")).ok());
  ASSERT_TRUE(WaitForFile(ready));
  const auto stopped_at = Clock::now();
  ASSERT_TRUE(b->Stop("stubborn", 1, 0.3).ok());
  auto e = WaitExit(*b, "stubborn", 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_GE(Clock::now() - stopped_at, std::chrono::milliseconds(300));
  EXPECT_EQ(e->exit_status, 128 + SIGKILL);
  EXPECT_TRUE(e->stopped);
  EXPECT_EQ(e->message, "killed by signal 9");
}

TEST_F(LocalBackendTest, StopRightAfterStartIsNotLost) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(Start(*b, Spec("early", 1, "sleep 30")).ok());
  ASSERT_TRUE(b->Stop("early", 1, 5).ok());
  auto e = WaitExit(*b, "early", 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_status, 128 + SIGTERM);
  EXPECT_TRUE(e->stopped);
}

TEST_F(LocalBackendTest, StopOfUnknownOrEndedAttemptsIsANoOp) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->Stop("nobody", 1, 1).ok());
  ASSERT_TRUE(Start(*b, Spec("quick", 1, "exit 0")).ok());
  ASSERT_TRUE(WaitExit(*b, "quick", 1).has_value());
  EXPECT_TRUE(b->Stop("quick", 1, 1).ok());
  EXPECT_TRUE(b->Poll().empty());
}

TEST_F(LocalBackendTest, ProcessesLeftInTheGroupEndWithTheJob) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  const std::string child = dir_ + "/child";
  ASSERT_TRUE(Start(*b, Spec("forker", 1, "sleep 30 & echo $! > '" + child + "'; exit 0")).ok());
  auto e = WaitExit(*b, "forker", 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_status, 0);
  // Dead once gone or a zombie (whoever inherited it reaps it in its own time).
  const std::string stat = fmt::format("/proc/{}/stat", std::stol(ReadText(child)));
  auto running = [&] {
    const std::string text = ReadText(stat);
    return !text.empty() && text.substr(text.rfind(')') + 2, 1) != "Z";
  };
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (running() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(running()) << "the background sleep outlived its job";
}

TEST_F(LocalBackendTest, ExecFailureExits127AndSaysWhyInTheLog) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  LaunchSpec by_path = Spec("missing", 1, "");
  by_path.command = {"/nonexistent/hetsched-no-such-binary", "arg"};
  LaunchSpec by_name = Spec("missing", 2, "");
  by_name.command = {"hetsched-no-such-command"};
  for (const LaunchSpec& s : {by_path, by_name}) {
    ASSERT_TRUE(Start(*b, s).ok());
    auto e = WaitExit(*b, s.job, s.attempt);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->exit_status, 127);
    EXPECT_THAT(
        ReadText(b->LogPath(s.job, s.attempt)),
        HasSubstr("hetsched: cannot execute '" + s.command[0] + "': no such file or directory"));
  }
}

TEST_F(LocalBackendTest, RejectsBadRequests) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  auto code = [&](const LaunchSpec& s) { return b->Start(s).code(); };
  const auto kInvalid = util::StatusCode::kInvalidArgument;
  LaunchSpec s = Spec("job", 1, "exit 0");
  for (const char* bad : {"", ".hidden", "-x", "a/b", "a b", "../up"}) {
    s.job = bad;
    EXPECT_EQ(code(s), kInvalid) << bad;
  }
  s.job = std::string(129, 'a');
  EXPECT_EQ(code(s), kInvalid);
  s.job = std::string(128, 'a');
  s.command = {};
  EXPECT_EQ(code(s), kInvalid) << "empty command";
  s = Spec("job", -1, "exit 0");
  EXPECT_EQ(code(s), kInvalid) << "negative attempt";
  s = Spec("job", 1, "exit 0");
  s.node = "elsewhere";
  EXPECT_EQ(code(s), kInvalid);
  s = Spec("job", 1, "exit 0");
  s.node_devices = {0, -1};
  EXPECT_EQ(code(s), kInvalid);
  s = Spec("job", 1, "exit 0");
  s.vendor = "nvidia";
  s.node_devices = {0, 1};
  s.visible_devices = {0};
  EXPECT_EQ(code(s), kInvalid) << "a visible device number per device";
  s.visible_devices = {0, -1};
  EXPECT_EQ(code(s), kInvalid) << "negative visible device number";
  s = Spec("job", 1, "exit 0");
  s.env = {{"A=B", "c"}};
  EXPECT_EQ(code(s), kInvalid);
  EXPECT_TRUE(b->Poll().empty()) << "nothing was started";

  ASSERT_TRUE(Start(*b, Spec("twice", 1, "sleep 30")).ok());
  EXPECT_EQ(code(Spec("twice", 1, "exit 0")), kInvalid);
  ASSERT_TRUE(b->Stop("twice", 1, 0).ok());
  ASSERT_TRUE(WaitExit(*b, "twice", 1).has_value());

  EXPECT_EQ(LocalBackend::Create({"", state_, ""}).status().code(), kInvalid);
  EXPECT_EQ(LocalBackend::Create({"host1", "", ""}).status().code(), kInvalid);
}

TEST_F(LocalBackendTest, OffersOneNodeWhosePowerItCannotSwitch) {
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  auto nodes = b->ListNodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "host1");
  EXPECT_TRUE(nodes[0].up);
  util::Status off = b->SetNodePower("host1", false);
  EXPECT_EQ(off.code(), util::StatusCode::kInfeasible);
  EXPECT_THAT(off.message(), HasSubstr("cannot switch this machine's power"));
}

// The destructor leaves jobs running; a backend on the same directory adopts them.
TEST_F(LocalBackendTest, AdoptsARunningAttemptAfterARestart) {
  auto a = NewBackend();
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(Start(*a, Spec("survivor", 3, "sleep 1; exit 5")).ok());
  a.reset();
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  auto jobs = b->ListJobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job, "survivor");
  EXPECT_EQ(jobs[0].attempt, 3);
  auto e = WaitExit(*b, "survivor", 3);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_status, 5);
  EXPECT_FALSE(e->stopped);
  EXPECT_TRUE(b->ListJobs().empty());
}

TEST_F(LocalBackendTest, ReportsAnAttemptThatEndedWhileNoBackendWatched) {
  auto a = NewBackend();
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(Start(*a, Spec("brief", 1, "exit 7")).ok());
  ASSERT_TRUE(WaitForFile(state_ + "/run/brief.1.exit"));
  a.reset();
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->ListJobs().size(), 1u) << "listed until its kExited is handed out";
  std::vector<BackendEvent> events = b->Poll();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kExited);
  EXPECT_EQ(events[0].exit_status, 7);
  EXPECT_TRUE(b->ListJobs().empty());
  b->Poll();
  EXPECT_TRUE(fs::is_empty(state_ + "/run"));
}

TEST_F(LocalBackendTest, AStopSurvivesARestart) {
  auto a = NewBackend();
  ASSERT_NE(a, nullptr);
  const std::string ready = dir_ + "/ready";
  ASSERT_TRUE(Start(*a, Spec("deaf", 1, "trap '' TERM; touch '" + ready + "'; sleep 30")).ok());
  ASSERT_TRUE(WaitForFile(ready));
  ASSERT_TRUE(a->Stop("deaf", 1, 0.3).ok());
  a.reset();
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  auto e = WaitExit(*b, "deaf", 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_status, 128 + SIGKILL);
  EXPECT_TRUE(e->stopped);
}

TEST_F(LocalBackendTest, ReportsAnAttemptLostWithoutAnExitRecord) {
  // A pid that is certainly gone: a child that exited and was reaped.
  const pid_t gone = fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) _exit(0);
  ASSERT_EQ(waitpid(gone, nullptr, 0), gone);
  fs::create_directories(state_ + "/run");
  {
    std::ofstream record(state_ + "/run/vanished.2.pid");
    record << "job vanished\nattempt 2\npid " << gone << "\npgid " << gone
           << "\nstart_time 12345\nmonitor_pid " << gone << "\nmonitor_start_time 12345\n";
  }
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->ListJobs().size(), 1u);
  std::vector<BackendEvent> events = b->Poll();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, BackendEventKind::kExited);
  EXPECT_EQ(events[0].job, "vanished");
  EXPECT_EQ(events[0].attempt, 2);
  EXPECT_EQ(events[0].exit_status, -1);
  EXPECT_THAT(events[0].message, StartsWith("lost: "));
  b->Poll();
  EXPECT_FALSE(fs::exists(state_ + "/run/vanished.2.pid"));
}

TEST_F(LocalBackendTest, ARecordFromAnotherBootIsLost) {
  // A live process with its true start time would pass for the job; the boot id says that
  // whatever runs under those numbers now is not it.
  const pid_t live = fork();
  ASSERT_GE(live, 0);
  if (live == 0) {
    pause();
    _exit(0);
  }
  const std::string stat = ReadText(fmt::format("/proc/{}/stat", live));
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;  // fields 3..22; field 22 is the start time
  fs::create_directories(state_ + "/run");
  {
    std::ofstream record(state_ + "/run/old.1.pid");
    record << "boot_id 00000000-not-this-boot\njob old\nattempt 1\npid " << live << "\nstart_time "
           << field << "\nmonitor_pid " << live << "\nmonitor_start_time " << field << "\n";
  }
  auto b = NewBackend();
  ASSERT_NE(b, nullptr);
  std::vector<BackendEvent> events = b->Poll();
  kill(live, SIGKILL);
  waitpid(live, nullptr, 0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].exit_status, -1);
  EXPECT_THAT(events[0].message, StartsWith("lost: "));
}

}  // namespace
}  // namespace hetsched::svc
