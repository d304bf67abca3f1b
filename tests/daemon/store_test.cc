#include "daemon/store.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "testing/temp_dir.h"
#include "util/file.h"

namespace hetsched::svc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using util::StatusCode;

using hetsched::testing::TempDir;

// Runs `sql` on `path` through a connection of its own, as another process would; returns the
// first column of the last row as text ("" when there is none).
std::string RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string last;
  auto keep_last = [](void* out, int columns, char** values, char**) {
    if (columns > 0 && values[0] != nullptr) *static_cast<std::string*>(out) = values[0];
    return 0;
  };
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), keep_last, &last, &error), SQLITE_OK)
      << sql << ": " << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return last;
}

auto Fields(const StoredJob& j) {
  return std::tie(j.name, j.spec_json, j.idempotency_key, j.state, j.submitted_s, j.started_s,
                  j.ended_s, j.exit_status, j.device_type, j.node, j.devices, j.done_work,
                  j.preemptions, j.message, j.arrival_s, j.attempt, j.stop, j.tenant);
}

auto Fields(const StoredNode& n) {
  return std::tie(n.name, n.drained, n.power_state, n.since_s, n.spec);
}

StoredJob Job(const std::string& name, JobState state = JobState::kQueued, double ended_s = -1) {
  StoredJob job;
  job.name = name;
  job.spec_json = R"({"name":")" + name + R"("})";
  job.state = state;
  job.ended_s = ended_s;
  return job;
}

std::vector<std::string> Names(const std::vector<StoredJob>& jobs) {
  std::vector<std::string> names;
  for (const StoredJob& job : jobs) names.push_back(job.name);
  return names;
}

class StoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> OpenStore(bool synchronous_full = false) {
    auto store = Store::Open(path_, synchronous_full);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;
  const std::string path_ = dir_.File("hetsched.db");
};

TEST_F(StoreTest, RoundTripsEveryJobField) {
  StoredJob full;
  full.name = "train-7";
  full.spec_json = R"json({"name":"train-7","command":["python3","-c","print(\"é\")"]})json";
  full.idempotency_key = "key-123";
  full.state = JobState::kRunning;
  full.submitted_s = 1700000000.0 + 1.0 / 3;  // not a short decimal: must come back bit for bit
  full.started_s = 1700000012.25;
  full.ended_s = 1700000099.125;
  full.exit_status = 0;  // stored as 0, not as "none"
  full.device_type = "v100";
  full.node = "node-3";
  full.devices = {3, 0, 17, 2147483647};
  full.done_work = 1234.5;
  full.preemptions = 4;
  full.message = "preempted by 'b', then resumed";
  full.arrival_s = 12345.678;
  full.attempt = 3;
  full.stop = drive::StopCause::kPreempt;
  full.tenant = "vision";
  StoredJob bare = Job("bare");  // no exit status, no devices, empty strings, -1 times

  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertJob(full).ok());
  ASSERT_TRUE(store->InsertJob(bare).ok());
  for (const StoredJob& want : {full, bare}) {
    auto got = store->GetJob(want.name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(got->has_value()) << want.name;
    EXPECT_EQ(Fields(**got), Fields(want));
  }
  EXPECT_EQ((*store->GetJob("bare"))->exit_status, std::nullopt);
  EXPECT_EQ((*store->GetJob("train-7"))->exit_status, 0);

  // UpdateJob round-trips too, including a single device and a negative exit status.
  full.exit_status = -9;
  full.devices = {5};
  full.state = JobState::kFailed;
  ASSERT_TRUE(store->UpdateJob(full).ok());
  EXPECT_EQ(Fields(**store->GetJob("train-7")), Fields(full));

  auto missing = store->GetJob("nobody");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(StoreTest, InsertingAnExistingNameIsInvalidArgumentAndKeepsTheRow) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertJob(Job("a")).ok());
  util::Status st = store->InsertJob(Job("a", JobState::kRunning));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "job a exists");
  EXPECT_EQ((*store->GetJob("a"))->state, JobState::kQueued);
}

TEST_F(StoreTest, UpdatingAMissingJobIsNotFound) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  util::Status st = store->UpdateJob(Job("ghost"));
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_THAT(st.message(), HasSubstr("ghost"));
  EXPECT_FALSE(store->GetJob("ghost")->has_value());
}

