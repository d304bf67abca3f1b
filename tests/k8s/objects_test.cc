#include "k8s/objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/build_paths.h"
#include "util/file.h"

namespace hetsched::svc::k8s {
namespace {

using ::testing::HasSubstr;

std::string NodeListText() {
  auto text = util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/nodelist.json");
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

TEST(K8sQuantity, ReadsTheApisForms) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("4"), 4);
  EXPECT_DOUBLE_EQ(*ParseQuantity("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseQuantity("16Gi"), 16.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(*ParseQuantity("1056561160Ki"), 1056561160.0 * 1024);
  EXPECT_DOUBLE_EQ(*ParseQuantity("100M"), 1e8);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1e3"), 1000);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5"), 1.5);
  for (const char* bad : {"", "1.2.3", "4x", "Gi", "1e99", ".", "1.", "--1"}) {
    auto q = ParseQuantity(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_THAT(q.status().message(), HasSubstr("is not a quantity")) << bad;
  }
}

TEST(K8sDriver, CudaVersionFollowsNvidiasTable) {
  EXPECT_EQ(CudaVersionOfDriver("535.104.05"), "12.2");
  EXPECT_EQ(CudaVersionOfDriver("535.54.03"), "12.2");
  EXPECT_EQ(CudaVersionOfDriver("535.43"), "12.1");
  EXPECT_EQ(CudaVersionOfDriver("535.54.02"), "12.1");  // one below 12.2's minimum
  EXPECT_EQ(CudaVersionOfDriver("550.54.14"), "12.4");
  EXPECT_EQ(CudaVersionOfDriver("450.51.05"), "11.0");
  EXPECT_EQ(CudaVersionOfDriver("470.82.01"), "11.4");
  EXPECT_EQ(CudaVersionOfDriver("570.86.15"), "12.8");
  EXPECT_EQ(CudaVersionOfDriver("450.36.06"), std::nullopt);  // a CUDA 11.0 release candidate
  EXPECT_EQ(CudaVersionOfDriver("440.33"), std::nullopt);
  EXPECT_EQ(CudaVersionOfDriver("abc"), std::nullopt);
}

TEST(K8sNodes, DescribesVendorsLabels) {
  auto list = ParseNodeList(NodeListText());
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->resource_version, "1234");
  ASSERT_EQ(list->items.size(), 9u);
  std::map<std::string, NodeInfo> info;
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  for (const Node& n : list->items) info[n.name] = DescribeNode(n, Mapping{}, catalog);

  const NodeInfo& a100 = info["gpu-a100-1"];
  EXPECT_EQ(a100.problem, "");
  EXPECT_EQ(a100.device.name, "a100-80g");
  EXPECT_EQ(a100.resource, "nvidia.com/gpu");
  EXPECT_EQ(a100.accelerators, 8);
  EXPECT_TRUE(a100.driver_known);
  ASSERT_EQ(a100.device.stacks.size(), 1u);
  EXPECT_EQ(model::ToString(a100.device.stacks[0]), "cuda 12.2");  // runtime-version label
  EXPECT_EQ(a100.device.memory_bytes, uint64_t(81920) << 20);
  EXPECT_EQ(a100.rack, "rack-a");
  // Only the driver version: NVIDIA's table says 470 runs CUDA up to 11.4.
  EXPECT_EQ(model::ToString(info["gpu-a100-old"].device.stacks[0]), "cuda 11.4");
  EXPECT_EQ(info["gpu-t4-1"].device.name, "t4");
  EXPECT_EQ(info["gpu-t4-1"].accelerators, 4);
  EXPECT_EQ(info["amd-mi250-1"].device.name, "mi250x");
  EXPECT_EQ(model::ToString(info["amd-mi250-1"].device.stacks[0]), "rocm 6.1");  // node label
  EXPECT_EQ(info["npu-910b-1"].device.name, "ascend-910b");
  EXPECT_EQ(info["npu-910b-1"].resource, "huawei.com/Ascend910");
  EXPECT_FALSE(info["npu-910b-1"].driver_known);
  EXPECT_EQ(info["cpu-1"].device.name, "xeon-8380");
  EXPECT_EQ(info["cpu-1"].resource, "");
  EXPECT_EQ(model::ToString(info["cpu-1"].device.stacks[0]), "x86_64");
  EXPECT_THAT(info["gpu-unknown"].problem, HasSubstr("'NVIDIA-B200' maps to no catalog type"));
  EXPECT_FALSE(info["gpu-unknown"].type.valid());
  EXPECT_THAT(info["amd-mixed"].problem, HasSubstr("several models"));

