// ClusterState: which devices are free, indexed by device type and node (ordered by free count
// for best fit) and by rack, so a placement never scans the whole cluster.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "model/cluster.h"

namespace hetsched::sched {

// Not thread-safe; owned by one Scheduler. Keeps a reference to `cluster`, which must outlive it.
class ClusterState {
 public:
  explicit ClusterState(const model::Cluster& cluster);

  const model::Cluster& cluster() const { return cluster_; }
  int32_t type_count() const { return type_count_; }

  bool IsFree(model::DeviceId d) const { return status_[d.value()] == kFree; }
  // Node `node` was appended to the cluster (model::AddNode): its devices join, free and up.
  void AddNode(model::NodeId node);
  // Node `node` left the cluster for good: drained, its devices down and no longer counted;
  // later power, drain and device changes leave it so. Its devices must hold no job.
  void RemoveNode(model::NodeId node);
  bool NodeRemoved(model::NodeId node) const { return node_removed_[node.value()]; }

  // Failed (SetDown), whatever its node's power or drain.
  bool IsFailed(model::DeviceId d) const { return status_[d.value()] == kDown; }
  // Up: not failed, on a node that offers its devices (powered on and not drained).
  bool IsUp(model::DeviceId d) const {
    return status_[d.value()] != kDown && Offers(cluster_.device(d).node);
  }
  // Free devices of `type` in the whole cluster, in a rack, in a node. O(1) / O(1) / O(types).
  int32_t FreeOfType(model::DeviceTypeId type) const { return free_total_[type.value()]; }
  int32_t FreeInRack(model::RackId rack, model::DeviceTypeId type) const {
    return rack_free_[rack.value() * type_count_ + type.value()];
  }
  int32_t FreeInNode(model::NodeId node, model::DeviceTypeId type) const;
  // Devices of `type` that are up (free or busy): the capacity the type offers now.
  int32_t UpOfType(model::DeviceTypeId type) const { return up_total_[type.value()]; }
  // Devices of `type` in the cluster, up or not.
  int32_t TotalOfType(model::DeviceTypeId type) const { return total_[type.value()]; }

  // Nodes with at least one free device of `type`, ordered by (free count, node id) ascending:
  // lower_bound({n, -1}) is the best-fit node for n devices. O(log nodes).
  const std::set<std::pair<int32_t, int32_t>>& NodesByFree(model::DeviceTypeId type) const {
    return by_free_[type.value()];
  }

  // Marks devices busy / free. Allocating a device that is not free is a programmer error.
  void Allocate(const std::vector<model::DeviceId>& devices);
  void Release(const std::vector<model::DeviceId>& devices);
  // A failed device stops counting as capacity until SetUp; it must not be allocated (the
  // driver releases the job running there first).
  void SetDown(model::DeviceId device);
  void SetUp(model::DeviceId device);
  // Reserved devices (pinned by some job) are kept out of the free index for everyone else.
  // Counted: a device pinned by two jobs stays reserved until both Unreserve it.
  void Reserve(model::DeviceId device);
  void Unreserve(model::DeviceId device);
  bool IsReserved(model::DeviceId device) const { return reserved_[device.value()] > 0; }
  // Powered-off nodes offer nothing.
  void SetNodeOn(model::NodeId node, bool on);
  bool NodeOn(model::NodeId node) const { return node_powered_[node.value()]; }
  // A drained node offers nothing new; the jobs running there continue (an operator takes it
  // out of service gently). Its devices stop counting as capacity.
  void SetNodeDrained(model::NodeId node, bool drained);
  bool NodeDrained(model::NodeId node) const { return node_drained_[node.value()]; }
  // Powered on and not drained.
  bool Offers(model::NodeId node) const { return node_on_[node.value()]; }

 private:
  enum Status : uint8_t { kFree, kBusy, kDown };
  // Adds `delta` free devices of `type` at `node` to every index.
  void AdjustFree(model::NodeId node, model::DeviceTypeId type, int32_t delta);
  bool Indexed(model::DeviceId d) const {
    return status_[d.value()] == kFree && reserved_[d.value()] == 0 &&
           node_on_[cluster_.device(d).node.value()];
  }
  void SetOffers(model::NodeId node, bool offers);

  const model::Cluster& cluster_;
  int32_t type_count_ = 0;
  std::vector<Status> status_;
  std::vector<int32_t> reserved_;  // how many jobs pin each device
  // By node: offers its devices (= powered && !drained), powered, drained.
  std::vector<char> node_on_, node_powered_, node_drained_, node_removed_;
  std::vector<int32_t> free_total_, up_total_, total_;
  std::vector<int32_t> rack_free_;  // rack * type_count + type
  // Per node: (type, free count) for the few types a node holds.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> node_free_;
  std::vector<std::set<std::pair<int32_t, int32_t>>> by_free_;
};

}  // namespace hetsched::sched
