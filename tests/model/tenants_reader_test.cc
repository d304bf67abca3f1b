// The tenants of a --config file (model/io/tenants_reader.h): a full list read, each bad
// field located, the checks against a cluster, and jobs' tenants checked against the list.
#include "model/io/tenants_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "model/io/cluster_reader.h"
#include "model/io/workload_reader.h"

namespace hetsched::model::io {
namespace {

util::Result<Tenants> Read(const std::string& yaml) {
  ASSIGN_OR_RETURN(const DocValue root, ParseYamlDocument(yaml, "t.yaml"));
  const DocReader r("t.yaml");
  Tenants t;
  ASSIGN_OR_RETURN(t.list, ParseTenants(r, root["tenants"]));
  if (root.Has("fair_share")) {
    ASSIGN_OR_RETURN(t.fair_share, ParseFairShare(r, root["fair_share"]));
  }
  return t;
}

// The message of reading `yaml`, which must fail.
std::string ErrorOf(const std::string& yaml) {
  auto t = Read(yaml);
  EXPECT_FALSE(t.ok()) << yaml;
  return t.ok() ? "" : t.status().message();
}

Cluster Gpus() { return ParseClusterShorthand("v100=3,p100=3,k80=2").value(); }

// The message of resolving `yaml` against Gpus(), which must fail.
std::string ResolveErrorOf(const std::string& yaml) {
  auto t = Read(yaml);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return "";
  const util::Status s = ResolveTenants(Gpus(), &*t);
  EXPECT_FALSE(s.ok()) << yaml;
  return s.message();
}

TEST(TenantsReader, ReadsEveryFieldParentsFirst) {
  auto t = Read(R"(tenants:
  - {name: pretrain, parent: llm, weight: 3}
  - {name: llm, weight: 2, quota: {normalized: 3.5}, borrow_limit: 2, lend_limit: 0}
  - name: vision
    quota: {v100: 2, k80: 1}
fair_share: {reference_type: v100, half_life: 2h}
)");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->list.size(), 3u);
  EXPECT_EQ(t->list[0].name, "llm");  // before its child
  EXPECT_DOUBLE_EQ(t->list[0].weight, 2);
  EXPECT_DOUBLE_EQ(*t->list[0].normalized, 3.5);
  EXPECT_DOUBLE_EQ(*t->list[0].borrow_limit, 2);
  EXPECT_DOUBLE_EQ(*t->list[0].lend_limit, 0);
  EXPECT_EQ(t->list[1].name, "vision");
  EXPECT_DOUBLE_EQ(t->list[1].weight, 1);
  EXPECT_EQ(t->list[1].per_type.at("v100"), 2);
  EXPECT_FALSE(t->list[1].borrow_limit.has_value());
  EXPECT_EQ(t->list[2].name, "pretrain");  // after its parent
  EXPECT_EQ(t->list[2].parent, "llm");
  EXPECT_DOUBLE_EQ(t->fair_share.half_life_s, 7200);
  ASSERT_TRUE(ResolveTenants(Gpus(), &*t).ok());
  EXPECT_EQ(t->list[1].per_type.at("v100-32g"), 2);  // the alias, resolved
  EXPECT_EQ(t->fair_share.reference_type, "v100-32g");
  EXPECT_DOUBLE_EQ(t->Guarantee(0), 0);  // a parent: its children hold the jobs
  EXPECT_DOUBLE_EQ(t->Guarantee(1), 3);
}

TEST(TenantsReader, BadFieldsAreLocated) {
  EXPECT_EQ(ErrorOf("tenants:\n  - {name: a}\n  - {name: a}\n"),
            "t.yaml:3:12: tenants[1].name: 'a' is given twice (expected unique tenant names)");
  EXPECT_EQ(ErrorOf("tenants:\n  - {name: a, parent: z}\n"),
            "t.yaml:2:23: tenants[0].parent: 'z' is not a tenant (expected one of a)");
  EXPECT_EQ(ErrorOf("tenants:\n  - {name: a, parent: b}\n  - {name: b, parent: a}\n"),
            "t.yaml:2:23: tenants[0].parent: 'a' is in a cycle of parents (expected a tree: no "
            "tenant its own ancestor)");
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, parent: a}\n").find("cycle"), std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, weight: -1}\n").find("tenants[0].weight"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, weight: 0}\n").find("a positive number"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, borrow_limit: -2}\n").find("t.yaml:2:29"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, lend_limit: -1}\n").find("tenants[0].lend_limit"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, quota: {v100: -1}}\n").find("quota.v100"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, quota: {v100: 1, normalized: 2}}\n")
                .find("either {normalized: N} or counts per device type"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a, share: 2}\n").find("unknown field"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {weight: 2}\n").find("tenants[0].name"), std::string::npos);
  EXPECT_NE(ErrorOf("tenants: {a: 1}\n").find("a list of tenants"), std::string::npos);
}

