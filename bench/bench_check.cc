// `make bench-check`, CI's performance gate: reduced sched_bench and sim_bench workloads whose
// CPU time per event is compared with a fixed reference computation timed in the same process,
// interleaved with them. Fails (exit 1) when a case's median ratio exceeds its bound below.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench_setup.h"
#include "sim/engine.h"

namespace {

using namespace hetsched;  // NOLINT: benchmark file

// The bounds, as ratios: a case's median CPU time per event (its decisions' share of it, for a
// simulation) over the reference's median CPU time per key (ReferenceWork). Each is about twice
// the median ratio of 16 runs of this gate on commit 7e54a04 (2026-12-05, the shared 2-core
// Intel Xeon VM, RelWithDebInfo build): 6 beside other engineers' builds (load average about 7)
// and 10 under an extra `ninja -j2` compile (load average about 8). The highest ratio of a run
// was at most 1.31x its case's median, the lowest 0.81x (the reference suffers more from a busy
// machine), so noise stays under the bound and a 3x slowdown exceeds it even on a busy machine.
// Recalibrate when a change makes the scheduler faster or slower on purpose (docs/benchmarks.md).
// Recalibrated 2026-12-06 (commit 4441c1a) when `default` began solving a max-throughput LP at
// each full decision (sched/throughput_plan.h): sim/default at about twice its ratio in 3 runs
// then (156-161); full/default kept (its ratio fell to 95,000-102,000: fewer preemptions);
// event/default (fill decisions, no LP) read 10.1-17.8 that day and the untouched
// event/fifo-het 7.6-14.0 (2.08-3.51 us per event on an otherwise idle VM), up to 2.7x their
// medians of 7e54a04: these memory-bound cases suffer from the host's load more than the
// reference does, so both bounds were raised to about 4x those medians (20 and 24); they
// catch a 4x slowdown, not a 3x one.
// Tightened 2026-12-06 (issue 33, branch h-perf, commit 8e6458a) after fifo-het's full decisions
// began to visit only the running jobs that gain from a move and default's plan to keep job
// classes: 4 runs beside other engineers' work (load average 4.4) read sim/fifo-het 6.4-7.9
// (was about 43), full/fifo-het 3,702-4,287 (was about 21,000), sim/default 105-118 and
// full/default 90,500-96,500; their bounds went to about twice those medians (16, 8,000, 240
// and 190,000), so a 3x slowdown from the new level fails. The event cases are unchanged.
// sim/default tightened again 2026-12-06 (issue 33, branch h-perf-default, commit 988b4ac)
// after default's full decisions began to walk only the classes the plan does not cover: 3
// runs beside other engineers' work (load average about 5) read 88.0-90.1, so its bound went
// to 180 (about twice that); the others read as before and keep theirs.
// sim/default raised 2026-12-06 (issue 34, commit c679bf4) when the simulator began to wake
// for due full decisions: more full decisions per event, the same work each. Beside 563de03's
// binary on a quiet machine it read 85.0 / 90.1 there and 133.4 / 142.4 on main (29e8e03), so
// its bound went to 280 (about twice that); a 3x slowdown from the new level still fails.
// sim/default raised again 2026-12-06 (night, commit f023b2a) for a new development VM, which
// reads it higher for the same code: 4239dc2's binary read 199.7 / 212.3 and main's 229.6 /
// 249.1 alternating (load 2-3, build-bench), `.ci/run` 212.3 on main, while the simulation's
// own time per event was the same on both (55-60 us). Its bound went to 450 (about twice those),
// so a 3x slowdown from there still fails.
// steady/las added 2026-12-07 (issue 33): las's steady full decisions, which find who is past
// its quantum from the jobs' start order (SelectByStart). 4 runs at load average 10-12 (three
// engineers' builds beside it) read 1.6, 2.5, 2.3 and 1.6; with SelectByStart switched off
// (every job walked) it read 2,725. Its bound is 8, about 4x that median as for the other
// memory-bound cases of microseconds (event/*).
struct Bound {
  const char* name;
  double max_ratio;
};
constexpr Bound kBounds[] = {
    {"sim/fifo-het", 16},  {"sim/default", 450},     {"event/fifo-het", 20},
    {"event/default", 24}, {"full/fifo-het", 8'000}, {"full/default", 190'000},
    {"steady/las", 8},
};

// Sizes, so that the whole gate takes seconds: the simulation a twentieth of sim_bench's, the
// scheduler a tenth of sched_bench's cluster and a fifth of its queue. 7 x 2,000 fill events
// leave 6,000 jobs queued.
constexpr int kRepetitions = 7;
constexpr int kSimNodes = 500;  // 4,000 devices
constexpr int64_t kSimJobs = 5'000;
constexpr int kSchedNodes = 1'000;  // 8,000 devices
constexpr int kQueued = 20'000;
constexpr int kEventsPerRepetition = 2'000;
constexpr int kFullDecisionsPerRepetition = 2;
constexpr int kReferenceKeys = 100'000;

// CPU time of the whole process (the gate runs one thread): unlike wall time it does not grow
// when other processes take the CPU, which is most of the noise on a shared machine.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The yardstick: what a scheduler does most, on about 2 MB of data: sorts
// kReferenceKeys pseudo-random keys, pushes them through a binary heap, and inserts and erases a
// quarter of them in a balanced tree. The same keys every time; returns a checksum so that the
// work cannot be optimized away.
uint64_t ReferenceWork() {
  uint64_t seed = 42;
  std::vector<uint64_t> keys(kReferenceKeys);
  for (uint64_t& k : keys) k = SplitMix64(seed);
  std::vector<uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::priority_queue<uint64_t> heap;
  uint64_t sum = sorted[keys.size() / 2];
  for (uint64_t k : keys) {
    heap.push(k);
    if (heap.size() > keys.size() / 4) {
      sum += heap.top();
      heap.pop();
    }
  }
  std::set<uint64_t> tree;
  for (size_t i = 0; i < keys.size() / 4; ++i) tree.insert(keys[i]);
  for (size_t i = 0; i < keys.size() / 4; i += 2) tree.erase(keys[i]);
  return sum + tree.size();
}

double ReferencePerKey() {
  const double t0 = CpuSeconds();
  volatile uint64_t checksum = ReferenceWork();
  (void)checksum;
  return (CpuSeconds() - t0) / kReferenceKeys;
}

// One repetition of a case: CPU seconds per event, and the share of them the scheduler's
// decisions took (1 where only decisions are timed).
struct Sample {
  double cpu_per_event_s = 0;
  double decision_share = 1;
  double decision_cpu_per_event_s() const { return cpu_per_event_s * decision_share; }
};

struct GateCase {
  std::string name;
  std::string what;
  std::function<Sample()> run;
  bool times_more_than_decisions = false;  // prints the CPU per event in all beside
};

// Scheduler events on a full cluster, as in sched_bench: a running job finishes and the scheduler
// decides. The event's whole CPU time counts (Finish and Decide).
class EventLoop {
 public:
  EventLoop(bench::FilledScheduler filled, double seconds_between_events)
      : filled_(std::move(filled)), step_s_(seconds_between_events) {}

