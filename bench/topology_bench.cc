// Topology queries on a large cluster: 10,000 nodes x 8 devices in 250 racks, built from YAML
// text generated here. Reports the time per Between() on random device pairs; the design
// target is O(1) and well under 100 ns per query.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "model/io/cluster_reader.h"
#include "model/topology.h"

namespace {

using hetsched::model::Cluster;
using hetsched::model::DeviceId;
using hetsched::model::NodeId;
using hetsched::model::Topology;

constexpr int kRacks = 250;
constexpr int kNodesPerRack = 40;  // 10,000 nodes
constexpr int kPairs = 1 << 16;

std::string ClusterYaml() {
  std::string text = "name: bench\nnetwork: {core_latency: 2us}\nracks:\n";
  for (int r = 0; r < kRacks; ++r) {
    text += fmt::format("  - {{name: r{:03}, uplink_bandwidth: 1600Gb/s, latency: 0.5us}}\n", r);
  }
  text += "nodes:\n";
  for (int r = 0; r < kRacks; ++r) {
    text += fmt::format(
        "  - name: r{:03}-n[01-{}]\n"
        "    rack: r{:03}\n"
        "    devices: [{{type: a100-80g, count: 8}}]\n"
        "    islands:\n"
        "      - {{kind: nvlink, members: [0, 1, 2, 3], bandwidth: 300GB/s, latency: 2us}}\n"
        "      - {{kind: nvlink, members: [4, 5, 6, 7], bandwidth: 300GB/s, latency: 2us}}\n"
        "    pcie_switches:\n"
        "      - {{members: [3, 4], bandwidth: 31.5GB/s, latency: 1us}}\n"
        "    nic: {{bandwidth: 200Gb/s, latency: 1us}}\n",
        r, kNodesPerRack, r);
  }
  return text;
}

const Cluster& BenchCluster() {
  static const Cluster cluster = [] {
    hetsched::util::Result<Cluster> c =
        hetsched::model::io::ParseClusterYaml(ClusterYaml(), "bench");
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.status().message().c_str());
      std::abort();
    }
    std::fprintf(stderr, "topology_bench: %zu nodes, %zu devices, %zu racks\n", c->nodes.size(),
                 c->devices.size(), c->racks.size());
    return std::move(c).value();
  }();
  return cluster;
}

void BM_BetweenRandomDevices(benchmark::State& state) {
  const Cluster& cluster = BenchCluster();
  Topology topo(cluster);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(cluster.devices.size()) - 1);
  std::vector<std::pair<DeviceId, DeviceId>> pairs(kPairs);
  for (auto& p : pairs) p = {DeviceId(pick(rng)), DeviceId(pick(rng))};
  size_t i = 0;
  for (auto _ : state) {
    const auto& [a, b] = pairs[i++ & (kPairs - 1)];
    benchmark::DoNotOptimize(topo.TransferSeconds(a, b, 1 << 20));
  }
  state.counters["devices"] = static_cast<double>(cluster.devices.size());
}
BENCHMARK(BM_BetweenRandomDevices);

// Pairs within one node exercise the island / switch / host branches.
void BM_BetweenDevicesOfOneNode(benchmark::State& state) {
  const Cluster& cluster = BenchCluster();
  Topology topo(cluster);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> node(0, static_cast<int32_t>(cluster.nodes.size()) - 1);
  std::uniform_int_distribution<int32_t> local(0, 7);
  std::vector<std::pair<DeviceId, DeviceId>> pairs(kPairs);
  for (auto& p : pairs) {
    NodeId n(node(rng));
    p = {cluster.device_of(n, local(rng)), cluster.device_of(n, local(rng))};
  }
  size_t i = 0;
  for (auto _ : state) {
    const auto& [a, b] = pairs[i++ & (kPairs - 1)];
    benchmark::DoNotOptimize(topo.TransferSeconds(a, b, 1 << 20));
  }
}
BENCHMARK(BM_BetweenDevicesOfOneNode);

void BM_ParseClusterYaml(benchmark::State& state) {
  const std::string text = ClusterYaml();
  for (auto _ : state) {
    auto c = hetsched::model::io::ParseClusterYaml(text, "bench");
    benchmark::DoNotOptimize(c.ok());
  }
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseClusterYaml)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
