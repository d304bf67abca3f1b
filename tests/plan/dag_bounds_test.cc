// Lower bounds and budgets of the searching DAG planners: MakespanLowerBound, the bound `exact`
// proves when it stops early, `best` ending at the bound, and both honouring a stop test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "plan/dag_exact.h"
#include "plan/dag_search.h"
#include "plan/dag_test_util.h"
#include "plan/heft.h"
#include "plan/schedule.h"

namespace hetsched::plan {
namespace {

// `procs` identical processors, independent tasks of the given costs, no edges.
model::TaskGraph Independent(const std::vector<double>& costs, int32_t procs) {
  model::TaskGraph g;
  for (int32_t p = 0; p < procs; ++p) g.processors.push_back({"P" + std::to_string(p), ""});
  for (size_t t = 0; t < costs.size(); ++t) {
    g.tasks.push_back({"t" + std::to_string(t), std::vector<double>(procs, costs[t])});
  }
  EXPECT_TRUE(g.Finalize().ok());
  return g;
}

// A stop test that says "stop" from its `calls`-th call on: a deterministic stand-in for a
// deadline.
std::function<bool()> StopAfter(int64_t calls) {
  auto count = std::make_shared<int64_t>(0);
  return [count, calls] { return ++*count >= calls; };
}

TEST(DagBoundsTest, LoadBoundRoundsUpOnlyWithIntegerTimes) {
  // Three unit tasks on two processors: work / processors = 1.5, so every makespan is >= 2.
  const model::TaskGraph whole = Independent({1, 1, 1}, 2);
  const DagProblem wp(whole);
  EXPECT_TRUE(wp.IntegerTimes());
  EXPECT_EQ(MakespanLowerBound(wp), 2);
  // Same shape with costs 1.25: no rounding, and the bound stays below the optimum 2.5.
  const model::TaskGraph frac = Independent({1.25, 1.25, 1.25}, 2);
  const DagProblem fp(frac);
  EXPECT_FALSE(fp.IntegerTimes());
  const double b = MakespanLowerBound(fp);
  EXPECT_GE(b, 1.875);
  EXPECT_LE(b, 2.5);
  const ExactResult r = ExactSchedule(fp);
  EXPECT_TRUE(r.optimal);
  EXPECT_DOUBLE_EQ(r.schedule.makespan, 2.5);
  EXPECT_DOUBLE_EQ(r.lower_bound, 2.5);
}

TEST(DagBoundsTest, TransferTimesDecideIntegrality) {
  model::TaskGraph g = testing::LoadSample();  // integer costs and data, bandwidth 1
  EXPECT_TRUE(DagProblem(g).IntegerTimes());
  g.bandwidth = 4;  // data 18 / 4 = 4.5
  EXPECT_FALSE(DagProblem(g).IntegerTimes());
  EXPECT_TRUE(DagProblem(g, TransferModel::None(g.num_processors())).IntegerTimes());
}

TEST(DagBoundsTest, ExactProvesTheSampleOptimalWithItsBound) {
  const model::TaskGraph g = testing::LoadSample();  // the problem keeps a reference
  const DagProblem problem(g);
  const ExactResult r = ExactSchedule(problem);
  ASSERT_TRUE(r.optimal);
  EXPECT_FALSE(r.stopped);
  EXPECT_DOUBLE_EQ(r.schedule.makespan, 73);
  EXPECT_DOUBLE_EQ(r.lower_bound, 73);
  const double root = MakespanLowerBound(problem);
  EXPECT_LE(root, 73);
  EXPECT_EQ(root, std::ceil(root));  // integer costs: a whole number
}

// The bound before search, and the one `exact` proves when stopped after any number of nodes,
// never exceed the optimum; stopping anywhere still returns a valid schedule.
TEST(DagBoundsTest, BoundsNeverExceedTheOptimum) {
  int improved = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const model::TaskGraph g =
        testing::RandomDag(9, 3, seed % 3 == 0 ? 5.0 : 0.5, seed % 2 == 0 ? 1.0 : 0.1, seed);
    const DagProblem problem(g);
    SCOPED_TRACE(g.name);
    const ExactResult full = ExactSchedule(problem);
    ASSERT_TRUE(full.optimal);
    const double opt = full.schedule.makespan;
    const double tol = 1e-9 * opt;
    EXPECT_NEAR(full.lower_bound, opt, tol);
    const double root = MakespanLowerBound(problem);
    EXPECT_LE(root, opt + tol);
    // Budgets from none to nearly the whole search.
    for (int64_t budget : {int64_t{0}, int64_t{1}, full.nodes / 4, full.nodes / 2,
                           full.nodes * 9 / 10, full.nodes - 1}) {
      ExactOptions o;
      o.max_nodes = budget;
      const ExactResult r = ExactSchedule(problem, o);
      ASSERT_TRUE(ValidateSchedule(problem, r.schedule).ok()) << budget;
      EXPECT_LE(r.lower_bound, opt + tol) << budget;
      EXPECT_GE(r.lower_bound, root - tol) << budget;
      EXPECT_LE(r.lower_bound, r.schedule.makespan + tol) << budget;
      if (!r.optimal && r.lower_bound > root + tol) ++improved;
    }
  }
  // The open nodes' bound beats the root's somewhere: it is what a stopped search reports.
  EXPECT_GT(improved, 0);
}

TEST(DagBoundsTest, ExactHonoursTheStopTestOnAGraphItCannotFinish) {
  // Not proved within 50M nodes (docs/results.md), so not within a few thousand.
  const model::TaskGraph g = testing::RandomDag(20, 4, 10.0, 0.5, 3);
  const DagProblem problem(g);
  ExactOptions o;
  // The incumbent's local searches check it once per evaluation (at most 200,000 here), the
  // branch and bound once per node: this leaves it some thousands of nodes.
  o.should_stop = StopAfter(210'000);
  const ExactResult r = ExactSchedule(problem, o);
  EXPECT_FALSE(r.optimal);
  EXPECT_TRUE(r.stopped);
  EXPECT_GT(r.nodes, 0);  // the tree search ran, and stopped
  ASSERT_TRUE(ValidateSchedule(problem, r.schedule).ok());
  EXPECT_LE(r.schedule.makespan, Heft(problem).makespan);
  EXPECT_GT(r.lower_bound, 0);
  EXPECT_LT(r.lower_bound, r.schedule.makespan);
  // Asked to stop at once: the list schedulers' best, still valid, and the root bound.
  o.should_stop = [] { return true; };
  const ExactResult now = ExactSchedule(problem, o);
  EXPECT_TRUE(now.stopped);
  EXPECT_EQ(now.nodes, 0);
  ASSERT_TRUE(ValidateSchedule(problem, now.schedule).ok());
  EXPECT_DOUBLE_EQ(now.lower_bound, MakespanLowerBound(problem));
}

TEST(DagBoundsTest, StoppedExactBoundIsWholeWithIntegerTimes) {
  // Integer costs and data, transfers at bandwidth 1: every makespan is whole, so is the bound.
  model::TaskGraph g = testing::RandomDag(30, 3, 2.0, 1.0, 7);
  for (auto& t : g.tasks) {
    for (double& c : t.cost) c = std::round(c) + 1;
  }
  for (auto& e : g.edges) e.data = std::round(e.data);
  g.bandwidth = 1;
  ASSERT_TRUE(g.Finalize().ok());
  const DagProblem problem(g);
  ASSERT_TRUE(problem.IntegerTimes());
  ExactOptions o;
  o.max_nodes = 50;
  const ExactResult r = ExactSchedule(problem, o);
  ASSERT_FALSE(r.optimal);
  EXPECT_FALSE(r.stopped);  // the node budget, not the stop test
  EXPECT_EQ(r.lower_bound, std::ceil(r.lower_bound));
  EXPECT_EQ(MakespanLowerBound(problem), std::ceil(MakespanLowerBound(problem)));
}

TEST(DagBoundsTest, BestEndsWhenItMeetsTheLowerBound) {
  // Two chains on two processors: HEFT already reaches the critical path, so a search with no
  // evaluation cap and no stop test must end on the bound alone.
  model::TaskGraph g;
  g.processors = {{"P1", ""}, {"P2", ""}};
  g.tasks = {{"a", {2, 2}}, {"b", {3, 3}}, {"c", {2, 2}}, {"d", {3, 3}}};
  g.edges = {{0, 1, 1}, {2, 3, 1}};
  ASSERT_TRUE(g.Finalize().ok());
  const DagProblem problem(g);
  SearchOptions o;
  o.max_evaluations = std::numeric_limits<int64_t>::max();
  o.lower_bound = MakespanLowerBound(problem);
  EXPECT_EQ(o.lower_bound, 5);
  const SearchResult r = BestSchedule(problem, o);
  EXPECT_TRUE(r.reached_lower_bound);
  EXPECT_EQ(r.evaluations, 0);
  EXPECT_DOUBLE_EQ(r.schedule.makespan, 5);
}

TEST(DagBoundsTest, BestRunsUntilStoppedWhenTheBoundIsOutOfReach) {
  const model::TaskGraph g = testing::RandomDag(40, 4, 5.0, 1.0, 11);
  const DagProblem problem(g);
  SearchOptions o;
  o.max_evaluations = std::numeric_limits<int64_t>::max();
  o.lower_bound = MakespanLowerBound(problem);
  o.should_stop = StopAfter(500);
  const SearchResult r = BestSchedule(problem, o);
  ASSERT_FALSE(r.reached_lower_bound);  // a gap remains on this graph
  // One check before each evaluation: the 500th says stop.
  EXPECT_EQ(r.evaluations, 499);
  EXPECT_TRUE(ValidateSchedule(problem, r.schedule).ok());
  EXPECT_GE(r.schedule.makespan, o.lower_bound);
}

}  // namespace
}  // namespace hetsched::plan
