// The cluster's shared links as the simulator sees them, and the flows crossing them. Each
// node's NIC, each rack's uplink, the spine and each storage has a capacity per direction;
// a gang's synchronization traffic between nodes and a job's reading of its input are flows
// over those links, and every flow gets its max-min fair share (cost/link_sharing.h),
// recomputed whenever a flow starts, ends or changes its demand. Links inside a node
// (islands, PCIe, the host link) belong to the job whose devices they join and are not
// shared here.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "cost/link_sharing.h"
#include "model/cluster.h"

namespace hetsched::sim {

// Where a job's input lives (model::Job::data_location).
struct DataSource {
  enum Kind { kNone, kNode, kRack, kStorage };
  Kind kind = kNone;
  int32_t index = -1;  // node, rack or storage index
};

class Network {
 public:
  using LinkUses = std::vector<cost::FlowLinks::Use>;
  static constexpr double kForever = std::numeric_limits<double>::infinity();

  // Keeps a reference: `cluster` must outlive the network.
  explicit Network(const model::Cluster& cluster);

  // A node, rack or storage name; empty: the cluster's first storage, or kNone when it has
  // none (the data is taken to be wherever the job runs). An unknown name is kNone too
  // (validate rejects it before a run).
  DataSource SourceOf(std::string_view location) const;
  // The links a read from `source` to node `node` crosses; empty when nothing crosses a link
  // (the data is on that node, or there is no source).
  LinkUses ReadPath(const DataSource& source, model::NodeId node) const;
  // The links a write from node `node` back to `source` crosses (the reverse direction of
  // ReadPath: the node's NIC up, its rack's uplink, the spine, the storage's input).
  LinkUses WritePath(model::NodeId node, const DataSource& source) const;
  // The links between nodes that the ring devices[0] -> devices[1] -> ... -> devices[0]
  // crosses, each with the number of ring hops that cross it; empty inside one node.
  LinkUses RingPath(const std::vector<model::DeviceId>& devices) const;

  // A flow over `links` wanting at most `demand` (per link use: bytes/s per unit of weight),
  // carrying `bytes` (kForever: until removed). Books the flows' bytes up to `now_s` first.
  int32_t Add(LinkUses links, double demand, double bytes, double now_s);
  void Remove(int32_t flow, double now_s);
  void SetDemand(int32_t flow, double demand, double now_s);
  // Recomputes the shares when flows changed since the last call; returns the flows whose
  // rate changed (new flows included), oldest first.
  std::vector<int32_t> Reshare(double now_s);
  // Books bytes moved up to now_s at the current rates.
  void Advance(double now_s);

  double Rate(int32_t flow) const { return flows_[flow].rate; }
  // A flow with bytes whose bytes are all moved (within a microsecond of its rate).
  bool Done(int32_t flow) const;
  // The live flows with bytes that are done, by id.
  std::vector<int32_t> Finished() const;
  // When the first flow with bytes finishes at the current rates (kForever: none).
  double NextCompletion() const;
  int32_t live() const { return live_; }

  double spine_bytes() const { return spine_bytes_; }  // every flow's bytes over the spine

 private:
  struct Flow {
    bool live = false;
    LinkUses links;
    double demand = 0;
    double left = 0;  // bytes still to move; kForever for a flow that lasts until removed
    double rate = 0;
  };
  int32_t NicUp(int32_t node) const { return 2 * node; }
  int32_t NicDown(int32_t node) const { return 2 * node + 1; }
  int32_t RackUp(int32_t rack) const { return rack_base_ + 2 * rack; }
  int32_t RackDown(int32_t rack) const { return rack_base_ + 2 * rack + 1; }
  int32_t Spine() const { return spine_; }
  int32_t StorageOut(int32_t s) const { return spine_ + 1 + 2 * s; }
  int32_t StorageIn(int32_t s) const { return spine_ + 2 + 2 * s; }
  // Links from rack `from` (invalid: the core) down to node `to`'s NIC.
  void IntoNode(int32_t from_rack, int32_t to, LinkUses& out) const;
  // Links from node `from`'s NIC up to rack `to_rack` (-1: the core).
  void OutOfNode(int32_t from, int32_t to_rack, LinkUses& out) const;

  const model::Cluster& cluster_;
  int32_t rack_base_ = 0;
  int32_t spine_ = 0;
  std::vector<double> capacity_;  // by link; +infinity where a capacity is not given
  std::vector<Flow> flows_;
  std::vector<int32_t> free_;  // reusable flow ids
  int32_t live_ = 0;
  bool dirty_ = false;
  double booked_s_ = 0;  // bytes are booked up to here
  double spine_bytes_ = 0;
};

}  // namespace hetsched::sim
