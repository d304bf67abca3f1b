#include "sched/replica_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "model/compatibility.h"
#include "model/software_stack.h"

namespace hetsched::sched {
namespace {

// How wide a replica of a type can be on this cluster.
struct TypeReach {
  int32_t per_node = 0;       // the most devices of the type one node holds
  double link_bandwidth = 0;  // on that node (the first such node)
};

std::map<int32_t, TypeReach> ReachPerType(const model::Cluster& cluster) {
  std::map<int32_t, TypeReach> per_type;
  for (const model::Node& node : cluster.nodes) {
    std::map<int32_t, int32_t> count;
    for (int32_t i = 0; i < node.device_count; ++i) {
      ++count[cluster.device(model::DeviceId(node.first_device.value() + i)).type.value()];
    }
    for (const auto& [type, n] : count) {
      TypeReach& reach = per_type[type];
      const double link = node.islands.empty() ? node.host_bandwidth : node.islands[0].bandwidth;
      if (n > reach.per_node) reach = {n, link};
    }
  }
  return per_type;
}

double DeviceHourUsd(const model::DeviceType& type, const ReplicaPricing& pricing) {
  double training = 0;
  if (pricing.training_value != nullptr) {
    const auto value = pricing.training_value->find(type.name);
    if (value != pricing.training_value->end()) training = value->second;
  }
  return type.price_per_hour * (1 + training) + type.peak_watts / 1000 * pricing.usd_per_kwh;
}

// The tp on `type` with the least cost per request/s among those that meet the SLO; when none
// does, InvalidArgument saying why the widest misses ("a100-80g (tp 8): ...").
util::Result<ServiceShape> CheapestShapeOn(const model::DeviceType& type, int32_t type_index,
                                           const TypeReach& reach, const ReplicaSizing& sizing,
                                           const cost::ServingCalibrations& calibrations,
                                           const ReplicaPricing& pricing) {
  const auto options =
      cost::ReplicaOptions(sizing.served, type, reach.per_node, reach.link_bandwidth, calibrations,
                           sizing.slo, sizing.mean_input, sizing.mean_output, sizing.long_input);
  // One shape per type (mixing degrees on one type fragments its nodes).
  std::optional<ServiceShape> cheapest;
  double cheapest_per_request = std::numeric_limits<double>::infinity();
  for (const cost::ReplicaOption& o : options) {
    if (!o.capacity.feasible) continue;
    const double usd_h = o.tp * DeviceHourUsd(type, pricing);
    if (usd_h / o.capacity.requests_per_s < cheapest_per_request) {
      cheapest_per_request = usd_h / o.capacity.requests_per_s;
      cheapest = ServiceShape{model::DeviceTypeId(type_index), o.tp, reach.link_bandwidth, usd_h};
    }
  }
  if (cheapest) return *cheapest;
  return util::Status::InvalidArgument(
      fmt::format("{} (tp {}): {}", type.name, options.back().tp, options.back().capacity.why_not));
}

std::string SloText(const ReplicaSizing& sizing) {
  return fmt::format("TTFT {} s, TPOT {} s", sizing.slo.ttft_s, sizing.slo.tpot_s);
}

}  // namespace

util::Result<std::vector<ServiceShape>> ChooseServiceShapes(
    const model::Cluster& cluster, const model::Job& job, const ReplicaSizing& sizing,
    const cost::ServingCalibrations& calibrations, const ReplicaPricing& pricing) {
  std::vector<ServiceShape> shapes;
  std::string misses;
  int32_t compatible_types = 0;
  for (const auto& [type_index, reach] : ReachPerType(cluster)) {
    const model::DeviceType& type = cluster.catalog.Get(model::DeviceTypeId(type_index));
    if (!model::TypeRunsJob(type, job)) continue;
    ++compatible_types;
    auto shape = CheapestShapeOn(type, type_index, reach, sizing, calibrations, pricing);
    if (shape.ok()) {
      shapes.push_back(*shape);
    } else {
      misses += (misses.empty() ? "" : "; ") + shape.status().message();
    }
  }
  if (compatible_types == 0) {
    return util::Status::InvalidArgument("its stacks match no device type of the cluster");
  }
  if (shapes.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("no device type meets its SLO ({}): {}", SloText(sizing), misses));
  }
  return shapes;
}

