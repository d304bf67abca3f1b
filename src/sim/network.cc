#include "sim/network.h"

#include <algorithm>
#include <cmath>

namespace hetsched::sim {

namespace {

double CapacityOf(double bandwidth) {
  return bandwidth > 0 ? bandwidth : std::numeric_limits<double>::infinity();
}

// Adds `weight` crossings of `link` to `uses`, merging with an existing entry.
void Cross(int32_t link, int32_t weight, Network::LinkUses& uses) {
  for (cost::FlowLinks::Use& u : uses) {
    if (u.link == link) {
      u.weight += weight;
      return;
    }
  }
  uses.push_back({link, weight});
}

}  // namespace

Network::Network(const model::Cluster& cluster) : cluster_(cluster) {
  const int32_t nodes = static_cast<int32_t>(cluster.nodes.size());
  const int32_t racks = static_cast<int32_t>(cluster.racks.size());
  rack_base_ = 2 * nodes;
  spine_ = rack_base_ + 2 * racks;
  capacity_.resize(spine_ + 1 + 2 * cluster.storage.size());
  for (int32_t n = 0; n < nodes; ++n) {
    capacity_[NicUp(n)] = capacity_[NicDown(n)] = CapacityOf(cluster.nodes[n].nic_bandwidth);
  }
  for (int32_t r = 0; r < racks; ++r) {
    capacity_[RackUp(r)] = capacity_[RackDown(r)] = CapacityOf(cluster.racks[r].uplink_bandwidth);
  }
  capacity_[Spine()] = CapacityOf(cluster.spine_bandwidth);
  for (size_t s = 0; s < cluster.storage.size(); ++s) {
    const int32_t i = static_cast<int32_t>(s);
    capacity_[StorageOut(i)] = capacity_[StorageIn(i)] = CapacityOf(cluster.storage[s].bandwidth);
  }
}

DataSource Network::SourceOf(std::string_view location) const {
  if (location.empty()) {
    return cluster_.storage.empty() ? DataSource{} : DataSource{DataSource::kStorage, 0};
  }
  if (auto n = cluster_.FindNode(location)) return {DataSource::kNode, n->value()};
  if (auto r = cluster_.FindRack(location)) return {DataSource::kRack, r->value()};
  if (auto s = cluster_.FindStorage(location)) return {DataSource::kStorage, *s};
  return {};
}

void Network::IntoNode(int32_t from_rack, int32_t to, LinkUses& out) const {
  const int32_t to_rack = cluster_.nodes[to].rack.value();
  if (from_rack != to_rack) {
    if (from_rack >= 0) Cross(RackUp(from_rack), 1, out);
    Cross(Spine(), 1, out);
    Cross(RackDown(to_rack), 1, out);
  }
  Cross(NicDown(to), 1, out);
}

void Network::OutOfNode(int32_t from, int32_t to_rack, LinkUses& out) const {
  const int32_t from_rack = cluster_.nodes[from].rack.value();
  Cross(NicUp(from), 1, out);
  if (from_rack != to_rack) {
    Cross(RackUp(from_rack), 1, out);
    Cross(Spine(), 1, out);
    if (to_rack >= 0) Cross(RackDown(to_rack), 1, out);
  }
}

Network::LinkUses Network::ReadPath(const DataSource& source, model::NodeId node) const {
  LinkUses out;
  const int32_t to = node.value();
  switch (source.kind) {
    case DataSource::kNone:
      break;
    case DataSource::kNode:
      if (source.index == to) break;
      Cross(NicUp(source.index), 1, out);
      IntoNode(cluster_.nodes[source.index].rack.value(), to, out);
      break;
    case DataSource::kRack:
      IntoNode(source.index, to, out);
      break;
    case DataSource::kStorage: {
      const model::Storage& s = cluster_.storage[source.index];
      Cross(StorageOut(source.index), 1, out);
      IntoNode(s.rack.valid() ? s.rack.value() : -1, to, out);
      break;
    }
  }
  return out;
}

Network::LinkUses Network::WritePath(model::NodeId node, const DataSource& source) const {
  LinkUses out;
  const int32_t from = node.value();
  switch (source.kind) {
    case DataSource::kNone:
      break;
    case DataSource::kNode:
      if (source.index == from) break;
      OutOfNode(from, cluster_.nodes[source.index].rack.value(), out);
      Cross(NicDown(source.index), 1, out);
      break;
    case DataSource::kRack:
      OutOfNode(from, source.index, out);
      break;
    case DataSource::kStorage: {
      const model::Storage& s = cluster_.storage[source.index];
      OutOfNode(from, s.rack.valid() ? s.rack.value() : -1, out);
      Cross(StorageIn(source.index), 1, out);
      break;
    }
  }
  return out;
}

Network::LinkUses Network::RingPath(const std::vector<model::DeviceId>& devices) const {
  LinkUses out;
  if (devices.size() < 2) return out;
  for (size_t i = 0; i < devices.size(); ++i) {
    const int32_t a = cluster_.device(devices[i]).node.value();
    const int32_t b = cluster_.device(devices[(i + 1) % devices.size()]).node.value();
    if (a == b) continue;
    Cross(NicUp(a), 1, out);
    IntoNode(cluster_.nodes[a].rack.value(), b, out);
  }
  return out;
}

int32_t Network::Add(LinkUses links, double demand, double bytes, double now_s) {
  Advance(now_s);
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int32_t>(flows_.size());
    flows_.emplace_back();
  }
  flows_[id] = Flow{true, std::move(links), demand, bytes, 0};
  ++live_;
  dirty_ = true;
  return id;
}

