#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "sched/allocation.h"
#include "sched/lp_solver.h"

namespace hetsched::sched {
namespace {

AllocJob Job(std::vector<double> speed, int32_t gang = 1) {
  AllocJob j;
  j.name = "j";
  j.speed = std::move(speed);
  j.gang = gang;
  j.remaining = j.work = 1000;
  return j;
}

TEST(LpSolver, SmallProgramMatchesHandSolution) {
  // max 3x + 2y  s.t.  x + y <= 4,  x + 3y <= 6,  0 <= x <= 3,  y >= 0.
  // Vertices: (0,0) 0, (3,0) 9, (3,1) 11, (0,2) 4; optimum (3,1), 11.
  LinearProgram lp(LinearProgram::Sense::kMaximize);
  const int32_t r0 = lp.AddRow(-kLpInfinity, 4);
  const int32_t r1 = lp.AddRow(-kLpInfinity, 6);
  lp.AddVariable(0, 3, 3, {{r0, 1}, {r1, 1}});
  lp.AddVariable(0, kLpInfinity, 2, {{r0, 1}, {r1, 3}});
  auto solver = MakeClpSolver();
  const LpSolution s = solver->Solve(lp, {});
  ASSERT_EQ(s.status, LpStatus::kOptimal) << s.message;
  EXPECT_NEAR(s.values[0], 3, 1e-9);
  EXPECT_NEAR(s.values[1], 1, 1e-9);
  EXPECT_NEAR(s.objective, 11, 1e-9);
  EXPECT_LE(lp.MaxViolation(s.values), 1e-9);
}

TEST(LpSolver, InfeasibleProgramIsReportedNotSolved) {
  LinearProgram lp(LinearProgram::Sense::kMinimize);
  const int32_t r = lp.AddRow(5, kLpInfinity);  // x >= 5 with x <= 1
  lp.AddVariable(0, 1, 1, {{r, 1}});
  const LpSolution s = MakeClpSolver()->Solve(lp, {});
  EXPECT_EQ(s.status, LpStatus::kInfeasible);
  EXPECT_NE(s.message.find("infeasible"), std::string::npos) << s.message;
}

// Two jobs, two types (2 devices of type 0, 1 of type 1), one device each.
// Speeds A = (4, 1), B = (2, 1.5). Equal share: 3 devices for 2 one-device jobs, so each gets
// its time spread over the devices: iso_A = (4*2 + 1*1)/3 = 3, iso_B = (2*2 + 1.5*1)/3 = 11/6.
// Normalized throughput: A = (4 xA0 + xA1)/3 <= 4/3, B = (2 xB0 + 1.5 xB1)/(11/6) <= 12/11,
// both maxima at the same time (type 0 has room for both), so max-min = 12/11 with xB0 = 1.
TEST(Allocation, MaxMinTwoByTwoMatchesHandSolution) {
  AllocationProblem p;
  p.capacity = {2, 1};
  p.jobs = {Job({4, 1}), Job({2, 1.5})};
  auto solver = MakeClpSolver();
  auto a = ComputeAllocation(p, Objective::kMaxMinFairness, *solver);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NEAR(a->objective, 12.0 / 11.0, 1e-6);
  EXPECT_NEAR(a->At(1, 0), 1, 1e-6);
  EXPECT_NEAR(a->At(1, 1), 0, 1e-6);
  // The secondary term gives A all of type 0 too (its best), not a mix.
  EXPECT_NEAR(a->At(0, 0), 1, 1e-6);
}

// One device per type; A = (3, 1), B = (2, 2). Normalized by best: A (1, 1/3), B (1, 1).
// Each job's value is at most 1, so 2 is an upper bound, met only by A on 0 and B on 1.
TEST(Allocation, MaxThroughputTwoByTwoMatchesHandSolution) {
  AllocationProblem p;
  p.capacity = {1, 1};
  p.jobs = {Job({3, 1}), Job({2, 2})};
  auto a = ComputeAllocation(p, Objective::kMaxThroughput, *MakeClpSolver());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NEAR(a->objective, 2, 1e-6);
  EXPECT_NEAR(a->At(0, 0), 1, 1e-6);
  EXPECT_NEAR(a->At(1, 1), 1, 1e-6);
}

// min-makespan, one device of each type, A = (2, 1) with 100 steps left, B = (2, 1) with 100:
// makespan M needs 2 xA0 + xA1 >= 100/M and the same for B, xA0 + xB0 <= 1, xA1 + xB1 <= 1:
// summing, 2*(xA0+xB0) + (xA1+xB1) <= 3 >= 200/M, so M >= 66.7, met by xA0 = xB0 = 1/2 and
// xA1 = xB1 = 1/2 (each 1.5 steps/s).
TEST(Allocation, MinMakespanTwoByTwoMatchesHandSolution) {
  AllocationProblem p;
  p.capacity = {1, 1};
  p.jobs = {Job({2, 1}), Job({2, 1})};
  p.jobs[0].remaining = p.jobs[1].remaining = 100;
  auto a = ComputeAllocation(p, Objective::kMinMakespan, *MakeClpSolver());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NEAR(a->objective, 200.0 / 3.0, 1e-3);
}

// Checks every allocation's invariants on a random instance.
void ExpectFeasible(const AllocationProblem& p, const Allocation& a, const std::string& what) {
  const int32_t types = static_cast<int32_t>(p.capacity.size());
  for (size_t j = 0; j < p.jobs.size(); ++j) {
    double row = 0;
    for (int32_t t = 0; t < types; ++t) {
      const double x = a.At(j, t);
      EXPECT_GE(x, 0) << what;
      if (!(p.jobs[j].speed[t] > 0)) {
        EXPECT_EQ(x, 0) << what << " job " << j << " type " << t;
      }
      row += x;
    }
    EXPECT_LE(row, 1 + 1e-9) << what << " job " << j;
  }
  for (int32_t t = 0; t < types; ++t) {
    double used = 0;
    for (size_t j = 0; j < p.jobs.size(); ++j) used += a.At(j, t) * p.jobs[j].gang;
    EXPECT_LE(used, p.capacity[t] + 1e-9) << what << " type " << t;
  }
}

AllocationProblem RandomProblem(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> njobs(1, 14), ntypes(1, 4), cap(0, 8), gang(1, 4);
  std::uniform_real_distribution<double> u(0, 1);
  AllocationProblem p;
  const int types = ntypes(rng);
  for (int t = 0; t < types; ++t) {
    p.capacity.push_back(cap(rng));
    p.price_per_hour.push_back(0.5 + 3 * u(rng));
  }
  const int n = njobs(rng);
  for (int j = 0; j < n; ++j) {
    std::vector<double> speed(types);
    for (int t = 0; t < types; ++t) speed[t] = u(rng) < 0.25 ? 0 : 0.1 + 10 * u(rng);
    AllocJob job = Job(speed, gang(rng));
    job.work = 1000 + 1e5 * u(rng);
    job.remaining = job.work * (0.05 + 0.95 * u(rng));
    job.elapsed_s = 1e4 * u(rng);
    job.weight = u(rng) < 0.2 ? 2 : 1;
    job.slo_rate = u(rng) < 0.3 ? 0.5 * u(rng) : 0;
    p.jobs.push_back(std::move(job));
  }
  return p;
}

TEST(Allocation, RandomInstancesRespectRowsAndCapacities) {
  std::mt19937_64 rng(7);
  auto solver = MakeClpSolver();
  for (int i = 0; i < 40; ++i) {
    const AllocationProblem p = RandomProblem(rng);
    for (Objective o :
         {Objective::kMaxMinFairness, Objective::kMaxThroughput, Objective::kMinMakespan,
          Objective::kMinCost, Objective::kFinishTimeFairness}) {
      for (int32_t max_jobs : {0, 4}) {
        AllocationOptions options;
        options.max_jobs_per_lp = max_jobs;
        auto a = ComputeAllocation(p, o, *solver, options);
        const std::string what = std::string(ObjectiveName(o)) + " instance " + std::to_string(i) +
                                 " max_jobs " + std::to_string(max_jobs);
        ASSERT_TRUE(a.ok()) << what << ": " << a.status().ToString();
        ExpectFeasible(p, *a, what);
      }
    }
  }
}

// maxmin-het against a grid search over every allocation of 3 one-device jobs to 2 types
// (one device each) in steps of 1/20: the LP's min is at least the grid's best (the grid is a
// subset of the feasible set), minus the secondary term's allowance.
TEST(Allocation, MaxMinBeatsFineGridSearchOnThreeJobs) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.2, 5);
  auto solver = MakeClpSolver();
  constexpr int kSteps = 20;
  for (int instance = 0; instance < 6; ++instance) {
    AllocationProblem p;
    p.capacity = {1, 1};
    for (int j = 0; j < 3; ++j) p.jobs.push_back(Job({u(rng), u(rng)}));
    // Equal-share throughput by hand: 2 devices for 3 jobs, a 2/3 share spread evenly.
    double iso[3];
    for (int j = 0; j < 3; ++j)
      iso[j] = (2.0 / 3.0) * (p.jobs[j].speed[0] + p.jobs[j].speed[1]) / 2;
    // All splits (a0, a1, a2) of each type's time with a0 + a1 + a2 <= kSteps.
    std::vector<std::array<int, 3>> splits;
    for (int a = 0; a <= kSteps; ++a) {
      for (int b = 0; a + b <= kSteps; ++b) {
        for (int c = 0; a + b + c <= kSteps; ++c) splits.push_back({a, b, c});
      }
    }
    double grid_best = 0;
    for (const auto& s0 : splits) {
      for (const auto& s1 : splits) {
        double worst = 1e300;
        bool ok = true;
        for (int j = 0; j < 3 && ok; ++j) {
          ok = s0[j] + s1[j] <= kSteps;
          const double thr = (p.jobs[j].speed[0] * s0[j] + p.jobs[j].speed[1] * s1[j]) / kSteps;
          worst = std::min(worst, thr / iso[j]);
        }
        if (ok) grid_best = std::max(grid_best, worst);
      }
    }
    auto a = ComputeAllocation(p, Objective::kMaxMinFairness, *solver);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    double lp_min = 1e300;
    for (int j = 0; j < 3; ++j) {
      const double thr = p.jobs[j].speed[0] * a->At(j, 0) + p.jobs[j].speed[1] * a->At(j, 1);
      lp_min = std::min(lp_min, thr / iso[j]);
    }
    EXPECT_NEAR(lp_min, a->objective, 1e-9);
    EXPECT_GE(lp_min, grid_best * (1 - 2e-3)) << "instance " << instance;
    // And the grid gets close to it (the optimum is continuous in the shares).
    EXPECT_LE(lp_min, grid_best * 1.2) << "instance " << instance;
  }
}

