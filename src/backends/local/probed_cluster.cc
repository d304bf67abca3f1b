#include "backends/local/probed_cluster.h"

#include <fmt/format.h>
#include <limits.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "model/io/cluster_reader.h"
#include "util/file.h"

namespace hetsched::svc {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool Alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Whether `word` occurs in `text` (case-insensitive) with no letter or digit right before or
// after it: "MI100" is in "[AMD Instinct MI100]" but not in "MI1000".
bool ContainsWord(std::string_view text, std::string_view word) {
  const std::string t = Lower(text), w = Lower(word);
  for (size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1)) {
    const bool before = at == 0 || !Alnum(t[at - 1]);
    const bool after = at + w.size() == t.size() || !Alnum(t[at + w.size()]);
    if (before && after) return true;
  }
  return false;
}

// How a vendor's tool names its models. Exact names (nvidia-smi's `name`, npu-smi's Name
// column) are compared whole, case-insensitively; AMD's "Card Series" varies between ROCm
// releases ("AMD Instinct MI210", "Arcturus GL-XL [AMD Instinct MI100]"), so the part number is
// looked for as a word. A rule without a type refuses the model, saying why.
struct AcceleratorRule {
  const char* vendor;
  const char* model;
  bool word;         // match `model` as a word of the name, not the whole name
  const char* type;  // catalog name; nullptr: refused
  const char* why;   // for a refusal
};

// Only the variants whose figures the catalog entry describes (docs/device-catalog.md): an
// "NVIDIA A100 80GB PCIe" is not the SXM4 part the a100-80g figures are for, so it is not listed.
constexpr AcceleratorRule kAcceleratorRules[] = {
    {"nvidia", "Tesla K80", false, "k80", nullptr},
    {"nvidia", "Tesla P100-PCIE-16GB", false, "p100", nullptr},
    {"nvidia", "Tesla V100-SXM2-32GB", false, "v100-32g", nullptr},
    {"nvidia", "Tesla T4", false, "t4", nullptr},
    {"nvidia", "NVIDIA A100-SXM4-40GB", false, "a100-40g", nullptr},
    {"nvidia", "NVIDIA A100-SXM4-80GB", false, "a100-80g", nullptr},
    {"nvidia", "NVIDIA H100 80GB HBM3", false, "h100-80g", nullptr},
    {"nvidia", "NVIDIA L40S", false, "l40s", nullptr},
    {"nvidia", "NVIDIA GeForce RTX 4090", false, "rtx-4090", nullptr},
    {"amd", "MI100", true, "mi100", nullptr},
    {"amd", "MI300X", true, "mi300x", nullptr},
    {"amd", "MI250X", true, nullptr,
     "rocm-smi lists each of its two dies as a device, while the catalog's mi250x is the whole "
     "module (two dies, 128 GiB)"},
    {"amd", "MI250", true, nullptr,
     "rocm-smi lists each of its two dies as a device; the catalog has no per-die type"},
    // The 64 GiB 910B variants (the 910B4 has 32 GiB).
    {"huawei", "910B1", false, "ascend-910b", nullptr},
    {"huawei", "910B2", false, "ascend-910b", nullptr},
    {"huawei", "910B3", false, "ascend-910b", nullptr},
    {"huawei", "310P3", false, "ascend-310p", nullptr},
    {"huawei", "Ascend910", false, nullptr,
     "the name gives no variant (Atlas A3 hosts print it for 910C dies), so no figures are known"},
};

// The tool that reports a vendor's devices, for messages.
std::string ToolOf(std::string_view vendor) {
  if (vendor == "nvidia") return "nvidia-smi";
  if (vendor == "amd") return "rocm-smi";
  if (vendor == "huawei") return "npu-smi";
  return std::string(vendor);
}

