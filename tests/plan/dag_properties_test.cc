// Property tests: random DAGs across CCR and heterogeneity, every planner's schedule valid,
// `best` never worse than HEFT, `exact` never worse than any heuristic.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "plan/cpop.h"
#include "plan/dag_exact.h"
#include "plan/dag_search.h"
#include "plan/dag_test_util.h"
#include "plan/heft.h"
#include "plan/list_scheduler.h"
#include "plan/peft.h"
#include "plan/schedule.h"
#include "testing/build_paths.h"

namespace hetsched::plan {
namespace {

struct Case {
  int32_t tasks;
  int32_t procs;
  double ccr;
  double beta;
  uint64_t seed;
};

std::vector<Case> Cases(int32_t tasks, int32_t procs, int count) {
  std::vector<Case> out;
  const double ccrs[] = {0.1, 1.0, 5.0};
  const double betas[] = {0.1, 1.0, 1.9};
  for (int i = 0; i < count; ++i) {
    out.push_back({tasks, procs, ccrs[i % 3], betas[(i / 3) % 3], 1000u + i});
  }
  return out;
}

TEST(DagPropertiesTest, HeuristicSchedulesAreValidAndBestBeatsHeft) {
  for (const Case& c : Cases(40, 4, 18)) {
    const model::TaskGraph g = testing::RandomDag(c.tasks, c.procs, c.ccr, c.beta, c.seed);
    const DagProblem problem(g);
    const Schedule heft = Heft(problem);
    SCOPED_TRACE(g.name);
    for (const Schedule& s : {heft, Cpop(problem), Peft(problem)}) {
      ASSERT_TRUE(ValidateSchedule(problem, s).ok()) << ValidateSchedule(problem, s).message();
    }
    SearchOptions o;
    o.max_evaluations = 300;
    o.seed = c.seed;
    const SearchResult best = BestSchedule(problem, o);
    ASSERT_TRUE(ValidateSchedule(problem, best.schedule).ok());
    EXPECT_LE(best.schedule.makespan, heft.makespan);
    EXPECT_EQ(best.evaluations, 300);
  }
}

TEST(DagPropertiesTest, ExactIsNeverWorseThanAnyHeuristic) {
  int strictly_better = 0;
  for (const Case& c : Cases(9, 3, 27)) {
    const model::TaskGraph g = testing::RandomDag(c.tasks, c.procs, c.ccr, c.beta, c.seed);
    const DagProblem problem(g);
    SCOPED_TRACE(g.name);
    const ExactResult exact = ExactSchedule(problem);
    ASSERT_TRUE(exact.optimal);
    ASSERT_TRUE(ValidateSchedule(problem, exact.schedule).ok());
    SearchOptions o;
    o.max_evaluations = 200;
    const double tol = 1e-9 * exact.schedule.makespan;
    for (const Schedule& s :
         {Heft(problem), Cpop(problem), Peft(problem), BestSchedule(problem, o).schedule}) {
      EXPECT_LE(exact.schedule.makespan, s.makespan + tol);
    }
    if (exact.schedule.makespan < Heft(problem).makespan - tol) ++strictly_better;
  }
  EXPECT_GT(strictly_better, 0);  // the oracle finds something the heuristics miss
}

}  // namespace
}  // namespace hetsched::plan

namespace hetsched::plan {
namespace {

// Every (topological order, assignment) pair decoded by insertion: the optimum by brute force.
double BruteForceOptimum(const DagProblem& problem) {
  const model::TaskGraph& g = problem.graph();
  const int32_t n = g.num_tasks(), np = g.num_processors();
  std::vector<int32_t> order;
  std::vector<bool> used(n, false);
  double best = std::numeric_limits<double>::infinity();
  std::vector<int32_t> assignment(n, 0);
  std::function<void()> orders = [&] {
    if (static_cast<int32_t>(order.size()) == n) {
      int64_t combos = 1;
      for (int32_t t = 0; t < n; ++t) combos *= np;
      for (int64_t c = 0; c < combos; ++c) {
        int64_t x = c;
        bool ok = true;
        for (int32_t t = 0; t < n; ++t, x /= np) {
          assignment[t] = static_cast<int32_t>(x % np);
          ok = ok && g.CanRun(t, assignment[t]);
        }
        if (ok) best = std::min(best, ScheduleFixed(problem, order, assignment).makespan);
      }
      return;
    }
    for (int32_t t = 0; t < n; ++t) {
      if (used[t]) continue;
      bool ready = true;
      for (int32_t k : g.in_edges(t)) ready = ready && used[g.edges[k].from];
      if (!ready) continue;
      used[t] = true;
      order.push_back(t);
      orders();
      order.pop_back();
      used[t] = false;
    }
  };
  orders();
  return best;
}

// `exact` proves optimality, its schedule is valid, and it equals the brute-force optimum.
void ExpectExactMatchesBruteForce(const model::TaskGraph& g) {
  const DagProblem problem(g);
  const ExactResult exact = ExactSchedule(problem);
  ASSERT_TRUE(exact.optimal) << g.name;
  ASSERT_TRUE(ValidateSchedule(problem, exact.schedule).ok()) << g.name;
  EXPECT_NEAR(exact.schedule.makespan, BruteForceOptimum(problem), 1e-9) << g.name;
}

TEST(DagExactTest, MatchesBruteForceOnTinyGraphs) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    ExpectExactMatchesBruteForce(testing::RandomDag(6, 2, seed % 3 == 0 ? 3.0 : 0.5, 1.0, seed));
  }
}

