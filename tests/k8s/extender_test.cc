// The extender's verbs, request by request, as kube-scheduler's HTTP extender sends them (the
// types of k8s.io/kube-scheduler/extender/v1: PascalCase keys, nil as null).
#include "k8s/extender.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "daemon/api/http_api.h"
#include "testing/build_paths.h"
#include "testing/openapi_operations.h"
#include "util/file.h"

namespace hetsched::svc::k8s {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

Json NodeList() {
  auto text = util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/nodelist.json");
  EXPECT_TRUE(text.ok());
  return Json::parse(text.ok() ? *text : "{}");
}

std::vector<Node> Nodes() {
  auto list = ParseNodeList(NodeList().dump());
  EXPECT_TRUE(list.ok());
  return list.ok() ? list->items : std::vector<Node>{};
}

Json PodJson(const std::string& name, const Json& requests, const Json& annotations = {},
             const std::string& node = "") {
  Json pod = {{"metadata",
               {{"name", name},
                {"namespace", "ml"},
                {"uid", "uid-" + name},
                {"creationTimestamp", nullptr},
                {"annotations", annotations.is_null() ? Json::object() : annotations}}},
              {"spec", {{"containers", {{{"name", "c"}, {"resources", {{"limits", requests}}}}}}}},
              {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

// The Nodes form (nodeCacheCapable: false): the whole NodeList, NodeNames null.
std::string NodesForm(const Json& pod, const std::vector<std::string>& only = {}) {
  Json list = NodeList();
  if (!only.empty()) {
    Json items = Json::array();
    for (const Json& n : list["items"]) {
      const std::string name = n["metadata"]["name"];
      if (std::find(only.begin(), only.end(), name) != only.end()) items.push_back(n);
    }
    list["items"] = items;
  }
  return Json{{"Pod", pod}, {"Nodes", list}, {"NodeNames", nullptr}}.dump();
}

std::string NamesForm(const Json& pod, const std::vector<std::string>& names) {
  return Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

std::unique_ptr<Extender> Make(bool cache, double* clock = nullptr,
                               const std::string& scorers = "speed") {
  ExtenderOptions o;
  o.node_cache = cache;
  o.scorers = scorers;
  if (clock) o.clock = [clock] { return *clock; };
  auto e = Extender::Create(std::move(o));
  EXPECT_TRUE(e.ok()) << e.status().message();
  return std::move(e).value();
}

Json Ok(const ExtenderReply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.body;
  return Json::parse(reply.body);
}

std::vector<std::string> Passed(const Json& result) {
  std::vector<std::string> out;
  if (!result["NodeNames"].is_null()) {
    for (const auto& n : result["NodeNames"]) out.push_back(n);
  } else {
    for (const auto& n : result["Nodes"]["items"]) out.push_back(n["metadata"]["name"]);
  }
  return out;
}

TEST(K8sExtenderFilter, NodesFormKeepsStacksDriversAndCounts) {
  auto e = Make(false);
  const Json pod =
      PodJson("train", {{"nvidia.com/gpu", "8"}}, {{"hetsched.io/stacks", "cuda>=12.2"}});
  const Json r = Ok(e->Filter(NodesForm(pod)));
  EXPECT_EQ(r["Error"], "");
  EXPECT_TRUE(r["NodeNames"].is_null());
  EXPECT_THAT(Passed(r), ::testing::ElementsAre("gpu-a100-1", "gpu-a100-2"));
  const Json& failed = r["FailedNodes"];
  EXPECT_EQ(failed["gpu-a100-old"],
            "a100-80g runs cuda 11.4, job needs cuda>=12.2 (node's driver)");
  EXPECT_EQ(failed["gpu-t4-1"], "node has 4 nvidia.com/gpu, the pod needs 8");
  EXPECT_EQ(failed["amd-mi250-1"], "node has amd.com/gpu, the pod asks for nvidia.com/gpu");
  EXPECT_EQ(failed["cpu-1"], "node has no nvidia.com/gpu");
  EXPECT_THAT(failed["gpu-unknown"].get<std::string>(),
              HasSubstr("hetsched cannot use this node: its device 'NVIDIA-B200' maps to no"));
  EXPECT_TRUE(r["FailedAndUnresolvableNodes"].empty());
}

TEST(K8sExtenderFilter, APodThatRunsNowhereIsUnresolvable) {
  auto e = Make(false);
  const Json pod =
      PodJson("new", {{"nvidia.com/gpu", "1"}}, {{"hetsched.io/stacks", "cuda>=13.9"}});
  const Json r = Ok(e->Filter(NodesForm(pod)));
  EXPECT_TRUE(Passed(r).empty());
  EXPECT_TRUE(r["FailedNodes"].empty());
  EXPECT_EQ(r["FailedAndUnresolvableNodes"].size(), 9u);
  EXPECT_THAT(r["FailedAndUnresolvableNodes"]["gpu-a100-1"].get<std::string>(),
              HasSubstr("no node of the cluster can run this pod"));
  // A bad annotation is the pod's problem, on every node.
  const Json bad = PodJson("bad", {{"nvidia.com/gpu", "1"}}, {{"hetsched.io/stacks", "cuda>>1"}});
  const Json rb = Ok(e->Filter(NodesForm(bad, {"gpu-a100-1"})));
  EXPECT_THAT(rb["FailedAndUnresolvableNodes"]["gpu-a100-1"].get<std::string>(),
              HasSubstr("annotation hetsched.io/stacks"));
}

TEST(K8sExtenderFilter, NodeNamesFormCountsFreeDevicesFromTheCache) {
  auto e = Make(true);
  const Json pod = PodJson("p", {{"nvidia.com/gpu", "8"}});
  // Not synced yet: an error kube-scheduler retries.
  EXPECT_THAT(Ok(e->Filter(NamesForm(pod, {"gpu-a100-1"})))["Error"].get<std::string>(),
              HasSubstr("has not read the cluster yet"));
  e->ReplaceNodes(Nodes());
  auto running = ParsePod(PodJson("running", {{"nvidia.com/gpu", "4"}}, {}, "gpu-a100-1").dump());
  ASSERT_TRUE(running.ok());
  e->ReplacePods({*running});
  e->SetSynced(true);
  const Json r = Ok(e->Filter(NamesForm(pod, {"gpu-a100-1", "gpu-a100-2", "nowhere"})));
  EXPECT_TRUE(r["Nodes"].is_null());
  EXPECT_THAT(Passed(r), ::testing::ElementsAre("gpu-a100-2"));
  EXPECT_EQ(r["FailedNodes"]["gpu-a100-1"], "4 of 8 nvidia.com/gpu free, the pod needs 8");
  EXPECT_THAT(r["FailedNodes"]["nowhere"].get<std::string>(), HasSubstr("not in hetsched's"));
  // The pod ends: its devices are free again.
  e->DeletePod(*running);
  EXPECT_EQ(Passed(Ok(e->Filter(NamesForm(pod, {"gpu-a100-1"})))).size(), 1u);
}

TEST(K8sExtenderFilter, NodeNamesWithoutACacheIsAnError) {
  auto e = Make(false);
  const Json r = Ok(e->Filter(NamesForm(PodJson("p", {{"nvidia.com/gpu", "1"}}), {"a"})));
  EXPECT_THAT(r["Error"].get<std::string>(), HasSubstr("nodeCacheCapable: false"));
}

TEST(K8sExtenderProtocol, NullsEmptiesUnknownFieldsAndAnyCase) {
  auto e = Make(false);
  const Json pod = PodJson("p", {{"nvidia.com/gpu", "1"}});
  Json body = {{"pod", pod},
               {"nodes", {{"items", Json::array()}}},
               {"NodeNames", nullptr},
               {"SomethingNew", {1, 2}}};
  const Json r = Ok(e->Filter(body.dump()));
  EXPECT_TRUE(Passed(r).empty());
  EXPECT_EQ(r["Error"], "");
  body = {{"Pod", pod}, {"Nodes", {{"metadata", nullptr}, {"items", nullptr}}}};
  EXPECT_EQ(e->Filter(body.dump()).status, 200);
  const Json prio = Ok(e->Prioritize(Json{{"Pod", pod}, {"Nodes", {{"items", {}}}}}.dump()));
  EXPECT_TRUE(prio.is_array());
  EXPECT_TRUE(prio.empty());
}

TEST(K8sExtenderProtocol, BadRequestsAre400WithAMessage) {
  auto e = Make(false);
  const std::pair<std::string, std::string> cases[] = {
      {"{\"Pod\": ", "ExtenderArgs:1:9: not JSON"},
      {"[]", "ExtenderArgs: is an array (expected an object)"},
      {R"({"Nodes": null, "NodeNames": []})", "ExtenderArgs.Pod: missing"},
      {R"({"Pod": 5, "NodeNames": []})", "ExtenderArgs.Pod: is a number (expected an object)"},
      {R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": "n1"})",
       "ExtenderArgs.NodeNames: is a string (expected an array of node names)"},
      {R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": [1]})",
       "ExtenderArgs.NodeNames[0]: is a number (expected a string)"},
      {R"({"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": [{"metadata": {}}]}})",
       "ExtenderArgs.Nodes.items[0].metadata.name: missing"},
      {R"({"Pod": {"metadata": {"name": "p"}}, "Nodes": null, "NodeNames": null})",
       "neither Nodes nor NodeNames"},
  };
  for (const auto& [body, message] : cases) {
    for (auto verb : {&Extender::Filter, &Extender::Prioritize}) {
      const ExtenderReply reply = ((*e).*verb)(body);
      EXPECT_EQ(reply.status, 400) << body;
      EXPECT_THAT(Json::parse(reply.body)["Error"].get<std::string>(), HasSubstr(message)) << body;
    }
  }
  EXPECT_EQ(e->Bind("{").status, 400);
  EXPECT_THAT(e->Bind(R"({"PodName": "p", "PodNamespace": 3})").body,
              HasSubstr("ExtenderBindingArgs.PodNamespace: is a number"));
  EXPECT_THAT(e->Bind(R"({"PodName": "p", "PodNamespace": "ml"})").body,
              HasSubstr("ExtenderBindingArgs.Node: missing"));
  EXPECT_EQ(e->Preempt(R"({"Pod": null})").status, 400);
  EXPECT_THAT(e->Preempt(R"({"Pod": {"metadata": {"name": "p"}}, "NodeNameToVictims": []})").body,
              HasSubstr("NodeNameToVictims: is an array"));
}

// Issue 37: an error deep under a victim pod rendered its path from parents that were freed
// temporaries (ASan: stack-use-after-scope). The whole path must come back, under ASan too.
TEST(K8sExtenderProtocol, ErrorsDeepInARequestNameTheirWholePath) {
  auto e = Make(false);
  const ExtenderReply victim_without_metadata = e->Preempt(
      R"({"Pod": {"metadata": {"name": "p", "namespace": "ml", "uid": "u1"},
                  "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}]}},
          "NodeNameToVictims": {"gpu-a100-1": {"Pods": [{"metadatZ": {"name": "p"},
                                                         "spec": {"containers": []}}],
                                               "NumPDBViolations": 1}}})");
  EXPECT_EQ(victim_without_metadata.status, 400);
  EXPECT_THAT(Json::parse(victim_without_metadata.body)["Error"].get<std::string>(),
              HasSubstr("ExtenderPreemptionArgs.NodeNameToVictims.gpu-a100-1.Pods[0].metadata"));
  const ExtenderReply meta_uid = e->Preempt(
      R"({"Pod": {"metadata": {"name": "p"}},
          "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "a"}, {"UID": 7}]}}})");
  EXPECT_EQ(meta_uid.status, 400);
  EXPECT_THAT(
      Json::parse(meta_uid.body)["Error"].get<std::string>(),
      HasSubstr("ExtenderPreemptionArgs.NodeNameToMetaVictims.n1.Pods[1].UID: is a number"));
  const ExtenderReply container = e->Filter(
      R"({"Pod": {"metadata": {"name": "p"},
                  "spec": {"containers": [{}, {"resources": {"limits": {"nvidia.com/gpu": []}}}]}},
          "NodeNames": ["n1"]})");
  EXPECT_EQ(container.status, 400);
  EXPECT_THAT(Json::parse(container.body)["Error"].get<std::string>(),
              HasSubstr("ExtenderArgs.Pod.spec.containers[1].resources.limits"));
}

TEST(K8sExtenderPrioritize, TheMostSuitableNodeWinsNotTheStrongest) {
  auto e = Make(false, nullptr, "speed-per-cost");
  // Measured: 10 steps/s on an A100 (3.93 $/h), 4 on a T4 (0.35 $/h): the T4 gives far more
  // work per dollar and per watt.
  const Json pod =
      PodJson("infer", {{"nvidia.com/gpu", "1"}}, {{"hetsched.io/throughput", "a100-80g=10,t4=4"}});
  const Json r = Ok(e->Prioritize(NodesForm(pod, {"gpu-a100-1", "gpu-t4-1", "amd-mi250-1"})));
  ASSERT_EQ(r.size(), 3u);
  std::map<std::string, int> score;
  for (const Json& h : r) {
    score[h["Host"]] = h["Score"];
    EXPECT_GE(h["Score"].get<int>(), 0);
    EXPECT_LE(h["Score"].get<int>(), 10);
  }
  EXPECT_EQ(score["gpu-t4-1"], 10);
  EXPECT_LT(score["gpu-a100-1"], 5);
  EXPECT_EQ(score["amd-mi250-1"], 0);  // cannot run there

  // A job ten times faster on the A100 earns it.
  const Json big =
      PodJson("train", {{"nvidia.com/gpu", "1"}}, {{"hetsched.io/throughput", "a100-80g=40,t4=1"}});
  const Json rb = Ok(e->Prioritize(NodesForm(big, {"gpu-a100-1", "gpu-t4-1"})));
  EXPECT_GT(rb[0]["Score"].get<int>(), rb[1]["Score"].get<int>());
  // Under the default scorer (speed, as the simulator's), the faster device wins.
  const Json rs = Ok(Make(false)->Prioritize(NodesForm(pod, {"gpu-a100-1", "gpu-t4-1"})));
  EXPECT_EQ(rs[0]["Score"], 10);
  EXPECT_EQ(rs[1]["Score"], 4);
}

TEST(K8sExtenderPrioritize, PacksOntoFullerNodesAndCpuPodsOffAccelerators) {
  auto e = Make(true);
  e->ReplaceNodes(Nodes());
  auto running = ParsePod(PodJson("r", {{"nvidia.com/gpu", "6"}}, {}, "gpu-a100-2").dump());
  e->ReplacePods({*running});
  e->SetSynced(true);
  const Json pod = PodJson("p", {{"nvidia.com/gpu", "2"}});
  const Json r = Ok(e->Prioritize(NamesForm(pod, {"gpu-a100-1", "gpu-a100-2"})));
  EXPECT_LT(r[0]["Score"].get<int>(), r[1]["Score"].get<int>());
  const Json cpu = PodJson("etl", {{"cpu", "4"}});
  const Json rc = Ok(e->Prioritize(NamesForm(cpu, {"gpu-a100-1", "cpu-1"})));
  EXPECT_LT(rc[0]["Score"].get<int>(), rc[1]["Score"].get<int>());
}

TEST(K8sExtenderBind, BindsThroughTheApiAndCountsTheDevices) {
  std::vector<std::string> calls;
  ExtenderOptions o;
  o.node_cache = true;
  o.binder = [&](const std::string& ns, const std::string& name, const std::string& uid,
                 const std::string& node) {
    calls.push_back(ns + "/" + name + " " + uid + " -> " + node);
    if (node == "broken") return util::Status::Unavailable("503 from the API server");
    return util::Status::Ok();
  };
  auto e = std::move(Extender::Create(std::move(o))).value();
  e->ReplaceNodes(Nodes());
  e->ReplacePods({});
  e->SetSynced(true);
  const Json pod = PodJson("p", {{"nvidia.com/gpu", "8"}});
  EXPECT_EQ(Passed(Ok(e->Filter(NamesForm(pod, {"gpu-a100-1"})))).size(), 1u);
  const Json r = Ok(e->Bind(
      R"({"PodName": "p", "PodNamespace": "ml", "PodUID": "uid-p", "Node": "gpu-a100-1"})"));
  EXPECT_EQ(r["Error"], "");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], "ml/p uid-p -> gpu-a100-1");
  // Taken at once, before any watch event says so.
  const Json again =
      Ok(e->Filter(NamesForm(PodJson("q", {{"nvidia.com/gpu", "1"}}), {"gpu-a100-1"})));
  EXPECT_EQ(again["FailedNodes"]["gpu-a100-1"], "0 of 8 nvidia.com/gpu free, the pod needs 1");
  EXPECT_EQ(Ok(e->Bind(R"({"PodName": "p", "PodNamespace": "ml", "Node": "broken"})"))["Error"],
            "503 from the API server");

