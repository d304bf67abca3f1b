// One scheduling decision on a 10,000-node / 80,000-device cluster with 100,000 queued jobs.
// Each iteration: one running job finishes (freeing its device) and the scheduler decides.
// Prints per-decision latency percentiles (p50/p99, microseconds) as counters.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_setup.h"

namespace {

using namespace hetsched;  // NOLINT: benchmark file

constexpr int kNodes = 10'000;
constexpr int kQueued = 100'000;

// `elastic`: every job may run at 1 to 8 workers (sched/elastic.h): queued jobs are sized
// before each decision and, at full decisions, running ones shrink and grow.
void BM_Decision(benchmark::State& state, const char* policy, double preempt_interval_s,
                 bool elastic = false) {
  static auto cluster = bench::GavelMixCluster(kNodes);
  static auto profile = bench::GavelThroughputs();
  if (!cluster.ok() || !profile.ok()) {
    state.SkipWithError("inputs");
    return;
  }
  const int devices = static_cast<int>(cluster->devices.size());
  static auto workload = sim::GenerateGavelTrace(*profile, bench::Backlog(devices + kQueued));
  sched::SchedulerOptions options;
  options.preempt_interval_s = preempt_interval_s;
  options.elastic = elastic;
  auto filled = bench::FillCluster(*cluster, *profile, *workload, policy, options);
  if (!filled.ok()) {
    state.SkipWithError("scheduler");
    return;
  }
  auto& sched = *filled->scheduler;
  std::vector<double> us;
  // Two hours on: every running job is past its quantum (an hour with the default preemption
  // cost), so a full decision reconsiders all of them, the worst case.
  double now = 7200;
  for (auto _ : state) {
    if (!filled->FinishNext(now)) break;
    const auto t0 = std::chrono::steady_clock::now();
    sched::Decision d = sched.Decide(now);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    filled->Record(d);
    benchmark::DoNotOptimize(d);
    now += 1;
  }
  std::sort(us.begin(), us.end());
  if (!us.empty()) {
    state.counters["p50_us"] = us[us.size() / 2];
    state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  }
  state.counters["devices"] = devices;
  state.counters["nodes"] = static_cast<double>(cluster->nodes.size());
  state.counters["queued"] = static_cast<double>(sched.queued());
}

BENCHMARK_CAPTURE(BM_Decision, fifo_het_fill, "fifo-het", 1e9)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, fifo_het_full, "fifo-het", 0)
    ->Iterations(10)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, easy_backfill, "easy-backfill", 0)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);
// Preemptive policies: a full reconsideration of all running and queued jobs per decision,
// and the between-reallocations fill decision (--preempt-interval).
BENCHMARK_CAPTURE(BM_Decision, default_full, "default", 0)
    ->Iterations(10)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, las_full, "las", 0)->Iterations(10)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, las_het_full, "las-het", 0)
    ->Iterations(10)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, default_fill, "default", 1e9)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, las_het_fill, "las-het", 1e9)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, default_fill_elastic, "default", 1e9, true)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, default_full_elastic, "default", 0, true)
    ->Iterations(10)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, fifo_het_fill_elastic, "fifo-het", 1e9, true)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
