// The rules of drive::Attempts, one test each, through a real scheduler, a backend that records
// what it is asked and reports what the test says, and effects that record what they are told.
#include "drive/attempts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/test_cluster.h"

namespace hetsched::drive {
namespace {

using exec::BackendEvent;
using exec::BackendEventKind;
using model::JobId;

class FakeBackend final : public exec::Backend {
 public:
  struct StopCall {
    std::string job;
    int64_t attempt;
    double grace_s;
  };
  std::vector<exec::LaunchSpec> starts;
  std::vector<StopCall> stops;
  std::vector<BackendEvent> pending;
  util::Status start_status = util::Status::Ok();

  void Report(BackendEventKind kind, const exec::LaunchSpec& part, int exit_status = 0,
              bool stopped = false) {
    BackendEvent ev;
    ev.kind = kind;
    ev.job = part.job;
    ev.attempt = part.attempt;
    ev.node = part.node;
    ev.exit_status = exit_status;
    ev.stopped = stopped;
    pending.push_back(ev);
  }

  std::string name() const override { return "fake"; }
  util::Status Start(const exec::LaunchSpec& spec) override {
    starts.push_back(spec);
    return start_status;
  }
  util::Status Stop(const std::string& job, int64_t attempt, double grace_s) override {
    stops.push_back({job, attempt, grace_s});
    return util::Status::Ok();
  }
  util::Status SetNodePower(const std::string&, bool) override { return util::Status::Ok(); }
  std::vector<exec::BackendNode> ListNodes() override { return {}; }
  std::vector<exec::BackendJob> ListJobs() override { return {}; }
  std::vector<BackendEvent> Poll() override { return std::exchange(pending, {}); }
};

class RecordingEffects final : public Effects {
 public:
  std::vector<std::string> log;  // what happened, in order
  std::string last_end_message;
  double kept = 0;
  util::Status record_status = util::Status::Ok();

  util::Status Record(const sched::Decision&, double) override { return record_status; }
  void Launching(const sched::Placement& p, std::vector<exec::LaunchSpec>& specs, double) override {
    log.push_back("launch " + std::to_string(p.job.value()) + " x" + std::to_string(specs.size()));
  }
  void Stopping(JobId job, double) override { log.push_back("stopping " + Id(job)); }
  void Running(JobId job, double) override { log.push_back("running " + Id(job)); }
  double WorkKept(JobId, double) override { return kept; }
  bool AttemptOver(JobId job, AttemptEnd end, const std::string&, double) override {
    log.push_back("over " + Id(job) + " " + std::to_string(static_cast<int>(end)));
    return true;
  }
  void Requeued(JobId job, AttemptEnd, const std::string&, double) override {
    log.push_back("requeued " + Id(job));
  }
  void Ended(JobId job, JobEnd end, std::optional<int>, const std::string& message,
             double) override {
    log.push_back("ended " + Id(job) + " " + std::to_string(static_cast<int>(end)));
    last_end_message = message;
  }
  bool OtherEvent(const BackendEvent&, double) override { return false; }
  void BackendFailed(JobId, const std::string&, const util::Status&) override {}
  std::optional<JobId> JobNamed(const std::string& name) const override {
    const auto it = named.find(name);
    return it == named.end() ? std::nullopt : std::optional<JobId>(it->second);
  }
  std::map<std::string, JobId> named;  // the driver's jobs by name