  // Only the labels hetsched reads are kept (a node carries dozens).
  EXPECT_EQ(list->items[0].labels.count("nvidia.com/gpu.product"), 1u);
  EXPECT_EQ(list->items[0].labels.count("topology.kubernetes.io/zone"), 1u);
  EXPECT_EQ(list->items[0].labels.count("kubernetes.io/hostname"), 0u);
  auto own_rack = ParseNodeList(NodeListText(), "kubernetes.io/hostname");
  ASSERT_TRUE(own_rack.ok());
  EXPECT_EQ(own_rack->items[0].labels.count("kubernetes.io/hostname"), 1u);
  EXPECT_EQ(own_rack->items[0].labels.count("topology.kubernetes.io/zone"), 0u);

  // A node states its stacks with one label each; a value that is no version is a problem.
  Node amd = list->items[4];
  amd.labels["hetsched.io/stack.rocm"] = "latest";
  EXPECT_THAT(DescribeNode(amd, Mapping{}, catalog).problem,
              HasSubstr("its label hetsched.io/stack.rocm=latest is not a stack and version"));
  // Ascend's shares and unhealthy counts are not devices.
  Node npu = list->items[5];
  npu.allocatable["huawei.com/Ascend910-2c"] = 4;
  EXPECT_EQ(DescribeNode(npu, Mapping{}, catalog).problem, "");

  // Configuration maps what the rules do not know.
  Mapping mapping;
  mapping.device_types["NVIDIA-B200"] = "h100-80g";
  const Node& b200 = list->items[7];
  EXPECT_EQ(DescribeNode(b200, mapping, catalog).device.name, "h100-80g");
}

TEST(K8sNodes, ProductRules) {
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA-A100-SXM4-80GB", "a100-80g"},
      {"NVIDIA-A100-PCIE-40GB", "a100-40g"},
      {"NVIDIA-H100-80GB-HBM3", "h100-80g"},
      {"Tesla-V100-SXM2-32GB", "v100-32g"},
      {"Tesla-T4", "t4"},
      {"NVIDIA-L40S", "l40s"},
      {"NVIDIA-GeForce-RTX-4090", "rtx-4090"},
      {"AMD_Instinct_MI300X_OAM", "mi300x"},
      {"910B3", "ascend-910b"},
      {"310P3", "ascend-310p"},
      {"p100", "p100"},
  };
  for (const auto& [product, type] : cases) {
    EXPECT_EQ(CatalogTypeForProduct(product, Mapping{}, catalog), type) << product;
  }
  EXPECT_EQ(CatalogTypeForProduct("Instinct_MI210", Mapping{}, catalog), std::nullopt);
  // Whole tokens: a T400 is not a T4.
  EXPECT_EQ(CatalogTypeForProduct("NVIDIA-T400", Mapping{}, catalog), std::nullopt);
}

