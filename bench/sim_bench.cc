// A 100,000-job Gavel-mix trace on a 10,000-node / 80,000-device cluster, simulated once per
// policy. Reports events/s, simulated wall time and the process's peak memory. The `_shared`
// case gives every job an input on one storage server and gradient traffic per step, so that
// reads and multi-node gangs share links (sim/network.h) all run long.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "bench_setup.h"
#include "sim/engine.h"

namespace {

using namespace hetsched;  // NOLINT: benchmark file

void BM_Simulate(benchmark::State& state, const char* policy, bool shared_links) {
  static auto cluster = bench::GavelMixCluster(10'000);
  static auto profile = bench::GavelThroughputs();
  if (!cluster.ok() || !profile.ok()) {
    state.SkipWithError("inputs");
    return;
  }
  static auto workload = sim::GenerateGavelTrace(*profile, bench::TraceAtCapacity(10'000, 100'000));
  // The shared-links case works on copies (peak_rss_mb then includes them).
  const model::Cluster* c = &*cluster;
  const model::Workload* w = &*workload;
  model::Cluster shared_cluster;
  model::Workload shared_workload;
  if (shared_links) {
    // A 400 Gb/s storage server on the core; each job reads 20 GB from it and exchanges
    // 100 MB per worker per step.
    shared_cluster = *cluster;
    shared_cluster.storage.push_back({"nas", model::RackId(), 50e9});
    shared_workload = *workload;
    for (model::Job& job : shared_workload.jobs) {
      job.data_bytes = 20'000'000'000;
      job.sync_bytes_per_step = 100'000'000;
    }
    c = &shared_cluster;
    w = &shared_workload;
  }
  sim::SimResult last;
  for (auto _ : state) {
    sim::SimOptions so;
    so.policy = policy;
    auto r = sim::Simulate(*c, *w, &*profile, so);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    last = *r;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["jobs"] = static_cast<double>(last.jobs_total);
  state.counters["completed"] = static_cast<double>(last.jobs_completed);
  state.counters["events"] = static_cast<double>(last.events);
  state.counters["events_per_s"] = last.events / last.sim_wall_s;
  state.counters["sim_wall_s"] = last.sim_wall_s;
  state.counters["sched_wall_s"] = last.sched_wall_s;
  state.counters["decisions"] = static_cast<double>(last.decisions);
  state.counters["decision_p50_us"] = last.decision_p50_us;
  state.counters["decision_p99_us"] = last.decision_p99_us;
  state.counters["decision_max_us"] = last.decision_max_us;
  state.counters["peak_rss_mb"] = usage.ru_maxrss / 1024.0;
  state.counters["staged_bytes"] = last.staged_bytes;
}

BENCHMARK_CAPTURE(BM_Simulate, fifo_het, "fifo-het", false)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Simulate, default_policy, "default", false)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Simulate, fifo_het_shared, "fifo-het", true)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_Simulate, default_shared, "default", true)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
