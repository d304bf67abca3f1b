// Gang placement on a 10,000-node / 80,000-device cluster (64 cores per node): a job that asks
// for no host resources (the common path), one that reserves cores, and the worst case for the
// latter, where every node but the last has free devices and no free cores, so the best-fit
// walk passes over 9,999 nodes. Prints the cluster size as counters.
#include <benchmark/benchmark.h>

#include "model/io/cluster_reader.h"
#include "sched/cluster_state.h"
#include "sched/placement.h"

namespace {

using namespace hetsched;  // NOLINT: benchmark file

const char* kCluster = "v100=80000:per_node=8";

void BM_PlaceGang(benchmark::State& state, int32_t cores, int32_t gang, bool exhaust) {
  static auto parsed = model::io::ParseClusterShorthand(kCluster);
  if (!parsed.ok()) {
    state.SkipWithError("cluster");
    return;
  }
  model::Cluster cluster = *parsed;
  for (model::Node& n : cluster.nodes) n.cores = 64;
  sched::ClusterState cs(cluster);
  const model::DeviceTypeId type = cluster.devices[0].type;
  if (exhaust) {
    // Every node but the last keeps its devices free and gives all its cores away.
    for (size_t n = 0; n + 1 < cluster.nodes.size(); ++n) {
      cs.TakeHost({cluster.device_of(model::NodeId(static_cast<int32_t>(n)), 0)},
                  sched::HostRequest{64, 0});
    }
  }
  const sched::HostRequest host{cores, 0};
  for (auto _ : state) {
    auto devices = sched::PlaceGang(cs, type, gang, {}, host);
    if (!devices) state.SkipWithError("no placement");
    benchmark::DoNotOptimize(devices);
  }
  state.counters["nodes"] = static_cast<double>(cluster.nodes.size());
  state.counters["devices"] = static_cast<double>(cluster.devices.size());
}

BENCHMARK_CAPTURE(BM_PlaceGang, no_host_request, 0, 8, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceGang, cores_8, 8, 8, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceGang, cores_8_worst_case, 8, 8, true)->Unit(benchmark::kMicrosecond);
// A gang of 16 spans two nodes: the rack search sums the nodes' room.
BENCHMARK_CAPTURE(BM_PlaceGang, gang_16_no_host_request, 0, 16, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceGang, gang_16_cores_8, 8, 16, false)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