TEST_F(StoreTest, LoadJobsKeepsSubmissionOrderAndFiltersEndedJobs) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  // Names out of alphabetical order, so that order by name would fail.
  for (const auto& [name, state] :
       std::vector<std::pair<std::string, JobState>>{{"zeta", JobState::kQueued},
                                                     {"alpha", JobState::kCompleted},
                                                     {"mid", JobState::kRunning},
                                                     {"beta", JobState::kFailed},
                                                     {"omega", JobState::kStarting},
                                                     {"gamma", JobState::kCancelled},
                                                     {"delta", JobState::kStopping}}) {
    ASSERT_TRUE(store->InsertJob(Job(name, state, IsEnded(state) ? 100 : -1)).ok()) << name;
  }
  EXPECT_THAT(Names(*store->LoadJobs(true)),
              ElementsAre("zeta", "alpha", "mid", "beta", "omega", "gamma", "delta"));
  EXPECT_THAT(Names(*store->LoadJobs(false)), ElementsAre("zeta", "mid", "omega", "delta"));

  // An update keeps the job's place; a job that ends leaves the active list.
  ASSERT_TRUE(store->UpdateJob(Job("zeta", JobState::kCompleted, 10)).ok());
  ASSERT_TRUE(store->UpdateJob(Job("alpha", JobState::kQueued)).ok());
  EXPECT_THAT(Names(*store->LoadJobs(true)),
              ElementsAre("zeta", "alpha", "mid", "beta", "omega", "gamma", "delta"));
  EXPECT_THAT(Names(*store->LoadJobs(false)), ElementsAre("alpha", "mid", "omega", "delta"));

  // After the newest job is pruned, a new one still comes after every remaining job.
  ASSERT_TRUE(store->UpdateJob(Job("delta", JobState::kCancelled, 5)).ok());
  ASSERT_EQ(*store->PruneEndedJobs(6), 1);
  ASSERT_TRUE(store->InsertJob(Job("new")).ok());
  EXPECT_THAT(Names(*store->LoadJobs(false)), ElementsAre("alpha", "mid", "omega", "new"));
}

// The live jobs are read one run per state, each in submission order, and merged: with many of
// each state, interleaved, the next job comes from a different run nearly every time.
TEST_F(StoreTest, LoadJobsPutsManyInterleavedLiveJobsInSubmissionOrder) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const JobState live[] = {JobState::kRunning, JobState::kQueued, JobState::kStopping,
                           JobState::kStarting, JobState::kQueued};
  std::vector<std::string> expected;
  ASSERT_TRUE(store->Begin().ok());
  for (int i = 0; i < 500; ++i) {
    const std::string name = fmt::format("j{}", (i * 7919) % 1000);  // not in name order
    const JobState state = (i % 9 == 4) ? JobState::kCompleted : live[(i * 3 + i / 7) % 5];
    ASSERT_TRUE(store->InsertJob(Job(name, state, IsEnded(state) ? 100 : -1)).ok()) << name;
    if (!IsEnded(state)) expected.push_back(name);
  }
  ASSERT_TRUE(store->Commit().ok());
  auto loaded = store->LoadJobs(false);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(Names(*loaded), expected);
  // Each job's row stays whole when it moves.
  for (const StoredJob& job : *loaded) EXPECT_EQ(job.spec_json, Job(job.name).spec_json);
}

// A restart adopts each live job as it is read: the first error of the visitor stops the
// reading and is returned. CountLiveJobs counts the jobs it would visit.
TEST_F(StoreTest, ForEachLiveJobStopsAtTheFirstErrorOfItsVisitor) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const auto& [name, state] :
       std::vector<std::pair<std::string, JobState>>{{"a", JobState::kRunning},
                                                     {"b", JobState::kCompleted},
                                                     {"c", JobState::kQueued},
                                                     {"d", JobState::kQueued}}) {
    ASSERT_TRUE(store->InsertJob(Job(name, state, IsEnded(state) ? 100 : -1)).ok()) << name;
  }
  EXPECT_EQ(*store->CountLiveJobs(), 3);
  std::vector<std::string> visited;
  const util::Status st = store->ForEachLiveJob([&](StoredJob& job) {
    visited.push_back(job.name);
    if (job.name == "c") return util::Status::Internal("stop at c");
    return util::Status::Ok();
  });
  EXPECT_EQ(st.message(), "stop at c");
  EXPECT_THAT(visited, ElementsAre("a", "c"));
  // The store is usable after: the runs were reset.
  EXPECT_THAT(Names(*store->LoadJobs(false)), ElementsAre("a", "c", "d"));
  ASSERT_TRUE(store->UpdateJob(Job("d", JobState::kCompleted, 10)).ok());
}