 private:
  static std::string Id(JobId job) { return std::to_string(job.value()); }
};

class AttemptsTest : public ::testing::Test {
 protected:
  // Two nodes of two `a` devices, one node of two `b` devices; `fifo-het`.
  void SetUp() override { Build({}); }
  void Build(Rules rules) {
    cluster_ = testing::MakeCluster({{"a", "cuda", 2, 2}, {"b", "cuda", 1, 2}});
    auto created = sched::Scheduler::Create(cluster_, nullptr, "fifo-het");
    ASSERT_TRUE(created.ok());
    sched_ = std::move(*created);
    backend_ = FakeBackend();
    effects_ = RecordingEffects();
    attempts_ = std::make_unique<Attempts>(cluster_, *sched_, backend_, effects_, rules);
  }
  JobId Submit(int gang, std::optional<double> time_limit_s = std::nullopt,
               std::vector<std::pair<std::string, double>> speeds = {{"a", 2}, {"b", 1}}) {
    model::Job job = testing::MakeJob(next_id_++, now_, 1000, speeds, gang);
    job.time_limit_s = time_limit_s;
    EXPECT_TRUE(sched_->Submit(job, now_).accepted);
    attempts_->Track(job.id, job.name, time_limit_s);
    effects_.named[job.name] = job.id;
    return job.id;
  }
  // Decides and carries the decision out; the starts it made.
  std::vector<exec::LaunchSpec> DecideAndApply() {
    const size_t before = backend_.starts.size();
    EXPECT_TRUE(attempts_->Apply(sched_->Decide(now_), now_));
    return {backend_.starts.begin() + static_cast<long>(before), backend_.starts.end()};
  }
  void StartAll(const std::vector<exec::LaunchSpec>& parts) {
    for (const auto& p : parts) backend_.Report(BackendEventKind::kStarted, p);
    attempts_->Poll(now_);
  }
  bool Logged(const std::string& line) const {
    return std::find(effects_.log.begin(), effects_.log.end(), line) != effects_.log.end();
  }

  model::Cluster cluster_;
  std::unique_ptr<sched::Scheduler> sched_;
  FakeBackend backend_;
  RecordingEffects effects_;
  std::unique_ptr<Attempts> attempts_;
  double now_ = 0;
  int next_id_ = 0;
};

TEST_F(AttemptsTest, AGangStartsAsOnePartPerNodeAndRunsOnceEveryPartStarted) {
  const JobId job = Submit(4);
  const auto parts = DecideAndApply();
  ASSERT_EQ(parts.size(), 2u);  // four `a` devices on two nodes
  EXPECT_EQ(parts[0].attempt, 1);
  EXPECT_EQ(parts[1].attempt, 1);
  EXPECT_NE(parts[0].node, parts[1].node);
  backend_.Report(BackendEventKind::kStarted, parts[0]);
  attempts_->Poll(now_);
  EXPECT_FALSE(attempts_->attempt(job)->running);
  backend_.Report(BackendEventKind::kStarted, parts[1]);
  attempts_->Poll(now_);
  EXPECT_TRUE(attempts_->attempt(job)->running);
  EXPECT_TRUE(Logged("running 0"));
}

// The driver's index of names (Effects::JobNamed) may map a name to a job the book tracks
// under another name (an index entry left behind, an id reused): such an event is not the job's.
TEST_F(AttemptsTest, AnEventIsAJobsOnlyUnderTheNameTheBookTracksItUnder) {
  const JobId job = Submit(1);
  const auto parts = DecideAndApply();
  ASSERT_EQ(parts.size(), 1u);
  effects_.named["gone"] = job;
  exec::LaunchSpec other = parts[0];
  other.job = "gone";
  backend_.Report(BackendEventKind::kStarted, other);
  attempts_->Poll(now_);
  EXPECT_FALSE(attempts_->attempt(job)->running) << "another name's event was applied to it";
  backend_.Report(BackendEventKind::kStarted, parts[0]);
  attempts_->Poll(now_);
  EXPECT_TRUE(attempts_->attempt(job)->running);
}

TEST_F(AttemptsTest, StartFailuresGiveUpATypeAfterTheLimitAndTheJobWhenNoTypeIsLeft) {
  Build({.start_failures_per_type = 2});
  const JobId job = Submit(2);
  for (const std::string type : {"a", "a", "b", "b"}) {
    const auto parts = DecideAndApply();
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(parts[0].device_type, type);
    backend_.Report(BackendEventKind::kStartFailed, parts[0]);
    EXPECT_TRUE(attempts_->Poll(now_));
  }
  EXPECT_TRUE(Logged("ended 0 1"));  // JobEnd::kFailed
  EXPECT_NE(effects_.last_end_message.find("2 failed starts on b"), std::string::npos)
      << effects_.last_end_message;
  EXPECT_EQ(sched_->record(job).phase, sched::JobPhase::kDone);
}

TEST_F(AttemptsTest, AStartTheBackendRefusesIsAStartFailure) {
  Build({.start_failures_per_type = 1});
  const JobId job = Submit(1, std::nullopt, {{"a", 2}});
  backend_.start_status = util::Status::Unavailable("no route to node");
  DecideAndApply();
  EXPECT_TRUE(Logged("ended 0 1"));
  EXPECT_NE(effects_.last_end_message.find("no route to node"), std::string::npos);
  EXPECT_EQ(sched_->record(job).phase, sched::JobPhase::kDone);
}

TEST_F(AttemptsTest, ALostAttemptIsQueuedWithWhatItsCheckpointKeptAndIsNoStartFailure) {
  Build({.start_failures_per_type = 1});
  const JobId job = Submit(4);
  for (int i = 0; i < 3; ++i) {  // lost three times on `a`: `a` stays allowed
    const auto parts = DecideAndApply();
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].device_type, "a");
    StartAll(parts);
    now_ += 100;
    effects_.kept = 40.0 * (i + 1);
    ASSERT_TRUE(attempts_->Lose(job, "node down", now_));
    // Both parts are asked to go at once; what they report afterwards is stale.
    EXPECT_EQ(backend_.stops.back().attempt, parts[0].attempt);
    EXPECT_EQ(backend_.stops.back().grace_s, 0);
    backend_.Report(BackendEventKind::kExited, parts[0], 137, true);
    EXPECT_FALSE(attempts_->Poll(now_));
    EXPECT_EQ(sched_->record(job).phase, sched::JobPhase::kQueued);
    EXPECT_DOUBLE_EQ(sched_->record(job).done_work, effects_.kept);
  }
  EXPECT_FALSE(Logged("ended 0 1"));
}

