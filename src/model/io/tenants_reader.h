// Reading tenants: the `tenants:` list and the `fair_share:` section of the --config file of
// simulate and serve (docs/simulator.md, "Tenants"), their checks against a cluster, and the
// check that every job names a known tenant.
//
//   tenants:
//     - {name: vision, weight: 1, quota: {v100: 2}, borrow_limit: 4, lend_limit: 2}
//     - {name: llm, weight: 2, quota: {normalized: 3.5}}
//     - {name: llm-pretrain, parent: llm, weight: 3}
//   fair_share: {reference_type: v100, half_life: 1h}
#pragma once

#include "model/cluster.h"
#include "model/io/document.h"
#include "model/job.h"
#include "model/tenant.h"
#include "util/status.h"

namespace hetsched::model::io {

// The list at `node` (field "tenants"), parents ordered before their children. Errors are
// located: a duplicate name, an unknown parent, a cycle of parents, a weight that is not
// positive, a negative quota or limit, a quota both per type and normalized.
util::Result<std::vector<Tenant>> ParseTenants(const DocReader& r, const DocValue& node);

// The map at `node` (field "fair_share"): reference_type, half_life, billing and accounting
// (measured or kueue; kueue refuses billing weights).
util::Result<FairShareOptions> ParseFairShare(const DocReader& r, const DocValue& node);

// Checks `tenants` against `cluster` and resolves names: per-type quotas and the reference type
// name types the cluster has (aliases become canonical names); no quota is larger than the
// cluster (a tenant's quota of a type than the cluster's devices of the type; the roots'
// quotas of a type together; a parent's children together than the parent; a normalized
// quota than the cluster's device count); billing weights name types of its catalog; under
// accounting: kueue no quota is normalized. Sets the default reference type.
util::Status ResolveTenants(const Cluster& cluster, Tenants* tenants);

// Every job but services names a tenant of `tenants` that has no children (a parent's share
// goes to its children's jobs); errors are located at the job's entry and list the names.
// Nothing to check when `tenants` is empty.
util::Status CheckJobTenants(const Tenants& tenants, const Workload& workload);

}  // namespace hetsched::model::io