  auto unbound = Make(false);
  EXPECT_THAT(Ok(unbound->Bind(R"({"PodName": "p", "PodNamespace": "ml", "Node": "n"})"))["Error"]
                  .get<std::string>(),
              HasSubstr("cannot bind"));
}

TEST(K8sExtenderPreempt, DropsNodesWhereThePodCouldNeverRun) {
  auto e = Make(true);
  e->ReplaceNodes(Nodes());
  e->ReplacePods({});
  e->SetSynced(true);
  const Json pod = PodJson("hi", {{"nvidia.com/gpu", "8"}}, {{"hetsched.io/stacks", "cuda>=12.2"}});
  const Json victim = PodJson("lo", {{"nvidia.com/gpu", "8"}}, {}, "gpu-a100-1");
  const Json full = {{"Pod", pod},
                     {"NodeNameToVictims",
                      {{"gpu-a100-1", {{"Pods", {victim}}, {"NumPDBViolations", 0}}},
                       {"gpu-a100-old", {{"Pods", {victim}}, {"NumPDBViolations", 1}}},
                       {"unknown-node", {{"Pods", Json::array()}, {"NumPDBViolations", 0}}}}},
                     {"NodeNameToMetaVictims", nullptr}};
  const Json r = Ok(e->Preempt(full.dump()));
  const Json& kept = r["NodeNameToMetaVictims"];
  EXPECT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept["gpu-a100-1"]["Pods"][0]["UID"], "uid-lo");
  EXPECT_EQ(kept["gpu-a100-1"]["NumPDBViolations"], 0);
  EXPECT_FALSE(kept.contains("gpu-a100-old"));  // cuda 11.4 there: eviction would not help
  EXPECT_TRUE(kept.contains("unknown-node"));   // not known: left to kube-scheduler
  const Json meta = {{"Pod", pod},
                     {"NodeNameToVictims", nullptr},
                     {"NodeNameToMetaVictims",
                      {{"gpu-a100-2", {{"Pods", {{{"UID", "u9"}}}}, {"NumPDBViolations", 2}}},
                       {"amd-mi250-1", {{"Pods", {{{"UID", "u8"}}}}}}}}};
  const Json rm = Ok(e->Preempt(meta.dump()));
  EXPECT_EQ(rm["NodeNameToMetaVictims"].size(), 1u);
  EXPECT_EQ(rm["NodeNameToMetaVictims"]["gpu-a100-2"]["NumPDBViolations"], 2);
  EXPECT_TRUE(Ok(e->Preempt(Json{{"Pod", pod}}.dump()))["NodeNameToMetaVictims"].empty());
}

