#include "sched/placement.h"

#include <fmt/format.h>

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
  const auto takes = [&](DeviceId d) {
    return cluster.device(d).type == type && state.IsFree(d) && !state.IsReserved(d);
  };
  // Its free devices of the type all in one island (or none): the grouping below would make
  // one group in device order, so they are taken in that order without building it.
  bool one_island = true;
  int32_t island = 0;
  bool seen = false;
  for (int32_t i = 0; i < node.device_count && one_island; ++i) {
    const DeviceId d(node.first_device.value() + i);
    if (!takes(d)) continue;
    one_island = !seen || cluster.device(d).island == island;
    island = cluster.device(d).island;
    seen = true;
  }
  if (one_island) {
    for (int32_t i = 0; i < node.device_count && count > 0; ++i) {
      const DeviceId d(node.first_device.value() + i);
      if (!takes(d)) continue;
      out.push_back(d);
      --count;
    }
    return;
  }
  // Free devices of the type grouped by island (-1: no island).
  std::vector<std::pair<int32_t, std::vector<DeviceId>>> groups;
  for (int32_t i = 0; i < node.device_count; ++i) {
    const DeviceId d(node.first_device.value() + i);
    const model::Device& dev = cluster.device(d);
    if (!takes(d)) continue;
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

// Workers of the gang `node` can take: its free devices of `type`, fewer when the free cores or
// memory of its host hold fewer workers asking `host`.
int32_t Room(const ClusterState& state, NodeId node, DeviceTypeId type, const HostRequest& host) {
  const int32_t free = state.FreeInNode(node, type);
  return host.empty() || free == 0 ? free : std::min(free, state.HostFit(node, host));
}

// The same for a rack: its free devices of `type`, or with a host request the sum of its
// nodes' Room (O(nodes of the rack)).
int32_t RackRoom(const ClusterState& state, model::RackId rack, DeviceTypeId type,
                 const HostRequest& host) {
  if (host.empty()) return state.FreeInRack(rack, type);
  int32_t room = 0;
  for (NodeId n : state.cluster().rack(rack).nodes) room += Room(state, n, type, host);
  return room;
}

// PlaceGang's second step: one node for the whole gang, in the data's rack first, best fit
// (the fewest free that still fit); invalid when no node holds it.
NodeId NodeForGang(const ClusterState& state, DeviceTypeId type, int32_t count,
                   const PlacementHints& hints, const HostRequest& host) {
  if (hints.data_rack.valid() && state.FreeInRack(hints.data_rack, type) >= count) {
    NodeId best;
    int32_t best_free = 0;
    for (NodeId n : state.cluster().rack(hints.data_rack).nodes) {
      const int32_t f = Room(state, n, type, host);
      if (f >= count && (!best.valid() || f < best_free)) {
        best = n;
        best_free = f;
      }
    }
    if (best.valid()) return best;
  }
  const auto& index = state.NodesByFree(type);
  auto it = index.lower_bound({count, -1});
  if (!host.empty()) {
    // Nodes whose host holds too few of the workers are passed over: O(those nodes) more.
    while (it != index.end() && state.HostFit(NodeId(it->second), host) < count) ++it;
  }
  return it != index.end() ? NodeId(it->second) : NodeId();
}

// PlaceGang's third step: one rack for the whole gang, the data's rack first, else the one with
// the fewest free that still fit; invalid when no rack holds it.
model::RackId RackForGang(const ClusterState& state, DeviceTypeId type, int32_t count,
                          const PlacementHints& hints, const HostRequest& host) {
  if (hints.data_rack.valid() && state.FreeInRack(hints.data_rack, type) >= count &&
      RackRoom(state, hints.data_rack, type, host) >= count) {
    return hints.data_rack;
  }
  model::RackId best_rack;
  int32_t best_rack_free = 0;
  for (size_t r = 0; r < state.cluster().racks.size(); ++r) {
    const model::RackId rid(static_cast<int32_t>(r));
    if (state.FreeInRack(rid, type) < count) continue;
    const int32_t f = RackRoom(state, rid, type, host);
    if (f >= count && (!best_rack.valid() || f < best_rack_free)) {
      best_rack = rid;
      best_rack_free = f;
    }
  }
  return best_rack;
}

// Takes `count` devices of `type` from `rack` (which holds them), its fullest nodes first.
void TakeFromRack(const ClusterState& state, model::RackId rack, DeviceTypeId type, int32_t count,
                  const HostRequest& host, std::vector<DeviceId>& out) {
  std::vector<std::pair<int32_t, NodeId>> nodes;
  for (NodeId n : state.cluster().rack(rack).nodes) {
    const int32_t f = Room(state, n, type, host);
    if (f > 0) nodes.push_back({f, n});
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [f, n] : nodes) {
    if (static_cast<int32_t>(out.size()) == count) break;
    TakeFromNode(state, n, type, std::min(f, count - static_cast<int32_t>(out.size())), out);
  }
}

}  // namespace