// Catalog CPUs by the part number in /proc/cpuinfo's model name.
struct CpuRule {
  const char* model_word;  // e.g. "EPYC 7763" in "AMD EPYC 7763 64-Core Processor"
  const char* type;
};
constexpr CpuRule kCpuRules[] = {
    {"Platinum 8380", "xeon-8380"},
    {"EPYC 7763", "epyc-7763"},
};

// The catalog CPU standing in for an x86_64 CPU it does not list, by /proc/cpuinfo vendor_id.
struct CpuFallback {
  const char* vendor_id;
  const char* type;
  const char* vendor;
};
constexpr CpuFallback kCpuFallbacks[] = {
    {"GenuineIntel", "xeon-8380", "Intel"},
    {"AuthenticAMD", "epyc-7763", "AMD"},
};

bool ValidNodeName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return Alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// "0-3" for 0,1,2,3; "5" for one.
std::string Range(int32_t first, int32_t count) {
  return count == 1 ? std::to_string(first) : fmt::format("{}-{}", first, first + count - 1);
}

// What every error about the probed node ends with.
constexpr const char* kPassCluster =
    "describe this machine with --cluster (a cluster file with one node; it may add device "
    "types under device_types:, docs/cluster-format.md)";

struct Group {
  std::string type;
  int32_t count = 0;
  std::string vendor;        // "" for the CPU
  std::string model;         // as probed
  int32_t first_vendor = 0;  // the first device's vendor index
};

}  // namespace

void ParseCpuInfo(std::string_view text, HostInfo* host) {
  std::set<std::string> physical_ids;
  int32_t processors = 0;
  bool model_seen = false, vendor_seen = false;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = Trim(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (key == "processor") {
      ++processors;
    } else if (key == "model name" && !model_seen) {
      host->cpu_model = std::string(value);
      model_seen = true;
    } else if (key == "vendor_id" && !vendor_seen) {
      host->cpu_vendor = std::string(value);
      vendor_seen = true;
    } else if (key == "physical id") {
      physical_ids.insert(std::string(value));
    }
  }
  host->logical_cpus = processors;
  host->sockets = physical_ids.empty() ? 1 : static_cast<int32_t>(physical_ids.size());
}

util::Result<HostInfo> ProbeHost() {
  HostInfo host;
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) {
    return util::Status::IoError(
        fmt::format("cannot read this machine's hostname: {}", std::strerror(errno)));
  }
  host.hostname = name;
  struct utsname u = {};
  if (uname(&u) != 0) {
    return util::Status::IoError(
        fmt::format("cannot read this machine's type (uname): {}", std::strerror(errno)));
  }
  host.arch = u.machine;
  // Without /proc/cpuinfo the CPU is unknown: BuildProbedCluster then says so.
  if (auto text = util::ReadFile("/proc/cpuinfo"); text.ok()) ParseCpuInfo(*text, &host);
  return host;
}

util::Result<std::string> CatalogTypeForAccelerator(const ProbedDevice& device) {
  const std::string model(Trim(device.model));
  for (const AcceleratorRule& rule : kAcceleratorRules) {
    if (device.vendor != rule.vendor) continue;
    const bool match =
        rule.word ? ContainsWord(model, rule.model) : Lower(model) == Lower(rule.model);
    if (!match) continue;
    if (rule.type == nullptr) {
      return util::Status::NotFound(
          fmt::format("{} device {} '{}': no catalog type describes it: {}", ToolOf(device.vendor),
                      device.index, model, rule.why));
    }
    return std::string(rule.type);
  }
  return util::Status::NotFound(fmt::format("{} device {} '{}': no catalog type is this model",
                                            ToolOf(device.vendor), device.index, model));
}