// Pages of GET /v1/jobs read ended jobs on one side of a time, after a position in
// submission order (submitted_s, then name), whatever order they were inserted in.
TEST_F(StoreTest, EndedJobsPageInSubmissionOrderOnEitherSideOfATime) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const auto job = [](const std::string& name, JobState state, double submitted_s, double ended_s) {
    StoredJob j = Job(name, state, ended_s);
    j.submitted_s = submitted_s;
    return j;
  };
  for (const StoredJob& j :
       {job("late", JobState::kCompleted, 30, 300), job("b-tie", JobState::kFailed, 10, 150),
        job("a-tie", JobState::kCompleted, 10, 50), job("live", JobState::kRunning, 5, -1),
        job("first", JobState::kCancelled, 1, 100), job("queued", JobState::kQueued, 40, -1)}) {
    ASSERT_TRUE(store->InsertJob(j).ok()) << j.name;
  }
  const auto names = [&](const EndedJobsQuery& q) {
    auto jobs = store->EndedJobs(q);
    EXPECT_TRUE(jobs.ok()) << jobs.status().ToString();
    return jobs.ok() ? Names(*jobs) : std::vector<std::string>{};
  };
  EndedJobsQuery q;
  q.as_of_s = 1000;
  q.limit = 10;
  EXPECT_THAT(names(q), ElementsAre("first", "a-tie", "b-tie", "late"));
  // Ended by 100 (at 100 included), and after it.
  q.as_of_s = 100;
  EXPECT_THAT(names(q), ElementsAre("first", "a-tie"));
  q.ended_by_as_of = false;
  EXPECT_THAT(names(q), ElementsAre("b-tie", "late"));
  // After a position: the tie on submitted_s is broken by name.
  q.as_of_s = 1000;
  q.ended_by_as_of = true;
  q.after = SubmissionKey{10, "a-tie"};
  EXPECT_THAT(names(q), ElementsAre("b-tie", "late"));
  q.after = SubmissionKey{10, "b-tie"};
  EXPECT_THAT(names(q), ElementsAre("late"));
  // A position that is no job's (it was pruned) works as well.
  q.after = SubmissionKey{2, "gone"};
  EXPECT_THAT(names(q), ElementsAre("a-tie", "b-tie", "late"));
  q.limit = 2;
  EXPECT_THAT(names(q), ElementsAre("a-tie", "b-tie"));
  q.limit = 10;
  q.after.reset();
  q.state = JobState::kCompleted;
  EXPECT_THAT(names(q), ElementsAre("a-tie", "late"));
  q.state = JobState::kCancelled;
  EXPECT_THAT(names(q), ElementsAre("first"));
}

// The index that keeps those pages from sorting every ended job is in every file, new or old.
TEST_F(StoreTest, EveryFileGetsTheIndexOfJobsBySubmission) {
  const std::string count =
      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'jobs_by_submission'";
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(RawSql(path_, count), "1");
  RawSql(path_, "DROP INDEX jobs_by_submission");  // as a file from before the index
  ASSERT_NE(OpenStore(), nullptr);
  EXPECT_EQ(RawSql(path_, count), "1");
}

// A sample at `at_s` whose figures all derive from it, so that each is told from the others.
StoredSample Sample(double at_s) {
  StoredSample s;
  s.at_s = at_s;
  s.power_w = at_s * 10;
  s.jobs_queued = static_cast<int64_t>(at_s) + 1;
  s.jobs_running = static_cast<int64_t>(at_s) + 2;
  s.types = {{"a100-80g", static_cast<int32_t>(at_s), 8}, {"v100", 0, 4}};
  return s;
}

auto Fields(const StoredSample& s) {
  return std::tie(s.at_s, s.power_w, s.jobs_queued, s.jobs_running, s.types);
}