TEST(Allocation, PartitionedProblemStaysCloseToTheFullOne) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.5, 5);
  AllocationProblem p;
  p.capacity = {40, 40, 40};
  for (int j = 0; j < 200; ++j) p.jobs.push_back(Job({u(rng), u(rng), u(rng)}));
  auto solver = MakeClpSolver();
  auto full = ComputeAllocation(p, Objective::kMaxMinFairness, *solver);
  AllocationOptions pop;
  pop.max_jobs_per_lp = 50;
  auto split = ComputeAllocation(p, Objective::kMaxMinFairness, *solver, pop);
  ASSERT_TRUE(full.ok() && split.ok());
  EXPECT_EQ(split->lps_solved, 4);
  EXPECT_LE(split->objective, full->objective + 1e-6);
  EXPECT_GE(split->objective, 0.8 * full->objective);
}

// Identical jobs are one LP class: 600 copies of 3 templates solve as one 3-class LP (no POP
// split), give every copy the same shares, and reach the min a hand count gives: 3 templates
// x 200 copies on 100 + 100 devices, template speeds A (1,1), B (2,1), C (1,2).
TEST(Allocation, IdenticalJobsAreOneClass) {
  AllocationProblem p;
  p.capacity = {100, 100};
  const std::vector<std::vector<double>> templates = {{1, 1}, {2, 1}, {1, 2}};
  for (int j = 0; j < 600; ++j) p.jobs.push_back(Job(templates[j % 3]));
  AllocationOptions options;
  options.max_jobs_per_lp = 100;
  auto a = ComputeAllocation(p, Objective::kMaxMinFairness, *MakeClpSolver(), options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->lps_solved, 1);
  for (int j = 3; j < 600; ++j) {
    EXPECT_EQ(a->At(j, 0), a->At(j % 3, 0));
    EXPECT_EQ(a->At(j, 1), a->At(j % 3, 1));
  }
  // Equal share: 200 devices for 600 jobs, iso = (s0 + s1) / 6: A 1/3, B and C 1/2. Per copy,
  // B on type 0 and C on type 1 (their better types), A split evenly: with a = xA0 = xA1,
  // xB0 = xC1 = 1/2 - a (each type: 200 copies x shares <= 100), A = 6a, B = C = 2 - 4a,
  // equal at a = 0.2: min 1.2.
  EXPECT_NEAR(a->objective, 1.2, 1e-6);
  ExpectFeasible(p, *a, "classes");
}

TEST(Allocation, MinCostReportsAnSloNoAllocationMeets) {
  AllocationProblem p;
  p.capacity = {1};
  p.price_per_hour = {1};
  p.jobs = {Job({2}), Job({2})};
  // 1.5 + 1 steps/s needed, 2 available. The penalty is per unmet fraction of a job's SLO, so
  // job 1's (smaller) SLO is met first and job 0 gets the remaining 1 steps/s.
  p.jobs[0].slo_rate = 1.5;
  p.jobs[1].slo_rate = 1;
  auto a = ComputeAllocation(p, Objective::kMinCost, *MakeClpSolver());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->slo_missed.size(), 1u);
  EXPECT_EQ(a->slo_missed[0], 0);
  EXPECT_NEAR(a->At(1, 0), 0.5, 1e-6);
  ExpectFeasible(p, *a, "min-cost");
}

TEST(Allocation, MinCostWithoutPricesIsAnError) {
  AllocationProblem p;
  p.capacity = {1};
  p.price_per_hour = {0};
  p.jobs = {Job({2})};
  auto a = ComputeAllocation(p, Objective::kMinCost, *MakeClpSolver());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("price_per_hour"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::sched
