// The Kubernetes extender's filter and prioritize verbs over a 5,000-node cluster, timed as
// kube-scheduler calls them: the whole request body parsed, the decision, the answer written.
// The target: under 50 ms in the NodeNames form (node cache on) and under 200 ms in the
// full Nodes form (about 17 MB of JSON), p99. The baselines, measured in the same run, are the
// floor of any answer in the Nodes form: simdjson parsing the body into a DOM and reading every
// node's name, and nlohmann::json parsing it (why simdjson reads the extender's requests).
//
// Each repetition is one call (Iterations(1)), so the "p99" statistic is over single calls; it
// is the nearest-rank percentile of the repetitions, so with 100 of them it is the 2nd largest.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "k8s/extender.h"
#include "k8s/objects.h"

namespace {

using Json = nlohmann::json;
using hetsched::svc::k8s::Extender;
using hetsched::svc::k8s::ExtenderOptions;
using hetsched::svc::k8s::ExtenderReply;

constexpr int kNodes = 5000;
constexpr int kBoundPods = 10000;
// Images each node reports in status.images (the kubelet lists up to 50; busy nodes list
// 20-40, about 185 bytes each). One, with the labels and conditions below, makes the Nodes-form
// body of 5,000 nodes about 17 MB, the size the target names.
constexpr size_t kImagesPerNode = 1;
constexpr int kRepetitions = 100;

// One accelerator model as its vendor's feature discovery labels it.
struct Model {
  const char* prefix;    // node name prefix
  const char* resource;  // "" for a CPU node
  int count;
  const char* arch;
  std::vector<std::pair<const char*, const char*>> labels;   // besides the driver's
  std::vector<std::pair<const char*, const char*>> drivers;  // NVIDIA: driver, CUDA runtime
};

const std::vector<Model>& Models() {
  static const std::vector<Model> models = {
      {"a100",
       "nvidia.com/gpu",
       8,
       "amd64",
       {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
        {"nvidia.com/gpu.memory", "81920"},
        {"nvidia.com/gpu.family", "ampere"},
        {"nvidia.com/gpu.compute.major", "8"},
        {"nvidia.com/gpu.compute.minor", "0"},
        {"nvidia.com/gpu.machine", "DGX-A100"},
        {"nvidia.com/mig.capable", "true"}},
       // 470 supports CUDA 11.4 only: those nodes fail cuda>=12.2.
       {{"470.82.01", ""}, {"535.104.05", "12.2"}, {"550.54.15", "12.4"}}},
      {"h100",
       "nvidia.com/gpu",
       8,
       "amd64",
       {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
        {"nvidia.com/gpu.memory", "81559"},
        {"nvidia.com/gpu.family", "hopper"},
        {"nvidia.com/gpu.compute.major", "9"},
        {"nvidia.com/gpu.compute.minor", "0"},
        {"nvidia.com/gpu.machine", "PowerEdge-XE9680"},
        {"nvidia.com/mig.capable", "true"}},
       {{"550.90.07", "12.4"}, {"560.35.03", "12.6"}}},
      {"t4",
       "nvidia.com/gpu",
       4,
       "amd64",
       {{"nvidia.com/gpu.product", "Tesla-T4"},
        {"nvidia.com/gpu.memory", "15360"},
        {"nvidia.com/gpu.family", "turing"},
        {"nvidia.com/gpu.compute.major", "7"},
        {"nvidia.com/gpu.compute.minor", "5"},
        {"nvidia.com/gpu.machine", "ProLiant-DL380-Gen10"},
        {"nvidia.com/mig.capable", "false"}},
       {{"535.183.01", "12.2"}}},
      {"mi250x",
       "amd.com/gpu",
       8,
       "amd64",
       {{"amd.com/gpu.product-name", "AMD_Instinct_MI250X_MI250"},
        {"amd.com/gpu.family", "AI"},
        {"amd.com/gpu.device-id", "740c"},
        {"amd.com/gpu.vram", "64G"},
        {"amd.com/gpu.simd-count", "220"},
        {"amd.com/gpu.driver-version", "6.7.0"},
        {"hetsched.io/stack.rocm", "6.1"}},
       {}},
      {"ascend",
       "huawei.com/Ascend910",
       8,
       "arm64",
       {{"accelerator", "huawei-Ascend910"},
        {"accelerator-type", "module-910b-8"},
        {"node.kubernetes.io/npu.chip.name", "910B3"},
        {"servertype", "Ascend910B-20"},
        {"hetsched.io/stack.cann", "8.0"}},
       {}},
      {"cpu", "", 0, "amd64", {}, {}},
  };
  return models;
}

// Out of 100 nodes: 30 A100, 20 H100, 10 T4, 10 MI250X, 10 Ascend 910B, 20 CPU.
const Model& ModelOf(int i) {
  const int k = i % 100;
  const int index = k < 30 ? 0 : k < 50 ? 1 : k < 60 ? 2 : k < 70 ? 3 : k < 80 ? 4 : 5;
  return Models()[index];
}

std::string Hex(std::mt19937_64& rng, int digits) {
  std::string s;
  while (static_cast<int>(s.size()) < digits) s += fmt::format("{:016x}", rng());
  s.resize(digits);
  return s;
}

std::string Uuid(std::mt19937_64& rng) {
  const std::string h = Hex(rng, 32);
  return fmt::format("{}-{}-{}-{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(12, 4),
                     h.substr(16, 4), h.substr(20));
}

// Images a node might hold: the cluster's own, then each vendor's stack and workloads.
Json Images(const Model& model, size_t node, std::mt19937_64& rng) {
  static const std::vector<std::pair<std::string, int64_t>> kCommon = {
      {"registry.k8s.io/kube-proxy:v1.31.2", 30230000},
      {"docker.io/calico/node:v3.28.1", 115320000},
      {"docker.io/calico/cni:v3.28.1", 94410000},
      {"registry.k8s.io/pause:3.10", 320000},
      {"quay.io/prometheus/node-exporter:v1.8.2", 11590000},
      {"registry.k8s.io/nfd/node-feature-discovery:v0.16.4", 73200000},
      {"docker.io/library/python:3.11-slim", 52100000},
      {"docker.io/grafana/promtail:3.0.0", 85700000},
  };
  static const std::vector<std::pair<std::string, int64_t>> kNvidia = {
      {"nvcr.io/nvidia/k8s-device-plugin:v0.16.2", 140600000},
      {"nvcr.io/nvidia/k8s/dcgm-exporter:3.3.7-3.5.0-ubuntu22.04", 1065300000},
      {"nvcr.io/nvidia/pytorch:24.05-py3", 9875000000},
      {"nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", 88400000},
  };
  static const std::vector<std::pair<std::string, int64_t>> kAmd = {
      {"docker.io/rocm/k8s-device-plugin:1.25.2.8", 52000000},
      {"docker.io/rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.4", 23700000000},
  };
  static const std::vector<std::pair<std::string, int64_t>> kAscend = {
      {"swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v6.0.0", 167000000},
      {"swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.RC2-A2-2.1.0", 9320000000},
  };
  static const std::vector<std::pair<std::string, int64_t>> kNone;
  const std::string resource = model.resource;
  const auto& vendor = resource == "nvidia.com/gpu" ? kNvidia
                       : resource == "amd.com/gpu"  ? kAmd
                       : resource.empty()           ? kNone
                                                    : kAscend;
  Json images = Json::array();
  for (size_t k = 0; k < kImagesPerNode; ++k) {
    // The vendor's images first, then the common ones from an offset that varies by node.
    const auto& [name, size] = k < vendor.size() ? vendor[k] : kCommon[(node + k) % kCommon.size()];
    const std::string repo = name.substr(0, name.rfind(':'));
    images.push_back({{"names", {repo + "@sha256:" + Hex(rng, 64), name}}, {"sizeBytes", size}});
  }
  return images;
}

// A v1.Node as the API server serializes it (compare tests/data/k8s/nodelist.json), with the
// labels of node-feature-discovery and the vendors' device plugins a real node carries.
Json NodeJson(int i, std::mt19937_64& rng) {
  const Model& model = ModelOf(i);
  const std::string name = fmt::format("{}-{:04d}", model.prefix, i);
  const std::string zone = fmt::format("rack-{:02d}", i % 50);
  Json labels = {
      {"kubernetes.io/arch", model.arch},
      {"kubernetes.io/hostname", name},
      {"kubernetes.io/os", "linux"},
      {"beta.kubernetes.io/arch", model.arch},
      {"beta.kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", "bare-metal"},
      {"node-role.kubernetes.io/worker", ""},
      {"topology.kubernetes.io/region", "eu-west"},
      {"topology.kubernetes.io/zone", zone},
      {"feature.node.kubernetes.io/cpu-model.vendor_id",
       model.arch == std::string("arm64") ? "HiSilicon" : "AMD"},
      {"feature.node.kubernetes.io/kernel-version.full", "6.1.0-27-amd64"},
  };
  for (const auto& [k, v] : model.labels) labels[k] = v;
  if (std::string(model.resource) == "nvidia.com/gpu") {
    const auto& [driver, cuda] = model.drivers[(i / 100) % model.drivers.size()];
    const std::string d = driver;
    const size_t a = d.find('.'), b = d.rfind('.');
    labels["feature.node.kubernetes.io/pci-10de.present"] = "true";
    labels["nvidia.com/gpu.present"] = "true";
    labels["nvidia.com/gpu.count"] = std::to_string(model.count);
    labels["nvidia.com/mig.strategy"] = "single";
    labels["nvidia.com/cuda.driver-version.full"] = d;
    labels["nvidia.com/cuda.driver-version.major"] = d.substr(0, a);
    labels["nvidia.com/cuda.driver-version.minor"] = d.substr(a + 1, b - a - 1);
    labels["nvidia.com/cuda.driver-version.revision"] = d.substr(b + 1);
    if (*cuda != '\0') {
      const std::string c = cuda;
      labels["nvidia.com/cuda.runtime-version.full"] = c;
      labels["nvidia.com/cuda.runtime-version.major"] = c.substr(0, c.find('.'));
      labels["nvidia.com/cuda.runtime-version.minor"] = c.substr(c.find('.') + 1);
    }
  }
  const std::string ip = fmt::format("10.{}.{}.{}", 20 + i / 65536, (i / 256) % 256, i % 256);
  const std::string cidr = fmt::format("10.{}.{}.0/24", 100 + i / 256, i % 256);
  Json capacity = {
      {"cpu", "96"},          {"memory", "1056561160Ki"}, {"ephemeral-storage", "1843085340Ki"},
      {"hugepages-1Gi", "0"}, {"hugepages-2Mi", "0"},     {"pods", "110"}};
  Json allocatable = capacity;
  allocatable["cpu"] = "95500m";
  allocatable["memory"] = "1055463432Ki";
  if (*model.resource != '\0') {
    capacity[model.resource] = std::to_string(model.count);
    allocatable[model.resource] = std::to_string(model.count);
  }
  auto condition = [](const char* type, const char* status, const char* reason,
                      const char* message) {
    return Json{{"type", type},
                {"status", status},
                {"lastHeartbeatTime", "2026-12-03T09:59:41Z"},
                {"lastTransitionTime", "2026-11-02T08:15:40Z"},
                {"reason", reason},
                {"message", message}};
  };
  // A few nodes are down or cordoned, as in any large cluster.
  const bool ready = i % 251 != 7;
  Json node = {
      {"kind", "Node"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"uid", Uuid(rng)},
        {"resourceVersion", std::to_string(48213377 + i)},
        {"creationTimestamp", "2026-11-02T08:15:12Z"},
        {"labels", labels},
        {"annotations",
         {{"node.alpha.kubernetes.io/ttl", "0"},
          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"},
          {"csi.volume.kubernetes.io/nodeid", fmt::format("{{\"csi.tigera.io\":\"{}\"}}", name)},
          {"projectcalico.org/IPv4Address", ip + "/16"},
          {"projectcalico.org/IPv4VXLANTunnelAddr",
           fmt::format("10.{}.{}.0", 100 + i / 256, i % 256)}}}}},