TEST(K8sExtenderGroups, AllOrNothing) {
  double now = 1000;
  auto e = Make(true, &now);
  std::vector<Node> nodes = Nodes();
  e->ReplaceNodes(nodes);
  e->ReplacePods({});
  e->SetSynced(true);
  const std::vector<std::string> all = {"gpu-a100-1", "gpu-a100-2", "gpu-a100-old", "gpu-t4-1"};
  auto member = [](int i) {
    return PodJson("w" + std::to_string(i), {{"nvidia.com/gpu", "8"}},
                   {{"hetsched.io/pod-group", "llm"},
                    {"hetsched.io/pod-group-size", "3"},
                    {"hetsched.io/stacks", "cuda>=12.2"}});
  };
  // Two nodes can run a member (cuda 12.2+, 8 GPUs): three never fit, so none is placed, and
  // kube-scheduler is told that preempting would not help.
  Json r = Ok(e->Filter(NamesForm(member(0), all)));
  EXPECT_TRUE(Passed(r).empty());
  EXPECT_TRUE(r["FailedNodes"].empty());
  ASSERT_TRUE(r["FailedAndUnresolvableNodes"].contains("gpu-a100-1")) << r.dump();
  EXPECT_THAT(r["FailedAndUnresolvableNodes"]["gpu-a100-1"].get<std::string>(),
              HasSubstr("pod group 'ml/llm' needs 3 pod(s) of 8 nvidia.com/gpu at once; the whole "
                        "cluster holds at most 2 on one device type"));
  EXPECT_EQ(e->groups_reserved(), 0u);

  // A third node joins, half taken: the group fits the cluster but not now.
  Json third = NodeList()["items"][1];
  third["metadata"]["name"] = "gpu-a100-3";
  nodes.push_back(*ParseNode(third.dump()));
  e->UpsertNode(nodes.back());
  std::vector<std::string> with_third = all;
  with_third.push_back("gpu-a100-3");
  const Pod busy = *ParsePod(PodJson("busy", {{"nvidia.com/gpu", "4"}}, {}, "gpu-a100-3").dump());
  e->UpsertPod(busy);
  r = Ok(e->Filter(NamesForm(member(0), with_third)));
  EXPECT_TRUE(Passed(r).empty());
  EXPECT_THAT(
      r["FailedNodes"]["gpu-a100-1"].get<std::string>(),
      HasSubstr("pod group 'ml/llm' needs 3 more pod(s) of 8 nvidia.com/gpu at once; 2 fit now"));
  EXPECT_EQ(e->groups_reserved(), 0u);

  // Once it ends, the group is placed at once, one node per member.
  e->DeletePod(busy);
  std::set<std::string> placed;
  for (int i = 0; i < 3; ++i) {
    r = Ok(e->Filter(NamesForm(member(i), with_third)));
    ASSERT_EQ(Passed(r).size(), 1u) << r.dump();
    placed.insert(Passed(r)[0]);
  }
  EXPECT_EQ(placed.size(), 3u);
  EXPECT_EQ(e->groups_reserved(), 1u);
  // Asking again gives the same node; other pods find the group's nodes held.
  EXPECT_EQ(Passed(Ok(e->Filter(NamesForm(member(0), with_third)))),
            Passed(Ok(e->Filter(NamesForm(member(0), with_third)))));
  const Json other = Ok(e->Filter(NamesForm(PodJson("x", {{"nvidia.com/gpu", "1"}}), with_third)));
  EXPECT_THAT(other["FailedNodes"]["gpu-a100-3"].get<std::string>(),
              HasSubstr("held for pod groups"));

  // Members are never bound: the reservation lapses and the nodes are free again.
  now += 61;
  const Json later = Ok(e->Filter(NamesForm(PodJson("x", {{"nvidia.com/gpu", "1"}}), with_third)));
  EXPECT_EQ(Passed(later).size(), 5u);
  EXPECT_EQ(e->groups_reserved(), 0u);
}