std::vector<double> Times(const util::Result<std::vector<StoredSample>>& samples) {
  std::vector<double> times;
  if (!samples.ok()) {
    ADD_FAILURE() << samples.status().ToString();
    return times;
  }
  for (const StoredSample& s : *samples) times.push_back(s.at_s);
  return times;
}

TEST_F(StoreTest, SamplesRoundTripAndSurviveAReopen) {
  StoredSample lone = Sample(5);
  lone.types = {};  // a sample of a cluster with no device offered
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->AppendSample(Sample(1), 10).ok());
    ASSERT_TRUE(store->AppendSample(lone, 10).ok());
    ASSERT_TRUE(store->AppendSample(Sample(9), 10).ok());
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto samples = store->Samples(0, 0, 100);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ(Fields((*samples)[0]), Fields(Sample(1)));
  EXPECT_EQ(Fields((*samples)[1]), Fields(lone));
  EXPECT_EQ(Fields((*samples)[2]), Fields(Sample(9)));
  EXPECT_LT((*samples)[0].seq, (*samples)[1].seq);
  EXPECT_LT((*samples)[1].seq, (*samples)[2].seq);
}

TEST_F(StoreTest, SamplesAreReadSinceATimeAfterASeqAndUpToALimit) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (int t = 1; t <= 6; ++t) ASSERT_TRUE(store->AppendSample(Sample(t), 100).ok());
  EXPECT_THAT(Times(store->Samples(4, 0, 100)), ElementsAre(4, 5, 6));
  EXPECT_THAT(Times(store->Samples(0, 0, 2)), ElementsAre(1, 2));
  const int64_t second = (*store->Samples(0, 0, 2))[1].seq;
  EXPECT_THAT(Times(store->Samples(0, second, 2)), ElementsAre(3, 4));
  EXPECT_THAT(Times(store->Samples(5, second, 100)), ElementsAre(5, 6));
  EXPECT_THAT(Times(store->Samples(7, 0, 100)), ElementsAre());
  // A sample left out by the time keeps its types out too.
  auto late = store->Samples(6, 0, 100);
  ASSERT_TRUE(late.ok());
  ASSERT_EQ(late->size(), 1u);
  EXPECT_EQ(Fields((*late)[0]), Fields(Sample(6)));
}

TEST_F(StoreTest, OnlyTheNewestSamplesAreKept) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (int t = 1; t <= 5; ++t) ASSERT_TRUE(store->AppendSample(Sample(t), 3).ok());
  EXPECT_THAT(Times(store->Samples(0, 0, 100)), ElementsAre(3, 4, 5));
  // The deleted samples' types went with them.
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM sample_types"), "6");
  ASSERT_TRUE(store->AppendSample(Sample(6), 1).ok());
  EXPECT_THAT(Times(store->Samples(0, 0, 100)), ElementsAre(6));
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM sample_types"), "2");
  EXPECT_EQ(store->AppendSample(Sample(7), 0).code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(Times(store->Samples(0, 0, 100)), ElementsAre(6));
}

TEST_F(StoreTest, ASampleIsPartOfTheTransactionItIsAppendedIn) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->AppendSample(Sample(1), 10).ok());
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM samples"), "0");
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM samples"), "1");
}

// Files from before the samples get their tables when opened, and keep their jobs.
TEST_F(StoreTest, AFileFromBeforeTheSamplesGetsTheirTables) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->InsertJob(Job("old")).ok());
  }
  RawSql(path_, "DROP TABLE samples; DROP TABLE sample_types;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AppendSample(Sample(1), 10).ok());
  EXPECT_THAT(Times(store->Samples(0, 0, 10)), ElementsAre(1));
  EXPECT_TRUE(store->GetJob("old").ok() && store->GetJob("old")->has_value());
}

TEST_F(StoreTest, PruneRemovesOnlyEndedJobsThatEndedBeforeTheCutoff) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const StoredJob& job :
       {Job("done-early", JobState::kCompleted, 100), Job("failed", JobState::kFailed, 50),
        Job("cancelled", JobState::kCancelled, 199.5),
        Job("done-at-cutoff", JobState::kCompleted, 200),
        Job("running", JobState::kRunning),  // ended_s -1, but not ended
        Job("queued", JobState::kQueued)}) {
    ASSERT_TRUE(store->InsertJob(job).ok()) << job.name;
  }
  auto pruned = store->PruneEndedJobs(200);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(*pruned, 3);
  EXPECT_THAT(Names(*store->LoadJobs(true)), ElementsAre("done-at-cutoff", "running", "queued"));
  EXPECT_EQ(*store->PruneEndedJobs(200), 0);
}

