// Gang placement: all workers of a job on devices of one type at once, or none. Topology-aware
// best fit: one island, else one node (the fullest that fits: packing), else one rack, else
// the fewest nodes across racks. Complexity O(log nodes + devices of the nodes used) except
// the rack search, O(racks). A job that reserves host cores or memory (HostRequest) puts a
// worker only where the node's host still holds it; that costs O(1) more per node looked at,
// plus the nodes with free devices passed over for want of host room, plus O(nodes) of the
// racks weighed in the rack search. A job that asks for nothing takes the same path as before.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "model/cluster.h"
#include "sched/cluster_state.h"
#include "util/status.h"

namespace hetsched::sched {

enum class PlacementMode { kTopology, kAgnostic };
std::string_view PlacementModeName(PlacementMode mode);  // "topology", "agnostic"
util::Result<PlacementMode> ParsePlacementMode(std::string_view text);

struct PlacementHints {
  model::NodeId data_node;  // prefer this node (the job's input lives there), if valid
  model::RackId data_rack;  // else this rack, if valid
};

// Free devices for a gang of `count` of `type`, each on a node whose host still holds one more
// worker asking `host` (ClusterState::HostFit), or nullopt when the type has too few such.
// Does not modify `state`.
std::optional<std::vector<model::DeviceId>> PlaceGang(const ClusterState& state,
                                                      model::DeviceTypeId type, int32_t count,
                                                      const PlacementHints& hints = {},
                                                      const HostRequest& host = {});
// The first `count` free devices of `type` in device id order, whatever their island, node,
// rack or data (only as many on a node as its host holds workers asking `host`):
// PlacementMode::kAgnostic.
std::optional<std::vector<model::DeviceId>> PlaceGangAgnostic(const ClusterState& state,
                                                              model::DeviceTypeId type,
                                                              int32_t count,
                                                              const HostRequest& host = {});

// Where the job's input data lives, from Job::data_location (a node, rack or storage name;
// empty: the cluster's first storage, if any).
PlacementHints HintsFor(const model::Cluster& cluster, const std::string& data_location);

}  // namespace hetsched::sched
