#include "model/io/cluster_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/io/device_type_reader.h"
#include "model/io/document.h"
#include "util/file.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::SourceLocation;
using util::Status;

// PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 encoding ~= 31.5 GB/s per direction; ~1 us is a
// typical device-to-device hop through the root complex. Documented in docs/cluster-format.md.
constexpr double kDefaultHostBandwidth = 31.5e9;
constexpr double kDefaultHostLatency = 1e-6;

// What the shorthand assumes (docs/cluster-format.md, "Shorthand"): 100 Gb/s Ethernet NICs,
// one rack switch hop of 1 us.
constexpr double kShorthandNicBandwidth = 100e9 / 8;
constexpr double kShorthandNicLatency = 2e-6;
constexpr double kShorthandRackLatency = 1e-6;

std::string Field(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string Index(const std::string& parent, size_t i) { return fmt::format("{}[{}]", parent, i); }

std::string KnownTypes(const DeviceCatalog& catalog) {
  std::string names = catalog.NameList();
  return names.empty() ? "a device type defined under device_types (the catalog is empty)"
                       : "one of: " + names;
}

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

Result<std::string> Name(const DocReader& r, const DocValue& node, const std::string& field) {
  const std::string expected = "a name of letters, digits, '-', '_' or '.'";
  ASSIGN_OR_RETURN(std::string s, r.Scalar(node, field, expected));
  if (!ValidName(s)) {
    return r.Error(node, field, fmt::format("'{}' is not a valid name", s), expected);
  }
  return s;
}

Result<double> Bandwidth(const DocReader& r, const DocValue& node, const std::string& field) {
  return r.Quantity<double>(node, field, &util::ParseBandwidth,
                            "a positive bandwidth like 600GB/s or 200Gb/s", /*positive=*/true);
}
Result<double> Duration(const DocReader& r, const DocValue& node, const std::string& field) {
  return r.Quantity<double>(node, field, &util::ParseDuration, "a duration like 2us or 180s");
}
Result<uint64_t> Bytes(const DocReader& r, const DocValue& node, const std::string& field) {
  return r.Quantity<uint64_t>(node, field, &util::ParseBytes, "a size like 512GiB or 1TiB");
}
Result<double> Power(const DocReader& r, const DocValue& node, const std::string& field) {
  return r.Quantity<double>(node, field, &util::ParsePower, "a power like 800W or 1.2kW");
}

// A {bandwidth, latency} pair; both required.
Status Link(const DocReader& r, const DocValue& node, const std::string& field, double& bandwidth,
            double& latency) {
  RETURN_IF_ERROR(r.CheckMap(node, field, {"bandwidth", "latency"}));
  if (!node.Has("bandwidth")) {
    return r.Missing(node, Field(field, "bandwidth"), "a bandwidth like 200Gb/s");
  }
  if (!node.Has("latency")) return r.Missing(node, Field(field, "latency"), "a latency like 2us");
  ASSIGN_OR_RETURN(bandwidth, Bandwidth(r, node["bandwidth"], Field(field, "bandwidth")));
  ASSIGN_OR_RETURN(latency, Duration(r, node["latency"], Field(field, "latency")));
  return Status::Ok();
}

// Expands `prefix[LO-HI]suffix` (zero padded to the width of LO when LO is written with a
// leading zero) or returns the plain name. Only checks sizes; nothing is allocated here.
struct NamePattern {
  std::string prefix, suffix;
  int64_t lo = 0, hi = -1;  // hi < lo: no range, the name is `prefix`
  size_t width = 0;
  int64_t size() const { return hi < lo ? 1 : hi - lo + 1; }
  std::string At(int64_t i) const {
    if (hi < lo) return prefix;
    return prefix + fmt::format("{:0{}}", lo + i, width) + suffix;
  }
};

Result<NamePattern> ParseNamePattern(const DocReader& r, const DocValue& node,
                                     const std::string& field) {
  const std::string expected =
      "a node name like gpu-01 or a pattern like gpu-nv-[01-04] with one numeric range";
  ASSIGN_OR_RETURN(std::string s, r.Scalar(node, field, expected));
  NamePattern p;
  size_t open = s.find('[');
  if (open == std::string::npos) {
    if (s.find(']') != std::string::npos || !ValidName(s)) {
      return r.Error(node, field, fmt::format("'{}' is not a valid node name", s), expected);
    }
    p.prefix = s;
    return p;
  }
  size_t close = s.find(']', open);
  size_t dash = s.find('-', open);
  if (close == std::string::npos || dash == std::string::npos || dash > close ||
      s.find('[', open + 1) != std::string::npos || s.find(']', close + 1) != std::string::npos) {
    return r.Error(node, field, fmt::format("'{}' is not a valid name pattern", s), expected);
  }
  p.prefix = s.substr(0, open);
  p.suffix = s.substr(close + 1);
  std::string_view lo_text = std::string_view(s).substr(open + 1, dash - open - 1);
  std::string_view hi_text = std::string_view(s).substr(dash + 1, close - dash - 1);
  std::optional<int64_t> lo = lo_text.size() <= 9 ? ParseDigits(lo_text) : std::nullopt;
  std::optional<int64_t> hi = hi_text.size() <= 9 ? ParseDigits(hi_text) : std::nullopt;
  if (!lo || !hi) {
    return r.Error(node, field,
                   fmt::format("'{}': range bounds must be whole numbers of at most 9 digits", s),
                   expected);
  }
  if (*hi < *lo) {
    return r.Error(node, field, fmt::format("'{}': range runs backwards", s), expected);
  }
  if (!ValidName(p.prefix + "0" + p.suffix)) {
    return r.Error(node, field, fmt::format("'{}' is not a valid name pattern", s), expected);
  }
  p.lo = *lo;
  p.hi = *hi;
  if (p.size() > kMaxNodesPerEntry) {
    return r.Error(
        node, field,
        fmt::format("'{}' expands to {} nodes, more than one entry may hold", s, p.size()),
        fmt::format("at most {} nodes per entry", kMaxNodesPerEntry));
  }
  p.width = (lo_text.size() > 1 && lo_text[0] == '0') ? lo_text.size() : 0;
  return p;
}

// One entry of `nodes:` before expansion.
struct NodeTemplate {
  Node node;
  std::vector<DeviceTypeId> types;  // per local index
  std::vector<int32_t> island_of;   // per local index, -1 if none
  std::vector<int32_t> switch_of;
};

// Members: "all" or a list of device indexes; each device in at most one group of this list.
Status ParseMembers(const DocReader& r, const DocValue& node, const std::string& field,
                    int32_t device_count, int32_t group, std::vector<int32_t>& owner,
                    std::string_view group_word, std::vector<int32_t>& members) {
  const std::string expected =
      fmt::format("\"all\" or a list of device indexes 0..{}", device_count - 1);
  // Claims device `m` for this group; checked per member so that a long (or aliased) list
  // fails at its first bad entry.
  auto claim = [&](const DocValue& at, const std::string& at_field, int32_t m) -> Status {
    if (owner[m] == group) {
      return r.Error(at, at_field, fmt::format("device {} is listed twice", m), expected);
    }
    if (owner[m] >= 0) {
      return r.Error(at, at_field,
                     fmt::format("device {} is already in {} {}", m, group_word, owner[m]),
                     fmt::format("each device in at most one {}", group_word));
    }
    owner[m] = group;
    members.push_back(m);
    return Status::Ok();
  };
  if (node.IsScalar()) {
    if (node.text != "all") {
      return r.Error(node, field, fmt::format("'{}' is neither all nor a list", node.text),
                     expected);
    }
    for (int32_t i = 0; i < device_count; ++i) RETURN_IF_ERROR(claim(node, field, i));
  } else if (node.IsList()) {
    if (node.size() > static_cast<size_t>(device_count)) {
      return r.Error(node, field,
                     fmt::format("lists {} devices but the node has {}", node.size(), device_count),
                     expected);
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const DocValue& m = node[i];
      std::string mf = Index(field, i);
      ASSIGN_OR_RETURN(std::string s, r.Scalar(m, mf, expected));
      std::optional<int64_t> v = s.size() <= 9 ? ParseDigits(s) : std::nullopt;
      if (!v) return r.Error(m, mf, fmt::format("'{}' is not a device index", s), expected);
      if (*v >= device_count) {
        return r.Error(m, mf,
                       fmt::format("device index {} is out of range: the node has {} devices", *v,
                                   device_count),
                       expected);
      }
      RETURN_IF_ERROR(claim(m, mf, static_cast<int32_t>(*v)));
    }
  } else {
    return r.Error(node, field, "is not a list", expected);
  }
  if (members.size() < 2) {
    return r.Error(node, field, "needs at least 2 devices", expected);
  }
  return Status::Ok();
}

Result<LinkKind> ParseIslandKind(const DocReader& r, const DocValue& node,
                                 const std::string& field) {
  const std::string expected = "nvlink, xgmi or hccs";
  ASSIGN_OR_RETURN(std::string s, r.Scalar(node, field, expected));
  if (s == "nvlink") return LinkKind::kNvlink;
  if (s == "xgmi") return LinkKind::kXgmi;
  if (s == "hccs") return LinkKind::kHccs;
  return r.Error(node, field, fmt::format("unknown link kind '{}'", s), expected);
}

// The rack a node entry names; required unless the cluster has exactly one.
Result<RackId> ParseNodeRack(const DocReader& r, const DocValue& n, const std::string& field,
                             const Cluster& cluster) {
  if (n.Has("rack")) {
    ASSIGN_OR_RETURN(std::string rack, Name(r, n["rack"], Field(field, "rack")));
    std::optional<RackId> id = cluster.FindRack(rack);
    if (!id) {
      std::string known;
      for (const Rack& k : cluster.racks) known += (known.empty() ? "" : ", ") + k.name;
      return r.Error(n["rack"], Field(field, "rack"), fmt::format("no rack named '{}'", rack),
                     "one of the racks: " + known);
    }
    return *id;
  }
  if (cluster.racks.size() == 1) return RackId(0);
  return r.Missing(n, Field(field, "rack"), "the name of one of the racks");
}

// The `devices` of a node entry into `t.types`, in order: their positions are the local
// indexes.
Status ParseNodeDevices(const DocReader& r, const DocValue& n, const std::string& field,
                        const Cluster& cluster, NodeTemplate& t) {
  const DocValue& devs = n["devices"];
  if (devs.IsMissing()) return r.Missing(n, Field(field, "devices"), "a list of {type, count}");
  std::string devs_field = Field(field, "devices");
  if (!devs.IsList() || devs.size() == 0) {
    return r.Error(devs, devs_field, "is empty or not a list", "a list of {type, count}");
  }
  for (size_t i = 0; i < devs.size(); ++i) {
    const DocValue& d = devs[i];
    std::string df = Index(devs_field, i);
    RETURN_IF_ERROR(r.CheckMap(d, df, {"type", "count"}, "a device entry"));
    if (!d.Has("type")) return r.Missing(d, Field(df, "type"), KnownTypes(cluster.catalog));
    ASSIGN_OR_RETURN(std::string type_name,
                     r.Scalar(d["type"], Field(df, "type"), KnownTypes(cluster.catalog)));
    std::optional<DeviceTypeId> type = cluster.catalog.FindId(type_name);
    if (!type) {
      return r.Error(d["type"], Field(df, "type"),
                     fmt::format("unknown device type '{}'", type_name),
                     KnownTypes(cluster.catalog));
    }
    if (!d.Has("count")) return r.Missing(d, Field(df, "count"), "a whole number of devices");
    int64_t room = kMaxDevicesPerNode - static_cast<int64_t>(t.types.size());
    if (room <= 0) {
      return r.Error(d, df, "too many devices in one node",
                     fmt::format("at most {} devices per node", kMaxDevicesPerNode));
    }
    ASSIGN_OR_RETURN(int64_t count, r.Count(d["count"], Field(df, "count"), room));
    t.types.insert(t.types.end(), static_cast<size_t>(count), *type);
  }
  return Status::Ok();
}

// Islands (NVLink / xGMI / HCCS) and PCIe switches of a node entry.
Status ParseNodeGroups(const DocReader& r, const DocValue& n, const std::string& field,
                       NodeTemplate& t) {
  Node& node = t.node;
  if (const DocValue& isl = n["islands"]; !isl.IsMissing()) {
    std::string f = Field(field, "islands");
    if (!isl.IsList()) return r.Error(isl, f, "is not a list", "a list of islands");
    for (size_t i = 0; i < isl.size(); ++i) {
      const DocValue& g = isl[i];
      std::string gf = Index(f, i);
      RETURN_IF_ERROR(r.CheckMap(g, gf, {"kind", "members", "bandwidth", "latency"}, "an island"));
      for (std::string_view key : {"kind", "members", "bandwidth", "latency"}) {
        if (!g.Has(key)) {
          return r.Missing(g, Field(gf, key), "kind, members, bandwidth and latency");
        }
      }
      DeviceGroup group;
      ASSIGN_OR_RETURN(group.kind, ParseIslandKind(r, g["kind"], Field(gf, "kind")));
      RETURN_IF_ERROR(ParseMembers(r, g["members"], Field(gf, "members"), node.device_count,
                                   static_cast<int32_t>(i), t.island_of, "island", group.members));
      ASSIGN_OR_RETURN(group.bandwidth, Bandwidth(r, g["bandwidth"], Field(gf, "bandwidth")));
      ASSIGN_OR_RETURN(group.latency_s, Duration(r, g["latency"], Field(gf, "latency")));
      node.islands.push_back(std::move(group));
    }
  }
  if (const DocValue& sw = n["pcie_switches"]; !sw.IsMissing()) {
    std::string f = Field(field, "pcie_switches");
    if (!sw.IsList()) return r.Error(sw, f, "is not a list", "a list of PCIe switches");
    for (size_t i = 0; i < sw.size(); ++i) {
      const DocValue& g = sw[i];
      std::string gf = Index(f, i);
      RETURN_IF_ERROR(r.CheckMap(g, gf, {"members", "bandwidth", "latency"}, "a PCIe switch"));
      for (std::string_view key : {"members", "bandwidth", "latency"}) {
        if (!g.Has(key)) {
          return r.Missing(g, Field(gf, key), "members, bandwidth and latency");
        }
      }
      DeviceGroup group;
      group.kind = LinkKind::kPcie;
      RETURN_IF_ERROR(ParseMembers(r, g["members"], Field(gf, "members"), node.device_count,
                                   static_cast<int32_t>(i), t.switch_of, "PCIe switch",
                                   group.members));
      ASSIGN_OR_RETURN(group.bandwidth, Bandwidth(r, g["bandwidth"], Field(gf, "bandwidth")));
      ASSIGN_OR_RETURN(group.latency_s, Duration(r, g["latency"], Field(gf, "latency")));
      node.pcie_switches.push_back(std::move(group));
    }
  }
  return Status::Ok();
}

// A node entry's links to its host and network, memory, cores, power and boot times.
Status ParseNodeHost(const DocReader& r, const DocValue& n, const std::string& field, Node& node) {
  node.host_bandwidth = kDefaultHostBandwidth;
  node.host_latency_s = kDefaultHostLatency;
  if (n.Has("host_link")) {
    RETURN_IF_ERROR(Link(r, n["host_link"], Field(field, "host_link"), node.host_bandwidth,
                         node.host_latency_s));
  }
  if (!n.Has("nic")) return r.Missing(n, Field(field, "nic"), "nic: {bandwidth, latency}");
  RETURN_IF_ERROR(Link(r, n["nic"], Field(field, "nic"), node.nic_bandwidth, node.nic_latency_s));

  if (n.Has("host_memory")) {
    ASSIGN_OR_RETURN(node.host_memory_bytes,
                     Bytes(r, n["host_memory"], Field(field, "host_memory")));
  }
  if (n.Has("cores")) {
    ASSIGN_OR_RETURN(int64_t cores, r.Count(n["cores"], Field(field, "cores"), 1'000'000));
    node.cores = static_cast<int32_t>(cores);
  }
  if (n.Has("base_power")) {
    ASSIGN_OR_RETURN(node.base_watts, Power(r, n["base_power"], Field(field, "base_power")));
  }
  if (n.Has("boot_time")) {
    ASSIGN_OR_RETURN(node.boot_s, Duration(r, n["boot_time"], Field(field, "boot_time")));
  }
  if (n.Has("shutdown_time")) {
    ASSIGN_OR_RETURN(node.shutdown_s,
                     Duration(r, n["shutdown_time"], Field(field, "shutdown_time")));
  }
  return Status::Ok();
}

Status ParseNodeLabels(const DocReader& r, const DocValue& labels, const std::string& f,
                       Node& node) {
  if (!labels.IsMap()) return r.Error(labels, f, "is not a map", "a map of name: value");
  if (static_cast<int64_t>(labels.size()) > kMaxLabelsPerNode) {
    return r.Error(labels, f, fmt::format("has {} labels", labels.size()),
                   fmt::format("at most {}", kMaxLabelsPerNode));
  }
  for (const DocValue::Field& label : labels.fields) {
    const std::string lf = Field(f, label.key);
    ASSIGN_OR_RETURN(std::string value, r.Scalar(label.value, lf, "a label value"));
    node.labels.emplace(label.key, value);  // keys are unique (ParseYamlDocument)
  }
  return Status::Ok();
}

Result<NodeTemplate> ParseNodeEntry(const DocReader& r, const DocValue& n, const std::string& field,
                                    const Cluster& cluster) {
  RETURN_IF_ERROR(r.CheckMap(
      n, field,
      {"name", "count", "rack", "devices", "islands", "pcie_switches", "host_link", "nic",
       "host_memory", "cores", "base_power", "boot_time", "shutdown_time", "labels"},
      "a node"));
  NodeTemplate t;
  ASSIGN_OR_RETURN(t.node.rack, ParseNodeRack(r, n, field, cluster));
  RETURN_IF_ERROR(ParseNodeDevices(r, n, field, cluster, t));
  t.node.device_count = static_cast<int32_t>(t.types.size());
  t.island_of.assign(t.types.size(), -1);
  t.switch_of.assign(t.types.size(), -1);
  RETURN_IF_ERROR(ParseNodeGroups(r, n, field, t));
  RETURN_IF_ERROR(ParseNodeHost(r, n, field, t.node));
  if (n.Has("labels"))
    RETURN_IF_ERROR(ParseNodeLabels(r, n["labels"], Field(field, "labels"), t.node));
  return t;
}

// storage: [{name, rack (optional: none means attached to the network core), bandwidth}].
Status ParseStorage(const DocReader& r, const DocValue& list, Cluster& cluster) {
  const std::string expected = "a list of storage with name, bandwidth and optionally rack";
  if (!list.IsList()) return r.Error(list, "storage", "is not a list", expected);
  for (size_t i = 0; i < list.size(); ++i) {
    const DocValue& k = list[i];
    const std::string f = Index("storage", i);
    RETURN_IF_ERROR(r.CheckMap(k, f, {"name", "rack", "bandwidth"}, "a storage"));
    for (std::string_view key : {"name", "bandwidth"}) {
      if (!k.Has(key)) return r.Missing(k, Field(f, key), "name and bandwidth");
    }
    Storage s;
    ASSIGN_OR_RETURN(s.name, Name(r, k["name"], Field(f, "name")));
    if (cluster.FindStorage(s.name) || cluster.FindRack(s.name)) {
      return r.Error(k["name"], Field(f, "name"),
                     fmt::format("'{}' already names a storage or rack", s.name),
                     "a name no other storage or rack has");
    }
    ASSIGN_OR_RETURN(s.bandwidth, Bandwidth(r, k["bandwidth"], Field(f, "bandwidth")));
    if (k.Has("rack")) {
      ASSIGN_OR_RETURN(std::string rack, Name(r, k["rack"], Field(f, "rack")));
      const auto id = cluster.FindRack(rack);
      if (!id) {
        return r.Error(k["rack"], Field(f, "rack"), fmt::format("no rack '{}'", rack),
                       "one of the racks above");
      }
      s.rack = *id;
    }
    cluster.storage.push_back(std::move(s));
  }
  return Status::Ok();
}

// The `racks` list: every rack's name, uplink and latency, names unique.
Status ParseRacks(const DocReader& r, const DocValue& root, Cluster& cluster) {
  const DocValue& racks = root["racks"];
  if (racks.IsMissing())
    return r.Missing(root, "racks", "a list of racks with name, uplink_bandwidth, latency");
  if (!racks.IsList() || racks.size() == 0) {
    return r.Error(racks, "racks", "is empty or not a list",
                   "a list of racks with name, uplink_bandwidth, latency");
  }
  for (size_t i = 0; i < racks.size(); ++i) {
    const DocValue& k = racks[i];
    std::string f = Index("racks", i);
    RETURN_IF_ERROR(r.CheckMap(k, f, {"name", "uplink_bandwidth", "latency"}, "a rack"));
    for (std::string_view key : {"name", "uplink_bandwidth", "latency"}) {
      if (!k.Has(key)) return r.Missing(k, Field(f, key), "name, uplink_bandwidth and latency");
    }
    Rack rack;
    ASSIGN_OR_RETURN(rack.name, Name(r, k["name"], Field(f, "name")));
    ASSIGN_OR_RETURN(rack.uplink_bandwidth,
                     Bandwidth(r, k["uplink_bandwidth"], Field(f, "uplink_bandwidth")));
    ASSIGN_OR_RETURN(rack.latency_s, Duration(r, k["latency"], Field(f, "latency")));
    for (const Rack& other : cluster.racks) {
      if (other.name == rack.name) {
        return r.Error(k["name"], Field(f, "name"),
                       fmt::format("rack '{}' is defined twice", rack.name), "unique rack names");
      }
    }
    cluster.racks.push_back(std::move(rack));
  }
  return Status::Ok();
}

// The network core: needed as soon as traffic can leave a rack.
Status ParseNetwork(const DocReader& r, const DocValue& root, Cluster& cluster) {
  if (const DocValue& net = root["network"]; !net.IsMissing()) {
    RETURN_IF_ERROR(r.CheckMap(net, "network", {"core_latency", "spine_bandwidth"}));
    if (!net.Has("core_latency")) {
      return r.Missing(net, "network.core_latency", "a latency like 5us");
    }
    ASSIGN_OR_RETURN(cluster.network_latency_s,
                     Duration(r, net["core_latency"], "network.core_latency"));
    if (net.Has("spine_bandwidth")) {
      ASSIGN_OR_RETURN(cluster.spine_bandwidth,
                       Bandwidth(r, net["spine_bandwidth"], "network.spine_bandwidth"));
    }
  } else if (cluster.racks.size() > 1) {
    return r.Missing(root, "network", "network: {core_latency: ...} when there are several racks");
  }
  return Status::Ok();
}

// The names a node entry stands for: a pattern, a name with a count, or a plain name.
Result<NamePattern> ParseEntryNames(const DocReader& r, const DocValue& n, const std::string& f) {
  if (!n.IsMap()) return r.Error(n, f, "is not a map", "a node with name, devices, nic, ...");
  if (!n.Has("name"))
    return r.Missing(n, Field(f, "name"), "a node name or a pattern like gpu-[01-04]");
  ASSIGN_OR_RETURN(NamePattern pattern, ParseNamePattern(r, n["name"], Field(f, "name")));
  if (n.Has("count")) {
    if (pattern.hi >= pattern.lo) {
      return r.Error(n["count"], Field(f, "count"), "a name pattern already says how many",
                     "either a pattern or a count");
    }
    ASSIGN_OR_RETURN(int64_t count, r.Count(n["count"], Field(f, "count"), kMaxNodesPerEntry));
    pattern.prefix += "-";
    pattern.lo = 1;
    pattern.hi = count;
    pattern.width = std::to_string(count).size();
  }
  return pattern;
}

// The `nodes` list, each entry expanded into the nodes its name stands for, within the
// cluster-wide limits on nodes, devices and labels.
Status ParseNodes(const DocReader& r, const DocValue& root, Cluster& cluster) {
  const DocValue& nodes = root["nodes"];
  if (nodes.IsMissing()) return r.Missing(root, "nodes", "a list of nodes");
  if (!nodes.IsList()) return r.Error(nodes, "nodes", "is not a list", "a list of nodes");
  if (nodes.size() == 0) {
    return r.Error(nodes, "nodes", "the cluster has no nodes", "at least one node with devices");
  }
  std::unordered_map<std::string, int> first_line;  // node name -> line it was defined on
  int64_t total_devices = 0;
  int64_t total_labels = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const DocValue& n = nodes[i];
    std::string f = Index("nodes", i);
    ASSIGN_OR_RETURN(NamePattern pattern, ParseEntryNames(r, n, f));
    ASSIGN_OR_RETURN(NodeTemplate t, ParseNodeEntry(r, n, f, cluster));
    int64_t count = pattern.size();
    if (static_cast<int64_t>(cluster.nodes.size()) + count > kMaxNodes) {
      return r.Error(n["name"], Field(f, "name"), "too many nodes",
                     fmt::format("at most {} nodes in a cluster", kMaxNodes));
    }
    total_labels += count * static_cast<int64_t>(t.node.labels.size());
    if (total_labels > kMaxLabels) {
      return r.Error(n["labels"], Field(f, "labels"), "too many labels in the cluster",
                     fmt::format("at most {} labels over all nodes", kMaxLabels));
    }
    if (total_devices + count * t.node.device_count > kMaxDevices) {
      return r.Error(n, f, "too many devices",
                     fmt::format("at most {} devices in a cluster", kMaxDevices));
    }
    int line = r.At(n["name"]).line;
    for (int64_t k = 0; k < count; ++k) {
      Node node = t.node;
      node.name = pattern.At(k);
      auto [it, inserted] = first_line.emplace(node.name, line);
      if (!inserted) {
        return r.Error(n["name"], Field(f, "name"),
                       fmt::format("node name '{}' is already used by the entry on line {}",
                                   node.name, it->second),
                       "unique node names");
      }
      NodeId id(static_cast<int32_t>(cluster.nodes.size()));
      node.first_device = DeviceId(static_cast<int32_t>(cluster.devices.size()));
      for (int32_t d = 0; d < node.device_count; ++d) {
        Device dev;
        dev.type = t.types[d];
        dev.node = id;
        dev.local_index = d;
        dev.island = t.island_of[d];
        dev.pcie_switch = t.switch_of[d];
        cluster.devices.push_back(dev);
      }
      cluster.racks[node.rack.value()].nodes.push_back(id);
      cluster.nodes.push_back(std::move(node));
    }
    total_devices += count * t.node.device_count;
  }
  return Status::Ok();
}

