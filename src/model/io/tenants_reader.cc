#include "model/io/tenants_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace hetsched::model::io {
namespace {

using util::Status;

constexpr int64_t kMaxQuotaDevices = 1'000'000;
constexpr double kMaxCapacity = 1e9;

Status ParseQuota(const DocReader& r, const DocValue& v, const std::string& path, Tenant& t) {
  RETURN_IF_ERROR(r.Mapping(v, path, "{v100: 8} or {normalized: 4.5}"));
  t.quota_where = r.At(v);
  for (const DocValue::Field& kv : v.fields) {
    const std::string field = path + "." + kv.key;
    if (kv.key == "normalized") {
      if (v.fields.size() > 1) {
        return r.Error(kv, field, "is given with per-type counts",
                       "either {normalized: N} or counts per device type");
      }
      ASSIGN_OR_RETURN(t.normalized,
                       r.NumberIn(kv.value, field, 0, kMaxCapacity, /*open_least=*/false,
                                  "reference devices, a number >= 0"));
      continue;
    }
    ASSIGN_OR_RETURN(const int64_t n, r.WholeNumber(kv.value, field, 0, kMaxQuotaDevices));
    t.per_type[kv.key] = static_cast<int32_t>(n);
  }
  return Status::Ok();
}

util::Result<double> Limit(const DocReader& r, const DocValue& v, const std::string& path) {
  return r.NumberIn(v, path, 0, kMaxCapacity, /*open_least=*/false,
                    "a number >= 0, in the unit of the tenant's quota");
}

util::Result<Tenant> ParseTenant(const DocReader& r, const DocValue& v, const std::string& path) {
  RETURN_IF_ERROR(r.CheckMap(
      v, path, {"name", "parent", "weight", "quota", "borrow_limit", "lend_limit"}, "a tenant"));
  Tenant t;
  if (!v.Has("name")) return r.Missing(v, path + ".name", "the tenant's name");
  ASSIGN_OR_RETURN(t.name, r.NonEmptyString(v["name"], path + ".name"));
  if (v.Has("parent")) {
    ASSIGN_OR_RETURN(t.parent, r.NonEmptyString(v["parent"], path + ".parent"));
  }
  if (v.Has("weight")) {
    ASSIGN_OR_RETURN(
        t.weight, r.Number(v["weight"], path + ".weight", 0, /*strict=*/true, "a positive number"));
  }
  if (v.Has("quota")) RETURN_IF_ERROR(ParseQuota(r, v["quota"], path + ".quota", t));
  if (v.Has("borrow_limit")) {
    ASSIGN_OR_RETURN(t.borrow_limit, Limit(r, v["borrow_limit"], path + ".borrow_limit"));
  }
  if (v.Has("lend_limit")) {
    ASSIGN_OR_RETURN(t.lend_limit, Limit(r, v["lend_limit"], path + ".lend_limit"));
  }
  return t;
}

// Each tenant's parent is known and no chain of parents comes back to where it started.
Status CheckTree(const DocReader& r, const DocValue& node, const std::vector<Tenant>& list) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < list.size(); ++i) index[list[i].name] = i;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("tenants[{}].parent", i);
    const DocValue& at = node[i]["parent"];
    if (list[i].parent.empty()) continue;
    if (!index.count(list[i].parent)) {
      return r.Error(at, path, fmt::format("'{}' is not a tenant", list[i].parent),
                     "one of " + Tenants{list, {}}.Names());
    }
    size_t at_index = i;
    for (size_t step = 0; step <= list.size(); ++step) {
      if (list[at_index].parent.empty()) break;
      at_index = index[list[at_index].parent];
      if (at_index == i) {
        return r.Error(at, path, fmt::format("'{}' is in a cycle of parents", list[i].name),
                       "a tree: no tenant its own ancestor");
      }
    }
  }
  return Status::Ok();
}

// Parents before children, otherwise in file order.
std::vector<Tenant> ParentsFirst(std::vector<Tenant> list) {
  std::vector<Tenant> out;
  std::vector<char> placed(list.size(), 0);
  while (out.size() < list.size()) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (placed[i]) continue;
      const bool ready = list[i].parent.empty() ||
                         std::any_of(out.begin(), out.end(),
                                     [&](const Tenant& t) { return t.name == list[i].parent; });
      if (!ready) continue;
      placed[i] = 1;
      out.push_back(std::move(list[i]));
    }
  }
  return out;
}

