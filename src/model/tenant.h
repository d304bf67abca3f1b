// Tenants: the teams that share a cluster (`tenants:` in the --config file of simulate and
// serve). A tree: a tenant may have a parent; each has a weight for fair share, a guaranteed
// quota (devices per type, or capacity in reference devices), and limits on what it may borrow
// from others and lend to them. Jobs name their tenant (Job::tenant).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/source_location.h"

namespace hetsched::model {

struct Tenant {
  std::string name;
  std::string parent;  // empty: a root
  double weight = 1;   // > 0: its share against its siblings' weights
  // The guarantee: devices by device type name (per_type), or capacity in reference devices
  // (normalized), or neither (no guarantee). Never both.
  std::map<std::string, int32_t> per_type;
  std::optional<double> normalized;
  // Most it may hold beyond its guarantee, and most of its idle guarantee others may hold, in
  // the unit of its quota (devices, or reference devices). Unset: no limit.
  std::optional<double> borrow_limit;
  std::optional<double> lend_limit;
  util::SourceLocation quota_where;  // its quota (where the map is), for checks on a cluster
};

// How usage is counted and forgotten (`fair_share:` beside `tenants:`).
struct FairShareOptions {
  // The device type one reference device is; empty: the cluster's type with most devices (ties:
  // the first by catalog order).
  std::string reference_type;
  util::SourceLocation reference_where;
  // Usage older by this much counts half (Slurm's PriorityDecayHalfLife, 7 days by default
  // there). A day: a shorter memory lets shares drift from the weights where running jobs keep
  // their devices for a quantum (docs/results.md, "Tenants 1:2:3").
  double half_life_s = 86400;
  // The Slurm-style baseline: usage is a device-second times a static weight of its type
  // (Slurm's TRESBillingWeights; a type not listed weighs 1), whatever the job's speed there.
  // Empty: usage in reference devices, as each job's measured speed says.
  std::map<std::string, double> billing;
  util::SourceLocation billing_where;
  // The Kueue-style baseline (`accounting: kueue`; Kueue's fair sharing): a tenant's standing
  // is what it holds beyond its guarantee now, in devices summed over types (Kueue weighs
  // borrowed quota per resource name, whatever the flavor), against its share; no decayed usage
  // and no speeds. Quotas per type only. False (`accounting: measured`): decayed usage in
  // reference devices (or billing units).
  bool kueue = false;
};

struct Tenants {
  std::vector<Tenant> list;  // parents before their children
  FairShareOptions fair_share;

  bool empty() const { return list.empty(); }
  // Position of `name` in `list`, or -1.
  int Find(const std::string& name) const;
  // "a, b, c": the known names, for messages.
  std::string Names() const;
  // Whether some tenant has `list[i]` as its parent.
  bool HasChildren(int i) const;
  // What `list[i]` is guaranteed for its own jobs: its per-type quotas summed (devices), or its
  // normalized quota (reference devices); 0 for a parent, whose quota only bounds its
  // children's (jobs belong to tenants without children).
  double Guarantee(size_t i) const;
  // Each tenant's share of what the tenants with jobs get (`active`, by position): its weight
  // against its siblings' with jobs (a parent has jobs when a child has), times its parent's
  // share; 0 for the others.
  std::vector<double> Shares(const std::vector<char>& active) const;
  // Capacity others may borrow from `devices`: less, for each tenant, its guarantee but what of
  // its idle guarantee (below its `demand`) it lends (all of it without lend_limit), less what
  // it holds (`held`) beyond its guarantee. In the guarantees' units; by position in `list`.
  double Borrowable(double devices, const std::vector<double>& held,
                    const std::vector<double>& demand) const;
};

}  // namespace hetsched::model
