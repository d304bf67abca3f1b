#include <gtest/gtest.h>

#include <string>

#include "sched/allocation_policy.h"
#include "sched/lp_solver.h"
#include "sched/scheduler.h"
#include "sched/test_cluster.h"
#include "sim/engine.h"
#include "testing/cli_runner.h"

namespace hetsched::sched {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

constexpr std::string_view kLpPolicies[] = {"maxmin",       "maxmin-het", "max-throughput",
                                            "min-makespan", "min-cost",   "ftf-het"};

std::unique_ptr<Scheduler> Make(const model::Cluster& c, std::string_view policy,
                                SchedulerOptions options = {}) {
  auto s = Scheduler::Create(c, nullptr, policy, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(LpPolicies, RegisteredByName) {
  for (std::string_view name : kLpPolicies) {
    auto p = MakePolicy(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ((*p)->name(), name);
    EXPECT_TRUE((*p)->preemptive());
  }
  EXPECT_NE(PolicyNames().find("maxmin-het"), std::string::npos);
  EXPECT_NE(PolicyHelp().find("ftf-het"), std::string::npos);
}

// One device, two identical jobs: maxmin-het gives each half the time, and Gavel's priority
// rule (share / received share) takes turns: on a tie the running job stays (no needless
// preemption), so neither runs more than two rounds in a row and each gets half the rounds.
// Free preemption, as in Gavel (with a cost, turns last a quantum: preemption_price_test.cc).
TEST(LpPolicies, PriorityRuleSharesTimeAsTargeted) {
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  std::vector<model::Job> jobs = {MakeJob(0, 0, 1e6, {{"gpu", 1.0}}),
                                  MakeJob(1, 0, 1e6, {{"gpu", 1.0}})};
  SchedulerOptions free;
  free.preemption_cost_s = 0;
  auto s = Make(c, "maxmin-het", free);
  for (const auto& j : jobs) ASSERT_TRUE(s->Submit(j, 0).accepted);
  int runs[2] = {0, 0};
  int previous = -1, streak = 0;
  for (int round = 0; round < 8; ++round) {
    s->Decide(round * 360.0);
    ASSERT_EQ(s->running(), 1u);
    const int now = s->record(model::JobId(0)).phase == JobPhase::kRunning ? 0 : 1;
    streak = now == previous ? streak + 1 : 1;
    EXPECT_LE(streak, 2) << "round " << round;
    previous = now;
    runs[now]++;
    EXPECT_NEAR(s->TargetShare(model::JobId(now), model::DeviceTypeId(0)), 0.5, 1e-6);
  }
  EXPECT_EQ(runs[0], 4);
  EXPECT_EQ(runs[1], 4);
  EXPECT_EQ(s->allocation_failures(), 0);
}

// Heterogeneity: job 0 is 10x faster on "fast", job 1 only 2x; maxmin-het gives "fast" to job 0.
TEST(LpPolicies, MaxMinGivesTypesByComparativeAdvantage) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  std::vector<model::Job> jobs = {MakeJob(0, 0, 1e6, {{"fast", 10.0}, {"slow", 1.0}}),
                                  MakeJob(1, 0, 1e6, {{"fast", 2.0}, {"slow", 1.0}})};
  auto s = Make(c, "maxmin-het");
  for (const auto& j : jobs) ASSERT_TRUE(s->Submit(j, 0).accepted);
  s->Decide(0);
  EXPECT_GT(s->TargetShare(model::JobId(0), model::DeviceTypeId(0)),
            s->TargetShare(model::JobId(1), model::DeviceTypeId(0)));
  EXPECT_EQ(s->running(), 2u);  // both devices used
}

// Gavel's heterogeneity-agnostic max_min_fairness: the LP sees every type as equally fast, so
// three jobs on two devices each get two thirds of a device, whatever their real speeds.
TEST(LpPolicies, AgnosticMaxMinGivesEqualTimeShares) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  std::vector<model::Job> jobs = {MakeJob(0, 0, 1e6, {{"fast", 10.0}, {"slow", 1.0}}),
                                  MakeJob(1, 0, 1e6, {{"fast", 2.0}, {"slow", 1.0}}),
                                  MakeJob(2, 0, 1e6, {{"fast", 1.0}, {"slow", 1.0}})};
  for (std::string_view policy : {"maxmin", "maxmin-het"}) {
    auto s = Make(c, policy);
    for (const auto& j : jobs) ASSERT_TRUE(s->Submit(j, 0).accepted);
    s->Decide(0);
    for (int j = 0; j < 3; ++j) {
      const double total = s->TargetShare(model::JobId(j), model::DeviceTypeId(0)) +
                           s->TargetShare(model::JobId(j), model::DeviceTypeId(1));
      if (policy == "maxmin") {
        EXPECT_NEAR(total, 2.0 / 3, 1e-6) << j;
      } else if (j == 0) {
        // Normalized by its own speed, job 0 needs less time on "fast" to match the others.
        EXPECT_LT(total, 2.0 / 3 - 1e-3);
      }
    }
  }
}

// Fails every solve after the first.
class FlakySolver final : public LpSolver {
 public:
  std::string_view name() const override { return "flaky"; }
  LpSolution Solve(const LinearProgram& lp, const LpOptions& options) override {
    if (++calls_ > 1) {
      LpSolution s;
      s.status = LpStatus::kError;
      s.message = "flaky: injected failure";
      return s;
    }
    return clp_->Solve(lp, options);
  }

 private:
  int calls_ = 0;
  std::unique_ptr<LpSolver> clp_ = MakeClpSolver();
};

TEST(LpPolicies, SolverFailureKeepsTheLastGoodAllocationAndIsLogged) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  std::vector<model::Job> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(MakeJob(i, 0, 1e6, {{"fast", 4.0}, {"slow", 1.0}}));
  SchedulerOptions o;
  o.lp_solver = std::make_shared<FlakySolver>();
  auto s = Make(c, "maxmin-het", o);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(s->Submit(jobs[i], 0).accepted);
  s->Decide(0);
  EXPECT_EQ(s->running(), 2u);
  const double share = s->TargetShare(model::JobId(0), model::DeviceTypeId(0));
  EXPECT_GT(share, 0);
  ASSERT_TRUE(s->Submit(jobs[3], 360).accepted);
  const Decision d = s->Decide(360);  // the solve fails: old shares, new job none
  EXPECT_EQ(s->allocation_failures(), 1);
  ASSERT_EQ(s->allocation_log().size(), 1u);
  EXPECT_NE(s->allocation_log()[0].find("injected failure"), std::string::npos);
  EXPECT_NE(s->allocation_log()[0].find("keeping the last good allocation"), std::string::npos);
  EXPECT_EQ(s->TargetShare(model::JobId(0), model::DeviceTypeId(0)), share);
  EXPECT_EQ(s->TargetShare(model::JobId(3), model::DeviceTypeId(0)), 0);
  EXPECT_EQ(s->running(), 2u);  // still both devices in use
  s->Decide(720);               // and it keeps deciding
  EXPECT_EQ(s->allocation_failures(), 2);
}

TEST(LpPolicies, InfeasibleSloIsRejectedNamingTheJob) {
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  model::Job j = MakeJob(0, 0, 1000, {{"gpu", 4.0}});  // 250 s at best
  j.name = "resnet-urgent";
  j.deadline_s = 100;
  auto s = Make(c, "min-cost");
  // The scheduler never sees the true size: without an estimate it cannot tell.
  EXPECT_TRUE(s->Submit(j, 0).accepted);
  s = Make(c, "min-cost");
  j.estimate_s = 250;
  const Admission a = s->Submit(j, 0);
  EXPECT_FALSE(a.accepted);
  EXPECT_NE(a.reason.find("job 'resnet-urgent': SLO infeasible"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find("250 s"), std::string::npos) << a.reason;
  j.deadline_s = 300;
  EXPECT_TRUE(s->Submit(j, 0).accepted);
}

// End to end in the simulator: every policy finishes every job on a mixed cluster with gangs,
// and never holds more devices than exist (the engine checks allocations).
TEST(LpPolicies, RunEndToEndInTheSimulator) {
  const auto c = MakeCluster({{"fast", "cuda", 2, 4}, {"slow", "cuda", 2, 4}});
  model::Workload w;
  for (int i = 0; i < 40; ++i) {
    model::Job j = MakeJob(i, 300.0 * i, 2000 + 500 * (i % 7),
                           {{"fast", 2.0 + i % 3}, {"slow", 1.0}}, 1 << (i % 3));
    j.slo_factor = 50;
    w.jobs.push_back(j);
  }
  for (std::string_view policy : kLpPolicies) {
    sim::SimOptions o;
    o.policy = std::string(policy);
    o.round_s = 360;
    auto r = sim::Simulate(c, w, nullptr, o);
    ASSERT_TRUE(r.ok()) << policy << ": " << r.status().ToString();
    EXPECT_EQ(r->policy, policy);
    EXPECT_EQ(r->jobs_completed, 40) << policy;
    EXPECT_GT(r->avg_jct_s, 0) << policy;
  }
}

TEST(LpPolicies, CliRunsAnLpPolicy) {
  const std::string trace = ::testing::TempDir() + "lp_policy_cli.trace";
  ASSERT_EQ(
      hetsched::testing::RunHetsched("gen-trace --rate 20 --jobs 30 --seed 1 -o " + trace).status,
      0);
  const auto run =
      hetsched::testing::RunHetsched("simulate --cluster v100=4,k80=4 --trace " + trace +
                                     " --round 360 --policy maxmin-het --json /dev/stdout");
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("maxmin-het"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"jobs_completed\": 30"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace hetsched::sched
