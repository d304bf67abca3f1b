// The extender's pod groups: a plan for the members not bound yet, its places held until they
// are bound or the plan lapses.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "k8s/extender.h"
#include "sched/room_placement.h"

namespace hetsched::svc::k8s {

int32_t Extender::Candidate::PodsThatFit(int32_t count) const {
  const double free = info->accelerators - used - reserved;
  return std::max(0, static_cast<int32_t>(std::floor(free / count)));
}

std::vector<Extender::Candidate> Extender::GroupNodes(
    const PodNeeds& needs, const std::vector<Candidate>& eligible) const {
  std::vector<Candidate> out;
  for (const Candidate& offered : eligible) {
    auto it = nodes_.find(offered.name);
    if (it == nodes_.end()) continue;
    const CachedNode& node = it->second;
    if (!node.info.schedulable ||
        Check(needs, Candidate{&node.info, it->first, 0, 0, false}).incompatible) {
      continue;
    }
    out.push_back({&node.info, it->first, node.used, node.reserved, true});
  }
  return out;
}

int32_t Extender::MostPodsEver(const PodNeeds& needs) const {
  std::map<int32_t, int32_t> ever;  // by catalog id
  for (const auto& [name, node] : nodes_) {
    if (!node.info.schedulable ||
        Check(needs, Candidate{&node.info, name, 0, 0, false}).incompatible) {
      continue;
    }
    ever[node.info.type.value()] += node.info.accelerators / needs.count;
  }
  int32_t most = 0;
  for (const auto& [type, n] : ever) most = std::max(most, n);
  return most;
}

util::Result<int32_t> Extender::GroupType(const PodNeeds& needs, int32_t members,
                                          const std::vector<Candidate>& nodes) const {
  std::map<int32_t, int32_t> fit_now;  // by catalog id
  for (const Candidate& c : nodes) fit_now[c.info->type.value()] += c.PodsThatFit(needs.count);
  int32_t best_type = -1, most = 0;
  double best_score = -1;
  for (const auto& [type, fits] : fit_now) {
    most = std::max(most, fits);
    if (fits < members) continue;
    const auto first = std::find_if(nodes.begin(), nodes.end(), [type = type](const Candidate& c) {
      return c.info->type.value() == type;
    });
    const double score = TypeScore(needs, nodes, *first->info);
    if (score > best_score) {
      best_score = score;
      best_type = type;
    }
  }
  if (best_type >= 0) return best_type;
  // Even on an empty cluster? Then waiting or preempting cannot help (unresolvable).
  const int32_t ever = MostPodsEver(needs);
  if (ever < members) {
    return util::Status::InvalidArgument(fmt::format(
        "pod group '{}' needs {} pod(s) of {} {} at once; the whole cluster holds at most {} "
        "on one device type",
        needs.group, members, needs.count, needs.resource, ever));
  }
  return util::Status::Infeasible(
      fmt::format("pod group '{}' needs {} more pod(s) of {} {} at once; {} fit now", needs.group,
                  members, needs.count, needs.resource, most));
}

util::Result<Extender::GroupPlan> Extender::PlanGroup(const PodNeeds& needs, int32_t members,
                                                      const std::vector<Candidate>& eligible) {
  const std::vector<Candidate> nodes = GroupNodes(needs, eligible);
  ASSIGN_OR_RETURN(const int32_t type, GroupType(needs, members, nodes));
  std::vector<sched::NodeRoom> rooms;
  for (const Candidate& c : nodes) {
    const int32_t fits = c.PodsThatFit(needs.count);
    if (c.info->type.value() == type && fits > 0) rooms.push_back({c.name, c.info->rack, fits});
  }
  // By name: ties between nodes break the same way whatever order kube-scheduler sent them in.
  std::sort(rooms.begin(), rooms.end(),
            [](const sched::NodeRoom& a, const sched::NodeRoom& b) { return a.name < b.name; });
  const auto placed =
      sched::PlaceGangByRoom(rooms, members, {needs.data_location, DataRack(needs)});
  if (!placed) {  // GroupType found room for every member
    return util::Status::Internal(fmt::format("pod group '{}' lost its places", needs.group));
  }
  GroupPlan plan;
  plan.expires_s = Now() + options_.group_timeout_s;
  for (int32_t room : *placed) plan.slots.push_back({rooms[room].name, needs.count, "", false});
  for (const Slot& s : plan.slots) Reserve(s.node, s.count);
  return plan;
}

util::Result<const Extender::Slot*> Extender::SlotOf(const PodNeeds& needs,
                                                     const std::vector<Candidate>& eligible) {
  const std::string uid = UidOf(needs);
  auto it = groups_.find(needs.group);
  if (it == groups_.end()) {
    int32_t bound = 0;
    for (const auto& [id, p] : pods_) bound += p.group == needs.group && id != uid;
    const int32_t members = needs.group_size - bound;
    if (members <= 0) return static_cast<const Slot*>(nullptr);  // the group runs: one more pod
    ASSIGN_OR_RETURN(GroupPlan plan, PlanGroup(needs, members, eligible));
    it = groups_.emplace(needs.group, std::move(plan)).first;
  }
  for (Slot& s : it->second.slots) {
    if (s.uid == uid) return static_cast<const Slot*>(&s);
  }
  for (Slot& s : it->second.slots) {
    if (s.uid.empty() && s.count == needs.count) {
      s.uid = uid;
      return static_cast<const Slot*>(&s);
    }
  }
  return static_cast<const Slot*>(nullptr);  // more pods than planned: placed alone
}

void Extender::MarkBound(const std::string& uid, const std::string& group) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  bool all = true;
  for (Slot& s : it->second.slots) {
    if (s.uid == uid && !s.bound) {
      s.bound = true;
      Reserve(s.node, -s.count);
    }
    all = all && s.bound;
  }
  if (all) groups_.erase(it);
}

void Extender::Reserve(const std::string& node, double delta) {
  // A node that left keeps no count; its slots are simply not taken.
  if (auto it = nodes_.find(node); it != nodes_.end()) it->second.reserved += delta;
}

void Extender::ExpireGroups() {
  const double now = Now();
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (it->second.expires_s > now) {
      ++it;
      continue;
    }
    for (const Slot& s : it->second.slots) {
      if (!s.bound) Reserve(s.node, -s.count);
    }
    it = groups_.erase(it);
  }
}

}  // namespace hetsched::svc::k8s