TEST(DagExactTest, MatchesBruteForceWithHighCcrAndRestrictedProcessors) {
  // The bounds reason about keeping neighbours on one processor against paying transfers, and
  // about processors that cannot run a task: high CCR and holes in the cost table exercise both.
  for (uint64_t seed = 21; seed <= 28; ++seed) {
    model::TaskGraph g = testing::RandomDag(6, 3, seed % 2 == 0 ? 10.0 : 2.0, 1.0, seed);
    for (int32_t t = 0; t < g.num_tasks(); ++t) {
      if ((t + seed) % 3 == 0) g.tasks[t].cost[t % 3] = model::kCannotRun;
    }
    ASSERT_TRUE(g.Finalize().ok());
    ExpectExactMatchesBruteForce(g);
  }
}

TEST(DagExactTest, MatchesBruteForceWhenTransfersDominate) {
  // Transfers about 20 times the costs: the machine bounds charge a task's relatives on other
  // processors for transfers, and an overcharge prunes the optimum here (tripling them fails).
  for (uint64_t seed = 9; seed <= 16; ++seed) {
    model::TaskGraph g = testing::RandomDag(7, 2, 20.0, 0.5, seed);
    if (seed % 4 == 1) {
      g.tasks[seed % 7].cost[0] = model::kCannotRun;
      ASSERT_TRUE(g.Finalize().ok());
    }
    ExpectExactMatchesBruteForce(g);
  }
}

TEST(DagExactTest, IdenticalProcessorsStillOptimal) {
  // Four identical processors, two independent chains: the optimum runs them side by side.
  model::TaskGraph g;
  for (int p = 1; p <= 4; ++p) g.processors.push_back({"P" + std::to_string(p), ""});
  g.tasks = {{"a", {2, 2, 2, 2}}, {"b", {3, 3, 3, 3}}, {"c", {2, 2, 2, 2}}, {"d", {3, 3, 3, 3}}};
  g.edges = {{0, 1, 1}, {2, 3, 1}};
  ASSERT_TRUE(g.Finalize().ok());
  const ExactResult r = ExactSchedule(DagProblem(g));
  EXPECT_TRUE(r.optimal);
  EXPECT_DOUBLE_EQ(r.schedule.makespan, 5);
}

TEST(DagExactTest, NodeBudgetEndsTheSearchWithoutAProof) {
  // A graph the search cannot prove within 50M nodes (docs/results.md), so surely not in 10.
  const model::TaskGraph g = testing::RandomDag(20, 4, 10.0, 0.5, 3);
  ExactOptions o;
  o.max_nodes = 10;
  const ExactResult r = ExactSchedule(DagProblem(g), o);
  EXPECT_FALSE(r.optimal);
  EXPECT_TRUE(ValidateSchedule(g, r.schedule).ok());
}

}  // namespace
}  // namespace hetsched::plan

namespace hetsched::plan {
namespace {

TEST(DagExactTest, StgSampleOnTwoProcessorsReachesItsCriticalPath) {
  model::io::DagReadOptions o;
  o.stg_processors = 2;
  auto g = model::io::ReadDag(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/dag/example.stg", o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const DagProblem problem(*g);
  const ExactResult r = ExactSchedule(problem);
  EXPECT_TRUE(r.optimal);
  EXPECT_DOUBLE_EQ(r.schedule.makespan, 40);  // the critical path 0-1-3-7-9-10-11
  EXPECT_DOUBLE_EQ(problem.MinCostCriticalPath(), 40);
  EXPECT_GE(Heft(problem).makespan, 40);
}

}  // namespace
}  // namespace hetsched::plan
