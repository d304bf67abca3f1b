#include "sched/room_placement.h"

#include <map>

#include "sched/cluster_state.h"
#include "sched/placement.h"

namespace hetsched::sched {
namespace {

// A cluster of one device type whose nodes are the rooms (same order, so node ids are room
// indexes) with one device per worker each takes, in racks named as the rooms' racks.
model::Cluster ClusterOfRooms(const std::vector<NodeRoom>& rooms) {
  model::Cluster cluster;
  model::DeviceType place;
  place.name = "place";
  const model::DeviceTypeId type = cluster.catalog.Upsert(place);
  std::map<std::string, model::RackId> racks;
  for (const NodeRoom& room : rooms) {
    model::Node node;
    node.name = room.name;
    if (!room.rack.empty()) {
      auto [it, added] = racks.try_emplace(room.rack, static_cast<int32_t>(cluster.racks.size()));
      if (added) {
        model::Rack rack;
        rack.name = room.rack;
        cluster.racks.push_back(std::move(rack));
      }
      node.rack = it->second;
    }
    const model::NodeId id(static_cast<int32_t>(cluster.nodes.size()));
    if (node.rack.valid()) cluster.racks[node.rack.value()].nodes.push_back(id);
    node.first_device = model::DeviceId(static_cast<int32_t>(cluster.devices.size()));
    node.device_count = room.workers;
    for (int32_t i = 0; i < room.workers; ++i) {
      model::Device device;
      device.type = type;
      device.node = id;
      device.local_index = i;
      cluster.devices.push_back(device);
    }
    cluster.nodes.push_back(std::move(node));
  }
  cluster.Reindex();
  return cluster;
}

}  // namespace

std::optional<std::vector<int32_t>> PlaceGangByRoom(const std::vector<NodeRoom>& rooms,
                                                    int32_t workers, const RoomHints& hints) {
  const model::Cluster cluster = ClusterOfRooms(rooms);
  const ClusterState state(cluster);
  PlacementHints where;
  if (auto node = cluster.FindNode(hints.data_node)) where.data_node = *node;
  if (auto rack = cluster.FindRack(hints.data_rack)) where.data_rack = *rack;
  const auto devices = PlaceGang(state, model::DeviceTypeId(0), workers, where);
  if (!devices) return std::nullopt;
  std::vector<int32_t> out;
  out.reserve(devices->size());
  for (model::DeviceId d : *devices) out.push_back(cluster.device(d).node.value());
  return out;
}

}  // namespace hetsched::sched
