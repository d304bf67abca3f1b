// Model partitioning at scale: Llama 2 70B (80 blocks + embedding + head) on 1,024 accelerators
// of 6 types (128 eight-device nodes), against the same model on 1,024 devices of one type
// (the baseline, measured in the same run).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/io/cluster_reader.h"
#include "model/model_spec.h"
#include "plan/model_partition.h"

namespace {

using hetsched::model::Cluster;

const char* kSixTypes =
    "a100-80g=256:per_node=8,h100-80g=192:per_node=8,mi250x=192:per_node=8,"
    "mi300x=128:per_node=8,ascend-910b=128:per_node=8,l40s=128:per_node=8";
const char* kOneType = "a100-80g=1024:per_node=8";

Cluster LoadOrDie(const char* spec) {
  auto c = hetsched::model::io::ParseClusterShorthand(spec);
  if (!c.ok()) {
    std::fprintf(stderr, "cluster: %s\n", c.status().message().c_str());
    std::exit(1);
  }
  return std::move(*c);
}

void Plan(benchmark::State& state, const char* cluster_spec) {
  const Cluster cluster = LoadOrDie(cluster_spec);
  auto spec = hetsched::model::MakePreset("llama-70b", {});
  if (!spec.ok()) std::exit(1);
  int64_t runs = 0;
  double step = 0;
  size_t stages = 0;
  for (auto _ : state) {
    auto plan = hetsched::plan::PlanModelPartition(*spec, cluster, {});
    if (!plan.ok()) {
      state.SkipWithError(plan.status().message().c_str());
      return;
    }
    runs = plan->dp_runs;
    step = plan->step_s;
    stages = plan->stages.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["layers"] = static_cast<double>(spec->layers.size());
  state.counters["devices"] = static_cast<double>(cluster.devices.size());
  state.counters["dp_runs"] = static_cast<double>(runs);
  state.counters["stages"] = static_cast<double>(stages);
  state.counters["step_s"] = step;
}

void BM_PlanLlama70bOn1024SixTypes(benchmark::State& state) { Plan(state, kSixTypes); }
void BM_PlanLlama70bOn1024OneTypeBaseline(benchmark::State& state) { Plan(state, kOneType); }

BENCHMARK(BM_PlanLlama70bOn1024OneTypeBaseline)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PlanLlama70bOn1024SixTypes)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
