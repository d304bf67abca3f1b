// Extender: hetsched as a kube-scheduler HTTP extender (docs/kubernetes.md). kube-scheduler
// keeps its queue and its own filters; for each pod it asks hetsched to filter the nodes it
// found feasible, to score them, and (when configured) to bind the pod and to vet preemption
// victims. Decisions use the decision core the simulator uses: the compat and memory filters
// (sched/filters.h) on each node's device type at its driver version, the type scorers
// (sched/scorers.h: speed per cost, energy) on the pod's speed from the cost model, plus
// packing and locality over the node cache. Pod groups are placed all or nothing, by sched's
// gang placement rules (sched/room_placement.h).
//
// The verbs take the request body as kube-scheduler sends it (the types of
// k8s.io/kube-scheduler/extender/v1: PascalCase keys, nil as null) and return the answer's
// JSON. Thread-safe: the HTTP server calls the verbs from many threads while the node cache
// (k8s/node_cache.h) feeds nodes and pods.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k8s/objects.h"
#include "model/catalog.h"
#include "model/profile.h"
#include "model/tenant.h"
#include "sched/filters.h"
#include "sched/scorers.h"
#include "util/status.h"

namespace hetsched::svc::k8s {

struct ExtenderOptions {
  Mapping mapping;
  model::DeviceCatalog catalog = model::DeviceCatalog::BuiltIn();
  // Measured speeds of job types (hetsched.io/job-type); may be null. Outlives the extender.
  const model::ThroughputProfile* profile = nullptr;
  // Type scorers and weights (sched/scorers.h), and the weights of packing and locality.
  std::string scorers = "speed";
  double packing_weight = 1;
  double locality_weight = 1;
  // Nodes and bound pods are known from the API (list and watch): requests may name nodes
  // only (nodeCacheCapable), free devices are counted, pod groups can be placed.
  bool node_cache = false;
  // A pod group's reservation is dropped when its members are not all bound by then.
  double group_timeout_s = 60;
  // Binds a pod to a node (POST .../pods/NAME/binding); empty: the bind verb answers an error.
  std::function<util::Status(const std::string& namespace_name, const std::string& name,
                             const std::string& uid, const std::string& node)>
      binder;
  // Seconds, for group timeouts; steady_clock by default (injectable for tests).
  std::function<double()> clock;
  // Teams (serve's tenants:): each accelerator pod belongs to the tenant its namespace (or
  // Mapping::tenant_label) names, through Mapping::tenant_map; a pod of no tenant is refused, and
  // one that would take its tenant past its borrow_limit, or into guarantees others do not lend,
  // waits. Quotas per device type only; needs the node cache. Empty: no tenants.
  model::Tenants tenants;
};

// An answer: HTTP status (200, or 400 for a request that does not read) and JSON body.
struct ExtenderReply {
  int status = 200;
  std::string body;
};

// What the extender knows of one node (GET /v1/k8s/nodes).
struct ExtenderNodeView {
  NodeInfo info;
  double used = 0;      // accelerators held by bound pods
  double reserved = 0;  // held for pod groups not yet bound
};

class Extender {
 public:
  static util::Result<std::unique_ptr<Extender>> Create(ExtenderOptions options);

  ExtenderReply Filter(std::string_view body);
  ExtenderReply Prioritize(std::string_view body);
  ExtenderReply Bind(std::string_view body);
  ExtenderReply Preempt(std::string_view body);

  // The node cache: a full list replaces what is known, watch events change it.
  void ReplaceNodes(const std::vector<Node>& nodes);
  void UpsertNode(const Node& node);
  void DeleteNode(const std::string& name);
  void ReplacePods(const std::vector<Pod>& pods);
  void UpsertPod(const Pod& pod);
  void DeletePod(const Pod& pod);
  // Both lists have been read at least once (until then NodeNames requests cannot be answered).
  void SetSynced(bool synced);
  bool synced() const;
  // Answers requests: synced, or no node cache to wait for.
  bool ready() const { return !options_.node_cache || synced(); }

  std::vector<ExtenderNodeView> Nodes() const;  // by name
  const Mapping& mapping() const { return options_.mapping; }
  size_t groups_reserved() const;

 private:
  explicit Extender(ExtenderOptions options, sched::ScorerSet scorers);

  struct CachedNode {
    NodeInfo info;
    double used = 0;
    double reserved = 0;
  };
  struct BoundPod {
    std::string node;
    double count = 0;   // accelerators
    std::string group;  // namespace/group, "" for none
    int tenant = -1;    // position in options_.tenants, -1 for none
  };
  struct Slot {
    std::string node;
    int32_t count = 0;
    std::string uid;  // the member it went to, "" while free
    bool bound = false;
  };
  struct GroupPlan {
    std::vector<Slot> slots;
    double expires_s = 0;
    int tenant = -1;  // whose quota its places count against
  };
  // Each candidate node of one request: what it is and, with the cache, how busy.
  struct Candidate {
    const NodeInfo* info = nullptr;
    std::string name;
    double used = 0, reserved = 0;
    bool usage_known = false;
    // Pods of `count` accelerators that fit in what the node has free now.
    int32_t PodsThatFit(int32_t count) const;
  };
  struct Verdict {
    bool fits = false;
    bool incompatible = false;  // would not fit even on an empty node
    std::string reason;
  };

  // The key pods and group slots go by: the pod's UID, else namespace/name.
  static std::string UidOf(const PodNeeds& needs) {
    return needs.uid.empty() ? needs.key : needs.uid;
  }

