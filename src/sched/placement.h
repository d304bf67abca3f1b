// Gang placement: all workers of a job on devices of one type at once, or none. Topology-aware
// best fit: one island, else one node (the fullest that fits: packing), else one rack, else
// the fewest nodes across racks. Complexity O(log nodes + devices of the nodes used) except
// the rack search, O(racks).
#pragma once

#include <optional>
#include <vector>

#include "model/cluster.h"
#include "sched/cluster_state.h"

namespace hetsched::sched {

struct PlacementHints {
  model::NodeId data_node;  // prefer this node (the job's input lives there), if valid
  model::RackId data_rack;  // else this rack, if valid
};

// Free devices for a gang of `count` of `type`, or nullopt when the type has too few free.
// Does not modify `state`.
std::optional<std::vector<model::DeviceId>> PlaceGang(const ClusterState& state,
                                                      model::DeviceTypeId type, int32_t count,
                                                      const PlacementHints& hints = {});

// Where the job's input data lives, from Job::data_location (a node or rack name).
PlacementHints HintsFor(const model::Cluster& cluster, const std::string& data_location);

}  // namespace hetsched::sched