TEST(K8sPods, SumsContainersAndTakesTheLargestInit) {
  auto pod = ParsePod(R"({"metadata": {"name": "p", "namespace": "ml", "uid": "u1",
      "creationTimestamp": null, "annotations": {"hetsched.io/stacks": "cuda>=12.2"}},
    "spec": {"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                    "limits": {"nvidia.com/gpu": "2"}}},
        {"name": "b", "resources": {"requests": {"cpu": "1"}}}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
      "overhead": {"cpu": "100m"}},
    "status": {"phase": "Pending"}, "unknownField": [1, 2, {"x": null}]})");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ(pod->Key(), "ml/p");
  EXPECT_EQ(pod->uid, "u1");
  EXPECT_DOUBLE_EQ(pod->requests["cpu"], 4.1);           // the init container's 4 + overhead
  EXPECT_DOUBLE_EQ(pod->requests["nvidia.com/gpu"], 2);  // a limit stands for the request
  EXPECT_DOUBLE_EQ(pod->requests["memory"], 1 << 30);
  EXPECT_EQ(pod->phase, "Pending");
}

TEST(K8sPods, BadFieldsAreNamed) {
  auto wrong = ParsePod(R"({"metadata": {"name": "p", "labels": {"app": 5}}})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "Pod.metadata.labels.app: is a number (expected a string)");
  auto quantity = ParsePod(
      R"({"metadata": {"name": "p"}, "spec": {"containers": [{}, {"resources":
         {"requests": {"cpu": "lots"}}}]}})");
  ASSERT_FALSE(quantity.ok());
  EXPECT_THAT(quantity.status().message(),
              HasSubstr("Pod.spec.containers[1].resources.requests.cpu: 'lots' is not a quantity"));
  auto nameless = ParsePod(R"({"metadata": {}})");
  ASSERT_FALSE(nameless.ok());
  EXPECT_THAT(nameless.status().message(), HasSubstr("Pod.metadata.name: missing"));
  auto syntax = ParsePod("{\"metadata\":\n {\"name\": }");
  ASSERT_FALSE(syntax.ok());
  EXPECT_THAT(syntax.status().message(), HasSubstr("Pod:2:"));
  EXPECT_THAT(syntax.status().message(), HasSubstr("not JSON"));
  for (const char* text : {"", "null", "[]", "5", "{\"spec\": []}", "{\"metadata\": \"x\"}"}) {
    EXPECT_FALSE(ParsePod(text).ok()) << text;
  }
}

PodNeeds Needs(const std::string& annotations, const std::string& requests,
               const std::string& labels = "{}") {
  auto pod = ParsePod(R"({"metadata": {"name": "p", "namespace": "ml", "uid": "u",
      "annotations": )" +
                      annotations + R"(, "labels": )" + labels +
                      R"(}, "spec": {"containers": [{"resources":
      {"requests": )" +
                      requests + "}}]}}");
  EXPECT_TRUE(pod.ok()) << pod.status().message();
  auto needs = NeedsOf(*pod, model::DeviceCatalog::BuiltIn());
  EXPECT_TRUE(needs.ok()) << needs.status().message();
  return needs.ok() ? *needs : PodNeeds{};
}

TEST(K8sPods, NeedsFromResourcesAndAnnotations) {
  PodNeeds inferred = Needs("{}", R"({"nvidia.com/gpu": "4"})");
  EXPECT_EQ(inferred.resource, "nvidia.com/gpu");
  EXPECT_EQ(inferred.count, 4);
  EXPECT_EQ(inferred.job.gang_size, 4);
  ASSERT_EQ(inferred.job.stacks.size(), 1u);
  EXPECT_EQ(model::ToString(inferred.job.stacks[0]), "cuda");
  EXPECT_TRUE(inferred.speed_assumed);

  PodNeeds declared = Needs(R"({"hetsched.io/stacks": "cuda>=12.4, rocm>=6.0",
      "hetsched.io/memory-per-device": "40Gi", "hetsched.io/throughput": "a100-80g=10,t4=2.5",
      "hetsched.io/data-location": "rack-b"})",
                            R"({"amd.com/gpu": "1"})");
  EXPECT_EQ(declared.job.stacks.size(), 2u);
  EXPECT_EQ(declared.job.memory_per_worker, uint64_t(40) << 30);
  EXPECT_FALSE(declared.speed_assumed);
  EXPECT_DOUBLE_EQ(declared.job.throughput.at("t4"), 2.5);
  EXPECT_EQ(declared.data_location, "rack-b");

  PodNeeds hami = Needs("{}", R"({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3000",
      "nvidia.com/gpucores": "30"})");
  EXPECT_EQ(hami.count, 1);
  EXPECT_EQ(hami.job.memory_per_worker, uint64_t(3000) << 20);

  PodNeeds volcano = Needs(R"({"scheduling.k8s.io/group-name": "g1",
      "hetsched.io/pod-group-size": "3"})",
                           R"({"nvidia.com/gpu": "8"})");
  EXPECT_EQ(volcano.group, "ml/g1");
  EXPECT_EQ(volcano.group_size, 3);
  PodNeeds cosched = Needs(R"({"hetsched.io/pod-group-size": "2"})", R"({"nvidia.com/gpu": "8"})",
                           R"({"scheduling.x-k8s.io/pod-group": "g2"})");
  EXPECT_EQ(cosched.group, "ml/g2");

  PodNeeds cpu = Needs("{}", R"({"cpu": "2"})");
  EXPECT_EQ(cpu.resource, "");
  EXPECT_TRUE(cpu.job.stacks.empty());
}