TEST(K8sExtenderGroups, BoundMembersCompleteThePlan) {
  auto e = Make(true);
  e->ReplaceNodes(Nodes());
  e->ReplacePods({});
  e->SetSynced(true);
  auto member = [](int i, const std::string& node = "") {
    return PodJson("m" + std::to_string(i), {{"nvidia.com/gpu", "4"}},
                   {{"hetsched.io/pod-group", "g"}, {"hetsched.io/pod-group-size", "2"}}, node);
  };
  const std::vector<std::string> names = {"gpu-a100-1", "gpu-a100-2"};
  const auto first = Passed(Ok(e->Filter(NamesForm(member(0), names))));
  const auto second = Passed(Ok(e->Filter(NamesForm(member(1), names))));
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first, second);  // two members of 4 fill one node of 8: the fewest nodes
  e->UpsertPod(*ParsePod(member(0, first[0]).dump()));
  e->UpsertPod(*ParsePod(member(1, first[0]).dump()));
  EXPECT_EQ(e->groups_reserved(), 0u);
  // A member that comes later is placed alone: the group runs.
  const Json late = Ok(e->Filter(NamesForm(member(2), names)));
  EXPECT_EQ(Passed(late).size(), 1u) << late.dump();
  EXPECT_EQ(e->groups_reserved(), 0u);
  // One that replaces a lost member is planned again (a group of one pod now).
  e->DeletePod(*ParsePod(member(1, first[0]).dump()));
  const Json replacement = Ok(e->Filter(NamesForm(member(3), names)));
  EXPECT_EQ(Passed(replacement).size(), 1u) << replacement.dump();
  EXPECT_EQ(e->groups_reserved(), 1u);
}

