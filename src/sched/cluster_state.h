// ClusterState: which devices are free, indexed by device type and node (ordered by free count
// for best fit) and by rack, so a placement never scans the whole cluster; and the host cores
// and memory each node has left.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"

namespace hetsched::sched {

// What one worker of a job takes from the host of its device's node while it runs
// (Job::cores_per_worker, host_memory_per_worker). Empty: nothing, the common case.
struct HostRequest {
  int32_t cores = 0;
  uint64_t memory = 0;  // bytes
  bool empty() const { return cores == 0 && memory == 0; }
};
HostRequest HostRequestOf(const model::Job& job);

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
  // Reserved devices (pinned by some job, or held for a job a full decision reserved them for:
  // sched/reservations.h) are kept out of the free index for everyone else.
  // Counted: a device pinned by two jobs stays reserved until both Unreserve it.
  void Reserve(model::DeviceId device);
  void Unreserve(model::DeviceId device);
  bool IsReserved(model::DeviceId device) const { return reserved_[device.value()] > 0; }
  // Devices some job pins or a reservation holds (free or not): while there are any, a pinned
  // job may start when the free index is empty.
  int32_t reserved_devices() const { return reserved_devices_; }
  // Powered-off nodes offer nothing.
  void SetNodeOn(model::NodeId node, bool on);
  bool NodeOn(model::NodeId node) const { return node_powered_[node.value()]; }
  // A drained node offers nothing new; the jobs running there continue (an operator takes it
  // out of service gently). Its devices stop counting as capacity.
  void SetNodeDrained(model::NodeId node, bool drained);
  bool NodeDrained(model::NodeId node) const { return node_drained_[node.value()]; }
  // Powered on and not drained.
  bool Offers(model::NodeId node) const { return node_on_[node.value()]; }

  // Host resources. A node's free cores and host memory: Node::cores and host_memory_bytes less
  // what the workers running there took. A node that declares 0 of one does not model it: it
  // never runs out of it (its free amount stays 0 and binds nothing).
  int32_t FreeCores(model::NodeId node) const { return free_cores_[node.value()]; }
  uint64_t FreeHostMemory(model::NodeId node) const { return free_memory_[node.value()]; }
  // Workers asking `request` each that the host of `node` holds now, whatever its devices;
  // model::kAnyWorkers when nothing binds (an empty request, or resources not modelled). O(1).
  int32_t HostFit(model::NodeId node, const HostRequest& request) const;
  // True when one worker asking `request` per entry of `devices` fits on the hosts of their
  // nodes now. O(devices x distinct nodes among them).
  bool HostHolds(const std::vector<model::DeviceId>& devices, const HostRequest& request) const;
  // One worker asking `request` per entry of `devices` takes it on that device's node / gives
  // it back. Taking more than is free is a programmer error (placement checks HostFit first).
  void TakeHost(const std::vector<model::DeviceId>& devices, const HostRequest& request);
  void ReturnHost(const std::vector<model::DeviceId>& devices, const HostRequest& request);

 private:
  enum Status : uint8_t { kFree, kBusy, kDown };
  // Adds `delta` free devices of `type` at `node` to every index.
  void AdjustFree(model::NodeId node, model::DeviceTypeId type, int32_t delta);
  // Free-count changes of a run of devices on one node and of one type, applied by one
  // AdjustFree: a gang's workers on a node are listed together, and each AdjustFree re-files
  // the node in by_free_ (a tree search), so a run costs one re-filing instead of one a device.
  struct FreeRun {
    model::NodeId node;
    model::DeviceTypeId type;
    int32_t delta = 0;
  };
  // Adds `delta` for device `d` to `run`, first applying `run` when `d` is on another node or
  // of another type.
  void AddToRun(FreeRun& run, model::DeviceId d, int32_t delta);
  void ApplyRun(FreeRun& run);
  bool Indexed(model::DeviceId d) const {
    return status_[d.value()] == kFree && reserved_[d.value()] == 0 &&
           node_on_[cluster_.device(d).node.value()];
  }
  void SetOffers(model::NodeId node, bool offers);

  const model::Cluster& cluster_;
  int32_t type_count_ = 0;
  std::vector<Status> status_;
  std::vector<int32_t> reserved_;  // how many jobs pin each device
  int32_t reserved_devices_ = 0;   // devices with reserved_ > 0
  // By node: offers its devices (= powered && !drained), powered, drained.
  std::vector<char> node_on_, node_powered_, node_drained_, node_removed_;
  std::vector<int32_t> free_total_, up_total_, total_;
  std::vector<int32_t> rack_free_;  // rack * type_count + type
  // Per node: (type, free count) for the few types a node holds.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> node_free_;
  std::vector<std::set<std::pair<int32_t, int32_t>>> by_free_;
  // By node: host cores and memory not taken (Node::cores, host_memory_bytes at the start).
  std::vector<int32_t> free_cores_;
  std::vector<uint64_t> free_memory_;
};

}  // namespace hetsched::sched