  // What locality scores against: the nodes of the pod's group (bound or reserved) and their
  // racks, else its data's node and rack.
  struct Nearby {
    std::set<std::string> nodes, racks;
    // 1 on one of the nodes, 0.5 in one of the racks, 0 elsewhere; -1: nothing to be near.
    double Locality(const std::string& node, const std::string& rack) const;
  };

  Verdict Check(const PodNeeds& needs, const Candidate& c) const;
  // Some node could run the pod when empty: of the cache, else of those sent. Needs mu_.
  bool RunsSomewhere(const PodNeeds& needs, const std::vector<Candidate>& sent) const;
  Nearby NearbyOf(const PodNeeds& needs) const;  // needs mu_
  // The prioritize score, 0 to 10: the type score, packing (with the cache) and locality, each
  // weighed as configured.
  int NodeScore(const PodNeeds& needs, const Candidate& c, double type_score,
                const Nearby& near) const;
  // The Nodes form's nodes described (none for the NodeNames form). Needs no lock.
  std::vector<NodeInfo> Describe(bool names_form, const std::vector<Node>& nodes) const;
  // The request's nodes: `described` (Nodes form) or the cache's (NodeNames form: names it
  // does not hold go to `unknown`), with usage from the cache; `index` gets each one's
  // position in `names`. Needs mu_.
  std::vector<Candidate> CandidatesOf(const std::vector<std::string>& names, bool names_form,
                                      const std::vector<NodeInfo>& described,
                                      std::vector<std::string>* unknown,
                                      std::vector<int32_t>* index) const;
  // Places the group's remaining members on `eligible` cached nodes (those kube-scheduler
  // offered for this member: its own filters passed there) of one device type, by the gang
  // placement rules of sched (sched/room_placement.h), or says why it cannot: kInfeasible when
  // it does not fit now, kInvalidArgument when it would not fit on the whole cluster empty.
  // Needs mu_.
  util::Result<GroupPlan> PlanGroup(const PodNeeds& needs, int32_t members,
                                    const std::vector<Candidate>& eligible);
  // The eligible nodes a member can run on when empty: in the cache and schedulable, with
  // their usage. Needs mu_.
  std::vector<Candidate> GroupNodes(const PodNeeds& needs,
                                    const std::vector<Candidate>& eligible) const;
  // Of the types of `nodes` whose free devices hold `members` pods now, the one the type
  // scorers rate best (its catalog id); else the refusal PlanGroup answers. Needs mu_.
  util::Result<int32_t> GroupType(const PodNeeds& needs, int32_t members,
                                  const std::vector<Candidate>& nodes) const;
  // Pods of the member's size the cache's nodes of one type hold when all are empty, the most
  // of any type. Needs mu_.
  int32_t MostPodsEver(const PodNeeds& needs) const;
  // The rack of the pod's data: its data location's rack when that names a cached node, else
  // the location itself (a rack name); "" for none. Needs mu_.
  std::string DataRack(const PodNeeds& needs) const;
  void ExpireGroups();                                  // needs mu_
  void Reserve(const std::string& node, double delta);  // needs mu_
  // The slot of a group member (a free one is assigned to it; the group is planned when it has
  // no plan yet); nullptr: place it alone (the group runs already). Needs mu_.
  util::Result<const Slot*> SlotOf(const PodNeeds& needs, const std::vector<Candidate>& eligible);
  void AddPod(const Pod& pod);                                       // needs mu_
  void RemovePod(const std::string& uid);                            // needs mu_
  void MarkBound(const std::string& uid, const std::string& group);  // needs mu_
  double TypeScore(const PodNeeds& needs, const std::vector<Candidate>& candidates,
                   const NodeInfo& info) const;
  // Tenants (extender_tenants.cc). Per-type quotas naming catalog types (made canonical), and
  // the node cache on; errors located at the quota.
  static util::Status CheckTenants(ExtenderOptions& options);
  // The tenant an accelerator pod belongs to (its position in
  // options_.tenants; -1 without tenants or for a CPU pod), or why it belongs to none.
  util::Result<int> TenantOf(const Pod& pod, bool accelerator_pod) const;
  // Why `tenant` may not take `devices` more accelerators for `needs` now, "" when it may: beyond
  // its guarantee (the quota of the types the pod can use) by more than its borrow_limit, or
  // into guarantees others keep. Counts bound pods and unbound places of group plans. Needs mu_.
  std::string TenantRefusal(const PodNeeds& needs, int tenant, double devices) const;
  // The pod's tenant refusal for Filter (unknown tenant or over its limits, "" when none);
  // a group member that makes its group's plan asks for all the members still missing. Needs mu_.
  std::string TenantCheck(const Pod& pod, const PodNeeds& needs, int* tenant) const;
  double Now() const;

  ExtenderOptions options_;
  sched::ScorerSet scorers_;
  std::vector<std::unique_ptr<sched::Filter>> filters_;
  mutable std::mutex mu_;
  bool synced_ = false;
  std::unordered_map<std::string, CachedNode> nodes_;
  std::unordered_map<std::string, BoundPod> pods_;  // by uid (else namespace/name)
  std::map<std::string, GroupPlan> groups_;         // by namespace/group
  // Needs and tenant seen by filter, for bind (its request names the pod only); bounded.
  struct SeenPod {
    PodNeeds needs;
    int tenant = -1;
  };
  std::unordered_map<std::string, SeenPod> seen_;
};

}  // namespace hetsched::svc::k8s