TEST_F(StoreTest, EventsAreTheNewestAboutASubjectOldestFirst) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::vector<std::pair<std::string, std::string>> appended = {
      {"place", "a"}, {"place", "b"}, {"preempt", "a"}, {"power", "node-1"}, {"finish", "a"}};
  for (size_t i = 0; i < appended.size(); ++i) {
    StoredEvent event;
    event.seq = 1000;  // ignored: the store assigns it
    event.at_s = 100.0 + static_cast<double>(i);
    event.kind = appended[i].first;
    event.subject = appended[i].second;
    event.detail = R"({"i":)" + std::to_string(i) + "}";
    ASSERT_TRUE(store->AppendEvent(event).ok());
  }
  auto details = [](const std::vector<StoredEvent>& events) {
    std::vector<std::string> out;
    for (const StoredEvent& e : events) out.push_back(e.detail);
    return out;
  };

  auto all = store->Events("", 100);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 5u);
  for (size_t i = 0; i < all->size(); ++i) {
    const StoredEvent& e = (*all)[i];
    EXPECT_EQ(e.at_s, 100.0 + static_cast<double>(i));
    EXPECT_EQ(e.kind, appended[i].first);
    EXPECT_EQ(e.subject, appended[i].second);
    if (i > 0) {
      EXPECT_GT(e.seq, (*all)[i - 1].seq);
    }
  }
  EXPECT_NE((*all)[0].seq, 1000);

  EXPECT_THAT(details(*store->Events("", 2)), ElementsAre(R"({"i":3})", R"({"i":4})"));
  EXPECT_THAT(details(*store->Events("a", 2)), ElementsAre(R"({"i":2})", R"({"i":4})"));
  EXPECT_THAT(details(*store->Events("a", 10)),
              ElementsAre(R"({"i":0})", R"({"i":2})", R"({"i":4})"));
  EXPECT_THAT(details(*store->Events("b", 10)), ElementsAre(R"({"i":1})"));
  EXPECT_TRUE(store->Events("a", 0)->empty());
  EXPECT_TRUE(store->Events("nobody", 10)->empty());
  EXPECT_EQ(store->Events("", -1).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, KeyValuesPutGetOverwriteAndMissing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto missing = store->Get("learned");
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_EQ(*missing, std::nullopt);

  const std::string binary("\x00\x01\xff state", 9);  // values are bytes, NULs included
  ASSERT_TRUE(store->Put("learned", binary).ok());
  EXPECT_EQ(*store->Get("learned"), binary);
  ASSERT_TRUE(store->Put("learned", "v2").ok());
  EXPECT_EQ(*store->Get("learned"), "v2");
  ASSERT_TRUE(store->Put("empty", "").ok());  // present and empty is not missing
  EXPECT_EQ(*store->Get("empty"), std::string());
  EXPECT_EQ(*store->Get("learned"), "v2");
}

TEST_F(StoreTest, PutNodeInsertsOrReplacesAndLoadNodesSortsByName) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const StoredNode b{"node-b", false, "on", 10, ""};
  StoredNode a{"node-a", true, "off", 20.5, R"({"rack":"","devices":[["v100",2]]})"};
  ASSERT_TRUE(store->PutNode(b).ok());
  ASSERT_TRUE(store->PutNode(a).ok());
  a.drained = false;
  a.power_state = "booting";
  a.since_s = 30.25;
  ASSERT_TRUE(store->PutNode(a).ok());
  auto nodes = store->LoadNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ(Fields((*nodes)[0]), Fields(a));
  EXPECT_EQ(Fields((*nodes)[1]), Fields(b));
}

