// Optimized allocations: the share of time X[j][t] each job j should get on each device type t,
// from a linear program per objective (Gavel, Narayanan et al., OSDI 2020, Section 4), subject to
// sum_t X[j][t] <= 1 per job and sum_j gang_j X[j][t] <= devices of t. Large problems may be
// partitioned as POP does (Narayanan et al., SOSP 2021): k random sub-problems, each with 1/k of
// every type's devices, solved separately.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/lp_solver.h"
#include "util/status.h"

namespace hetsched::sched {

enum class Objective {
  // Max the min over jobs of (weighted) effective throughput normalized by its throughput
  // under an equal share of the cluster (Gavel's heterogeneity-aware LAS / max-min fairness).
  kMaxMinFairness,
  // Max the sum over jobs of weight x throughput normalized by the job's best speed.
  kMaxThroughput,
  // Min the time the last job finishes: max z with throughput_j >= remaining_j * z.
  kMinMakespan,
  // Steps per dollar: max sum_j sum_t X[j][t] * (steps per dollar of j on t relative to j's
  // best type), subject to each job's SLO rate (soft: a shortfall is penalized and reported).
  kMinCost,
  // Finish-time fairness (Themis, Mahajan et al., NSDI 2020): min the max over jobs of
  // rho_j = (elapsed_j + remaining_j / throughput_j) / (time to run j alone on an equal share);
  // bisection on rho, one LP per step.
  kFinishTimeFairness,
};

struct AllocJob {
  std::string name;           // for messages
  std::vector<double> speed;  // per type: gang steps/s there; 0 = may not run there
  int32_t gang = 1;           // devices used while it runs
  double weight = 1;          // kMaxMinFairness: fairness weight; kMaxThroughput: value weight
  double remaining = 0;       // steps left (kMinMakespan, kFinishTimeFairness)
  double work = 0;            // total steps (kFinishTimeFairness)
  double elapsed_s = 0;       // since arrival (kFinishTimeFairness)
  double slo_rate = 0;        // steps/s needed from now to meet its SLO; 0: none (kMinCost)
  // Identical jobs this row stands for: each gets the row's shares, and their gangs count that
  // often against capacity (ThroughputPlan passes one row per class of jobs).
  double count = 1;
};

struct AllocationProblem {
  std::vector<AllocJob> jobs;
  std::vector<double> capacity;        // devices per type available to these jobs
  std::vector<double> price_per_hour;  // per device of each type (kMinCost)
};

struct Allocation {
  int32_t types = 0;
  std::vector<double> x;  // jobs x types, row-major
  // The whole allocation's value: kMaxMinFairness the min normalized throughput / weight
  // (higher is better); kMaxThroughput the sum of throughput / best speed; kMinMakespan the
  // longest remaining / throughput in seconds (lower is better); kMinCost the summed relative
  // steps per dollar; kFinishTimeFairness the max rho (lower is better).
  double objective = 0;
  std::vector<int32_t> slo_missed;  // kMinCost: jobs whose SLO rate the allocation misses
  int32_t lps_solved = 0;
  double At(size_t job, int32_t type) const { return x[job * types + type]; }
};

struct AllocationOptions {
  LpOptions lp;
  // POP: split into ceil(classes / max_jobs_per_lp) sub-problems when the jobs form more
  // classes than this (identical jobs are one class). 0: never split. The default keeps one
  // LP under about 0.3 s of CPU (docs/benchmarks.md) at about 4 % below the full LP's min
  // for 10,000 distinct jobs; Gavel's job mix never reaches it.
  int32_t max_jobs_per_lp = 1000;
  // kFinishTimeFairness: stop bisecting once hi / lo - 1 is below this.
  double ftf_tolerance = 0.01;
};

std::string_view ObjectiveName(Objective objective);

// Effective throughput of job j under `a`, normalized as kMaxMinFairness does (1 = what an
// equal share of the cluster gives it); exposed for tests and reports.
double NormalizedThroughput(const AllocationProblem& problem, const Allocation& a, size_t job);
// Each job's throughput (steps/s) under an equal share of the cluster.
std::vector<double> EqualShareThroughput(const AllocationProblem& problem);

// Solves the problem. Errors: InvalidArgument for a malformed problem (sizes disagree, a
// kMinCost type without a price); Internal naming the solver status when an LP fails (the
// caller decides what to fall back to).
util::Result<Allocation> ComputeAllocation(const AllocationProblem& problem, Objective objective,
                                           LpSolver& solver, const AllocationOptions& options = {});

}  // namespace hetsched::sched