// Groups are placed by sched's gang rules (sched/room_placement.h): best fit on one node, and
// the node of the group's data when the whole group fits there.
TEST(K8sExtenderGroups, PlacedBySchedsGangRules) {
  // Of their 8 GPUs, gpu-a100-1 has 4 taken, gpu-a100-old 2, gpu-a100-2 none.
  auto make = [] {
    auto e = Make(true);
    e->ReplaceNodes(Nodes());
    e->ReplacePods(
        {*ParsePod(PodJson("busy", {{"nvidia.com/gpu", "4"}}, {}, "gpu-a100-1").dump()),
         *ParsePod(PodJson("busy2", {{"nvidia.com/gpu", "2"}}, {}, "gpu-a100-old").dump())});
    e->SetSynced(true);
    return e;
  };
  const std::vector<std::string> names = {"gpu-a100-2", "gpu-a100-old", "gpu-a100-1"};
  auto member = [](int i, const std::string& data = "") {
    Json annotations = {{"hetsched.io/pod-group", "g"}, {"hetsched.io/pod-group-size", "2"}};
    if (!data.empty()) annotations["hetsched.io/data-location"] = data;
    return PodJson("m" + std::to_string(i), {{"nvidia.com/gpu", "2"}}, annotations);
  };
  // Two pods of 2 GPUs: the 4 free on gpu-a100-1 fit them best; gpu-a100-2 stays whole (the
  // extender's own rule before, most room first, put them there).
  auto fit = make();
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(Passed(Ok(fit->Filter(NamesForm(member(i), names)))),
                ::testing::ElementsAre("gpu-a100-1"));
  }
  // With its data on gpu-a100-old the group goes there: the whole group fits on the data's
  // node (the extender's own rule before did not read the data's place).
  auto near_data = make();
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(Passed(Ok(near_data->Filter(NamesForm(member(i, "gpu-a100-old"), names)))),
                ::testing::ElementsAre("gpu-a100-old"));
  }
}

