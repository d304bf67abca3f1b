// The node cache against a fake API server: a recorded node list and watch streams, over HTTPS
// with the test CA.
#include "k8s/node_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "testing/build_paths.h"
#include "testing/fake_kube_api.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace hetsched::svc::k8s {
namespace {

using Json = nlohmann::json;
using hetsched::testing::FakeKubeApi;
using hetsched::testing::WaitUntil;

Json NodeList() {
  auto text = util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/nodelist.json");
  EXPECT_TRUE(text.ok());
  return Json::parse(text.ok() ? *text : "{}");
}

Json BoundPod(const std::string& name, const std::string& node, int gpus,
              const std::string& phase = "Running") {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"nodeName", node},
            {"containers",
             {{{"name", "c"},
               {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
          {"status", {{"phase", phase}}}};
}

std::string Event(const std::string& type, const Json& object) {
  return Json{{"type", type}, {"object", object}}.dump() + "\n";
}

std::map<std::string, ExtenderNodeView> ByName(const Extender& e) {
  std::map<std::string, ExtenderNodeView> out;
  for (const ExtenderNodeView& v : e.Nodes()) out[v.info.name] = v;
  return out;
}

TEST(K8sNodeCache, ListsWatchesAndListsAgainWhenTheWatchExpires) {
  FakeKubeApi api;
  api.RequireToken("cache-token");
  Json list = NodeList();
  api.SetBody("/api/v1/nodes", list.dump());
  // The watch from the list's version: a node joins, one is cordoned, one leaves; two seconds
  // later the watch expires (410), and the cache lists again.
  Json joined = list["items"][1];
  joined["metadata"]["name"] = "gpu-new";
  joined["metadata"]["resourceVersion"] = "1300";
  Json cordoned = list["items"][1];
  cordoned["spec"]["unschedulable"] = true;
  const Json expired = {{"kind", "Status"},
                        {"code", 410},
                        {"reason", "Expired"},
                        {"message", "too old resource version: 1234 (1500)"}};
  api.SetWatch("/api/v1/nodes",
               {{Event("ADDED", joined)},
                {Event("MODIFIED", cordoned)},
                {Event("DELETED", list["items"][8])},
                {Event("ERROR", expired), 2.0}},
               false, "resourceVersion=1234");
  Json pods = {{"kind", "PodList"},
               {"metadata", {{"resourceVersion", "500"}}},
               {"items", {BoundPod("a", "gpu-a100-1", 4)}}};
  api.SetBody("/api/v1/pods", pods.dump());
  api.SetWatch("/api/v1/pods",
               {{Event("ADDED", BoundPod("b", "gpu-a100-2", 8))},
                {Event("MODIFIED", BoundPod("a", "gpu-a100-1", 4, "Succeeded"))},
                {Event("ADDED", BoundPod("c", "gpu-t4-1", 2))}},
               true, "resourceVersion=500");

  auto client = ApiClient::Create(api.config());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ExtenderOptions o;
  o.node_cache = true;
  auto extender = std::move(Extender::Create(o)).value();
  Logger logger(LogLevel::kError);
  NodeCache cache(client->get(), extender.get(), &logger);

  ASSERT_TRUE(WaitUntil([&] {
    auto n = ByName(*extender);
    return extender->ready() && n.count("gpu-new") && !n.count("amd-mixed") &&
           n.count("gpu-a100-2") && !n["gpu-a100-2"].info.schedulable && n["gpu-t4-1"].used == 2 &&
           n["gpu-a100-1"].used == 0;
  })) << Json(extender->Nodes().size()).dump();
  auto nodes = ByName(*extender);
  EXPECT_EQ(nodes["gpu-a100-2"].used, 8);
  EXPECT_EQ(nodes["gpu-new"].info.device.name, "a100-80g");

  // After the expiry the list is read again, at its new version: the final state.
  Json relisted = list;
  relisted["metadata"]["resourceVersion"] = "1500";
  relisted["items"].push_back(joined);
  api.SetBody("/api/v1/nodes", relisted.dump());
  api.SetWatch("/api/v1/nodes", {}, true, "resourceVersion=1500");
  ASSERT_TRUE(WaitUntil([&] {
    int lists = 0;
    for (const auto& r : api.requests()) {
      lists += r.path == "/api/v1/nodes" && r.query.find("watch=1") == std::string::npos;
    }
    return lists >= 2 && ByName(*extender).count("amd-mixed") == 1;
  }));
  for (const auto& r : api.requests()) {
    EXPECT_EQ(r.Header("Authorization"), "Bearer cache-token");
    // Only pods bound to a node and not ended.
    if (r.path == "/api/v1/pods") {
      EXPECT_THAT(r.query, ::testing::HasSubstr(NodeCache::kPodSelector));
    }
    if (r.query.find("watch=1") != std::string::npos) {
      EXPECT_THAT(r.query, ::testing::HasSubstr("allowWatchBookmarks=true"));
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  cache.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(K8sNodeCache, NotSyncedWhileTheApiFails) {
  FakeKubeApi api;
  api.SetStatus("/api/v1/nodes", 403, "Forbidden",
                "nodes is forbidden: User \"system:serviceaccount:x:y\" cannot list nodes");
  api.SetBody("/api/v1/pods",
              R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]})");
  api.SetWatch("/api/v1/pods", {}, true, "watch=1");
  auto client = ApiClient::Create(api.config());
  ASSERT_TRUE(client.ok());
  ExtenderOptions o;
  o.node_cache = true;
  auto extender = std::move(Extender::Create(o)).value();
  Logger logger(LogLevel::kError);
  NodeCache cache(client->get(), extender.get(), &logger);
  // Both lists are needed: with the nodes refused, the extender never says it is ready.
  EXPECT_FALSE(WaitUntil([&] { return extender->ready(); }, 1.5));
  cache.Stop();
}

}  // namespace
}  // namespace hetsched::svc::k8s
