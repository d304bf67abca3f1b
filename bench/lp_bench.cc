// Allocation LPs at scale (sched/allocation.h): N active jobs over 8 device types, solved with
// CLP, as one LP and partitioned as POP does. Counters: jobs, LP variables, the objective
// (min normalized throughput for maxmin-het) and, for POP, its ratio to the full LP's.
// Instance: speeds are a per-job base x a per-type factor (1..6, Gavel's V100/K80 spread) x
// noise 0.7..1.3; gangs 1/2/4/8 w.p. 0.7/0.1/0.15/0.05 (Gavel's multi-GPU mix); 20 % of
// (job, type) pairs disallowed; each type has N/16 devices (contended: half a device per job).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "sched/allocation.h"
#include "sched/lp_solver.h"

namespace {

using namespace hetsched::sched;  // NOLINT: benchmark file

constexpr int kTypes = 8;

// `classes` > 0: every job is a copy of one of that many templates (Gavel's mix: 26 job types
// x 4 scales = 104), so identical jobs can be aggregated; 0: all jobs distinct.
AllocationProblem MakeProblem(int jobs, uint64_t seed, int classes) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  AllocationProblem p;
  for (int t = 0; t < kTypes; ++t) {
    p.capacity.push_back(std::max(8, jobs / 16));
    p.price_per_hour.push_back(0.5 + 0.5 * t);
  }
  double factor[kTypes];
  for (int t = 0; t < kTypes; ++t) factor[t] = 1 + 5.0 * t / (kTypes - 1);
  std::vector<AllocJob> templates;
  for (int j = 0; j < jobs; ++j) {
    if (classes > 0 && static_cast<int>(templates.size()) == classes) {
      AllocJob job = templates[std::uniform_int_distribution<int>(0, classes - 1)(rng)];
      job.name = "job-" + std::to_string(j);
      p.jobs.push_back(std::move(job));
      continue;
    }
    AllocJob job;
    job.name = "job-" + std::to_string(j);
    const double base = 0.1 + u(rng);
    job.speed.resize(kTypes);
    bool any = false;
    for (int t = 0; t < kTypes; ++t) {
      job.speed[t] = u(rng) < 0.2 ? 0 : base * factor[t] * (0.7 + 0.6 * u(rng));
      any = any || job.speed[t] > 0;
    }
    if (!any) job.speed[0] = base;
    const double g = u(rng);
    job.gang = g < 0.7 ? 1 : g < 0.8 ? 2 : g < 0.95 ? 4 : 8;
    job.work = 1e4 + 1e6 * u(rng);
    job.remaining = job.work * (0.1 + 0.9 * u(rng));
    job.elapsed_s = 3600 * 10 * u(rng);
    if (classes > 0) templates.push_back(job);
    p.jobs.push_back(std::move(job));
  }
  return p;
}

// Full-LP objective per (objective, jobs), filled by the full runs so the POP runs (registered
// after them) report their ratio to it.
std::map<std::pair<int, int>, double>& FullObjective() {
  static std::map<std::pair<int, int>, double> m;
  return m;
}

void BM_Allocation(benchmark::State& state, Objective objective) {
  const int jobs = static_cast<int>(state.range(0));
  const int max_jobs_per_lp = static_cast<int>(state.range(1));
  const int classes = static_cast<int>(state.range(2));
  const AllocationProblem p = MakeProblem(jobs, 42, classes);
  auto solver = MakeClpSolver();
  AllocationOptions options;
  options.max_jobs_per_lp = max_jobs_per_lp;
  options.lp.max_seconds = 120;
  if (const char* m = std::getenv("LP_METHOD")) {
    const std::string method = m;
    options.lp.method = method == "dual"   ? LpOptions::Method::kDual
                        : method == "auto" ? LpOptions::Method::kAuto
                                           : LpOptions::Method::kPrimal;
  }
  double value = 0;
  int32_t lps = 0;
  for (auto _ : state) {
    auto a = ComputeAllocation(p, objective, *solver, options);
    if (!a.ok()) {
      state.SkipWithError(a.status().ToString().c_str());
      return;
    }
    value = a->objective;
    lps = a->lps_solved;
    benchmark::DoNotOptimize(a->x.data());
  }
  state.counters["jobs"] = jobs;
  state.counters["lps"] = lps;
  state.counters["objective"] = value;
  const auto key = std::make_pair(static_cast<int>(objective) * 1000 + classes, jobs);
  if (max_jobs_per_lp == 0) {
    FullObjective()[key] = value;
  } else if (FullObjective().count(key) && FullObjective()[key] != 0) {
    state.counters["vs_full"] = value / FullObjective()[key];
  }
}

// Args: jobs, max jobs per LP (0: one LP), job templates (0: all distinct). Full LPs first (the
// POP runs compare against them).
BENCHMARK_CAPTURE(BM_Allocation, maxmin, Objective::kMaxMinFairness)
    ->Args({1000, 0, 0})
    ->Args({2500, 0, 0})
    ->Args({2500, 250, 0})
    ->Args({10000, 0, 0})
    ->Args({10000, 1000, 0})
    ->Args({10000, 250, 0})
    ->Args({10000, 100, 0})
    ->Args({10000, 0, 104})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Allocation, max_throughput, Objective::kMaxThroughput)
    ->Args({10000, 0, 0})
    ->Args({10000, 0, 104})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Allocation, min_makespan, Objective::kMinMakespan)
    ->Args({10000, 0, 0})
    ->Args({10000, 250, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Allocation, min_cost, Objective::kMinCost)
    ->Args({10000, 0, 0})
    ->Args({10000, 0, 104})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Allocation, ftf, Objective::kFinishTimeFairness)
    ->Args({10000, 250, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