std::optional<std::vector<DeviceId>> PlaceGang(const ClusterState& state, DeviceTypeId type,
                                               int32_t count, const PlacementHints& hints,
                                               const HostRequest& host) {
  if (count <= 0 || state.FreeOfType(type) < count) return std::nullopt;
  std::vector<DeviceId> out;
  out.reserve(count);
  // 1. The data's node, if the whole gang fits there.
  if (hints.data_node.valid() && Room(state, hints.data_node, type, host) >= count) {
    TakeFromNode(state, hints.data_node, type, count, out);
    return out;
  }
  // 2. One node: prefer the data's rack, then best fit (fewest free that still fit).
  if (const NodeId node = NodeForGang(state, type, count, hints, host); node.valid()) {
    TakeFromNode(state, node, type, count, out);
    return out;
  }
  // 3. One rack: the rack with the fewest free that still fit; inside it, fullest nodes first.
  if (const model::RackId rack = RackForGang(state, type, count, hints, host); rack.valid()) {
    TakeFromRack(state, rack, type, count, host, out);
    return out;
  }
  const auto& index = state.NodesByFree(type);
  // 4. Across racks: nodes with the most free first, so the gang touches the fewest nodes.
  for (auto rit = index.rbegin(); rit != index.rend(); ++rit) {
    if (static_cast<int32_t>(out.size()) == count) break;
    const NodeId n(rit->second);
    TakeFromNode(state, n, type,
                 std::min(Room(state, n, type, host), count - static_cast<int32_t>(out.size())),
                 out);
  }
  // Only a host request leaves a gang short here: its nodes' cores or memory ran out.
  if (static_cast<int32_t>(out.size()) < count) return std::nullopt;
  return out;
}

std::optional<std::vector<DeviceId>> PlaceGangAgnostic(const ClusterState& state, DeviceTypeId type,
                                                       int32_t count, const HostRequest& host) {
  if (count <= 0 || state.FreeOfType(type) < count) return std::nullopt;
  const model::Cluster& cluster = state.cluster();
  std::vector<DeviceId> out;
  out.reserve(count);
  for (size_t n = 0; n < cluster.nodes.size() && static_cast<int32_t>(out.size()) < count; ++n) {
    const model::Node& node = cluster.nodes[n];
    const int32_t room = Room(state, NodeId(static_cast<int32_t>(n)), type, host);
    if (room == 0) continue;
    const size_t limit = std::min<size_t>(count, out.size() + room);
    for (int32_t i = 0; i < node.device_count && out.size() < limit; ++i) {
      const DeviceId d(node.first_device.value() + i);
      if (cluster.device(d).type == type && state.IsFree(d) && !state.IsReserved(d)) {
        out.push_back(d);
      }
    }
  }
  if (static_cast<int32_t>(out.size()) < count) return std::nullopt;
  return out;
}

std::string_view PlacementModeName(PlacementMode mode) {
  return mode == PlacementMode::kAgnostic ? "agnostic" : "topology";
}

util::Result<PlacementMode> ParsePlacementMode(std::string_view text) {
  if (text == "topology") return PlacementMode::kTopology;
  if (text == "agnostic") return PlacementMode::kAgnostic;
  return util::Status::InvalidArgument(
      fmt::format("unknown placement '{}' (expected topology or agnostic)", text));
}

PlacementHints HintsFor(const model::Cluster& cluster, const std::string& data_location) {
  PlacementHints hints;
  if (data_location.empty()) {
    // The input is on the cluster's first storage (sim/network.h), if it has one.
    if (!cluster.storage.empty()) hints.data_rack = cluster.storage.front().rack;
    return hints;
  }
  if (auto n = cluster.FindNode(data_location)) {
    hints.data_node = *n;
    hints.data_rack = cluster.node(*n).rack;
  } else if (auto r = cluster.FindRack(data_location)) {
    hints.data_rack = *r;
  } else if (auto s = cluster.FindStorage(data_location)) {
    hints.data_rack = cluster.storage[*s].rack;  // invalid for a filesystem on the core
  }
  return hints;
}

}  // namespace hetsched::sched
