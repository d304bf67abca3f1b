// Small builders for scheduler and simulator tests: clusters of made-up device types with
// chosen stacks, and jobs with their own throughput tables.
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"

namespace hetsched::testing {

struct PoolSpec {
  std::string type;   // a new catalog type of this name
  std::string stack;  // "cuda" or "rocm"
  int nodes = 1;
  int per_node = 1;
  int rack = 0;
};

inline model::Cluster MakeCluster(const std::vector<PoolSpec>& pools) {
  model::Cluster c;
  c.name = "test";
  int max_rack = 0;
  for (const auto& p : pools) max_rack = std::max(max_rack, p.rack);
  for (int r = 0; r <= max_rack; ++r) {
    model::Rack rack;
    rack.name = "rack" + std::to_string(r);
    rack.uplink_bandwidth = 12.5e9;
    rack.latency_s = 2e-6;
    c.racks.push_back(rack);
  }
  for (const auto& p : pools) {
    model::DeviceType t;
    t.name = p.type;
    t.vendor = p.stack == "rocm" ? "amd" : "nvidia";
    t.stacks = {{p.stack, "12.0"}};
    t.memory_bytes = 32ull << 30;
    t.peak_watts = 300;
    t.price_per_hour = 2;
    const model::DeviceTypeId tid = c.catalog.Upsert(t);
    for (int n = 0; n < p.nodes; ++n) {
      model::Node node;
      node.name = p.type + "-n" + std::to_string(n);
      node.rack = model::RackId(p.rack);
      node.first_device = model::DeviceId(static_cast<int32_t>(c.devices.size()));
      node.device_count = p.per_node;
      node.host_bandwidth = 25e9;
      node.nic_bandwidth = 12.5e9;
      node.nic_latency_s = 5e-6;
      const model::NodeId nid(static_cast<int32_t>(c.nodes.size()));
      for (int i = 0; i < p.per_node; ++i) {
        model::Device d;
        d.type = tid;
        d.node = nid;
        d.local_index = i;
        c.devices.push_back(d);
      }
      c.racks[p.rack].nodes.push_back(nid);
      c.nodes.push_back(node);
    }
  }
  c.Reindex();
  return c;
}

// A job that runs `steps_per_s` (whole gang) on each named type.
inline model::Job MakeJob(int id, double arrival_s, double work,
                          std::vector<std::pair<std::string, double>> speeds, int gang = 1,
                          std::string stack = "cuda") {
  model::Job j;
  j.id = model::JobId(id);
  j.name = "job-" + std::to_string(id);
  j.arrival_s = arrival_s;
  j.work = work;
  j.gang_size = j.min_workers = j.max_workers = gang;
  j.stacks = {{stack, ""}};
  for (auto& [t, s] : speeds) j.throughput[t] = s;
  return j;
}

// `nodes` nodes of `per_node` devices of `type` (cuda; 50 W idle, 300 W peak), each node with a
// 100 W base, 180 s boot and 60 s shutdown: the power tests' cluster.
inline model::Cluster MakePowerCluster(int nodes, int per_node, const std::string& type = "gpu") {
  auto c = MakeCluster({{type, "cuda", nodes, per_node}});
  model::DeviceType t = c.catalog.Get(c.devices[0].type);
  t.idle_watts = 50;
  t.peak_watts = 300;
  c.catalog.Upsert(t);
  for (auto& n : c.nodes) {
    n.base_watts = 100;
    n.boot_s = 180;
    n.shutdown_s = 60;
  }
  return c;
}

}  // namespace hetsched::testing