Result<Cluster> ParseRoot(const DocReader& r, const DocValue& root) {
  if (root.IsNull()) {
    return util::InputError(SourceLocation{r.file(), 1, 1}, "", "the file is empty",
                            "a cluster with name, racks and nodes");
  }
  RETURN_IF_ERROR(r.CheckMap(
      root, "", {"name", "network", "device_types", "racks", "storage", "nodes"}, "a cluster"));
  Cluster cluster;
  cluster.catalog = DeviceCatalog::BuiltIn();
  if (!root.Has("name")) return r.Missing(root, "name", "the cluster's name");
  ASSIGN_OR_RETURN(cluster.name, Name(r, root["name"], "name"));

  if (const DocValue& types = root["device_types"]; !types.IsMissing()) {
    RETURN_IF_ERROR(ParseDeviceTypesYaml(types, r.file(), cluster.catalog));
  }

  RETURN_IF_ERROR(ParseRacks(r, root, cluster));
  cluster.Reindex();
  RETURN_IF_ERROR(ParseNetwork(r, root, cluster));
  if (const DocValue& storage = root["storage"]; !storage.IsMissing()) {
    RETURN_IF_ERROR(ParseStorage(r, storage, cluster));
  }
  RETURN_IF_ERROR(ParseNodes(r, root, cluster));
  cluster.Reindex();
  return cluster;
}

