// What Kubernetes says about its nodes and pods (the v1 Node and Pod objects, as kube-scheduler
// embeds them in extender requests and the API server lists and watches them), read into plain
// structs, and turned into what hetsched decides on: a node's accelerators as a catalog device
// type at the node's driver version, a pod's needs as a model::Job. Pure functions: the
// extender (k8s/extender.h) and its node cache call them; tests feed recorded objects
// (tests/data/k8s/). The JSON is read with simdjson (node lists run to many MB): k8s/json.cc.
// DescribeNode is in k8s/node_info.cc, NeedsOf in k8s/pod_needs.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/catalog.h"
#include "model/job.h"
#include "util/status.h"

namespace hetsched::svc::k8s {

// A resource quantity in its base unit: "4" -> 4, "500m" -> 0.5, "16Gi" -> 17179869184,
// "1e3" -> 1000. kInvalidArgument for anything else ("'1.2x' is not a quantity ...").
util::Result<double> ParseQuantity(std::string_view text);

// The label naming a node's rack by default.
inline constexpr std::string_view kDefaultRackLabel = "topology.kubernetes.io/zone";

struct Node {
  std::string name;
  // Only the labels hetsched reads (vendors' device labels, kubernetes.io/arch, hetsched.io/
  // and the rack label): a node carries dozens of others, and kube-scheduler sends thousands
  // of nodes at a time.
  std::map<std::string, std::string> labels;
  std::map<std::string, double> allocatable;  // status.allocatable
  bool unschedulable = false;                 // spec.unschedulable (cordoned)
  bool ready = true;                          // the Ready condition, true when not reported
};

struct Pod {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;
  std::string node_name;  // spec.nodeName: "" until bound
  std::string phase;      // status.phase: Pending, Running, Succeeded, Failed, ""
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  // What the pod asks of a node, as kube-scheduler counts it: the sum over its containers of
  // each resource's request (its limit where only a limit is set, as for extended resources),
  // or the largest init container's when that is more.
  std::map<std::string, double> requests;
  std::string Key() const { return namespace_name + "/" + name; }
  bool Ended() const { return phase == "Succeeded" || phase == "Failed"; }
};

// Whether ReadNode keeps a label: the vendors' (nvidia.com/, amd.com/, beta.amd.com/,
// huawei.com/, node.kubernetes.io/npu*, accelerator), kubernetes.io/arch, hetsched.io/, and
// `rack_label`.
bool LabelRead(std::string_view key, std::string_view rack_label);

// One object from its JSON text. Errors name the field: "Node.status.allocatable.cpu: '1x' is
// not a quantity (...)". `what` prefixes messages ("request body: Pod").
util::Result<Node> ParseNode(std::string_view json, std::string_view what = "Node",
                             std::string_view rack_label = kDefaultRackLabel);
util::Result<Pod> ParsePod(std::string_view json, std::string_view what = "Pod");

// A list response of the API server (NodeList, PodList): the items and the list's
// metadata.resourceVersion, from which a watch continues.
template <typename T>
struct List {
  std::vector<T> items;
  std::string resource_version;
};
util::Result<List<Node>> ParseNodeList(std::string_view json,
                                       std::string_view rack_label = kDefaultRackLabel);
util::Result<List<Pod>> ParsePodList(std::string_view json);

// One line of a watch stream: {"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": ...}.
// For ERROR, `error_code` is the Status object's code (410: list again).
template <typename T>
struct WatchEvent {
  std::string type;
  std::optional<T> object;  // ADDED, MODIFIED, DELETED
  std::string resource_version;
  int error_code = 0;
  std::string error_message;
};
util::Result<WatchEvent<Node>> ParseNodeEvent(std::string_view line,
                                              std::string_view rack_label = kDefaultRackLabel);
util::Result<WatchEvent<Pod>> ParsePodEvent(std::string_view line);

// How a cluster's labels and resources map to the catalog (ServeConfig's `kubernetes:` block).
struct Mapping {
  // A device's product label value (nvidia.com/gpu.product, amd.com/gpu.product-name,
  // node.kubernetes.io/npu.chip.name, ...) to a catalog type, before the built-in rules
  // (docs/kubernetes.md lists them).
  std::map<std::string, std::string> device_types;
  // The catalog type of nodes without accelerators (one device per node, for scoring CPU pods).
  std::string cpu_type = "xeon-8380";
  // The label naming a node's rack (locality; gangs prefer one).
  std::string rack_label = std::string(kDefaultRackLabel);
  // With tenants: where a pod's tenant comes from: its namespace, or the value of this label
  // when set (kubernetes.tenant_from: label:KEY).
  std::string tenant_label;
  // A namespace (or label value) to the tenant its pods belong to (kubernetes.tenant_map); one
  // not listed names the tenant of its own name, as slurm.accounts maps Slurm accounts.
  std::map<std::string, std::string> tenant_map;
};

// The extended resources that name accelerators, and the software stack a pod that requests
// one runs (nvidia.com/gpu -> cuda, amd.com/gpu -> rocm, huawei.com/Ascend910 -> cann, ...).
// HAMi's shares (nvidia.com/gpumem, nvidia.com/gpucores) are not devices: they size them.
std::optional<std::string> StackOfResource(std::string_view resource);

// The stack a kubernetes.io/arch value names: amd64 -> x86_64, arm64 -> aarch64, others as
// they are.
std::string StackOfArch(const std::string& arch);

// A node as hetsched sees it.
struct NodeInfo {
  std::string name;
  std::string resource;      // its accelerator resource ("nvidia.com/gpu"), "" for a CPU node
  int32_t accelerators = 0;  // allocatable count of it
  // Its accelerators' catalog type with the stacks its driver supports and the memory its
  // labels report (the catalog's figures where they say nothing); a CPU node: cpu_type.
  model::DeviceType device;
  model::DeviceTypeId type;   // the catalog id of `device`; invalid when `problem` is set
  bool driver_known = false;  // the stack version comes from the node's driver labels
  std::string arch;           // kubernetes.io/arch: amd64, arm64, ...
  std::string rack;           // the rack label's value, "" when absent
  bool schedulable = true;    // ready and not cordoned
  // Why hetsched cannot describe the node ("GPU 'NVIDIA-B200' maps to no catalog type: ..."):
  // accelerator pods are kept off it, with this reason.
  std::string problem;
  // The vendor's product value when it is the problem: it maps to no catalog type, which an
  // entry of Mapping::device_types would fix.
  std::string unmapped_product;
};
NodeInfo DescribeNode(const Node& node, const Mapping& mapping,
                      const model::DeviceCatalog& catalog);

// The catalog type for a product label value: `mapping`, then the built-in rules, then the
// catalog's own names and aliases.
std::optional<std::string> CatalogTypeForProduct(std::string_view product, const Mapping& mapping,
                                                 const model::DeviceCatalog& catalog);

// The CUDA version an NVIDIA driver supports ("535.104.05" -> "12.2"), from NVIDIA's table of
// minimum driver versions (docs/kubernetes.md cites it); nullopt below 450 or unparsable.
std::optional<std::string> CudaVersionOfDriver(std::string_view driver_version);

// What a pod needs, from its resources and hetsched.io/ annotations (docs/kubernetes.md).
struct PodNeeds {
  std::string key;  // namespace/name
  std::string uid;
  std::string resource;  // the accelerator resource it requests, "" for none
  int32_t count = 0;     // how many
  // stacks, memory_per_worker, job_type / throughput, gang_size (= count, at least 1).
  model::Job job;
  bool speed_assumed = false;  // neither job-type nor throughput: equal speed everywhere
  std::string group;           // "namespace/group" of its pod group, "" for none
  int32_t group_size = 0;      // members the group needs at once
  std::string data_location;   // a node or rack name (hetsched.io/data-location)
};
// kInvalidArgument naming the annotation for a value that does not read, or for a pod that
// asks for two kinds of accelerator.
util::Result<PodNeeds> NeedsOf(const Pod& pod, const model::DeviceCatalog& catalog);

}  // namespace hetsched::svc::k8s
