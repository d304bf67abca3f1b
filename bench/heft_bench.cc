// HEFT, CPOP and PEFT on large random DAGs (the design target: 10,000 tasks over 64
// processors in under a second on one core). The baseline is one pass that reads every cost
// and every edge once per processor, the floor of any O(E * P) list scheduler; results are
// compared as ratios to it (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <utility>

#include "model/random_dag.h"
#include "plan/cpop.h"
#include "plan/dag_problem.h"
#include "plan/heft.h"
#include "plan/peft.h"

namespace {

using hetsched::model::TaskGraph;

const TaskGraph& Graph(int32_t tasks, int32_t procs) {
  static std::map<std::pair<int32_t, int32_t>, std::unique_ptr<TaskGraph>> cache;
  auto& slot = cache[{tasks, procs}];
  if (!slot) {
    hetsched::model::RandomDagOptions o;
    o.tasks = tasks;
    o.processors = procs;
    o.ccr = 1.0;
    o.beta = 1.0;
    o.alpha = 1.0;
    o.seed = 42;
    slot = std::make_unique<TaskGraph>(hetsched::model::GenerateRandomDag(o).value());
    std::fprintf(stderr, "DAG: %d tasks, %zu edges, %d processors\n", tasks, slot->edges.size(),
                 procs);
  }
  return *slot;
}

void BM_Baseline_ReadCostsAndEdges(benchmark::State& state) {
  const TaskGraph& g =
      Graph(static_cast<int32_t>(state.range(0)), static_cast<int32_t>(state.range(1)));
  for (auto _ : state) {
    double sum = 0;
    for (int32_t t = 0; t < g.num_tasks(); ++t) {
      for (double c : g.tasks[t].cost) sum += c;
      for (int32_t k : g.in_edges(t)) {
        for (int32_t p = 0; p < g.num_processors(); ++p) sum += g.edges[k].data * (p + 1);
      }
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["tasks"] = static_cast<double>(g.num_tasks());
  state.counters["procs"] = static_cast<double>(g.num_processors());
}

template <hetsched::plan::Schedule (*Algo)(const hetsched::plan::DagProblem&)>
void BM_Algo(benchmark::State& state) {
  const TaskGraph& g =
      Graph(static_cast<int32_t>(state.range(0)), static_cast<int32_t>(state.range(1)));
  const hetsched::plan::DagProblem problem(g);
  double makespan = 0;
  for (auto _ : state) {
    makespan = Algo(problem).makespan;
    benchmark::DoNotOptimize(makespan);
  }
  state.counters["tasks"] = static_cast<double>(g.num_tasks());
  state.counters["procs"] = static_cast<double>(g.num_processors());
  state.counters["makespan"] = makespan;
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Args({1000, 16})->Args({10000, 64})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Baseline_ReadCostsAndEdges)->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Algo, hetsched::plan::Heft)->Name("BM_Heft")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Algo, hetsched::plan::Cpop)->Name("BM_Cpop")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Algo, hetsched::plan::Peft)->Name("BM_Peft")->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
