// Gang placement on nodes known only by how many workers each can take now, not device by
// device: a Kubernetes pod group, whose pods each take a whole number of one node's
// accelerators (k8s/extender.h). The rules are PlaceGang's (sched/placement.h), applied to a
// cluster with one device per worker a node can take: the data's node if the whole gang fits
// there, else one node (the data's rack first, then best fit: the fewest places that still
// hold the gang), else one rack (the fewest places that still hold it, nodes with most places
// first), else the nodes with most places first, across racks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetsched::sched {

struct NodeRoom {
  std::string name;     // unique among the rooms
  std::string rack;     // "" for none
  int32_t workers = 0;  // workers of the gang it can take now
};

// Where the gang's input lives, by name: a node, else a rack ("" for none). A node that is not
// among the rooms is no hint; its rack still is.
struct RoomHints {
  std::string data_node;
  std::string data_rack;
};

// For each of `workers` workers, the index in `rooms` of its node (a node appears once per
// worker it takes), or nullopt when the rooms together take fewer than `workers`.
// O(rooms log rooms + workers).
std::optional<std::vector<int32_t>> PlaceGangByRoom(const std::vector<NodeRoom>& rooms,
                                                    int32_t workers, const RoomHints& hints = {});

}  // namespace hetsched::sched