TEST(K8sExtenderHttp, NodesPageByName) {
  auto e = Make(true);
  e->ReplaceNodes(Nodes());
  e->SetSynced(true);
  MetricsRegistry metrics;
  Logger logger(LogLevel::kError);
  HttpApiOptions o;
  o.port = 0;
  auto api = HttpApi::Create(o, nullptr, &metrics, &logger, e.get());
  ASSERT_TRUE(api.ok()) << api.status().message();
  (*api)->Start();
  httplib::Client client("127.0.0.1", (*api)->port());
  std::vector<std::string> names;
  std::string url = "/v1/k8s/nodes?limit=2";
  for (int page = 0; page < 10 && !url.empty(); ++page) {
    auto res = client.Get(url);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const Json body = Json::parse(res->body);
    EXPECT_LE(body["nodes"].size(), 2u);
    for (const Json& n : body["nodes"]) names.push_back(n["name"].get<std::string>());
    url = body["next_cursor"].is_string()
              ? "/v1/k8s/nodes?limit=2&cursor=" + body["next_cursor"].get<std::string>()
              : "";
  }
  EXPECT_EQ(url, "") << "the last page says none remain";
  std::vector<std::string> all;
  for (const Node& n : Nodes()) all.push_back(n.name);
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 9u);
  EXPECT_EQ(names, all);
  auto bad = client.Get("/v1/k8s/nodes?cursor=bogus");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("cursor: "));
  (*api)->Stop();
}