namespace {

// Accelerators grouped by type: each vendor's in the order of their indices, which must be
// 0..n-1; consecutive devices of one vendor, model and type form one group.
util::Result<std::vector<Group>> AcceleratorGroups(const std::vector<ProbedDevice>& devices) {
  std::map<std::string, size_t> vendor_rank;  // vendors in the order first reported
  for (const ProbedDevice& d : devices) vendor_rank.emplace(d.vendor, vendor_rank.size());
  std::vector<ProbedDevice> sorted = devices;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const ProbedDevice& a, const ProbedDevice& b) {
    const size_t ra = vendor_rank[a.vendor], rb = vendor_rank[b.vendor];
    return ra != rb ? ra < rb : a.index < b.index;
  });
  std::vector<std::string> unknown;
  std::vector<Group> groups;
  std::map<std::string, int32_t> next_index;  // per vendor
  std::string gap;                            // the first break in a vendor's numbering
  for (const ProbedDevice& d : sorted) {
    int32_t& expected = next_index[d.vendor];
    if (d.index != expected && gap.empty()) {
      gap = fmt::format(
          "{} reports device {} where device {} was expected: the daemon numbers a vendor's "
          "devices 0..n-1 in the order of the node, so gaps or repeats cannot be described; {}",
          ToolOf(d.vendor), d.index, expected, kPassCluster);
    }
    expected = d.index + 1;
    auto type = CatalogTypeForAccelerator(d);
    if (!type.ok()) {
      unknown.push_back(type.status().message());
      continue;
    }
    if (!groups.empty() && groups.back().type == *type && groups.back().vendor == d.vendor &&
        groups.back().model == Trim(d.model)) {
      ++groups.back().count;
    } else {
      groups.push_back({*type, 1, d.vendor, std::string(Trim(d.model)), d.index});
    }
  }
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& u : unknown) list += (list.empty() ? "" : "; ") + u;
    return util::Status::InvalidArgument(
        fmt::format("cannot describe this machine's accelerators from the catalog: {}; {}", list,
                    kPassCluster));
  }
  if (!gap.empty()) return util::Status::InvalidArgument(gap);
  return groups;
}

// The catalog CPU type of the host's sockets: the one of its model, else on x86_64 the one of
// its vendor; "" when neither. Adds a note saying which and why.
std::string CpuType(const HostInfo& host, std::vector<std::string>& notes) {
  for (const CpuRule& rule : kCpuRules) {
    if (ContainsWord(host.cpu_model, rule.model_word)) {
      notes.push_back(fmt::format("cpu: '{}' is {} (x{} socket{})", host.cpu_model, rule.type,
                                  host.sockets, host.sockets == 1 ? "" : "s"));
      return rule.type;
    }
  }
  if (host.arch == "x86_64") {
    for (const CpuFallback& f : kCpuFallbacks) {
      if (host.cpu_vendor != f.vendor_id) continue;
      notes.push_back(fmt::format(
          "cpu: '{}' ({}, {} logical CPUs) is no catalog CPU type; using {}, the catalog's {} "
          "x86_64 CPU, for its stack (x86_64): its speed, power and price figures are the "
          "catalog's, not this CPU's (x{} socket{})",
          host.cpu_model, host.cpu_vendor, host.logical_cpus, f.type, f.vendor, host.sockets,
          host.sockets == 1 ? "" : "s"));
      return f.type;
    }
  }
  notes.push_back(fmt::format(
      "cpu: '{}' ({}, {}) matches no catalog CPU type, and the catalog's CPUs (Intel and AMD "
      "x86_64) cannot stand in for it: the node gets no CPU device",
      host.cpu_model, host.cpu_vendor.empty() ? "vendor unknown" : host.cpu_vendor, host.arch));
  return "";
}