TEST_F(StoreTest, BeginCommitMakesABatchVisibleAtOnce) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Begin().ok());
  EXPECT_EQ(store->Begin().code(), StatusCode::kInternal);
  ASSERT_TRUE(store->InsertJob(Job("a")).ok());
  // A failed write leaves the rest of the batch to commit.
  EXPECT_EQ(store->InsertJob(Job("a")).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(store->InsertJob(Job("b")).ok());
  ASSERT_TRUE(store->Put("k", "v").ok());
  EXPECT_THAT(Names(*store->LoadJobs(true)), ElementsAre("a", "b"));  // this connection sees it
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM jobs"), "0");         // others do not yet
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM kv"), "0");
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM jobs"), "2");
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM kv"), "1");
  EXPECT_EQ(store->Commit().code(), StatusCode::kInternal);

  // Outside Begin, each write is visible at once.
  ASSERT_TRUE(store->InsertJob(Job("c")).ok());
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM jobs"), "3");
}

TEST_F(StoreTest, DestroyingTheStoreRollsBackAnOpenTransaction) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->InsertJob(Job("before")).ok());
    ASSERT_TRUE(store->Begin().ok());
    ASSERT_TRUE(store->InsertJob(Job("abandoned")).ok());
    ASSERT_TRUE(store->UpdateJob(Job("before", JobState::kRunning)).ok());
    ASSERT_TRUE(store->Put("k", "v").ok());
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto jobs = store->LoadJobs(true);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_THAT(Names(*jobs), ElementsAre("before"));
  EXPECT_EQ((*jobs)[0].state, JobState::kQueued);
  EXPECT_EQ(*store->Get("k"), std::nullopt);
  // And the store works normally after the rollback.
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertJob(Job("abandoned")).ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_THAT(Names(*store->LoadJobs(true)), ElementsAre("before", "abandoned"));
}

TEST_F(StoreTest, EverythingSurvivesAReopen) {
  StoredJob job = Job("kept", JobState::kRunning);
  job.devices = {1, 2};
  job.exit_status = 3;
  const StoredNode node{"node-1", true, "suspending", 42, ""};
  {
    auto store = OpenStore(/*synchronous_full=*/true);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->InsertJob(job).ok());
    ASSERT_TRUE(store->PutNode(node).ok());
    ASSERT_TRUE(store->AppendEvent({0, 1.5, "place", "kept", "on node-1"}).ok());
    ASSERT_TRUE(store->Put("policy", "weights").ok());
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Fields(**store->GetJob("kept")), Fields(job));
  auto nodes = store->LoadNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(Fields((*nodes)[0]), Fields(node));
  EXPECT_EQ(*store->Get("policy"), "weights");
  ASSERT_TRUE(store->AppendEvent({0, 2.5, "finish", "kept", ""}).ok());
  auto events = store->Events("kept", 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].detail, "on node-1");
  EXPECT_GT((*events)[1].seq, (*events)[0].seq);
}

TEST_F(StoreTest, TheFileIsInWalModeAndIdentifiesItself) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawSql(path_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawSql(path_, "PRAGMA application_id"), std::to_string(0x68736368));
  EXPECT_EQ(RawSql(path_, "PRAGMA user_version"), "3");
  EXPECT_EQ(store->path(), path_);
}

TEST_F(StoreTest, AnEmptyFileGetsTheSchema) {
  ASSERT_TRUE(util::WriteFile(path_, "").ok());
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertJob(Job("a")).ok());
  EXPECT_TRUE(store->GetJob("a")->has_value());
}

TEST_F(StoreTest, AFileThatIsNotSqliteIsAnIoErrorNamingThePath) {
  ASSERT_TRUE(util::WriteFile(path_, "hello").ok());
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(*util::ReadFile(path_), "hello");  // untouched
}

TEST_F(StoreTest, AnUnopenablePathIsAnIoErrorNamingIt) {
  const std::string path = dir_.File("no-such-dir/hetsched.db");
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_THAT(store.status().message(), HasSubstr(path));
}

TEST_F(StoreTest, AnotherApplicationsDatabaseIsRefusedAndLeftAsItWas) {
  RawSql(path_, "PRAGMA application_id = 42; CREATE TABLE t (x); INSERT INTO t VALUES (7);");
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(store.status().message(), HasSubstr(path_ + " is not a hetsched database"));
  EXPECT_EQ(RawSql(path_, "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(RawSql(path_, "PRAGMA application_id"), "42");
  EXPECT_EQ(RawSql(path_, "SELECT COUNT(*) FROM sqlite_master"), "1");
}

TEST_F(StoreTest, AnUnmarkedDatabaseWithTablesIsNotOurs) {
  RawSql(path_, "CREATE TABLE jobs (x);");  // application_id 0, but not empty
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(path_ + " is not a hetsched database"));
}

TEST_F(StoreTest, ANewerSchemaIsRefused) {
  ASSERT_NE(OpenStore(), nullptr);
  RawSql(path_, "PRAGMA user_version = 4");
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.status().message(),
            path_ + " was written by a newer hetsched (schema 4, this build reads up to 3)");
}