TEST(K8sExtenderHttp, VerbsUnderThePrefixWithoutATokenAndNoJobRoutes) {
  auto e = Make(false);
  MetricsRegistry metrics;
  Logger logger(LogLevel::kError);
  HttpApiOptions o;
  o.port = 0;
  o.extender_prefix = "/sched/hetsched";
  o.tokens = {{"secret-token-123456", Role::kAdmin, ""}};
  auto api = HttpApi::Create(o, nullptr, &metrics, &logger, e.get());
  ASSERT_TRUE(api.ok()) << api.status().message();
  (*api)->Start();
  httplib::Client client("127.0.0.1", (*api)->port());
  const Json pod = PodJson("p", {{"nvidia.com/gpu", "8"}});
  auto res = client.Post("/sched/hetsched/filter", NodesForm(pod), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(Passed(Json::parse(res->body)).size(), 3u);
  res = client.Post("/sched/hetsched/prioritize", "{", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  res = client.Post("/sched/hetsched/preempt", Json{{"Pod", pod}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client.Get("/v1/k8s/nodes");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = client.Get("/v1/jobs");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  // Each extender route the OpenAPI document names is served (under its default prefix).
  HttpApiOptions default_prefix;
  default_prefix.port = 0;
  MetricsRegistry default_metrics;  // one registry per API: each registers its own metrics
  auto def = HttpApi::Create(default_prefix, nullptr, &default_metrics, &logger, e.get());
  ASSERT_TRUE(def.ok());
  (*def)->Start();
  httplib::Client default_client("127.0.0.1", (*def)->port());
  const Json doc = Json::parse(OpenApiDocument());
  int extender_routes = 0;
  for (const auto& [path, item] : doc["paths"].items()) {
    if (path.rfind("/k8s/", 0) != 0 && path != "/v1/k8s/nodes") continue;
    ++extender_routes;
    auto got = item.contains("post") ? default_client.Post(path, "{}", "application/json")
                                     : default_client.Get(path);
    ASSERT_TRUE(got);
    EXPECT_NE(got->status, 404) << path;
  }
  EXPECT_EQ(extender_routes, 5);
  (*def)->Stop();
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("route=\"/sched/hetsched/filter\""));
  // A route counts under the status it answered with (/metrics too, whose status httplib sets).
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body,
              HasSubstr(R"(hetsched_api_requests_total{route="/metrics",code="200"} 1)"));
  EXPECT_THAT(res->body, ::testing::Not(HasSubstr("code=\"-1\"")));
  (*api)->Stop();
}

// /openapi.json lists what this mode serves: the verbs under the configured prefix, the node
// cache's view, health, metrics and the document; each listed operation is served, and each
// of the full document's others (the job routes, the dashboard) is not.
TEST(K8sExtenderHttp, OpenApiListsExactlyTheRoutesServed) {
  auto e = Make(false);
  MetricsRegistry metrics;
  Logger logger(LogLevel::kError);
  HttpApiOptions o;
  o.port = 0;
  o.extender_prefix = "/sched/hetsched";
  auto api = HttpApi::Create(o, nullptr, &metrics, &logger, e.get());
  ASSERT_TRUE(api.ok()) << api.status().message();
  (*api)->Start();
  httplib::Client client("127.0.0.1", (*api)->port());
  auto res = client.Get("/openapi.json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const Json doc = Json::parse(res->body);
  const auto listed = hetsched::testing::OpenApiOperations(doc);
  const std::set<std::pair<std::string, std::string>> expected = {
      {"GET", "/healthz"},
      {"GET", "/metrics"},
      {"GET", "/openapi.json"},
      {"GET", "/v1/k8s/nodes"},
      {"POST", "/sched/hetsched/filter"},
      {"POST", "/sched/hetsched/prioritize"},
      {"POST", "/sched/hetsched/bind"},
      {"POST", "/sched/hetsched/preempt"}};
  EXPECT_EQ(listed, expected);
  EXPECT_THAT(doc["info"]["description"].get<std::string>(), HasSubstr("/sched/hetsched"));
  auto all = hetsched::testing::OpenApiOperations(Json::parse(OpenApiDocument()));
  all.insert(listed.begin(), listed.end());
  for (const auto& [method, path] : all) {
    const std::string url = std::regex_replace(path, std::regex(R"(\{[^}]+\})"), "x");
    auto got = method == "GET"    ? client.Get(url)
               : method == "POST" ? client.Post(url, "{}", "application/json")
                                  : client.Delete(url);
    ASSERT_TRUE(got) << method << " " << url;
    if (listed.count({method, path})) {
      EXPECT_TRUE(got->status != 404 && got->status != 405) << method << " " << url;
    } else {
      EXPECT_EQ(got->status, 404) << method << " " << url << " is served but not listed";
    }
  }
  (*api)->Stop();
}

}  // namespace
}  // namespace hetsched::svc::k8s