TEST(K8sPods, BadAnnotationsAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"hetsched.io/stacks": "cuda>>12"})", "annotation hetsched.io/stacks: 'cuda>>12'"},
      {R"({"hetsched.io/memory-per-device": "big"})", "annotation hetsched.io/memory-per-device"},
      {R"({"hetsched.io/throughput": "b200=4"})", "annotation hetsched.io/throughput: 'b200=4'"},
      {R"({"hetsched.io/pod-group": "g"})", "pod-group-size: missing"},
      {R"({"hetsched.io/pod-group": "g", "hetsched.io/pod-group-size": "0"})",
       "pod-group-size: '0'"},
  };
  for (const auto& [annotations, message] : cases) {
    auto pod =
        ParsePod(std::string(R"({"metadata": {"name": "p", "annotations": )") + annotations + "}}");
    ASSERT_TRUE(pod.ok());
    auto needs = NeedsOf(*pod, model::DeviceCatalog::BuiltIn());
    ASSERT_FALSE(needs.ok()) << annotations;
    EXPECT_THAT(needs.status().message(), HasSubstr(message));
    EXPECT_THAT(needs.status().message(), HasSubstr("pod default/p"));
  }
  auto two = ParsePod(R"({"metadata": {"name": "p"}, "spec": {"containers": [{"resources":
      {"limits": {"nvidia.com/gpu": 1, "amd.com/gpu": 1}}}]}})");
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_THAT(NeedsOf(*two, model::DeviceCatalog::BuiltIn()).status().message(),
              HasSubstr("requests both"));
}

TEST(K8sWatch, Events) {
  auto added = ParseNodeEvent(
      R"({"type":"ADDED","object":{"kind":"Node","metadata":{"name":"n1","resourceVersion":"77"}}})");
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(added->type, "ADDED");
  EXPECT_EQ(added->object->name, "n1");
  EXPECT_EQ(added->resource_version, "77");
  auto gone = ParsePodEvent(
      R"J({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}})J");
  ASSERT_TRUE(gone.ok()) << gone.status().message();
  EXPECT_EQ(gone->error_code, 410);
  EXPECT_FALSE(gone->object.has_value());
  auto bookmark = ParsePodEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"90"}}})");
  ASSERT_TRUE(bookmark.ok());
  EXPECT_EQ(bookmark->resource_version, "90");
  EXPECT_THAT(ParseNodeEvent(R"({"type":"RENAMED","object":{}})").status().message(),
              HasSubstr("expected ADDED"));
  EXPECT_FALSE(ParseNodeEvent(R"({"type":"ADDED"})").ok());
  EXPECT_FALSE(ParseNodeEvent("not json").ok());
}

}  // namespace
}  // namespace hetsched::svc::k8s
