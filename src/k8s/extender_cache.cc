// The extender's node cache: nodes and bound pods as list and watch report them, and the
// devices each node has in use.
#include <algorithm>

#include "k8s/extender.h"

namespace hetsched::svc::k8s {
namespace {

std::string Uid(const Pod& pod) { return pod.uid.empty() ? pod.Key() : pod.uid; }

// Accelerators a pod holds once bound (0 for a CPU pod; for one asking for two kinds, which
// NeedsOf refuses, the first kind's count).
double AcceleratorsOf(const Pod& pod) {
  for (const auto& [resource, count] : pod.requests) {
    if (StackOfResource(resource) && count > 0) return count;
  }
  return 0;
}

}  // namespace

void Extender::AddPod(const Pod& pod) {
  const std::string uid = Uid(pod);
  RemovePod(uid);
  if (pod.node_name.empty() || pod.Ended()) return;
  BoundPod& p = pods_[uid];
  p.node = pod.node_name;
  p.count = AcceleratorsOf(pod);
  if (auto needs = NeedsOf(pod, options_.catalog); needs.ok()) p.group = needs->group;
  auto tenant = TenantOf(pod, p.count > 0);
  p.tenant = tenant.ok() ? *tenant : -1;  // a pod of no tenant that runs anyway holds no quota
  if (auto n = nodes_.find(p.node); n != nodes_.end()) n->second.used += p.count;
  if (!p.group.empty()) MarkBound(uid, p.group);
}

void Extender::RemovePod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  if (auto n = nodes_.find(it->second.node); n != nodes_.end()) n->second.used -= it->second.count;
  pods_.erase(it);
}

void Extender::ReplaceNodes(const std::vector<Node>& nodes) {
  std::lock_guard lock(mu_);
  nodes_.clear();
  for (const Node& n : nodes) {
    nodes_[n.name].info = DescribeNode(n, options_.mapping, options_.catalog);
  }
  for (const auto& [uid, p] : pods_) {
    if (auto n = nodes_.find(p.node); n != nodes_.end()) n->second.used += p.count;
  }
  for (const auto& [group, plan] : groups_) {
    for (const Slot& s : plan.slots) {
      if (!s.bound) Reserve(s.node, s.count);
    }
  }
}

void Extender::UpsertNode(const Node& node) {
  std::lock_guard lock(mu_);
  nodes_[node.name].info = DescribeNode(node, options_.mapping, options_.catalog);
}

void Extender::DeleteNode(const std::string& name) {
  std::lock_guard lock(mu_);
  nodes_.erase(name);
}

void Extender::ReplacePods(const std::vector<Pod>& pods) {
  std::lock_guard lock(mu_);
  for (auto& [name, node] : nodes_) node.used = 0;
  pods_.clear();
  for (const Pod& p : pods) AddPod(p);
}

void Extender::UpsertPod(const Pod& pod) {
  std::lock_guard lock(mu_);
  AddPod(pod);
}

void Extender::DeletePod(const Pod& pod) {
  std::lock_guard lock(mu_);
  RemovePod(Uid(pod));
}

void Extender::SetSynced(bool synced) {
  std::lock_guard lock(mu_);
  synced_ = synced;
}

bool Extender::synced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

std::vector<ExtenderNodeView> Extender::Nodes() const {
  std::lock_guard lock(mu_);
  std::vector<ExtenderNodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) out.push_back({node.info, node.used, node.reserved});
  std::sort(out.begin(), out.end(), [](const ExtenderNodeView& a, const ExtenderNodeView& b) {
    return a.info.name < b.info.name;
  });
  return out;
}

size_t Extender::groups_reserved() const {
  std::lock_guard lock(mu_);
  return groups_.size();
}

}  // namespace hetsched::svc::k8s
