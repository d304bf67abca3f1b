#include "plan/heft.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "plan/dag_test_util.h"
#include "plan/schedule.h"

namespace hetsched::plan {
namespace {

using testing::LoadSample;
using testing::SamplePath;

nlohmann::json Expected() {
  std::ifstream in(SamplePath());
  return nlohmann::json::parse(in)["expected"];
}

TEST(HeftTest, PaperSampleGivesTheExpectedSchedule) {
  const model::TaskGraph g = LoadSample();
  const DagProblem problem(g);
  const Schedule s = Heft(problem);
  ASSERT_TRUE(ValidateSchedule(problem, s).ok()) << ValidateSchedule(problem, s).message();
  const nlohmann::json expected = Expected()["heft"];
  EXPECT_DOUBLE_EQ(s.makespan, expected["makespan"].get<double>());
  ASSERT_EQ(expected["schedule"].size(), g.tasks.size());
  for (const auto& row : expected["schedule"]) {
    const std::string task = row["task"];
    int32_t t = 0;
    while (g.tasks[t].name != task) ++t;
    const TaskPlacement& pl = s.placements[t];
    EXPECT_EQ(g.processors[pl.processor].name, row["processor"].get<std::string>()) << task;
    EXPECT_DOUBLE_EQ(pl.start, row["start"].get<double>()) << task;
    EXPECT_DOUBLE_EQ(pl.finish, row["finish"].get<double>()) << task;
  }
}

TEST(HeftTest, PaperSampleUpwardRanks) {
  const model::TaskGraph g = LoadSample();
  const std::vector<double> rank = UpwardRanks(DagProblem(g));
  const nlohmann::json expected = Expected()["heft_rank_u"];
  for (int32_t t = 0; t < g.num_tasks(); ++t) {
    EXPECT_NEAR(rank[t], expected[g.tasks[t].name].get<double>(), 1e-3) << g.tasks[t].name;
  }
}

TEST(HeftTest, PaperSampleWithoutCommunication) {
  const model::TaskGraph g = LoadSample();
  const DagProblem problem(g, TransferModel::None(g.num_processors()));
  const Schedule s = Heft(problem);
  EXPECT_TRUE(ValidateSchedule(problem, s).ok());
  EXPECT_DOUBLE_EQ(s.makespan, Expected()["heft_without_communication"]["makespan"].get<double>());
}

TEST(HeftTest, InsertsIntoAnIdleGap) {
  // b waits on P2 for a's data until 6; c (lower rank, scheduled after b) fits in [0, 6).
  model::TaskGraph g;
  g.processors = {{"P1", ""}, {"P2", ""}};
  g.tasks = {{"a", {1, model::kCannotRun}},
             {"b", {model::kCannotRun, 1}},
             {"c", {model::kCannotRun, 0.5}}};
  g.edges = {{0, 1, 5}};
  ASSERT_TRUE(g.Finalize().ok());
  const DagProblem problem(g);
  const Schedule s = Heft(problem);
  ASSERT_TRUE(ValidateSchedule(problem, s).ok());
  EXPECT_DOUBLE_EQ(s.placements[1].start, 6);
  EXPECT_DOUBLE_EQ(s.placements[2].start, 0);
  EXPECT_DOUBLE_EQ(s.makespan, 7);
}

TEST(HeftTest, NeverUsesAProcessorThatCannotRunTheTask) {
  model::TaskGraph g;
  g.processors = {{"P1", ""}, {"P2", ""}};
  g.tasks = {{"a", {1, model::kCannotRun}}, {"b", {model::kCannotRun, 1}}};
  g.edges = {{0, 1, 5}};
  ASSERT_TRUE(g.Finalize().ok());
  const DagProblem problem(g);
  const Schedule s = Heft(problem);
  ASSERT_TRUE(ValidateSchedule(problem, s).ok());
  EXPECT_EQ(s.placements[0].processor, 0);
  EXPECT_EQ(s.placements[1].processor, 1);
  EXPECT_DOUBLE_EQ(s.makespan, 7);  // 1 + transfer 5 + 1
}

TEST(HeftTest, TopologyLinksChangeTransferTimes) {
  model::TaskGraph g;
  g.processors = {{"P1", ""}, {"P2", ""}, {"P3", ""}};
  g.tasks = {{"a", {1, model::kCannotRun, model::kCannotRun}}, {"b", {model::kCannotRun, 1, 1}}};
  g.edges = {{0, 1, 10}};
  ASSERT_TRUE(g.Finalize().ok());
  // P1-P3 is a fast link (latency 0.5, bandwidth 10), P1-P2 slow (bandwidth 1).
  const TransferModel links = TransferModel::FromLinks(3, [](int32_t a, int32_t b) {
    const bool fast = (a == 0 && b == 2) || (a == 2 && b == 0);
    return TransferModel::Link{fast ? 0.5 : 0.0, fast ? 10.0 : 1.0};
  });
  const DagProblem problem(g, links);
  const Schedule s = Heft(problem);
  ASSERT_TRUE(ValidateSchedule(problem, s).ok());
  EXPECT_EQ(s.placements[1].processor, 2);
  EXPECT_DOUBLE_EQ(s.placements[1].start, 1 + 0.5 + 1.0);
}

}  // namespace
}  // namespace hetsched::plan