      {"spec", {{"podCIDR", cidr}, {"podCIDRs", {cidr}}}},
      {"status",
       {{"capacity", capacity},
        {"allocatable", allocatable},
        {"conditions",
         {condition("NetworkUnavailable", "False", "CalicoIsUp", "Calico is running on this node"),
          condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available"),
          condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure"),
          condition("PIDPressure", "False", "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available"),
          ready ? condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
                : condition("Ready", "Unknown", "NodeStatusUnknown",
                            "Kubelet stopped posting node status.")}},
        {"addresses",
         {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"machineID", Hex(rng, 32)},
          {"systemUUID", Uuid(rng)},
          {"bootID", Uuid(rng)},
          {"kernelVersion", "6.1.0-27-amd64"},
          {"osImage", "Debian GNU/Linux 12 (bookworm)"},
          {"containerRuntimeVersion", "containerd://1.7.22"},
          {"kubeletVersion", "v1.31.2"},
          {"kubeProxyVersion", "v1.31.2"},
          {"operatingSystem", "linux"},
          {"architecture", model.arch}}},
        {"images", Images(model, i, rng)}}}};
  if (i % 97 == 3) node["spec"]["unschedulable"] = true;
  return node;
}

Json PodJson(bool with_throughput) {
  Json annotations = {{"hetsched.io/stacks", "cuda>=12.2"}};
  if (with_throughput) annotations["hetsched.io/throughput"] = "a100-80g=12.5,h100-80g=31,t4=2.5";
  return {{"metadata",
           {{"name", "train-0"},
            {"namespace", "ml"},
            {"uid", "0b7f3c52-5d0e-4d7a-9a8e-3f1c2b6d9e41"},
            {"creationTimestamp", "2026-12-03T10:00:00Z"},
            {"annotations", annotations}}},
          {"spec",
           {{"schedulerName", "default-scheduler"},
            {"containers",
             {{{"name", "trainer"},
               {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
               {"resources",
                {{"limits", {{"nvidia.com/gpu", "8"}}},
                 {"requests", {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

// The bound pods of the node cache: one or two devices each on accelerator nodes (while they
// fit), CPU only elsewhere; about one node in seven stays empty.
std::vector<hetsched::svc::k8s::Pod> BoundPods() {
  std::mt19937_64 rng(7);
  std::vector<int> used(kNodes, 0);
  std::vector<hetsched::svc::k8s::Pod> pods;
  pods.reserve(kBoundPods);
  for (int k = 0; k < kBoundPods; ++k) {
    const int n = static_cast<int>(rng() % kNodes);
    const Model& model = ModelOf(n);
    hetsched::svc::k8s::Pod p;
    p.name = fmt::format("worker-{}", k);
    p.namespace_name = "batch";
    p.uid = fmt::format("pod-uid-{}", k);
    p.node_name = fmt::format("{}-{:04d}", model.prefix, n);
    p.phase = "Running";
    p.requests["cpu"] = 4;
    const int want = 1 + static_cast<int>(rng() % 2);
    if (*model.resource != '\0' && used[n] + want <= model.count) {
      p.requests[model.resource] = want;
      used[n] += want;
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

// The cluster, the request bodies and the extenders, built once.
struct Fixture {
  std::string filter_nodes, prioritize_nodes;  // Nodes form (NodeList embedded)
  std::string filter_names, prioritize_names;  // NodeNames form
  std::unique_ptr<Extender> cached, uncached;
};

const Fixture& Get() {
  static const std::unique_ptr<Fixture> fixture = [] {
    auto f = std::make_unique<Fixture>();
    std::mt19937_64 rng(42);
    Json items = Json::array();
    Json names = Json::array();
    for (int i = 0; i < kNodes; ++i) {
      items.push_back(NodeJson(i, rng));
      names.push_back(items.back()["metadata"]["name"]);
    }
    const Json list = {{"kind", "NodeList"},
                       {"apiVersion", "v1"},
                       {"metadata", {{"resourceVersion", "48219999"}}},
                       {"items", std::move(items)}};
    for (const bool prioritize : {false, true}) {
      const Json pod = PodJson(prioritize);
      (prioritize ? f->prioritize_nodes : f->filter_nodes) =
          Json{{"Pod", pod}, {"Nodes", list}, {"NodeNames", nullptr}}.dump();
      (prioritize ? f->prioritize_names : f->filter_names) =
          Json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
    }
    for (const bool cache : {true, false}) {
      ExtenderOptions o;
      o.node_cache = cache;
      (cache ? f->cached : f->uncached) = std::move(Extender::Create(std::move(o)).value());
    }
    auto parsed = hetsched::svc::k8s::ParseNodeList(list.dump());
    if (!parsed.ok()) {
      std::fprintf(stderr, "generated NodeList: %s\n", parsed.status().message().c_str());
      std::abort();
    }
    f->cached->ReplaceNodes(parsed->items);
    f->cached->ReplacePods(BoundPods());
    f->cached->SetSynced(true);
    // One untimed call of each kind: this thread's simdjson parser grows its buffers to the
    // body's size once, as on a server that has answered before.
    f->uncached->Filter(f->filter_nodes);
    f->cached->Filter(f->filter_names);
    std::fprintf(stderr,
                 "k8s extender: %d nodes, %d bound pods, Nodes-form body %.1f MB (%.0f bytes a "
                 "node), NodeNames-form body %.2f MB, simdjson %s\n",
                 kNodes, kBoundPods, f->filter_nodes.size() / 1e6,
                 static_cast<double>(f->filter_nodes.size()) / kNodes, f->filter_names.size() / 1e6,
                 simdjson::get_active_implementation()->name().c_str());
    return f;
  }();
  return *fixture;
}

// Nearest-rank percentile of the repetitions (each one call).
double P99(const std::vector<double>& v) {
  if (v.empty()) return 0;
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(s.size())));
  return s[std::max<size_t>(rank, 1) - 1];
}

// Nodes the answer lets through (filter), or nodes scored above 0 and nodes scored at all
// (prioritize). Read after the timed calls.
int Passed(const ExtenderReply& reply) {
  const Json r = Json::parse(reply.body);
  if (r.is_array()) {
    return static_cast<int>(
        std::count_if(r.begin(), r.end(), [](const Json& e) { return e["Score"] > 0; }));
  }
  if (!r["NodeNames"].is_null()) return static_cast<int>(r["NodeNames"].size());
  return static_cast<int>(r["Nodes"]["items"].size());
}

template <bool kPrioritize, bool kNamesForm>
void BM_Verb(benchmark::State& state) {
  const Fixture& f = Get();
  Extender& e = kNamesForm ? *f.cached : *f.uncached;
  const std::string& body = kPrioritize ? (kNamesForm ? f.prioritize_names : f.prioritize_nodes)
                                        : (kNamesForm ? f.filter_names : f.filter_nodes);
  ExtenderReply reply;
  for (auto _ : state) {
    reply = kPrioritize ? e.Prioritize(body) : e.Filter(body);
    if (reply.status != 200) {
      state.SkipWithError(reply.body.c_str());
      return;
    }
  }
  const int passed = Passed(reply);
  if (passed == 0) {
    state.SkipWithError(("no node passed: " + reply.body.substr(0, 300)).c_str());
    return;
  }
  state.counters["nodes"] = kNodes;
  state.counters[kPrioritize ? "scored_above_0" : "passed"] = passed;
  state.counters["body_MB"] = static_cast<double>(body.size()) / 1e6;
}

void BM_Baseline_ParseNodesBody(benchmark::State& state) {
  const Fixture& f = Get();
  static simdjson::dom::parser parser;  // reused, as the extender's per-thread one is
  size_t names = 0;
  for (auto _ : state) {
    simdjson::dom::element doc;
    if (parser.parse(f.filter_nodes).get(doc)) {
      state.SkipWithError("simdjson: not JSON");
      return;
    }
    names = 0;
    size_t chars = 0;
    simdjson::dom::array items;
    if (doc["Nodes"]["items"].get_array().get(items)) break;
    for (simdjson::dom::element item : items) {
      std::string_view name;
      if (item["metadata"]["name"].get(name)) break;
      chars += name.size();
      ++names;
    }
    benchmark::DoNotOptimize(chars);
  }
  if (names != kNodes) state.SkipWithError("simdjson: not every node's name was read");
  state.counters["nodes"] = static_cast<double>(names);
  state.counters["body_MB"] = static_cast<double>(f.filter_nodes.size()) / 1e6;
}

void BM_Baseline_NlohmannParse(benchmark::State& state) {
  const Fixture& f = Get();
  size_t names = 0;
  for (auto _ : state) {
    const Json doc = Json::parse(f.filter_nodes);
    names = 0;
    size_t chars = 0;
    for (const Json& item : doc["Nodes"]["items"]) {
      chars += item["metadata"]["name"].get_ref<const std::string&>().size();
      ++names;
    }
    benchmark::DoNotOptimize(chars);
  }
  if (names != kNodes) state.SkipWithError("nlohmann: not every node's name was read");
  state.counters["nodes"] = static_cast<double>(names);
  state.counters["body_MB"] = static_cast<double>(f.filter_nodes.size()) / 1e6;
}

// One call a repetition, so the repetitions' spread is the calls' spread.
void OneCallEach(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(kRepetitions)
      ->ComputeStatistics("p99", P99);
}

BENCHMARK_TEMPLATE(BM_Verb, false, true)->Name("BM_Filter_NodeNames_5000")->Apply(OneCallEach);
BENCHMARK_TEMPLATE(BM_Verb, true, true)->Name("BM_Prioritize_NodeNames_5000")->Apply(OneCallEach);
BENCHMARK_TEMPLATE(BM_Verb, false, false)->Name("BM_Filter_Nodes_5000")->Apply(OneCallEach);
BENCHMARK_TEMPLATE(BM_Verb, true, false)->Name("BM_Prioritize_Nodes_5000")->Apply(OneCallEach);
BENCHMARK(BM_Baseline_ParseNodesBody)->Apply(OneCallEach);
BENCHMARK(BM_Baseline_NlohmannParse)->Apply(OneCallEach);

}  // namespace

BENCHMARK_MAIN();
