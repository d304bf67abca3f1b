// Tenants in a simulation (sim/tenant_books.h, sched/tenant_shares.h): weights split the
// normalized throughput, device-hours count by type and by worth, and idle guarantees show as
// lent while others borrow.
#include "sim/tenant_books.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sched/test_cluster.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::RunSim;

model::Tenant Team(std::string name, double weight, int32_t quota = 0) {
  model::Tenant t;
  t.name = std::move(name);
  t.weight = weight;
  if (quota > 0) t.per_type["slow"] = quota;
  return t;
}

SimOptions WithTenants(std::vector<model::Tenant> list, double until_s) {
  auto tenants = std::make_shared<model::Tenants>();
  tenants->list = std::move(list);
  tenants->fair_share.reference_type = "slow";
  SimOptions o;
  o.sched.tenants = std::move(tenants);
  o.until_s = until_s;
  return o;
}

// `count` jobs of `tenant` that outlast any run here, 4x as fast on "fast" as on "slow".
void AddJobs(model::Workload& w, const std::string& tenant, int count) {
  for (int i = 0; i < count; ++i) {
    const int id = static_cast<int>(w.jobs.size());
    model::Job j = MakeJob(id, 0, 1e9, {{"fast", 4.0}, {"slow", 1.0}});
    j.tenant = tenant;
    w.jobs.push_back(std::move(j));
  }
}

TEST(TenantBooks, WeightsSplitNormalizedThroughput) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 6}});
  model::Workload w;
  AddJobs(w, "a", 30);
  AddJobs(w, "b", 30);
  // Decisions every round: nothing else happens while these jobs run.
  for (const char* policy : {"default", "las-het", "fifo-het"}) {
    SimOptions o = WithTenants({Team("a", 1), Team("b", 3)}, 48 * 3600.0);
    o.policy = policy;
    o.round_s = 360;
    const SimResult r = RunSim(c, w, o);
    ASSERT_EQ(r.tenants.size(), 2u);
    const TenantResult& a = r.tenants.at("a");
    const TenantResult& b = r.tenants.at("b");
    EXPECT_NEAR(a.normalized_share, 0.25, 0.25 * 0.05) << policy;
    EXPECT_NEAR(b.normalized_share, 0.75, 0.75 * 0.05) << policy;
    EXPECT_NEAR(a.normalized_share + b.normalized_share, 1, 1e-9);
    for (const TenantResult* t : {&a, &b}) {
      // A fast device-hour is worth four reference (slow) ones to these jobs.
      const double fast = t->device_hours.count("fast") ? t->device_hours.at("fast") : 0;
      const double slow = t->device_hours.count("slow") ? t->device_hours.at("slow") : 0;
      EXPECT_NEAR(t->normalized_device_hours, 4 * fast + slow, 1e-6) << policy;
    }
    // The whole cluster was busy throughout.
    EXPECT_NEAR(a.device_hours.at("slow") + b.device_hours.at("slow"), 6 * 48, 1e-6) << policy;
  }
}

TEST(TenantBooks, AnIdleGuaranteeIsLentToWhoBorrows) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 4}});
  model::Workload w;
  AddJobs(w, "b", 10);
  const SimResult r = RunSim(c, w, WithTenants({Team("a", 1, /*quota=*/2), Team("b", 1)}, 36000));
  const TenantResult& a = r.tenants.at("a");
  const TenantResult& b = r.tenants.at("b");
  EXPECT_NEAR(b.device_hours.at("slow"), 40, 1e-6);
  EXPECT_NEAR(b.borrowed_device_hours, 40, 1e-6);  // b is guaranteed nothing
  // Two devices nobody guarantees; the other two are a's, idle.
  EXPECT_NEAR(a.lent_device_hours, 20, 1e-6);
  EXPECT_DOUBLE_EQ(a.borrowed_device_hours, 0);
  EXPECT_DOUBLE_EQ(b.lent_device_hours, 0);
  EXPECT_TRUE(a.device_hours.empty());
}

}  // namespace
}  // namespace hetsched::sim