  double Run(int events) {
    const double t0 = CpuSeconds();
    for (int i = 0; i < events; ++i) {
      if (!filled_.FinishNext(now_s_)) {
        std::fprintf(stderr, "bench-check: no running job left to finish\n");
        std::exit(2);
      }
      filled_.Record(filled_.scheduler->Decide(now_s_));
      now_s_ += step_s_;
    }
    return (CpuSeconds() - t0) / events;
  }

 private:
  bench::FilledScheduler filled_;
  double step_s_;
  // As in sched_bench: two hours in, every running job is past its quantum.
  double now_s_ = 7200;
};

struct Inputs {
  model::ThroughputProfile profile;
  model::Cluster sim_cluster;
  model::Workload sim_trace;
  model::Cluster sched_cluster;
  model::Workload backlog;
};

util::Result<Inputs> LoadInputs() {
  Inputs in;
  ASSIGN_OR_RETURN(in.profile, bench::GavelThroughputs());
  ASSIGN_OR_RETURN(in.sim_cluster, bench::GavelMixCluster(kSimNodes));
  ASSIGN_OR_RETURN(in.sim_trace, sim::GenerateGavelTrace(
                                     in.profile, bench::TraceAtCapacity(kSimNodes, kSimJobs)));
  ASSIGN_OR_RETURN(in.sched_cluster, bench::GavelMixCluster(kSchedNodes));
  const auto devices = static_cast<int64_t>(in.sched_cluster.devices.size());
  ASSIGN_OR_RETURN(in.backlog,
                   sim::GenerateGavelTrace(in.profile, bench::Backlog(devices + kQueued)));
  return in;
}

// A whole simulation per repetition, with the simulator's defaults (as sim_bench). The decisions'
// share of its CPU time is estimated from the simulator's clocks: the wall time of all decisions
// over the wall time of the run (both grow alike when the machine is busy).
GateCase SimCase(const Inputs& in, const std::string& policy) {
  auto run = [&in, policy] {
    sim::SimOptions options;
    options.policy = policy;
    const double t0 = CpuSeconds();
    auto result = sim::Simulate(in.sim_cluster, in.sim_trace, &in.profile, options);
    const double cpu_s = CpuSeconds() - t0;
    if (!result.ok()) {
      std::fprintf(stderr, "bench-check: %s\n", result.status().message().c_str());
      std::exit(2);
    }
    return Sample{cpu_s / static_cast<double>(result->events),
                  result->sched_wall_s / result->sim_wall_s};
  };
  return {
      "sim/" + policy,
      "simulating " + std::to_string(kSimJobs) + " jobs on " + std::to_string(kSimNodes) + " nodes",
      run, /*times_more_than_decisions=*/true};
}

// `full`: every decision reconsiders every running and queued job (preempt interval 0), two
// hours apart so that no running job is inside its quantum; else decisions only fill.
util::Result<GateCase> DecisionCase(const Inputs& in, const std::string& policy, bool full) {
  sched::SchedulerOptions options;
  options.preempt_interval_s = full ? 0 : 1e9;
  ASSIGN_OR_RETURN(auto filled,
                   bench::FillCluster(in.sched_cluster, in.profile, in.backlog, policy, options));
  auto loop = std::make_shared<EventLoop>(std::move(filled), full ? 7200 : 1);
  const int events = full ? kFullDecisionsPerRepetition : kEventsPerRepetition;
  const std::string size = std::to_string(in.sched_cluster.devices.size()) + " running + " +
                           std::to_string(kQueued) + " queued";
  return GateCase{(full ? "full/" : "event/") + policy,
                  (full ? "full re-decision of " : "one event's decision, ") + size,
                  [loop, events] { return Sample{loop->Run(events)}; }};
}

// A time-slicing policy's steady full decisions: after one untimed at two hours (every job
// past its quantum: it re-deals the cluster), one every 0.1 s, when the jobs it started are
// inside their quantum (an hour: all of the gate's 14,000 decisions) and nothing is past it. What
// they cost is finding that out, which las does from the jobs' start order without a pass over
// every job (SelectByStart).
util::Result<GateCase> SteadyFullCase(const Inputs& in, const std::string& policy) {
  sched::SchedulerOptions options;
  options.preempt_interval_s = 0;
  ASSIGN_OR_RETURN(auto filled,
                   bench::FillCluster(in.sched_cluster, in.profile, in.backlog, policy, options));
  auto loop = std::make_shared<EventLoop>(std::move(filled), 0.1);
  loop->Run(1);
  return GateCase{"steady/" + policy,
                  "steady full re-decision of " + std::to_string(in.sched_cluster.devices.size()) +
                      " running + " + std::to_string(kQueued) + " queued",
                  [loop] { return Sample{loop->Run(kEventsPerRepetition)}; }};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double BoundOf(const std::string& name) {
  for (const Bound& b : kBounds) {
    if (name == b.name) return b.max_ratio;
  }
  std::fprintf(stderr, "bench-check: no bound for %s\n", name.c_str());
  std::exit(2);
}

// Runs every case kRepetitions times, each run right after a run of the reference, so that both
// see the same machine; prints the medians and returns whether every ratio is within its bound.
bool RunGate(const std::vector<GateCase>& cases) {
  std::vector<double> reference;
  std::vector<std::vector<Sample>> samples(cases.size());
  for (int rep = 0; rep < kRepetitions; ++rep) {
    for (size_t i = 0; i < cases.size(); ++i) {
      reference.push_back(ReferencePerKey());
      samples[i].push_back(cases[i].run());
    }
  }
  const double ref = Median(reference);
  std::printf("reference (sort, heap and tree over %d keys): %.1f ns CPU per key, median of %zu\n",
              kReferenceKeys, ref * 1e9, reference.size());
  std::printf("%-15s %18s %9s %9s\n", "case", "decision per event", "ratio", "bound");
  bool pass = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<double> decision, total;
    for (const Sample& s : samples[i]) {
      decision.push_back(s.decision_cpu_per_event_s());
      total.push_back(s.cpu_per_event_s);
    }
    const double t = Median(decision);
    const double ratio = t / ref;
    const double bound = BoundOf(cases[i].name);
    pass = pass && ratio <= bound;
    std::printf("%-15s %15.2f us %9.1f %9.1f  %-4s %s", cases[i].name.c_str(), t * 1e6, ratio,
                bound, ratio <= bound ? "ok" : "FAIL", cases[i].what.c_str());
    if (cases[i].times_more_than_decisions)
      std::printf(" (%.2f us per event in all)", Median(total) * 1e6);
    std::printf("\n");
  }
  return pass;
}

}  // namespace

