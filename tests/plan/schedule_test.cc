#include "plan/schedule.h"

#include <gtest/gtest.h>

#include "plan/dag_test_util.h"
#include "plan/heft.h"

namespace hetsched::plan {
namespace {

class ValidateScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = testing::LoadSample();
    good_ = Heft(DagProblem(graph_));
    ASSERT_TRUE(ValidateSchedule(graph_, good_).ok());
  }
  std::string Problem(const Schedule& s) { return ValidateSchedule(graph_, s).message(); }
  model::TaskGraph graph_;
  Schedule good_;
};

TEST_F(ValidateScheduleTest, RejectsAStartBeforeTheDataArrives) {
  Schedule s = good_;
  s.placements[1].start -= 1;  // n2 on P1 waits for n1's 18 units from P3 until 27
  s.placements[1].finish -= 1;
  EXPECT_NE(Problem(s).find("before the data of 'n1' arrives"), std::string::npos) << Problem(s);
}

TEST_F(ValidateScheduleTest, RejectsOverlapOnAProcessor) {
  Schedule s = good_;
  s.placements[5] = {2, 30, 39};  // n6 onto P3 during n5 (28-38), with its cost there (9)
  EXPECT_NE(Problem(s).find("overlap on P3"), std::string::npos) << Problem(s);
}

TEST_F(ValidateScheduleTest, RejectsAWrongDuration) {
  Schedule s = good_;
  s.placements[9].finish += 1;
  s.makespan += 1;
  EXPECT_NE(Problem(s).find("costs 7"), std::string::npos) << Problem(s);
}

TEST_F(ValidateScheduleTest, RejectsAWrongMakespanAndMissingTasks) {
  Schedule s = good_;
  s.makespan = 79;
  EXPECT_NE(Problem(s).find("makespan"), std::string::npos);
  s = good_;
  s.placements.pop_back();
  EXPECT_NE(Problem(s).find("places 9 tasks"), std::string::npos);
}

TEST_F(ValidateScheduleTest, RejectsAProcessorThatCannotRunTheTask) {
  graph_.tasks[0].cost[2] = model::kCannotRun;
  EXPECT_NE(Problem(good_).find("cannot run it"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::plan
