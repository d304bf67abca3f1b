// Builders shared by the model-partitioning tests: clusters of made-up device types (one rack,
// each node's devices in one island) and chains of identical layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/model_spec.h"

namespace hetsched::plan::testing {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

struct TypeSpec {
  std::string name;
  double fp16_tflops = 100;
  uint64_t memory = 10 * kGiB;
  model::DeviceKind kind = model::DeviceKind::kGpu;
  double efficiency = 0.5;
  double memory_bandwidth = 1e15;  // compute-bound unless a test says otherwise
};

struct NodeSpec {
  std::string type;
  int32_t devices = 1;
  double island_bandwidth = 100e9;  // 0: no island
  double nic_bandwidth = 10e9;
  uint64_t host_memory = 0;
};

// A cluster of made-up types: every node in one rack; devices of a node in one island.
inline model::Cluster MakeCluster(const std::vector<TypeSpec>& types,
                                  const std::vector<NodeSpec>& nodes) {
  model::Cluster c;
  c.name = "test";
  for (const TypeSpec& t : types) {
    model::DeviceType d;
    d.name = t.name;
    d.vendor = "test";
    d.kind = t.kind;
    d.fp32_tflops = t.fp16_tflops / 2;
    d.fp16_tflops = t.fp16_tflops;
    d.memory_bytes = t.memory;
    d.memory_bandwidth = t.memory_bandwidth;
    d.efficiency = t.efficiency;
    c.catalog.Upsert(d);
  }
  model::Rack rack;
  rack.name = "rack";
  rack.uplink_bandwidth = 1e12;
  c.racks.push_back(rack);
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeSpec& s = nodes[n];
    model::Node node;
    node.name = "n" + std::to_string(n);
    node.rack = model::RackId(0);
    node.first_device = model::DeviceId(static_cast<int32_t>(c.devices.size()));
    node.device_count = s.devices;
    node.host_bandwidth = 20e9;
    node.host_latency_s = 1e-6;
    node.nic_bandwidth = s.nic_bandwidth;
    node.nic_latency_s = 1e-6;
    node.host_memory_bytes = s.host_memory;
    if (s.island_bandwidth > 0 && s.devices > 1) {
      model::DeviceGroup g;
      g.kind = model::LinkKind::kNvlink;
      for (int32_t i = 0; i < s.devices; ++i) g.members.push_back(i);
      g.bandwidth = s.island_bandwidth;
      g.latency_s = 1e-6;
      node.islands.push_back(g);
    }
    const model::NodeId nid(static_cast<int32_t>(n));
    for (int32_t i = 0; i < s.devices; ++i) {
      model::Device d;
      d.type = *c.catalog.FindId(s.type);
      d.node = nid;
      d.local_index = i;
      d.island = node.islands.empty() ? -1 : 0;
      c.devices.push_back(d);
    }
    c.racks[0].nodes.push_back(nid);
    c.nodes.push_back(node);
  }
  c.Reindex();
  return c;
}

// `n` identical layers of `flops` forward FLOPs, `params` parameters and `act` activation bytes
// per sample.
inline model::ModelSpec MakeChain(int n, double flops, uint64_t params, uint64_t act, int64_t batch,
                                  int64_t micro_batch) {
  model::ModelSpec m;
  m.name = "chain";
  m.setup.global_batch = batch;
  m.setup.micro_batch = micro_batch;
  m.setup.seq_len = 1000;
  for (int i = 0; i < n; ++i) {
    model::LayerSpec l;
    l.name = "l" + std::to_string(i);
    l.kind = model::LayerKind::kTransformer;
    l.fwd_flops = flops;
    l.parameters = params;
    l.activation_bytes = act;
    l.output_bytes = 1 * kMiB;
    l.tp_allreduces = 4;
    m.layers.push_back(l);
  }
  return m;
}

}  // namespace hetsched::plan::testing