TEST_F(StoreTest, AVersion1FileIsUpgradedKeepingItsJobs) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->InsertJob(Job("old")).ok());
  }
  // What a version 1 daemon left: no policy_state, nodes.spec or tenant columns.
  RawSql(path_,
         "ALTER TABLE jobs DROP COLUMN policy_state; ALTER TABLE nodes DROP COLUMN spec; "
         "DROP INDEX jobs_by_tenant; ALTER TABLE jobs DROP COLUMN tenant; "
         "INSERT INTO nodes (name, drained, power_state, since_s) VALUES ('n1', 0, 'on', 5); "
         "PRAGMA user_version = 1;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawSql(path_, "PRAGMA user_version"), "3");
  auto nodes = store->LoadNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].spec, "");
  auto old = store->GetJob("old");
  ASSERT_TRUE(old.ok() && old->has_value());
  EXPECT_EQ((*old)->policy_state, "");
  StoredJob j = Job("new");
  j.policy_state = R"({"attained_s":5})";
  ASSERT_TRUE(store->InsertJob(j).ok());
  EXPECT_EQ((*store->GetJob("new"))->policy_state, j.policy_state);
}

// The detail column of EXPLAIN QUERY PLAN `sql`, one row after another.
std::string QueryPlan(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string plan;
  auto keep = [](void* out, int columns, char** values, char**) {
    if (columns > 3 && values[3] != nullptr)
      *static_cast<std::string*>(out) += values[3] + std::string("; ");
    return 0;
  };
  EXPECT_EQ(sqlite3_exec(db, ("EXPLAIN QUERY PLAN " + sql).c_str(), keep, &plan, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  return plan;
}

TEST_F(StoreTest, AVersion2FileGetsTheTenantColumnFromItsSpecsAndListsByTenant) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    const auto ended = [](const std::string& name, const std::string& spec, double submitted_s) {
      StoredJob j = Job(name, JobState::kCompleted, 100);
      j.spec_json = spec;
      j.submitted_s = submitted_s;
      return j;
    };
    for (const StoredJob& j :
         {ended("a", R"({"name":"a","tenant":"vision"})", 1),
          ended("b", R"({"name":"b","tenant":"llm"})", 2),
          ended("c", R"({"name":"c","tenant":"vision"})", 3),
          ended("no-tenant", R"({"name":"no-tenant"})", 4),
          ended("not-text", R"({"name":"not-text","tenant":7})", 5), ended("damaged", "{", 6)}) {
      ASSERT_TRUE(store->InsertJob(j).ok()) << j.name;
    }
  }
  // What a version 2 daemon left: the tenant in the specs only.
  RawSql(path_,
         "DROP INDEX jobs_by_tenant; ALTER TABLE jobs DROP COLUMN tenant; "
         "PRAGMA user_version = 2;");
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawSql(path_, "PRAGMA user_version"), "3");
  EXPECT_EQ(RawSql(path_,
                   "SELECT group_concat(name || '=' || tenant, ',') FROM "
                   "(SELECT name, tenant FROM jobs ORDER BY seq)"),
            "a=vision,b=llm,c=vision,no-tenant=,not-text=,damaged=");
  EndedJobsQuery q;
  q.as_of_s = 1000;
  q.limit = 10;
  q.tenant = "vision";
  auto vision = store->EndedJobs(q);
  ASSERT_TRUE(vision.ok()) << vision.status().ToString();
  EXPECT_THAT(Names(*vision), ElementsAre("a", "c"));
  q.after = SubmissionKey{1, "a"};
  EXPECT_THAT(Names(*store->EndedJobs(q)), ElementsAre("c"));
  q.tenant = "llm";
  q.after.reset();
  EXPECT_THAT(Names(*store->EndedJobs(q)), ElementsAre("b"));
  q.tenant.reset();
  EXPECT_EQ(store->EndedJobs(q)->size(), 6u);
  // A tenant's listing reads its own rows through the index, not every job's spec.
  const std::string plan = QueryPlan(path_, std::string(Store::kEndedJobsOfTenantSql));
  EXPECT_THAT(plan, HasSubstr("USING INDEX jobs_by_tenant"));
  EXPECT_THAT(plan, ::testing::Not(HasSubstr("TEMP B-TREE")));
}

