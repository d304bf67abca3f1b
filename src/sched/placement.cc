#include "sched/placement.h"

#include <algorithm>

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;
using model::NodeId;

namespace {

// Takes up to `count` free devices of `type` from `node`, keeping a gang inside one island
// (the smallest that fits) when it can, else filling from the islands with most free first.
void TakeFromNode(const ClusterState& state, NodeId node_id, DeviceTypeId type, int32_t count,
                  std::vector<DeviceId>& out) {
  const model::Cluster& cluster = state.cluster();
  const model::Node& node = cluster.node(node_id);
  // Free devices of the type grouped by island (-1: no island).
  std::vector<std::pair<int32_t, std::vector<DeviceId>>> groups;
  for (int32_t i = 0; i < node.device_count; ++i) {
    const DeviceId d(node.first_device.value() + i);
    const model::Device& dev = cluster.device(d);
    if (dev.type != type || !state.IsFree(d) || state.IsReserved(d)) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == dev.island; });
    if (it == groups.end()) {
      groups.push_back({dev.island, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(d);
  }
  if (groups.size() > 1) {
    // Smallest island that holds the whole request; otherwise biggest first.
    const auto fits = [&](const auto& g) { return static_cast<int32_t>(g.second.size()) >= count; };
    std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) {
      if (fits(a) != fits(b)) return fits(a);
      if (fits(a)) return a.second.size() < b.second.size();
      return a.second.size() > b.second.size();
    });
  }
  for (const auto& g : groups) {
    for (DeviceId d : g.second) {
      if (count == 0) return;
      out.push_back(d);
      --count;
    }
  }
}

}  // namespace

std::optional<std::vector<DeviceId>> PlaceGang(const ClusterState& state, DeviceTypeId type,
                                               int32_t count, const PlacementHints& hints) {
  if (count <= 0 || state.FreeOfType(type) < count) return std::nullopt;
  std::vector<DeviceId> out;
  out.reserve(count);
  // 1. The data's node, if the whole gang fits there.
  if (hints.data_node.valid() && state.FreeInNode(hints.data_node, type) >= count) {
    TakeFromNode(state, hints.data_node, type, count, out);
    return out;
  }
  const auto& index = state.NodesByFree(type);
  // 2. One node: prefer the data's rack, then best fit (fewest free that still fit).
  if (hints.data_rack.valid() && state.FreeInRack(hints.data_rack, type) >= count) {
    NodeId best;
    int32_t best_free = 0;
    for (NodeId n : state.cluster().rack(hints.data_rack).nodes) {
      const int32_t f = state.FreeInNode(n, type);
      if (f >= count && (!best.valid() || f < best_free)) {
        best = n;
        best_free = f;
      }
    }
    if (best.valid()) {
      TakeFromNode(state, best, type, count, out);
      return out;
    }
  }
  auto it = index.lower_bound({count, -1});
  if (it != index.end()) {
    TakeFromNode(state, NodeId(it->second), type, count, out);
    return out;
  }
  // 3. One rack: the rack with the fewest free that still fit; inside it, fullest nodes first.
  const model::Cluster& cluster = state.cluster();
  model::RackId best_rack;
  int32_t best_rack_free = 0;
  if (hints.data_rack.valid() && state.FreeInRack(hints.data_rack, type) >= count) {
    best_rack = hints.data_rack;
  } else {
    for (size_t r = 0; r < cluster.racks.size(); ++r) {
      const model::RackId rid(static_cast<int32_t>(r));
      const int32_t f = state.FreeInRack(rid, type);
      if (f >= count && (!best_rack.valid() || f < best_rack_free)) {
        best_rack = rid;
        best_rack_free = f;
      }
    }
  }
  if (best_rack.valid()) {
    std::vector<std::pair<int32_t, NodeId>> nodes;
    for (NodeId n : cluster.rack(best_rack).nodes) {
      const int32_t f = state.FreeInNode(n, type);
      if (f > 0) nodes.push_back({f, n});
    }
    std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (const auto& [f, n] : nodes) {
      if (static_cast<int32_t>(out.size()) == count) break;
      TakeFromNode(state, n, type, count - static_cast<int32_t>(out.size()), out);
    }
    return out;
  }
  // 4. Across racks: nodes with the most free first, so the gang touches the fewest nodes.
  for (auto rit = index.rbegin(); rit != index.rend(); ++rit) {
    if (static_cast<int32_t>(out.size()) == count) break;
    TakeFromNode(state, NodeId(rit->second), type, count - static_cast<int32_t>(out.size()), out);
  }
  return out;
}

PlacementHints HintsFor(const model::Cluster& cluster, const std::string& data_location) {
  PlacementHints hints;
  if (data_location.empty()) return hints;
  if (auto n = cluster.FindNode(data_location)) {
    hints.data_node = *n;
    hints.data_rack = cluster.node(*n).rack;
  } else if (auto r = cluster.FindRack(data_location)) {
    hints.data_rack = *r;
  }
  return hints;
}

}  // namespace hetsched::sched