// Each of `t`'s per-type quotas names a type of the cluster and fits its devices there; adds
// them to `out` by canonical type name.
Status CheckPerType(const Cluster& cluster, const Tenant& t, std::map<std::string, int32_t>* out) {
  for (const auto& [name, n] : t.per_type) {
    const DeviceType* type = cluster.catalog.Find(name);
    int32_t have = 0;
    if (type != nullptr) {
      for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
        if (cluster.catalog.Get(id).name == type->name) have = count;
      }
    }
    if (have == 0) {
      std::string names;
      for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
        names += (names.empty() ? "" : ", ") + cluster.catalog.Get(id).name;
      }
      return util::InputError(t.quota_where, "tenant " + t.name + ": quota." + name,
                              "the cluster has no devices of this type", "one of " + names);
    }
    if (n > have) {
      return util::InputError(t.quota_where, "tenant " + t.name + ": quota." + name,
                              fmt::format("{} is more than the cluster's {}", n, have),
                              fmt::format("at most {}", have));
    }
    (*out)[type->name] += n;
  }
  return Status::Ok();
}

int32_t DeviceCount(const Cluster& cluster) {
  int32_t n = 0;
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) n += count;
  return n;
}

// The quotas of the children of `parent` (roots when empty), together, fit what they share.
// Per-type quotas are keyed by canonical type names by now.
Status CheckSiblings(const Cluster& cluster, const Tenants& tenants, const std::string& parent) {
  std::map<std::string, int32_t> per_type;
  double normalized = 0;
  const Tenant* last = nullptr;
  for (const Tenant& t : tenants.list) {
    if (t.parent != parent) continue;
    for (const auto& [name, n] : t.per_type) per_type[name] += n;
    normalized += t.normalized.value_or(0);
    if (t.normalized || !t.per_type.empty()) last = &t;
  }
  if (last == nullptr) return Status::Ok();
  const std::string whose = parent.empty() ? "the roots" : "the children of " + parent;
  const int p = parent.empty() ? -1 : tenants.Find(parent);
  for (const auto& [name, n] : per_type) {
    int32_t room = 0;
    for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
      if (cluster.catalog.Get(id).name == name) room = count;
    }
    if (p >= 0 && tenants.list[p].per_type.count(name)) room = tenants.list[p].per_type.at(name);
    if (n > room) {
      return util::InputError(
          last->quota_where, "tenant " + last->name + ": quota." + name,
          fmt::format("{} guarantee {} together, more than the {} there are", whose, n, room),
          fmt::format("quotas of {} summing to at most {}", name, room));
    }
  }
  double room = DeviceCount(cluster);
  if (p >= 0 && tenants.list[p].normalized) room = *tenants.list[p].normalized;
  if (normalized > room) {
    return util::InputError(last->quota_where, "tenant " + last->name + ": quota.normalized",
                            fmt::format("{} guarantee {} reference devices together, more than "
                                        "{}",
                                        whose, normalized, room),
                            fmt::format("normalized quotas summing to at most {}", room));
  }
  return Status::Ok();
}

}  // namespace

util::Result<std::vector<Tenant>> ParseTenants(const DocReader& r, const DocValue& node) {
  RETURN_IF_ERROR(r.Expect(node, DocValue::Kind::kList, "tenants",
                           "a list of tenants like {name: vision, weight: 1}"));
  std::vector<Tenant> list;
  for (size_t i = 0; i < node.items.size(); ++i) {
    const std::string path = fmt::format("tenants[{}]", i);
    ASSIGN_OR_RETURN(Tenant t, ParseTenant(r, node[i], path));
    for (const Tenant& seen : list) {
      if (seen.name == t.name) {
        return r.Error(node[i]["name"], path + ".name", fmt::format("'{}' is given twice", t.name),
                       "unique tenant names");
      }
    }
    list.push_back(std::move(t));
  }
  RETURN_IF_ERROR(CheckTree(r, node, list));
  return ParentsFirst(std::move(list));
}

