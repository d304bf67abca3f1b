// The extender's tenants: which team a pod belongs to (its namespace or a label, through
// kubernetes.tenant_map), and whether its team may take its devices now (its guarantee, its
// borrow_limit, and what the other teams lend of theirs).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "k8s/extender.h"
#include "util/source_location.h"

namespace hetsched::svc::k8s {
namespace {

constexpr double kSlack = 1e-9;

}  // namespace

util::Status Extender::CheckTenants(ExtenderOptions& options) {
  if (options.tenants.empty()) return util::Status::Ok();
  if (!options.node_cache) {
    return util::Status::InvalidArgument(
        "tenants: the extender counts what each tenant's pods hold from its node cache (expected "
        "kubernetes.node_cache: true, with api in-cluster or kubeconfig)");
  }
  for (model::Tenant& t : options.tenants.list) {
    if (t.normalized) {
      return util::InputError(t.quota_where, "tenant " + t.name + ": quota.normalized",
                              "the extender counts devices per type, not reference devices",
                              "a quota per device type, like {a100-80g: 8}");
    }
    std::map<std::string, int32_t> canonical;
    for (const auto& [name, count] : t.per_type) {
      const model::DeviceType* type = options.catalog.Find(name);
      if (type == nullptr) {
        return util::InputError(t.quota_where, "tenant " + t.name + ": quota." + name,
                                "is not a catalog device type", "`hetsched catalog` lists them");
      }
      canonical[type->name] += count;
    }
    t.per_type = std::move(canonical);
  }
  return util::Status::Ok();
}

util::Result<int> Extender::TenantOf(const Pod& pod, bool accelerator_pod) const {
  const model::Tenants& tenants = options_.tenants;
  if (tenants.empty() || !accelerator_pod) return -1;
  const Mapping& m = options_.mapping;
  std::string source = pod.namespace_name;
  std::string what = "namespace";
  if (!m.tenant_label.empty()) {
    auto label = pod.labels.find(m.tenant_label);
    if (label == pod.labels.end()) {
      return util::Status::InvalidArgument(fmt::format(
          "pod {}: no label {} names its tenant (kubernetes.tenant_from: label:{}; expected the "
          "label with one of {}, or a value kubernetes.tenant_map maps)",
          pod.Key(), m.tenant_label, m.tenant_label, tenants.Names()));
    }
    source = label->second;
    what = "label " + m.tenant_label;
  }
  auto mapped = m.tenant_map.find(source);
  const std::string name = mapped == m.tenant_map.end() ? source : mapped->second;
  const int i = tenants.Find(name);
  if (i < 0) {
    return util::Status::InvalidArgument(
        fmt::format("pod {}: {} '{}' is not a tenant (expected one of {}, or map it to one "
                    "under kubernetes.tenant_map)",
                    pod.Key(), what, name, tenants.Names()));
  }
  if (tenants.HasChildren(i)) {
    return util::Status::InvalidArgument(
        fmt::format("pod {}: tenant '{}' has child tenants (expected a tenant without children: "
                    "pods belong to one of its children)",
                    pod.Key(), name));
  }
  return i;
}

std::string Extender::TenantRefusal(const PodNeeds& needs, int tenant, double devices) const {
  const model::Tenants& tenants = options_.tenants;
  std::vector<double> held(tenants.list.size(), 0);
  for (const auto& [uid, p] : pods_) {
    if (p.tenant >= 0) held[p.tenant] += p.count;
  }
  for (const auto& [group, plan] : groups_) {
    for (const Slot& s : plan.slots) {
      if (plan.tenant >= 0 && !s.bound) held[plan.tenant] += s.count;
    }
  }
  // A per-type quota guarantees a pod only the types it can run on (AMD GPUs in a CUDA team's
  // quota guarantee its CUDA pods nothing), as the scheduler counts guarantees.
  const model::Tenant& t = tenants.list[tenant];
  double guarantee = 0;
  for (const auto& [type, count] : t.per_type) {
    const model::DeviceType* device = options_.catalog.Find(type);
    if (device != nullptr && std::none_of(filters_.begin(), filters_.end(), [&](const auto& f) {
          return f->Reject(needs.job, *device).has_value();
        })) {
      guarantee += count;
    }
  }
  const double after = held[tenant] + devices;
  const double limit = t.borrow_limit.value_or(std::numeric_limits<double>::infinity());
  if (after - guarantee > limit + kSlack) {
    return fmt::format(
        "tenant {} holds {} device(s), its guarantee for this pod is {} and its borrow_limit {}: "
        "{} more would borrow {}",
        t.name, held[tenant], guarantee, limit, devices, after - guarantee);
  }
  if (after - std::max(held[tenant], guarantee) <= kSlack) return "";
  double cluster = 0;
  for (const auto& [name, node] : nodes_) {
    if (node.info.problem.empty() && !node.info.resource.empty()) {
      cluster += node.info.accelerators;
    }
  }
  std::vector<double> demand = held;
  demand[tenant] = after;
  const double borrowable = tenants.Borrowable(cluster, held, demand);
  if (devices > borrowable + kSlack) {
    return fmt::format(
        "tenant {} would borrow beyond its guarantee for this pod ({}), and of the cluster's {} "
        "device(s) the tenants' guarantees and lend_limits leave {} to borrow now, the pod needs "
        "{}",
        t.name, guarantee, cluster, std::max(0.0, borrowable), devices);
  }
  return "";
}

std::string Extender::TenantCheck(const Pod& pod, const PodNeeds& needs, int* tenant) const {
  auto t = TenantOf(pod, !needs.resource.empty());
  if (!t.ok()) return t.status().message();
  *tenant = *t;
  if (*t < 0) return "";
  double devices = needs.count;
  if (!needs.group.empty()) {
    const std::string uid = UidOf(needs);
    if (auto plan = groups_.find(needs.group); plan != groups_.end()) {
      // A member with a place in the plan was counted when the plan was made.
      for (const Slot& s : plan->second.slots) {
        if (s.uid == uid || (s.uid.empty() && s.count == needs.count)) return "";
      }
    } else {
      // The member that makes the plan asks for every member not bound yet, all or nothing.
      int32_t bound = 0;
      for (const auto& [id, p] : pods_) bound += p.group == needs.group && id != uid;
      devices = std::max(1, needs.group_size - bound) * static_cast<double>(needs.count);
    }
  }
  return TenantRefusal(needs, *t, devices);
}

}  // namespace hetsched::svc::k8s