TEST(TenantsReader, NoQuotaIsLargerThanTheCluster) {
  EXPECT_EQ(ResolveErrorOf("tenants:\n  - {name: a, quota: {v100: 4}}\n"),
            "t.yaml:2:22: tenant a: quota.v100: 4 is more than the cluster's 3 (expected at most "
            "3)");
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: a, quota: {mi250x: 1}}\n")
                .find("the cluster has no devices of this type"),
            std::string::npos);
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: a, quota: {v100: 2}}\n  - {name: b, quota: "
                           "{v100: 2}}\n")
                .find("the roots guarantee 4 together, more than the 3 there are (expected "
                      "quotas of v100-32g summing to at most 3)"),
            std::string::npos);
  // Each fits the cluster, but not the parent's guarantee together.
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: p, quota: {v100: 2}}\n"
                           "  - {name: c1, parent: p, quota: {v100: 2}}\n"
                           "  - {name: c2, parent: p, quota: {v100: 1}}\n")
                .find("the children of p guarantee 3 together, more than the 2 there are"),
            std::string::npos);
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: a, quota: {normalized: 9}}\n")
                .find("more than 8 (expected normalized quotas summing to at most 8)"),
            std::string::npos);
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: a}\nfair_share: {reference_type: a100-80g}\n")
                .find("fair_share.reference_type: 'a100-80g' is not a device type of the cluster"),
            std::string::npos);
}

TEST(TenantsReader, BillingWeightsNameTypesOfTheCatalog) {
  auto t = Read("tenants:\n  - {name: a}\nfair_share: {billing: {k80: 0.25, v100: 1}}\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(ResolveTenants(Gpus(), &*t).ok());
  EXPECT_DOUBLE_EQ(t->fair_share.billing.at("k80"), 0.25);
  EXPECT_DOUBLE_EQ(t->fair_share.billing.at("v100-32g"), 1);
  EXPECT_DOUBLE_EQ(t->fair_share.half_life_s, 86400);  // a day unless said
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: a}\nfair_share: {billing: {tpu: 1}}\n")
                .find("fair_share.billing.tpu: is not a device type"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a}\nfair_share: {billing: {k80: -1}}\n")
                .find("fair_share.billing.k80"),
            std::string::npos);
}

TEST(TenantsReader, KueueAccountingTakesQuotasPerTypeOnly) {
  auto t = Read("tenants:\n  - {name: a, quota: {v100: 2}}\nfair_share: {accounting: kueue}\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(ResolveTenants(Gpus(), &*t).ok());
  EXPECT_TRUE(t->fair_share.kueue);
  auto measured = Read("tenants:\n  - {name: a}\nfair_share: {accounting: measured}\n");
  ASSERT_TRUE(measured.ok());
  EXPECT_FALSE(measured->fair_share.kueue);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a}\nfair_share: {accounting: slurm}\n")
                .find("t.yaml:3:26: fair_share.accounting: 'slurm' is not known (expected "
                      "measured or kueue)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("tenants:\n  - {name: a}\n"
                    "fair_share: {accounting: kueue, billing: {k80: 1}}\n")
                .find("fair_share.accounting: kueue counts devices, not billing weights"),
            std::string::npos);
  EXPECT_NE(ResolveErrorOf("tenants:\n  - {name: a, quota: {normalized: 2}}\n"
                           "fair_share: {accounting: kueue}\n")
                .find("tenant a: quota.normalized: accounting: kueue has quotas per device "
                      "type only"),
            std::string::npos);
}

TEST(TenantsReader, TheDefaultReferenceTypeIsTheMostCommon) {
  auto t = Read("tenants:\n  - {name: a}\n");
  ASSERT_TRUE(t.ok());
  const Cluster c = ParseClusterShorthand("k80=2,p100=5,v100=3").value();
  ASSERT_TRUE(ResolveTenants(c, &*t).ok());
  EXPECT_EQ(t->fair_share.reference_type, "p100");
}

TEST(TenantsReader, EveryJobNamesATenantWithoutChildren) {
  auto t = Read("tenants:\n  - {name: team}\n  - {name: sub, parent: team}\n  - {name: solo}\n");
  ASSERT_TRUE(t.ok());
  const auto workload = [](const std::string& tenant_line) {
    return ParseWorkloadYaml("jobs:\n  - name: j\n    stacks: [cuda]\n    work: 10\n" + tenant_line,
                             "w.yaml")
        .value();
  };
  EXPECT_TRUE(CheckJobTenants(*t, workload("    tenant: sub\n")).ok());
  EXPECT_EQ(CheckJobTenants(*t, workload("    tenant: nobody\n")).message(),
            "w.yaml:2:5: jobs[0].tenant: 'nobody' is not a tenant (expected one of team, sub, "
            "solo)");
  EXPECT_NE(CheckJobTenants(*t, workload("    tenant: team\n")).message().find("has child"),
            std::string::npos);
  EXPECT_NE(CheckJobTenants(*t, workload("")).message().find("job j names no tenant"),
            std::string::npos);
  EXPECT_TRUE(CheckJobTenants(Tenants{}, workload("")).ok());  // no tenants: nothing to check
}

TEST(TenantsReader, JsonLinesJobsCarryTheirTenant) {
  auto w = ParseWorkloadJsonl(R"({"name": "j", "stacks": ["cuda"], "work": 10, "tenant": "vision"})"
                              "\n",
                              "w.jsonl");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->jobs[0].tenant, "vision");
  EXPECT_FALSE(ParseWorkloadJsonl(R"({"name": "j", "stacks": ["cuda"], "work": 10, "tenant": ""})"
                                  "\n",
                                  "w.jsonl")
                   .ok());
}

}  // namespace
}  // namespace hetsched::model::io