util::Result<FairShareOptions> ParseFairShare(const DocReader& r, const DocValue& node) {
  RETURN_IF_ERROR(
      r.CheckMap(node, "fair_share", {"reference_type", "half_life", "billing", "accounting"}));
  FairShareOptions o;
  if (node.Has("reference_type")) {
    ASSIGN_OR_RETURN(o.reference_type,
                     r.NonEmptyString(node["reference_type"], "fair_share.reference_type"));
    o.reference_where = r.At(node["reference_type"]);
  }
  if (node.Has("half_life")) {
    ASSIGN_OR_RETURN(o.half_life_s,
                     r.Duration(node["half_life"], "fair_share.half_life", 1, 1e9, "a duration",
                                "a duration from 1 s, like 30m or 7d"));
  }
  if (node.Has("billing")) {
    const DocValue& b = node["billing"];
    RETURN_IF_ERROR(r.Mapping(b, "fair_share.billing", "weights per device type, {v100: 1}"));
    o.billing_where = r.At(b);
    for (const DocValue::Field& kv : b.fields) {
      ASSIGN_OR_RETURN(o.billing[kv.key],
                       r.NumberIn(kv.value, "fair_share.billing." + kv.key, 0, 1e6,
                                  /*open_least=*/false, "a weight from 0 to 1e6"));
    }
  }
  if (node.Has("accounting")) {
    const std::string expected = "measured or kueue";
    ASSIGN_OR_RETURN(const std::string a,
                     r.Scalar(node["accounting"], "fair_share.accounting", expected));
    if (a != "measured" && a != "kueue") {
      return r.Error(node["accounting"], "fair_share.accounting", "'" + a + "' is not known",
                     expected);
    }
    o.kueue = a == "kueue";
  }
  if (o.kueue && !o.billing.empty()) {
    return r.Error(node["accounting"], "fair_share.accounting",
                   "kueue counts devices, not billing weights", "accounting: kueue or billing");
  }
  return o;
}

util::Status ResolveTenants(const Cluster& cluster, Tenants* tenants) {
  for (Tenant& t : tenants->list) {
    std::map<std::string, int32_t> canonical;
    RETURN_IF_ERROR(CheckPerType(cluster, t, &canonical));
    t.per_type = std::move(canonical);
  }
  RETURN_IF_ERROR(CheckSiblings(cluster, *tenants, ""));
  for (const Tenant& t : tenants->list) RETURN_IF_ERROR(CheckSiblings(cluster, *tenants, t.name));
  FairShareOptions& fs = tenants->fair_share;
  for (const Tenant& t : tenants->list) {
    if (fs.kueue && t.normalized) {
      return util::InputError(t.quota_where, "tenant " + t.name + ": quota.normalized",
                              "accounting: kueue has quotas per device type only",
                              "a quota like {a100-80g: 8}");
    }
  }
  std::map<std::string, double> billing;
  for (const auto& [name, weight] : fs.billing) {
    const DeviceType* type = cluster.catalog.Find(name);
    if (type == nullptr) {
      return util::InputError(fs.billing_where, "fair_share.billing." + name,
                              "is not a device type", "types of the cluster's catalog");
    }
    billing[type->name] = weight;
  }
  fs.billing = std::move(billing);
  const auto counts = cluster.DeviceTypeCounts();
  if (fs.reference_type.empty()) {
    int32_t most = 0;
    for (const auto& [id, count] : counts) {
      if (count > most) {
        most = count;
        fs.reference_type = cluster.catalog.Get(id).name;
      }
    }
    return Status::Ok();
  }
  const DeviceType* type = cluster.catalog.Find(fs.reference_type);
  const bool present = type != nullptr && std::any_of(counts.begin(), counts.end(), [&](auto& c) {
                         return cluster.catalog.Get(c.first).name == type->name;
                       });
  if (!present) {
    return util::InputError(
        fs.reference_where, "fair_share.reference_type",
        fmt::format("'{}' is not a device type of the cluster", fs.reference_type),
        "a type the cluster has");
  }
  fs.reference_type = type->name;
  return Status::Ok();
}

util::Status CheckJobTenants(const Tenants& tenants, const Workload& workload) {
  if (tenants.empty()) return Status::Ok();
  for (const Job& job : workload.jobs) {
    if (job.kind == JobKind::kService) continue;
    const util::SourceLocation at{job.origin.file ? *job.origin.file : "", job.origin.line,
                                  job.origin.column};
    const std::string path = fmt::format("jobs[{}].tenant", job.origin.entry);
    if (job.tenant.empty()) {
      return util::InputError(at, path, fmt::format("job {} names no tenant", job.name),
                              "one of " + tenants.Names());
    }
    const int i = tenants.Find(job.tenant);
    if (i < 0) {
      return util::InputError(at, path, fmt::format("'{}' is not a tenant", job.tenant),
                              "one of " + tenants.Names());
    }
    if (tenants.HasChildren(i)) {
      return util::InputError(at, path, fmt::format("'{}' has child tenants", job.tenant),
                              "a tenant without children");
    }
  }
  return Status::Ok();
}

}  // namespace hetsched::model::io