// Shorthand helpers: errors point at a 1-based column of the spec.
Status ShorthandError(size_t pos, const std::string& field, const std::string& problem) {
  return util::InputError(SourceLocation{"<shorthand>", 1, static_cast<int>(pos) + 1}, field,
                          problem, "TYPE=COUNT[:per_node=N],... like v100=36,p100=36");
}

Result<int64_t> ShorthandCount(std::string_view text, size_t pos, const std::string& field,
                               int64_t max) {
  std::optional<int64_t> v = text.size() <= 12 ? ParseDigits(text) : std::nullopt;
  if (!v) {
    return ShorthandError(pos, field, fmt::format("'{}' is not a whole number", text));
  }
  if (*v == 0) return ShorthandError(pos, field, "is zero");
  if (*v > max) return ShorthandError(pos, field, fmt::format("{} is more than {}", *v, max));
  return *v;
}

// One TYPE=COUNT[:per_node=N] term of a shorthand.
struct ShorthandTerm {
  std::string written;  // the type as the spec names it, lower case: node name prefix
  DeviceTypeId type;
  int64_t devices = 0;
  int64_t per_node = 1;
};

// The term `term` (starting at `begin` of the spec; `eq`: where its '=' is), whose type must
// not be one of `earlier`.
Result<ShorthandTerm> ParseShorthandTerm(std::string_view term, size_t begin, size_t eq,
                                         const DeviceCatalog& catalog,
                                         const std::vector<ShorthandTerm>& earlier) {
  std::string type_name(term.substr(0, eq));
  std::optional<DeviceTypeId> type = catalog.FindId(type_name);
  if (!type) {
    return util::InputError(SourceLocation{"<shorthand>", 1, static_cast<int>(begin) + 1},
                            std::string(term), fmt::format("unknown device type '{}'", type_name),
                            KnownTypes(catalog));
  }
  for (const ShorthandTerm& t : earlier) {
    if (t.type == *type) {
      return ShorthandError(begin, std::string(term),
                            fmt::format("device type '{}' appears twice", type_name));
    }
  }
  ShorthandTerm t;
  t.type = *type;
  t.written = type_name;
  std::transform(t.written.begin(), t.written.end(), t.written.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // COUNT, then `:option=value` parts; positions are kept for the error column.
  std::vector<std::pair<size_t, std::string_view>> parts;
  for (size_t p = eq + 1;;) {
    size_t colon = term.find(':', p);
    size_t part_end = colon == std::string_view::npos ? term.size() : colon;
    parts.emplace_back(begin + p, term.substr(p, part_end - p));
    if (colon == std::string_view::npos) break;
    p = colon + 1;
  }
  size_t count_pos = parts[0].first;
  ASSIGN_OR_RETURN(t.devices,
                   ShorthandCount(parts[0].second, count_pos, std::string(term), kMaxDevices));
  for (size_t k = 1; k < parts.size(); ++k) {
    auto [opt_pos, opt] = parts[k];
    if (opt.substr(0, 9) != "per_node=") {
      return ShorthandError(opt_pos, std::string(term),
                            fmt::format("unknown option '{}' (known: per_node=N)", opt));
    }
    ASSIGN_OR_RETURN(t.per_node, ShorthandCount(opt.substr(9), opt_pos + 9, std::string(term),
                                                kMaxDevicesPerNode));
  }
  if (t.devices % t.per_node != 0) {
    return ShorthandError(
        count_pos, std::string(term),
        fmt::format("{} devices do not fill whole nodes of {}", t.devices, t.per_node));
  }
  if (t.devices / t.per_node > kMaxNodesPerEntry) {
    return ShorthandError(
        count_pos, std::string(term),
        fmt::format("{} nodes are more than {}", t.devices / t.per_node, kMaxNodesPerEntry));
  }
  return t;
}

// The nodes of one term, named after its type (a100-1, a100-2, ...), in the one rack.
void AddShorthandNodes(const ShorthandTerm& t, Cluster& cluster) {
  int64_t node_count = t.devices / t.per_node;
  size_t width = std::to_string(node_count).size();
  for (int64_t k = 1; k <= node_count; ++k) {
    Node node;
    node.name = fmt::format("{}-{:0{}}", t.written, k, width);
    node.rack = RackId(0);
    node.first_device = DeviceId(static_cast<int32_t>(cluster.devices.size()));
    node.device_count = static_cast<int32_t>(t.per_node);
    node.host_bandwidth = kDefaultHostBandwidth;
    node.host_latency_s = kDefaultHostLatency;
    node.nic_bandwidth = kShorthandNicBandwidth;
    node.nic_latency_s = kShorthandNicLatency;
    NodeId id(static_cast<int32_t>(cluster.nodes.size()));
    for (int32_t d = 0; d < node.device_count; ++d) {
      Device dev;
      dev.type = t.type;
      dev.node = id;
      dev.local_index = d;
      cluster.devices.push_back(dev);
    }
    cluster.racks[0].nodes.push_back(id);
    cluster.nodes.push_back(std::move(node));
  }
}

}  // namespace

