#include <gtest/gtest.h>

#include "plan/cpop.h"
#include "plan/dag_test_util.h"
#include "plan/heft.h"
#include "plan/peft.h"
#include "plan/schedule.h"

namespace hetsched::plan {
namespace {

TEST(CpopTest, PaperSampleMakespan) {
  const model::TaskGraph g = testing::LoadSample();
  const DagProblem problem(g);
  const Schedule s = Cpop(problem);
  ASSERT_TRUE(ValidateSchedule(problem, s).ok()) << ValidateSchedule(problem, s).message();
  EXPECT_DOUBLE_EQ(s.makespan, 86);
}

TEST(CpopTest, CriticalPathSharesOneProcessor) {
  // The sample's critical path n1 -> n2 -> n9 -> n10 (priority 108) runs on P2 in the paper.
  const model::TaskGraph g = testing::LoadSample();
  const Schedule s = Cpop(DagProblem(g));
  for (int32_t t : {0, 1, 8, 9}) EXPECT_EQ(g.processors[s.placements[t].processor].name, "P2");
}

TEST(PeftTest, OptimisticCostTableOfAnExitTaskIsZero) {
  const model::TaskGraph g = testing::LoadSample();
  const std::vector<double> oct = OptimisticCostTable(DagProblem(g));
  for (int32_t p = 0; p < 3; ++p) EXPECT_EQ(oct[9 * 3 + p], 0);
  // n7's only successor is n10: min over q of OCT(n10,q) + w(n10,q) (+17 off-processor).
  EXPECT_DOUBLE_EQ(oct[6 * 3 + 0], std::min(21.0, 7.0 + 17));  // P1: own 21, P2 7 + 17
  EXPECT_DOUBLE_EQ(oct[6 * 3 + 1], 7.0);
}

TEST(PeftTest, PaperSampleIsValid) {
  const model::TaskGraph g = testing::LoadSample();
  const DagProblem problem(g);
  const Schedule s = Peft(problem);
  ASSERT_TRUE(ValidateSchedule(problem, s).ok()) << ValidateSchedule(problem, s).message();
  EXPECT_GT(s.makespan, 0);
  EXPECT_LE(s.makespan, 100);
}

}  // namespace
}  // namespace hetsched::plan