TEST_F(AttemptsTest, APartOfAGangExitingWithAnErrorStopsTheOthersAndTheJobFails) {
  Submit(4);
  const auto parts = DecideAndApply();
  StartAll(parts);
  backend_.Report(BackendEventKind::kExited, parts[0], 3);
  EXPECT_FALSE(attempts_->Poll(now_));
  ASSERT_EQ(backend_.stops.size(), 1u);
  EXPECT_EQ(backend_.stops[0].grace_s, 0);
  backend_.Report(BackendEventKind::kExited, parts[1], 137, true);
  EXPECT_TRUE(attempts_->Poll(now_));
  EXPECT_TRUE(Logged("ended 0 1"));
  EXPECT_EQ(effects_.last_end_message, "exited with status 3");
}

TEST_F(AttemptsTest, ACancelWhileAPreemptionStopsTheJobEndsItCancelledWithoutASecondStop) {
  const JobId job = Submit(1);
  StartAll(DecideAndApply());
  sched::Decision preempt;
  preempt.preempted = {job};
  ASSERT_TRUE(attempts_->Apply(preempt, now_));
  EXPECT_TRUE(Logged("stopping 0"));
  ASSERT_EQ(backend_.stops.size(), 1u);
  attempts_->Cancel(job, "cancelled by alice", now_);
  EXPECT_EQ(backend_.stops.size(), 1u);  // it is stopping already
  backend_.Report(BackendEventKind::kExited, backend_.starts.back(), 0, true);
  EXPECT_TRUE(attempts_->Poll(now_));
  EXPECT_TRUE(Logged("ended 0 2"));  // JobEnd::kCancelled
  EXPECT_EQ(effects_.last_end_message, "cancelled by alice");
}