Result<Cluster> ParseClusterYaml(std::string_view text, const std::string& file_name) {
  ASSIGN_OR_RETURN(const DocValue root, ParseYamlDocument(text, file_name));
  return ParseRoot(DocReader(file_name), root);
}

Result<Cluster> ParseClusterShorthand(std::string_view spec) {
  Cluster cluster;
  cluster.name = std::string(spec);
  cluster.catalog = DeviceCatalog::BuiltIn();
  Rack rack;
  rack.name = "rack-1";
  rack.latency_s = kShorthandRackLatency;
  cluster.racks.push_back(rack);
  // The one rack's uplink never lies on a path; it is set non-blocking (the sum of the NICs)
  // so that summaries do not show a zero.

  std::vector<ShorthandTerm> terms;
  int64_t total_devices = 0;
  int64_t total_nodes = 0;
  size_t pos = 0;
  while (true) {
    size_t end = spec.find(',', pos);
    if (end == std::string_view::npos) end = spec.size();
    size_t begin = pos;
    while (begin < end && spec[begin] == ' ') ++begin;
    size_t stop = end;
    while (stop > begin && spec[stop - 1] == ' ') --stop;
    std::string_view term = spec.substr(begin, stop - begin);
    if (term.empty()) return ShorthandError(begin, "", "empty term");
    size_t eq = term.find('=');
    if (eq == std::string_view::npos) {
      return ShorthandError(begin, std::string(term), "missing '=COUNT'");
    }
    ASSIGN_OR_RETURN(const ShorthandTerm t,
                     ParseShorthandTerm(term, begin, eq, cluster.catalog, terms));
    const size_t count_pos = begin + eq + 1;
    total_nodes += t.devices / t.per_node;
    if (total_nodes > kMaxNodes) {
      return ShorthandError(count_pos, std::string(term),
                            fmt::format("more than {} nodes in all", kMaxNodes));
    }
    total_devices += t.devices;
    if (total_devices > kMaxDevices) {
      return ShorthandError(count_pos, std::string(term),
                            fmt::format("more than {} devices in all", kMaxDevices));
    }
    terms.push_back(t);
    if (end == spec.size()) break;
    pos = end + 1;
  }

  for (const ShorthandTerm& t : terms) AddShorthandNodes(t, cluster);
  cluster.racks[0].uplink_bandwidth =
      kShorthandNicBandwidth * static_cast<double>(cluster.nodes.size());
  cluster.Reindex();
  return cluster;
}

Result<Cluster> LoadCluster(const std::string& path_or_shorthand) {
  std::error_code ec;
  if (std::filesystem::exists(path_or_shorthand, ec)) {
    ASSIGN_OR_RETURN(std::string text, util::ReadFile(path_or_shorthand));
    return ParseClusterYaml(text, path_or_shorthand);
  }
  if (path_or_shorthand.find('=') != std::string::npos &&
      path_or_shorthand.find('/') == std::string::npos) {
    return ParseClusterShorthand(path_or_shorthand);
  }
  return Status::NotFound(
      fmt::format("{}: no such cluster file (expected a cluster YAML file or a shorthand like "
                  "v100=36,p100=36,k80=36)",
                  path_or_shorthand));
}

}  // namespace hetsched::model::io
