// One scheduling decision on a 10,000-node / 80,000-device cluster with 100,000 queued jobs.
// Each iteration: one running job finishes (freeing its device) and the scheduler decides.
// Prints per-decision latency percentiles (p50/p99, microseconds) as counters; the full
// decisions' also split into steady ones (fewer than kSteadyActions jobs stopped and started)
// and mass re-deals, and `*_full_steady` times steady full decisions alone.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_setup.h"

namespace {

using namespace hetsched;  // NOLINT: benchmark file

constexpr int kNodes = 10'000;
constexpr int kQueued = 100'000;
// A full decision that stops and starts fewer jobs than this is a steady one; the others
// re-deal the cluster (every job past its quantum at once), their cost set by the actions.
constexpr size_t kSteadyActions = 100;
// default_full_steady: full decisions run untimed at most this many times waiting for a
// steady one.
constexpr int kMaxWarmUp = 20;

size_t Actions(const sched::Decision& d) { return d.preempted.size() + d.placed.size(); }

// One decision at `now`, carried out on `filled`: its wall time in microseconds, and the jobs
// it stopped and started in `actions`.
double TimedDecision(bench::FilledScheduler& filled, double now, size_t& actions) {
  const auto t0 = std::chrono::steady_clock::now();
  sched::Decision d = filled.scheduler->Decide(now);
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  actions = Actions(d);
  filled.Record(d);
  benchmark::DoNotOptimize(d);
  return us;
}

// Sets `prefix`p50_us and `prefix`p99_us from `us` (sorted here); nothing when empty.
void Percentiles(benchmark::State& state, const std::string& prefix, std::vector<double>& us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  state.counters[prefix + "p50_us"] = us[us.size() / 2];
  state.counters[prefix + "p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
}

// The same set of a scheduler filled at time 0 that every benchmark starts from; false (the
// benchmark skipped) when the inputs do not build.
std::optional<bench::FilledScheduler> Filled(benchmark::State& state, const char* policy,
                                             double preempt_interval_s, bool elastic,
                                             int& devices) {
  static auto cluster = bench::GavelMixCluster(kNodes);
  static auto profile = bench::GavelThroughputs();
  if (!cluster.ok() || !profile.ok()) {
    state.SkipWithError("inputs");
    return std::nullopt;
  }
  devices = static_cast<int>(cluster->devices.size());
  state.counters["devices"] = devices;
  state.counters["nodes"] = static_cast<double>(cluster->nodes.size());
  static auto workload = sim::GenerateGavelTrace(*profile, bench::Backlog(devices + kQueued));
  sched::SchedulerOptions options;
  options.preempt_interval_s = preempt_interval_s;
  options.elastic = elastic;
  auto filled = bench::FillCluster(*cluster, *profile, *workload, policy, options);
  if (!filled.ok()) {
    state.SkipWithError("scheduler");
    return std::nullopt;
  }
  return std::move(*filled);
}

// `elastic`: every job may run at 1 to 8 workers (sched/elastic.h): queued jobs are sized
// before each decision and, at full decisions, running ones shrink and grow.
void BM_Decision(benchmark::State& state, const char* policy, double preempt_interval_s,
                 bool elastic = false) {
  int devices = 0;
  std::optional<bench::FilledScheduler> filled =
      Filled(state, policy, preempt_interval_s, elastic, devices);
  if (!filled) return;
  auto& sched = *filled->scheduler;
  // All decisions; of the full ones (preempt_interval_s 0), the steady ones and the mass ones
  // with the jobs they stopped and started.
  std::vector<double> us, steady_us;
  double mass_us = 0, mass_actions = 0, mass_decisions = 0;
  const bool full = preempt_interval_s == 0;
  // Two hours on: every running job is past its quantum (an hour with the default preemption
  // cost), so a full decision reconsiders all of them, the worst case.
  double now = 7200;
  for (auto _ : state) {
    if (!filled->FinishNext(now)) break;
    size_t actions = 0;
    us.push_back(TimedDecision(*filled, now, actions));
    if (full && actions < kSteadyActions) {
      steady_us.push_back(us.back());
    } else if (full) {
      mass_us += us.back();
      mass_actions += static_cast<double>(actions);
      ++mass_decisions;
    }
    now += 1;
  }
  Percentiles(state, "", us);
  if (full) {
    state.counters["steady_n"] = static_cast<double>(steady_us.size());
    Percentiles(state, "steady_", steady_us);
    state.counters["mass_n"] = mass_decisions;
    if (mass_decisions > 0) {
      state.counters["mass_actions"] = mass_actions / mass_decisions;
      state.counters["mass_us_per_action"] = mass_us / mass_actions;
    }
  }
  state.counters["queued"] = static_cast<double>(sched.queued());
}

// Steady full decisions alone: from the same start as BM_Decision, full decisions run untimed
// until one stops and starts fewer than kSteadyActions jobs (the first ones re-deal the
// cluster); the iterations after it are timed, whatever they do (max_actions tells).
// `elastic`: as BM_Decision's.
void BM_SteadyFull(benchmark::State& state, const char* policy, bool elastic = false) {
  int devices = 0;
  std::optional<bench::FilledScheduler> filled = Filled(state, policy, 0, elastic, devices);
  if (!filled) return;
  auto& sched = *filled->scheduler;
  double now = 7200;
  int warm_up = 0;
  for (bool steady = false; !steady; ++warm_up, now += 1) {
    if (warm_up == kMaxWarmUp || !filled->FinishNext(now)) {
      state.SkipWithError("no steady full decision");
      return;
    }
    const sched::Decision d = sched.Decide(now);
    steady = Actions(d) < kSteadyActions;
    filled->Record(d);
  }
  std::vector<double> us;
  size_t max_actions = 0;
  for (auto _ : state) {
    if (!filled->FinishNext(now)) break;
    size_t actions = 0;
    us.push_back(TimedDecision(*filled, now, actions));
    max_actions = std::max(max_actions, actions);
    now += 1;
  }
  Percentiles(state, "", us);
  state.counters["warm_up"] = warm_up;
  state.counters["max_actions"] = static_cast<double>(max_actions);
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
BENCHMARK_CAPTURE(BM_SteadyFull, default_full_steady, "default")
    ->Iterations(30)
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
BENCHMARK_CAPTURE(BM_SteadyFull, default_full_steady_elastic, "default", true)
    ->Iterations(30)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decision, fifo_het_fill_elastic, "fifo-het", 1e9, true)
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