util::Result<std::vector<ServiceShape>> ShapesOnType(const model::Cluster& cluster,
                                                     const model::Job& job,
                                                     model::DeviceTypeId type,
                                                     const ReplicaSizing& sizing,
                                                     const cost::ServingCalibrations& calibrations,
                                                     const ReplicaPricing& pricing) {
  const model::DeviceType& t = cluster.catalog.Get(type);
  const auto per_type = ReachPerType(cluster);
  const auto reach = per_type.find(type.value());
  if (reach == per_type.end()) {
    return util::Status::InvalidArgument(
        fmt::format("the cluster has no device of type {}", t.name));
  }
  if (!model::TypeRunsJob(t, job)) {
    std::string stacks;
    for (const model::StackRequirement& r : job.stacks) {
      stacks += (stacks.empty() ? "" : ", ") + model::ToString(r);
    }
    return util::Status::InvalidArgument(
        fmt::format("its stacks ({}) do not run on {}", stacks, t.name));
  }
  auto shape = CheapestShapeOn(t, type.value(), reach->second, sizing, calibrations, pricing);
  if (!shape.ok()) {
    return util::Status::InvalidArgument(fmt::format("{} cannot meet its SLO ({}): {}", t.name,
                                                     SloText(sizing), shape.status().message()));
  }
  return std::vector<ServiceShape>{*shape};
}

std::vector<ServiceShape> StrongestShapes(const model::DeviceCatalog& catalog,
                                          std::vector<ServiceShape> shapes) {
  double best = -1;
  for (const ServiceShape& sh : shapes) best = std::max(best, catalog.Get(sh.type).fp16_tflops);
  std::erase_if(shapes,
                [&](const ServiceShape& sh) { return catalog.Get(sh.type).fp16_tflops < best; });
  return shapes;
}

std::vector<model::DeviceId> PlaceReplica(const model::Cluster& cluster,
                                          const std::vector<char>& held, model::DeviceTypeId type,
                                          int32_t tp) {
  auto free_of_type = [&](const model::Node& node) {
    std::vector<model::DeviceId> free;
    for (int32_t i = 0; i < node.device_count; ++i) {
      const model::DeviceId d(node.first_device.value() + i);
      if (cluster.device(d).type == type && !held[d.value()]) free.push_back(d);
    }
    return free;
  };
  const model::Node* best = nullptr;
  size_t best_free = 0;
  for (const model::Node& node : cluster.nodes) {
    const size_t free = free_of_type(node).size();
    if (free >= static_cast<size_t>(tp) && (best == nullptr || free < best_free)) {
      best = &node;
      best_free = free;
    }
  }
  if (best == nullptr) return {};
  std::vector<model::DeviceId> devices = free_of_type(*best);
  devices.resize(tp);
  return devices;
}

ReplicaChanges ChangesToward(const std::vector<std::vector<ShapeReplicas>>& live,
                             const std::vector<std::vector<int32_t>>& target) {
  ReplicaChanges changes;
  changes.drain.resize(live.size());
  for (size_t s = 0; s < live.size(); ++s) {
    for (size_t k = 0; k < live[s].size(); ++k) {
      std::vector<LiveReplica> by_load = live[s][k].live;
      std::sort(by_load.begin(), by_load.end(), [](const LiveReplica& a, const LiveReplica& b) {
        return a.outstanding < b.outstanding;
      });
      const int32_t have = static_cast<int32_t>(by_load.size());
      for (int32_t i = 0; i < have - target[s][k]; ++i) changes.drain[s].push_back(by_load[i].id);
      for (int32_t i = have; i < target[s][k]; ++i) {
        changes.start.emplace_back(static_cast<int32_t>(s), static_cast<int32_t>(k));
      }
    }
  }
  std::stable_sort(changes.start.begin(), changes.start.end(), [&](const auto& a, const auto& b) {
    return live[a.first][a.second].tp > live[b.first][b.second].tp;
  });
  return changes;
}

}  // namespace hetsched::sched