int main() {
#ifndef NDEBUG
  std::fprintf(stderr,
               "bench-check: built without NDEBUG (a Debug build?); the bounds hold for the "
               "default optimized build (RelWithDebInfo)\n");
  return 2;
#endif
  auto in = LoadInputs();
  if (!in.ok()) {
    std::fprintf(stderr, "bench-check: %s\n", in.status().message().c_str());
    return 2;
  }
  std::vector<GateCase> cases = {SimCase(*in, "fifo-het"), SimCase(*in, "default")};
  for (bool full : {false, true}) {
    for (const char* policy : {"fifo-het", "default"}) {
      auto c = DecisionCase(*in, policy, full);
      if (!c.ok()) {
        std::fprintf(stderr, "bench-check: %s\n", c.status().message().c_str());
        return 2;
      }
      cases.push_back(std::move(*c));
    }
  }
  auto steady = SteadyFullCase(*in, "las");
  if (!steady.ok()) {
    std::fprintf(stderr, "bench-check: %s\n", steady.status().message().c_str());
    return 2;
  }
  cases.push_back(std::move(*steady));
  std::printf("bench-check: %d repetitions, medians of CPU time\n", kRepetitions);
  const bool pass = RunGate(cases);
  std::printf("bench-check: %s\n", pass ? "passed" : "FAILED: a case exceeds its bound");
  return pass ? 0 : 1;
}
