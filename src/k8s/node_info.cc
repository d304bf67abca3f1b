// A node as hetsched sees it (DescribeNode): its accelerators' catalog type from the vendors'
// labels, at the stacks its driver supports.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "k8s/objects.h"
#include "k8s/objects_internal.h"

namespace hetsched::svc::k8s {
namespace {

// The built-in product rules: every token listed must be a token of the product name (split
// at '-', '_' and spaces, case-insensitive); a token ending in '*' may be the start of one
// (Ascend's chip names carry a bin number: 910B3). First match wins, so more specific first.
struct ProductRule {
  std::vector<std::string_view> tokens;
  std::string_view type;
};
const std::vector<ProductRule>& ProductRules() {
  static const std::vector<ProductRule> rules = {
      {{"h100"}, "h100-80g"},
      {{"a100", "80gb"}, "a100-80g"},
      {{"a100"}, "a100-40g"},
      {{"v100"}, "v100-32g"},
      {{"p100"}, "p100"},
      {{"k80"}, "k80"},
      {{"t4"}, "t4"},
      {{"l40s"}, "l40s"},
      {{"4090"}, "rtx-4090"},
      {{"mi300x"}, "mi300x"},
      {{"mi250x"}, "mi250x"},
      {{"mi250"}, "mi250x"},
      {{"mi100"}, "mi100"},
      {{"910b*"}, "ascend-910b"},
      {{"ascend910b*"}, "ascend-910b"},
      {{"310p*"}, "ascend-310p"},
      {{"ascend310p*"}, "ascend-310p"},
  };
  return rules;
}

bool TokenMatches(std::string_view rule, const std::string& token) {
  if (!rule.empty() && rule.back() == '*') {
    rule.remove_suffix(1);
    return token.compare(0, rule.size(), rule) == 0;
  }
  return token == rule;
}

std::vector<std::string> Tokens(std::string_view product) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : product) {
    if (c == '-' || c == '_' || c == ' ') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// AMD's PCI device ids (amd.com/gpu.device-id) of the catalog's Instinct parts.
std::optional<std::string_view> AmdTypeOfDeviceId(std::string_view id) {
  const std::string lower = Lower(id);
  if (lower == "738c") return "mi100";
  if (lower == "740c") return "mi250x";
  if (lower == "74a1") return "mi300x";
  return std::nullopt;
}

const std::string* Label(const Node& node, const std::string& key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() || it->second.empty() ? nullptr : &it->second;
}

// The value of a vendor label, in its plain form or, on a node with several distinct values,
// the "<key>.<value>=<count>" form (AMD's labeller; its legacy beta.amd.com/ prefix always uses
// it). Several distinct values: `mixed` is set.
std::optional<std::string> VendorLabel(const Node& node, const std::vector<std::string>& keys,
                                       bool* mixed) {
  for (const std::string& key : keys) {
    if (const std::string* v = Label(node, key)) return *v;
  }
  std::optional<std::string> found;
  for (const std::string& key : keys) {
    const std::string prefix = key + ".";
    for (auto it = node.labels.lower_bound(prefix);
         it != node.labels.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      const std::string value = it->first.substr(prefix.size());
      if (found && *found != value) *mixed = true;
      if (!found) found = value;
    }
  }
  return found;
}

}  // namespace

std::optional<std::string> CatalogTypeForProduct(std::string_view product, const Mapping& mapping,
                                                 const model::DeviceCatalog& catalog) {
  if (auto it = mapping.device_types.find(std::string(product)); it != mapping.device_types.end()) {
    return it->second;
  }
  const std::vector<std::string> tokens = Tokens(product);
  for (const ProductRule& rule : ProductRules()) {
    const bool all = std::all_of(rule.tokens.begin(), rule.tokens.end(), [&](std::string_view t) {
      return std::any_of(tokens.begin(), tokens.end(),
                         [&](const std::string& have) { return TokenMatches(t, have); });
    });
    if (all) return std::string(rule.type);
  }
  if (const model::DeviceType* t = catalog.Find(Lower(product))) return t->name;
  return std::nullopt;
}

std::optional<std::string> CudaVersionOfDriver(std::string_view driver_version) {
  if (driver_version.empty() || !std::isdigit(static_cast<unsigned char>(driver_version[0]))) {
    return std::nullopt;
  }
  for (char ch : driver_version) {
    if (!std::isdigit(static_cast<unsigned char>(ch)) && ch != '.') return std::nullopt;
  }
  // NVIDIA's CUDA Toolkit release notes, table 3: the minimum Linux driver of each toolkit's
  // first release (GA).
  static const std::pair<const char*, const char*> kTable[] = {
      {"570.26", "12.8"},    {"560.28.03", "12.6"}, {"555.42.02", "12.5"}, {"550.54.14", "12.4"},
      {"545.23.06", "12.3"}, {"535.54.03", "12.2"}, {"530.30.02", "12.1"}, {"525.60.13", "12.0"},
      {"520.61.05", "11.8"}, {"515.43.04", "11.7"}, {"510.39.01", "11.6"}, {"495.29.05", "11.5"},
      {"470.42.01", "11.4"}, {"465.19.01", "11.3"}, {"460.27.03", "11.2"}, {"455.23", "11.1"},
      {"450.51.05", "11.0"},
  };
  for (const auto& [driver, cuda] : kTable) {
    if (model::CompareVersions(driver_version, driver) >= 0) return std::string(cuda);
  }
  return std::nullopt;
}

namespace {

// The node's one kind of accelerator and its count; false (with `info->problem`) for two kinds.
bool ReadAccelerators(const Node& node, NodeInfo* info) {
  for (const auto& [resource, count] : node.allocatable) {
    if (!StackOfResource(resource) || count < 1) continue;
    if (!info->resource.empty()) {
      info->problem =
          fmt::format("offers both {} and {}; hetsched models one kind of accelerator per node",
                      info->resource, resource);
      return false;
    }
    info->resource = resource;
    info->accelerators = static_cast<int32_t>(std::min(count, 1e6));
  }
  return true;
}

// What names the model of the node's devices.
struct ModelLabel {
  std::optional<std::string> type_name;  // the catalog type, when the label says it outright
  std::string product;                   // what the label says, for messages and the mapping
};

// The model of an accelerator node's devices from its vendor's labels; nullopt (with
// `info->problem`) when the labels say several models or none.
std::optional<ModelLabel> VendorModel(const Node& node, NodeInfo* info) {
  ModelLabel found;
  bool mixed = false;
  std::optional<std::string> label;
  if (info->resource == "nvidia.com/gpu") {
    label = VendorLabel(node, {"nvidia.com/gpu.product"}, &mixed);
  } else if (info->resource == "amd.com/gpu") {
    label =
        VendorLabel(node, {"amd.com/gpu.product-name", "beta.amd.com/gpu.product-name"}, &mixed);
    if (!label) {
      if (auto id =
              VendorLabel(node, {"amd.com/gpu.device-id", "beta.amd.com/gpu.device-id"}, &mixed)) {
        if (auto t = AmdTypeOfDeviceId(*id)) found.type_name = std::string(*t);
        label = "device-id " + *id;
      }
    }
  } else {
    label = VendorLabel(node, {"node.kubernetes.io/npu.chip.name"}, &mixed);
    if (!label && info->resource != "huawei.com/npu") {
      label = info->resource.substr(std::string_view("huawei.com/").size());
    }
  }
  if (mixed) {
    info->problem = fmt::format(
        "it has {} of several models; hetsched needs one model per node to know which one a "
        "pod gets (label the node hetsched.io/device-type=TYPE)",
        info->resource);
    return std::nullopt;
  }
  if (!label) {
    info->problem = fmt::format(
        "it has {} but no label says its model (run the vendor's feature discovery, or label "
        "the node hetsched.io/device-type=TYPE)",
        info->resource);
    return std::nullopt;
  }
  found.product = *label;
  return found;
}

// The CUDA version an NVIDIA node's driver supports: GPU feature discovery's runtime-version
// labels, else the driver version through NVIDIA's table.
std::optional<std::string> CudaOfNode(const Node& node) {
  if (const std::string* full = Label(node, "nvidia.com/cuda.runtime-version.full")) return *full;
  if (const std::string* major = Label(node, "nvidia.com/cuda.runtime-version.major")) {
    const std::string* minor = Label(node, "nvidia.com/cuda.runtime-version.minor");
    return *major + "." + (minor ? *minor : "0");
  }
  if (const std::string* old_major = Label(node, "nvidia.com/cuda.runtime.major")) {
    const std::string* minor = Label(node, "nvidia.com/cuda.runtime.minor");
    return *old_major + "." + (minor ? *minor : "0");
  }
  if (const std::string* driver = Label(node, "nvidia.com/cuda.driver-version.full")) {
    return CudaVersionOfDriver(*driver);
  }
  if (const std::string* d_major = Label(node, "nvidia.com/cuda.driver.major")) {
    const std::string* minor = Label(node, "nvidia.com/cuda.driver.minor");
    return CudaVersionOfDriver(*d_major + "." + (minor ? *minor : "0"));
  }
  return std::nullopt;
}

// An NVIDIA node's labels on its devices: their memory, the CUDA its driver supports.
void ApplyNvidiaLabels(const Node& node, NodeInfo* info) {
  if (const std::string* mib = Label(node, "nvidia.com/gpu.memory")) {
    if (auto m = ParseInt(*mib); m && *m > 0) info->device.memory_bytes = uint64_t(*m) << 20;
  }
  if (auto cuda = CudaOfNode(node)) {
    info->driver_known = true;
    for (model::SoftwareStack& s : info->device.stacks) {
      // The device's own limit (its last supported CUDA) still holds under a newer driver.
      if (s.name == "cuda" && model::CompareVersions(*cuda, s.version) < 0) s.version = *cuda;
    }
  }
}

// A node may state its stacks outright, one label each (hetsched.io/stack.rocm=6.1): AMD's
// and Ascend's labels give kernel-driver versions, not the ROCm or CANN release a pod's image
// needs. Label values cannot hold spaces or commas, hence a label per stack. False (with
// `info->problem`) for a label that does not read.
bool ApplyStatedStacks(const Node& node, NodeInfo* info) {
  const std::string prefix = "hetsched.io/stack.";
  std::vector<model::SoftwareStack> stated;
  for (auto it = node.labels.lower_bound(prefix);
       it != node.labels.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    auto stack = model::ParseSoftwareStack(it->first.substr(prefix.size()) + " " + it->second);
    if (!stack.ok() || it->first.size() == prefix.size()) {
      info->problem = fmt::format(
          "its label {}={} is not a stack and version (expected e.g. "
          "hetsched.io/stack.rocm=6.1)",
          it->first, it->second);
      return false;
    }
    stated.push_back(*stack);
  }
  if (!stated.empty()) {
    info->device.stacks = std::move(stated);
    info->driver_known = true;
  }
  return true;
}

}  // namespace

NodeInfo DescribeNode(const Node& node, const Mapping& mapping,
                      const model::DeviceCatalog& catalog) {
  NodeInfo info;
  info.name = node.name;
  info.schedulable = node.ready && !node.unschedulable;
  if (const std::string* arch = Label(node, "kubernetes.io/arch")) info.arch = *arch;
  if (const std::string* rack = Label(node, mapping.rack_label)) info.rack = *rack;
  if (!ReadAccelerators(node, &info)) return info;

  ModelLabel named;
  if (const std::string* explicit_type = Label(node, "hetsched.io/device-type")) {
    named = {*explicit_type, *explicit_type};
  } else if (info.resource.empty()) {
    named = {mapping.cpu_type, mapping.cpu_type};
  } else {
    auto vendor = VendorModel(node, &info);
    if (!vendor) return info;
    named = std::move(*vendor);
    if (!named.type_name) named.type_name = CatalogTypeForProduct(named.product, mapping, catalog);
  }
  std::optional<model::DeviceTypeId> id;
  if (named.type_name) id = catalog.FindId(*named.type_name);
  if (!id) {
    info.problem = fmt::format(
        "its {} '{}' maps to no catalog type (add it to kubernetes.device_types; `hetsched "
        "catalog` lists the types)",
        info.resource.empty() ? "CPU type" : "device", named.product);
    if (!info.resource.empty() && !Label(node, "hetsched.io/device-type")) {
      info.unmapped_product = named.product;
    }
    return info;
  }
  info.type = *id;
  info.device = catalog.Get(*id);

  if (info.resource.empty() && !info.arch.empty()) {
    info.device.stacks = {{StackOfArch(info.arch), ""}};
  }
  if (info.resource == "nvidia.com/gpu") ApplyNvidiaLabels(node, &info);
  if (!ApplyStatedStacks(node, &info)) info.type = model::DeviceTypeId();
  return info;
}

}  // namespace hetsched::svc::k8s
