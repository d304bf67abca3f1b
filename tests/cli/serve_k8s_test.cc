// `hetsched serve --backend kubernetes` end to end: the daemon reads a kubeconfig, lists and
// watches a fake API server over HTTPS, answers kube-scheduler's verbs under /k8s and binds
// through the API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "testing/build_paths.h"
#include "testing/daemon.h"
#include "testing/fake_kube_api.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace {

using hetsched::testing::Daemon;
using hetsched::testing::FakeKubeApi;
using hetsched::testing::TempDir;
using hetsched::testing::WaitUntil;
using Json = nlohmann::json;

TEST(ServeKubernetes, AnswersTheVerbsFromItsNodeCacheAndBindsThroughTheApi) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  FakeKubeApi api;
  api.RequireToken("extender-token");
  auto nodes =
      hetsched::util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/nodelist.json");
  ASSERT_TRUE(nodes.ok());
  api.SetBody("/api/v1/nodes", *nodes);
  api.SetWatch("/api/v1/nodes", {}, true);
  api.SetBody("/api/v1/pods",
              R"({"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[]})");
  api.SetWatch("/api/v1/pods", {}, true);
  api.SetReply(
      "POST", "/api/v1/namespaces/ml/pods/train-0/binding", 201,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
  ASSERT_TRUE(api.WriteKubeconfig(dir.File("kubeconfig")));
  ASSERT_TRUE(hetsched::util::WriteFile(
                  dir.File("extender.yaml"),
                  "backend: kubernetes\nkubernetes:\n  api: kubeconfig\n  kubeconfig: kubeconfig\n"
                  "  node_cache: true\n")
                  .ok());

  std::string error;
  auto daemon = Daemon::Start({dir.path(), {"--config", dir.File("extender.yaml")}}, &error);
  ASSERT_NE(daemon, nullptr) << error;
  EXPECT_THAT(daemon->Stdout(), ::testing::HasSubstr("kube-scheduler extender, node cache on"));
  httplib::Client client(daemon->url());
  ASSERT_TRUE(WaitUntil([&] {
    auto res = client.Get("/healthz");
    return res && res->status == 200;
  })) << daemon->Stderr();

  const Json pod = {
      {"metadata",
       {{"name", "train-0"},
        {"namespace", "ml"},
        {"uid", "u-train-0"},
        {"annotations", {{"hetsched.io/stacks", "cuda>=12.2"}}}}},
      {"spec",
       {{"containers",
         {{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}}}}}};
  const Json args = {{"Pod", pod},
                     {"Nodes", nullptr},
                     {"NodeNames", {"gpu-a100-1", "gpu-a100-old", "gpu-t4-1", "amd-mi250-1"}}};
  auto res = client.Post("/k8s/filter", args.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const Json filtered = Json::parse(res->body);
  EXPECT_EQ(filtered["NodeNames"], Json({"gpu-a100-1"}));
  EXPECT_EQ(filtered["FailedNodes"].size(), 3u);

  res = client.Post(
      "/k8s/bind",
      R"({"PodName":"train-0","PodNamespace":"ml","PodUID":"u-train-0","Node":"gpu-a100-1"})",
      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(Json::parse(res->body)["Error"], "") << res->body;
  bool bound = false;
  for (const auto& r : api.requests()) {
    if (r.method != "POST") continue;
    bound = true;
    EXPECT_EQ(r.path, "/api/v1/namespaces/ml/pods/train-0/binding");
    EXPECT_EQ(r.Header("Authorization"), "Bearer extender-token");
    const Json binding = Json::parse(r.body);
    EXPECT_EQ(binding["kind"], "Binding");
    EXPECT_EQ(binding["metadata"]["uid"], "u-train-0");
    EXPECT_EQ(binding["target"],
              Json({{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "gpu-a100-1"}}));
  }
  EXPECT_TRUE(bound);
  // The bound pod's GPUs count at once.
  res = client.Get("/v1/k8s/nodes");
  ASSERT_TRUE(res);
  bool seen = false;
  const Json view = Json::parse(res->body);
  for (const Json& n : view["nodes"]) {
    if (n["name"] != "gpu-a100-1") continue;
    seen = true;
    EXPECT_EQ(n["used"], 8);
    EXPECT_EQ(n["device_type"], "a100-80g");
  }
  EXPECT_TRUE(seen) << res->body;
  EXPECT_EQ(daemon->Terminate(SIGTERM, 10), 0);
}

TEST(ServeKubernetes, PodsBelongToTheTenantTheirNamespaceNames) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  FakeKubeApi api;
  auto nodes =
      hetsched::util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/nodelist.json");
  ASSERT_TRUE(nodes.ok());
  api.SetBody("/api/v1/nodes", *nodes);
  api.SetWatch("/api/v1/nodes", {}, true);
  // Namespace cv's pod holds vision's whole guarantee.
  const Json held = {
      {"metadata", {{"name", "v0"}, {"namespace", "cv"}, {"uid", "u-v0"}}},
      {"spec",
       {{"nodeName", "gpu-a100-1"},
        {"containers", {{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}}}}},
      {"status", {{"phase", "Running"}}}};
  api.SetBody("/api/v1/pods",
              Json{{"kind", "PodList"}, {"metadata", {{"resourceVersion", "7"}}}, {"items", {held}}}
                  .dump());
  api.SetWatch("/api/v1/pods", {}, true);
  ASSERT_TRUE(api.WriteKubeconfig(dir.File("kubeconfig")));
  const std::string config =
      "backend: kubernetes\n"
      "tenants:\n"
      "  - {name: vision, quota: {a100-80g: 8}, borrow_limit: 0}\n"
      "  - {name: llm, quota: {a100-80g: 8}}\n"
      "kubernetes:\n  api: kubeconfig\n  kubeconfig: kubeconfig\n  node_cache: true\n"
      "  tenant_map: {cv: vision}\n";
  ASSERT_TRUE(hetsched::util::WriteFile(dir.File("extender.yaml"), config).ok());
  std::string error;
  auto daemon = Daemon::Start({dir.path(), {"--config", dir.File("extender.yaml")}}, &error);
  ASSERT_NE(daemon, nullptr) << error;
  httplib::Client client(daemon->url());
  ASSERT_TRUE(WaitUntil([&] {
    auto res = client.Get("/healthz");
    return res && res->status == 200;
  })) << daemon->Stderr();
  const auto filter = [&](const std::string& ns) {
    const Json pod = {
        {"metadata", {{"name", "p"}, {"namespace", ns}, {"uid", "u-p-" + ns}}},
        {"spec",
         {{"containers",
           {{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
    auto res = client.Post(
        "/k8s/filter", Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"gpu-a100-2"}}}.dump(),
        "application/json");
    EXPECT_TRUE(res && res->status == 200);
    return res ? Json::parse(res->body) : Json();
  };
  EXPECT_EQ(filter("llm")["NodeNames"], Json({"gpu-a100-2"}));
  EXPECT_THAT(filter("cv")["FailedAndUnresolvableNodes"]["gpu-a100-2"].get<std::string>(),
              ::testing::HasSubstr("tenant vision holds 8 device(s)"));
  EXPECT_THAT(filter("ml")["FailedAndUnresolvableNodes"]["gpu-a100-2"].get<std::string>(),
              ::testing::HasSubstr("namespace 'ml' is not a tenant (expected one of vision, llm"));
  EXPECT_EQ(daemon->Terminate(SIGTERM, 10), 0);

  // A normalized quota cannot be counted here: the start stops, located at the quota.
  ASSERT_TRUE(hetsched::util::WriteFile(
                  dir.File("normalized.yaml"),
                  "backend: kubernetes\ntenants:\n  - {name: vision, quota: {normalized: 4}}\n"
                  "kubernetes: {api: kubeconfig, kubeconfig: kubeconfig, node_cache: true}\n")
                  .ok());
  auto r = hetsched::testing::RunCommand({HETSCHED_BINARY, "serve", "--config",
                                          dir.File("normalized.yaml"), "--listen", "127.0.0.1:0"},
                                         {}, 30, dir.path().string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("normalized.yaml:3:"));
  EXPECT_THAT(r.err, ::testing::HasSubstr("tenant vision: quota.normalized: the extender counts "
                                          "devices per type"));
}

TEST(ServeKubernetes, AKubeconfigThatDoesNotReadStopsTheStart) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(hetsched::util::WriteFile(dir.File("kubeconfig"), "clusters: [\n").ok());
  ASSERT_TRUE(hetsched::util::WriteFile(
                  dir.File("extender.yaml"),
                  "backend: kubernetes\nkubernetes:\n  api: kubeconfig\n  kubeconfig: kubeconfig\n")
                  .ok());
  auto r = hetsched::testing::RunCommand(
      {HETSCHED_BINARY, "serve", "--config", dir.File("extender.yaml"), "--listen", "127.0.0.1:0"},
      {}, 30, dir.path().string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("kubeconfig"));
}

}  // namespace