TEST_F(AttemptsTest, CancellingAQueuedJobEndsItAtOnce) {
  Submit(2);
  Submit(4);  // waits: job 0 holds two of the four `a` devices... and `b` is slower
  DecideAndApply();
  const JobId queued(1);
  ASSERT_EQ(sched_->record(queued).phase, sched::JobPhase::kQueued);
  attempts_->Cancel(queued, "cancelled", now_);
  EXPECT_TRUE(Logged("ended 1 2"));
  EXPECT_EQ(sched_->record(queued).phase, sched::JobPhase::kDone);
}

TEST_F(AttemptsTest, TimeLimitsCountRunTimeOverAttemptsAndStopTheJobWhenReached) {
  Build({.stop_grace_s = 30});
  const JobId job = Submit(1, 100);
  auto parts = DecideAndApply();
  ASSERT_TRUE(parts[0].time_limit_s.has_value());
  EXPECT_DOUBLE_EQ(*parts[0].time_limit_s, 100);
  StartAll(parts);
  now_ = 60;
  EXPECT_DOUBLE_EQ(attempts_->EnforceTimeLimits(now_).next_s, 100);
  ASSERT_TRUE(attempts_->Lose(job, "node down", now_));  // 60 s run
  now_ = 70;
  parts = DecideAndApply();
  EXPECT_DOUBLE_EQ(*parts[0].time_limit_s, 40);
  StartAll(parts);
  now_ = 109;
  EXPECT_DOUBLE_EQ(attempts_->EnforceTimeLimits(now_).next_s, 110);
  const size_t stops = backend_.stops.size();
  now_ = 110;
  EXPECT_EQ(attempts_->EnforceTimeLimits(now_).stopped, 1);
  ASSERT_EQ(backend_.stops.size(), stops + 1);
  EXPECT_EQ(backend_.stops.back().grace_s, 30);
  backend_.Report(BackendEventKind::kExited, parts[0], 0, true);
  EXPECT_TRUE(attempts_->Poll(now_));
  EXPECT_TRUE(Logged("ended 0 1"));
  EXPECT_NE(effects_.last_end_message.find("time limit of 100 s"), std::string::npos);
}

TEST_F(AttemptsTest, OnlyAResumedPlacementRestoresItsCheckpoint) {
  Build({.restore_s = 45});
  const JobId job = Submit(1);
  auto parts = DecideAndApply();
  EXPECT_EQ(parts[0].startup_s, 0);
  StartAll(parts);
  now_ = 50;
  attempts_->Lose(job, "node down", now_);
  parts = DecideAndApply();
  EXPECT_EQ(parts[0].attempt, 2);
  EXPECT_EQ(parts[0].startup_s, 45);
}

TEST_F(AttemptsTest, ADecisionTheDriverCannotRecordIsNotCarriedOut) {
  const JobId job = Submit(1);
  effects_.record_status = util::Status::Internal("disk full");
  EXPECT_FALSE(attempts_->Apply(sched_->Decide(now_), now_));
  EXPECT_TRUE(backend_.starts.empty());
  EXPECT_EQ(sched_->record(job).phase, sched::JobPhase::kQueued);
  EXPECT_EQ(attempts_->attempt(job)->number, 0);
}

// What a driver writes ahead as the next attempt's number is the one the launch gives it, also
// for a job recovered with attempts behind it.
TEST_F(AttemptsTest, TheNextAttemptNumberIsTheOneTheLaunchGives) {
  const JobId job = Submit(1);
  attempts_->Track(job, "recovered", std::nullopt, /*attempts=*/3);
  effects_.named["recovered"] = job;
  EXPECT_EQ(attempts_->next_attempt(job), 4);
  const auto parts = DecideAndApply();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].attempt, 4);
  EXPECT_EQ(attempts_->next_attempt(job), 5);
}

}  // namespace
}  // namespace hetsched::drive