void Network::Remove(int32_t flow, double now_s) {
  Advance(now_s);
  Flow& f = flows_[flow];
  f.live = false;
  f.links.clear();
  f.rate = 0;
  free_.push_back(flow);
  --live_;
  dirty_ = true;
}

void Network::SetDemand(int32_t flow, double demand, double now_s) {
  if (flows_[flow].demand == demand) return;
  Advance(now_s);
  flows_[flow].demand = demand;
  dirty_ = true;
}

void Network::Advance(double now_s) {
  const double dt = now_s - booked_s_;
  if (dt <= 0) return;
  booked_s_ = now_s;
  for (Flow& f : flows_) {
    if (!f.live || f.rate <= 0 || !std::isfinite(f.rate)) continue;
    const double moved = f.rate * dt;
    if (std::isfinite(f.left)) f.left = std::max(0.0, f.left - moved);
    for (const cost::FlowLinks::Use& u : f.links) {
      if (u.link == Spine()) spine_bytes_ += u.weight * moved;
    }
  }
}

std::vector<int32_t> Network::Reshare(double now_s) {
  std::vector<int32_t> changed;
  if (!dirty_) return changed;
  Advance(now_s);
  dirty_ = false;
  std::vector<int32_t> ids;
  std::vector<cost::FlowLinks> shares;
  for (size_t i = 0; i < flows_.size(); ++i) {
    if (!flows_[i].live) continue;
    ids.push_back(static_cast<int32_t>(i));
    shares.push_back({flows_[i].links, flows_[i].demand});
  }
  const std::vector<double> rates = cost::MaxMinShares(capacity_, shares);
  for (size_t k = 0; k < ids.size(); ++k) {
    Flow& f = flows_[ids[k]];
    if (f.rate != rates[k]) {
      f.rate = rates[k];
      changed.push_back(ids[k]);
    }
  }
  return changed;
}

bool Network::Done(int32_t flow) const {
  const Flow& f = flows_[flow];
  return std::isfinite(f.left) && (f.left <= 1 || f.left <= f.rate * 1e-6);
}

std::vector<int32_t> Network::Finished() const {
  std::vector<int32_t> out;
  for (size_t i = 0; i < flows_.size(); ++i) {
    if (flows_[i].live && Done(static_cast<int32_t>(i))) out.push_back(static_cast<int32_t>(i));
  }
  return out;
}

double Network::NextCompletion() const {
  double first = kForever;
  for (const Flow& f : flows_) {
    if (!f.live || !std::isfinite(f.left)) continue;
    if (f.left <= 0 || std::isinf(f.rate)) return booked_s_;
    if (f.rate > 0) first = std::min(first, booked_s_ + f.left / f.rate);
  }
  return first;
}

}  // namespace hetsched::sim
