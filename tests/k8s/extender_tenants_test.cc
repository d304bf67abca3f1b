// The extender's tenants: a pod's namespace (or a label) names its team, and the team's quota,
// borrow_limit and the others' lend_limits decide whether it may take devices now; the pods
// each team holds come from the node cache, here reading a fake API server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "k8s/extender.h"
#include "k8s/node_cache.h"
#include "testing/build_paths.h"
#include "testing/fake_kube_api.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace hetsched::svc::k8s {
namespace {

using hetsched::testing::FakeKubeApi;
using hetsched::testing::WaitUntil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// 44 usable accelerators: gpu-a100-1, -2 and -old (8 a100-80g each), gpu-t4-1 (4 t4),
// amd-mi250-1 (8) and npu-910b-1 (8); gpu-unknown and amd-mixed are problem nodes.
std::string NodeListText() {
  auto text = util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/nodelist.json");
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : "{}";
}

Json PodJson(const std::string& ns, const std::string& name, int gpus, const std::string& node = "",
             const std::string& phase = "Running", const Json& labels = Json::object(),
             const Json& annotations = Json::object()) {
  Json pod = {{"metadata",
               {{"name", name},
                {"namespace", ns},
                {"uid", "uid-" + name},
                {"labels", labels},
                {"annotations", annotations}}},
              {"spec",
               {{"containers",
                 {{{"name", "c"},
                   {"resources",
                    {{"limits", gpus > 0 ? Json{{"nvidia.com/gpu", std::to_string(gpus)}}
                                         : Json{{"cpu", "2"}}}}}}}}}},
              {"status", {{"phase", node.empty() ? "Pending" : phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

std::string NamesForm(const Json& pod, const std::vector<std::string>& names) {
  return Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

model::Tenant Team(const std::string& name, std::map<std::string, int32_t> quota,
                   std::optional<double> borrow_limit = std::nullopt,
                   std::optional<double> lend_limit = std::nullopt) {
  model::Tenant t;
  t.name = name;
  t.per_type = std::move(quota);
  t.borrow_limit = borrow_limit;
  t.lend_limit = lend_limit;
  return t;
}

std::unique_ptr<Extender> Make(std::vector<model::Tenant> teams, Mapping mapping = {}) {
  ExtenderOptions o;
  o.node_cache = true;
  o.mapping = std::move(mapping);
  o.tenants.list = std::move(teams);
  auto e = Extender::Create(std::move(o));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

// An extender fed directly, as the node cache feeds it, with `bound` pods.
std::unique_ptr<Extender> Fed(std::vector<model::Tenant> teams, const std::vector<Json>& bound,
                              Mapping mapping = {}) {
  auto e = Make(std::move(teams), std::move(mapping));
  auto nodes = ParseNodeList(NodeListText());
  EXPECT_TRUE(nodes.ok());
  e->ReplaceNodes(nodes->items);
  std::vector<Pod> pods;
  for (const Json& j : bound) pods.push_back(ParsePod(j.dump()).value());
  e->ReplacePods(pods);
  e->SetSynced(true);
  return e;
}

Json Filter(Extender& e, const Json& pod, const std::vector<std::string>& names) {
  const ExtenderReply reply = e.Filter(NamesForm(pod, names));
  EXPECT_EQ(reply.status, 200) << reply.body;
  return Json::parse(reply.body);
}

std::string Event(const std::string& type, const Json& object) {
  return Json{{"type", type}, {"object", object}}.dump() + "\n";
}

TEST(K8sExtenderTenants, TwoNamespacesTwoTenantsEachHeldToItsQuotaFromTheApi) {
  FakeKubeApi api;
  api.SetBody("/api/v1/nodes", NodeListText());
  api.SetWatch("/api/v1/nodes", {}, true);
  // vision (namespace cv) holds its whole guarantee, 8 GPUs; llm (namespace llm) 2.
  const Json vision_run = PodJson("cv", "v0", 8, "gpu-a100-1");
  const Json pods = {{"kind", "PodList"},
                     {"metadata", {{"resourceVersion", "10"}}},
                     {"items", {vision_run, PodJson("llm", "l0", 2, "gpu-t4-1")}}};
  api.SetBody("/api/v1/pods", pods.dump());
  // Three seconds into the watch (the checks below take milliseconds), vision's pod ends.
  api.SetWatch("/api/v1/pods",
               {{Event("MODIFIED", PodJson("cv", "v0", 8, "gpu-a100-1", "Succeeded")), 3.0}}, true,
               "resourceVersion=10");
  auto client = ApiClient::Create(api.config());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  Mapping mapping;
  mapping.tenant_map = {{"cv", "vision"}};
  auto e = Make({Team("vision", {{"a100-80g", 8}}, 0), Team("llm", {{"a100-80g", 8}})}, mapping);
  Logger logger(LogLevel::kError);
  NodeCache cache(client->get(), e.get(), &logger);
  ASSERT_TRUE(WaitUntil([&] { return e->ready(); }));

  // vision is at its guarantee and may not borrow: its next pod waits, on every node, as
  // unresolvable (preempting other teams' pods would not give it room).
  const Json more_vision = Filter(*e, PodJson("cv", "v1", 1), {"gpu-a100-2", "gpu-t4-1"});
  EXPECT_TRUE(more_vision["NodeNames"].empty());
  EXPECT_TRUE(more_vision["FailedNodes"].empty());
  EXPECT_EQ(more_vision["FailedAndUnresolvableNodes"]["gpu-a100-2"],
            "tenant vision holds 8 device(s), its guarantee for this pod is 8 and its "
            "borrow_limit 0: 1 more would borrow 1");
  // llm's pod of 8 goes beyond its guarantee by 2, within what the others leave to borrow.
  const Json llm = Filter(*e, PodJson("llm", "l1", 8), {"gpu-a100-2", "gpu-t4-1"});
  EXPECT_EQ(llm["NodeNames"], Json({"gpu-a100-2"}));
  // A namespace that names no tenant is refused with the known names.
  const Json unknown = Filter(*e, PodJson("ml", "x", 1), {"gpu-a100-2"});
  EXPECT_TRUE(unknown["NodeNames"].empty());
  EXPECT_EQ(unknown["FailedAndUnresolvableNodes"]["gpu-a100-2"],
            "pod ml/x: namespace 'ml' is not a tenant (expected one of vision, llm, or map it to "
            "one under kubernetes.tenant_map)");
  // Once the watch reports vision's pod ended, its next pod passes.
  EXPECT_TRUE(WaitUntil([&] {
    return Filter(*e, PodJson("cv", "v1", 1), {"gpu-a100-2"})["NodeNames"] == Json({"gpu-a100-2"});
  }));
  cache.Stop();
}

TEST(K8sExtenderTenants, ALabelNamesTheTenantAndCpuPodsAreNotCounted) {
  Mapping mapping;
  mapping.tenant_label = "example.com/team";
  mapping.tenant_map = {{"cv", "vision"}};
  auto e = Fed({Team("vision", {{"a100-80g", 8}}, 0), Team("llm", {{"a100-80g", 8}})},
               {PodJson("shared", "v0", 8, "gpu-a100-1", "Running", {{"example.com/team", "cv"}})},
               mapping);
  // Namespace `shared` holds pods of both teams; the label decides.
  const Json vision =
      Filter(*e, PodJson("shared", "v1", 1, "", "", {{"example.com/team", "cv"}}), {"gpu-a100-2"});
  EXPECT_THAT(vision["FailedAndUnresolvableNodes"]["gpu-a100-2"].get<std::string>(),
              HasSubstr("tenant vision holds 8 device(s)"));
  const Json llm =
      Filter(*e, PodJson("shared", "l1", 1, "", "", {{"example.com/team", "llm"}}), {"gpu-a100-2"});
  EXPECT_EQ(llm["NodeNames"], Json({"gpu-a100-2"}));
  const Json none = Filter(*e, PodJson("shared", "n", 1), {"gpu-a100-2"});
  EXPECT_EQ(none["FailedAndUnresolvableNodes"]["gpu-a100-2"],
            "pod shared/n: no label example.com/team names its tenant (kubernetes.tenant_from: "
            "label:example.com/team; expected the label with one of vision, llm, or a value "
            "kubernetes.tenant_map maps)");
  const Json other =
      Filter(*e, PodJson("shared", "o", 1, "", "", {{"example.com/team", "ops"}}), {"gpu-a100-2"});
  EXPECT_THAT(other["FailedAndUnresolvableNodes"]["gpu-a100-2"].get<std::string>(),
              HasSubstr("label example.com/team 'ops' is not a tenant"));
  // A CPU-only pod belongs to no team and passes, whatever its labels (kube-system's pods
  // reach the extender when kube-scheduler's managedResources is not set).
  EXPECT_EQ(Filter(*e, PodJson("kube-system", "dns", 0), {"cpu-1"})["NodeNames"], Json({"cpu-1"}));
}

TEST(K8sExtenderTenants, BorrowingStopsAtWhatOthersLend) {
  // `owner` keeps its 28 devices of guarantee for itself (lend_limit 0); `guest` holds its 8
  // plus 4 borrowed: of the cluster's 44 devices, 44 - 28 - 12 = 4 are left to borrow.
  const std::vector<Json> bound = {PodJson("guest", "g0", 8, "gpu-a100-1"),
                                   PodJson("guest", "g1", 4, "gpu-t4-1")};
  auto e = Fed({Team("owner", {{"a100-80g", 16}, {"mi250x", 8}, {"t4", 4}}, std::nullopt, 0),
                Team("guest", {{"a100-80g", 8}})},
               bound);
  const Json refused = Filter(*e, PodJson("guest", "g2", 8), {"gpu-a100-2"});
  EXPECT_EQ(refused["FailedAndUnresolvableNodes"]["gpu-a100-2"],
            "tenant guest would borrow beyond its guarantee for this pod (8), and of the cluster's "
            "44 device(s) the tenants' guarantees and lend_limits leave 4 to borrow now, the pod "
            "needs 8");
  EXPECT_EQ(Filter(*e, PodJson("guest", "g3", 4), {"gpu-a100-2"})["NodeNames"],
            Json({"gpu-a100-2"}));
  // Lending 8 of its idle guarantee lets the 8 through.
  auto lending = Fed({Team("owner", {{"a100-80g", 16}, {"mi250x", 8}, {"t4", 4}}, std::nullopt, 8),
                      Team("guest", {{"a100-80g", 8}})},
                     bound);
  EXPECT_EQ(Filter(*lending, PodJson("guest", "g2", 8), {"gpu-a100-2"})["NodeNames"],
            Json({"gpu-a100-2"}));
  // The owner's own pods take their guarantee whatever the guest borrows.
  EXPECT_EQ(Filter(*e, PodJson("owner", "o0", 8), {"gpu-a100-2"})["NodeNames"],
            Json({"gpu-a100-2"}));
}

TEST(K8sExtenderTenants, APodGroupAsksForAllItsMembersAtOnce) {
  auto e = Fed({Team("vision", {{"a100-80g", 8}}, 4)}, {});
  const Json group = {{"hetsched.io/pod-group", "train"}, {"hetsched.io/pod-group-size", "2"}};
  // Two members of 8 would take vision 8 beyond its guarantee; it may borrow 4.
  const Json r = Filter(*e, PodJson("vision", "m0", 8, "", "", Json::object(), group),
                        {"gpu-a100-1", "gpu-a100-2"});
  EXPECT_TRUE(r["NodeNames"].empty());
  EXPECT_THAT(r["FailedAndUnresolvableNodes"]["gpu-a100-1"].get<std::string>(),
              HasSubstr("16 more would borrow 8"));
  // Of 4, both fit: the plan's places count against the quota, and the second member has one.
  const Json small = {{"hetsched.io/pod-group", "small"}, {"hetsched.io/pod-group-size", "2"}};
  for (const std::string name : {"s0", "s1"}) {
    const Json m =
        Filter(*e, PodJson("vision", name, 4, "", "", Json::object(), small), {"gpu-a100-1"});
    EXPECT_EQ(m["NodeNames"], Json({"gpu-a100-1"})) << name;
  }
  // 8 held in the plan: a lone pod of 8 more would borrow 8.
  EXPECT_THAT(Filter(*e, PodJson("vision", "p", 8),
                     {"gpu-a100-2"})["FailedAndUnresolvableNodes"]["gpu-a100-2"]
                  .get<std::string>(),
              HasSubstr("tenant vision holds 8 device(s)"));
}

TEST(K8sExtenderTenants, BadTenantsStopTheStart) {
  ExtenderOptions o;
  o.tenants.list = {Team("vision", {{"a100-80g", 8}})};
  auto no_cache = Extender::Create(o);
  ASSERT_FALSE(no_cache.ok());
  EXPECT_THAT(no_cache.status().message(), HasSubstr("kubernetes.node_cache: true"));
  o.node_cache = true;
  o.tenants.list[0].per_type = {{"z9000", 2}};
  o.tenants.list[0].quota_where = {"cfg.yaml", 3, 25};
  auto unknown = Extender::Create(o);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "cfg.yaml:3:25: tenant vision: quota.z9000: is not a catalog device type (expected "
            "`hetsched catalog` lists them)");
  o.tenants.list[0].per_type.clear();
  o.tenants.list[0].normalized = 8;
  auto normalized = Extender::Create(o);
  ASSERT_FALSE(normalized.ok());
  EXPECT_THAT(normalized.status().message(),
              HasSubstr("quota.normalized: the extender counts devices per type"));
}

}  // namespace
}  // namespace hetsched::svc::k8s