TEST_F(StoreTest, ADamagedDevicesColumnIsAnErrorNotACrash) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertJob(Job("a")).ok());
  for (const char* bad : {"1,x", "1,,2", ",", "1,", "99999999999", " 1"}) {
    RawSql(path_, std::string("UPDATE jobs SET devices = '") + bad + "'");
    auto job = store->GetJob("a");
    ASSERT_FALSE(job.ok()) << bad;
    EXPECT_EQ(job.status().code(), StatusCode::kIoError);
    EXPECT_THAT(job.status().message(), HasSubstr(path_));
    EXPECT_THAT(job.status().message(), HasSubstr("job a"));
    EXPECT_FALSE(store->LoadJobs(true).ok()) << bad;
  }
}

// States and stop causes are stored by name, as every version wrote them: each reads back as
// itself, and a name this build does not know is an error, not a job in some other state.
TEST_F(StoreTest, StatesAndStopCausesAreStoredByName) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  StoredJob job = Job("a", JobState::kStopping);
  job.stop = drive::StopCause::kTimeLimit;
  ASSERT_TRUE(store->InsertJob(job).ok());
  EXPECT_EQ(RawSql(path_, "SELECT state || '/' || stop_reason FROM jobs"), "stopping/time-limit");
  for (const JobState state : kJobStates) {
    RawSql(path_, fmt::format("UPDATE jobs SET state = '{}'", JobStateName(state)));
    EXPECT_EQ((*store->GetJob("a"))->state, state) << JobStateName(state);
  }
  for (const auto& [text, cause] : std::vector<std::pair<std::string, drive::StopCause>>{
           {"", drive::StopCause::kNone},
           {"preempt", drive::StopCause::kPreempt},
           {"cancel", drive::StopCause::kCancel}}) {
    RawSql(path_, "UPDATE jobs SET stop_reason = '" + text + "'");
    EXPECT_EQ((*store->GetJob("a"))->stop, cause) << text;
  }
  for (const char* bad : {"state = 'Running'", "state = ''", "stop_reason = 'preempted'"}) {
    RawSql(path_, std::string("UPDATE jobs SET state = 'queued', stop_reason = ''"));
    RawSql(path_, std::string("UPDATE jobs SET ") + bad);
    auto got = store->GetJob("a");
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), StatusCode::kIoError);
    EXPECT_THAT(got.status().message(), HasSubstr("job a"));
  }
}

// A committed write survives the daemon's kill -9: no destructor, no close, no checkpoint.
class StoreCrashTest : public StoreTest, public ::testing::WithParamInterface<bool> {};

TEST_P(StoreCrashTest, CommittedWritesSurviveSigkill) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // exits with a code only when something failed before the kill
    auto store = Store::Open(path_, /*synchronous_full=*/GetParam());
    if (!store.ok()) _exit(2);
    if (!(*store)->Begin().ok() || !(*store)->InsertJob(Job("committed")).ok() ||
        !(*store)->Commit().ok()) {
      _exit(3);
    }
    if (!(*store)->AppendEvent({0, 1, "place", "committed", ""}).ok()) _exit(4);
    if (!(*store)->Begin().ok() || !(*store)->InsertJob(Job("uncommitted")).ok()) _exit(5);
    raise(SIGKILL);
    _exit(6);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);
  ASSERT_EQ(WTERMSIG(wstatus), SIGKILL);
  // The writes are still in the WAL, which a clean close would have checkpointed and removed.
  ASSERT_TRUE(std::filesystem::exists(path_ + "-wal"));

  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(Names(*store->LoadJobs(true)), ElementsAre("committed"));
  EXPECT_EQ(store->Events("committed", 10)->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Synchronous, StoreCrashTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Full" : "Normal";
                         });

}  // namespace
}  // namespace hetsched::svc