// Fills out.yaml and out.cluster with the node `hostname` holding `groups`, and notes each
// vendor's devices and the node's layout. The cluster file is parsed like any other: the reader
// checks it and builds the catalog. The rack and NIC figures are the shorthand's
// (docs/cluster-format.md); one node never uses them. No NVLink/xGMI islands are probed:
// devices talk through the default host link.
util::Status ClusterOfGroups(const std::string& hostname, const std::vector<Group>& groups,
                             ProbedCluster& out) {
  std::string devices_yaml;
  int32_t position = 0;
  std::vector<std::string> layout;
  for (const Group& g : groups) {
    devices_yaml += fmt::format("      - {{type: {}, count: {}}}\n", g.type, g.count);
    if (!g.vendor.empty()) {
      out.notes.push_back(fmt::format("{}: {} x '{}' -> {} (devices {} of {})", ToolOf(g.vendor),
                                      g.count, g.model, g.type, Range(g.first_vendor, g.count),
                                      g.vendor));
    }
    layout.push_back(
        fmt::format("{} x{} (node devices {})", g.type, g.count, Range(position, g.count)));
    position += g.count;
  }
  out.yaml = fmt::format(
      "# This machine as `hetsched serve --backend local` probed it.\n"
      "name: '{0}'\n"
      "racks:\n"
      "  - {{name: rack-1, uplink_bandwidth: 100Gb/s, latency: 1us}}\n"
      "nodes:\n"
      "  - name: '{0}'\n"
      "    devices:\n"
      "{1}"
      "    nic: {{bandwidth: 100Gb/s, latency: 2us}}\n",
      hostname, devices_yaml);
  auto cluster = model::io::ParseClusterYaml(out.yaml, "<probed " + hostname + ">");
  if (!cluster.ok()) {
    return util::Status::InvalidArgument(fmt::format("the probed node is no valid cluster: {}; {}",
                                                     cluster.status().message(), kPassCluster));
  }
  out.cluster = std::move(cluster).value();
  std::string joined;
  for (const std::string& l : layout) joined += (joined.empty() ? "" : ", ") + l;
  out.notes.push_back(fmt::format("node '{}': {}", hostname, joined));
  return util::Status::Ok();
}

}  // namespace

util::Result<ProbedCluster> BuildProbedCluster(const HostInfo& host,
                                               const std::vector<ProbedDevice>& devices) {
  if (!ValidNodeName(host.hostname)) {
    return util::Status::InvalidArgument(
        fmt::format("this machine's hostname '{}' is no valid node name (expected letters, "
                    "digits, '-', '_' or '.'); {}",
                    host.hostname, kPassCluster));
  }
  ProbedCluster out;
  ASSIGN_OR_RETURN(std::vector<Group> groups, AcceleratorGroups(devices));
  const std::string cpu_type = CpuType(host, out.notes);
  if (!cpu_type.empty()) groups.push_back({cpu_type, host.sockets, "", host.cpu_model, 0});
  if (groups.empty()) {
    return util::Status::InvalidArgument(fmt::format(
        "this machine has no accelerator the vendors' tools report and no CPU of the catalog, "
        "so it offers nothing to schedule on; {}",
        kPassCluster));
  }
  RETURN_IF_ERROR(ClusterOfGroups(host.hostname, groups, out));
  return out;
}

util::Result<ProbedCluster> ProbeLocalCluster(const ProbeOptions& options,
                                              std::vector<std::string>* notes) {
  ProbeReport report = ProbeDevices(options);
  *notes = report.notes;
  if (!report.failed.empty()) {
    std::string why;
    for (const std::string& note : report.notes) {
      for (const std::string& tool : report.failed) {
        if (note.rfind(tool + ":", 0) == 0) why += (why.empty() ? "" : "; ") + note;
      }
    }
    return util::Status::Unavailable(
        fmt::format("cannot list this machine's accelerators: {}; fix the tool, or describe this "
                    "machine with --cluster",
                    why));
  }
  ASSIGN_OR_RETURN(HostInfo host, ProbeHost());
  ASSIGN_OR_RETURN(ProbedCluster probed, BuildProbedCluster(host, report.devices));
  notes->insert(notes->end(), probed.notes.begin(), probed.notes.end());
  probed.notes = *notes;
  return probed;
}

}  // namespace hetsched::svc
