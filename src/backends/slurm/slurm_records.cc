#include "backends/slurm/slurm_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "model/catalog.h"
#include "model/io/cluster_reader.h"

namespace hetsched::svc::slurm {
namespace {

using nlohmann::json;

std::vector<std::string> SplitList(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find_first_of(separators, start);
    const std::string_view part =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!part.empty()) out.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

bool ParseCount(std::string_view text, int64_t* out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && *out >= 0;
}

// Reads fields of one record, naming it in errors ("squeue --json: jobs[3].job_id: ...").
class Fields {
 public:
  Fields(const json& record, std::string where) : r_(record), where_(std::move(where)) {}

  util::Status Error(const std::string& field, const std::string& problem) const {
    return util::Status::InvalidArgument(fmt::format("{}.{}: {}", where_, field, problem));
  }
  // Missing or null: `fallback`.
  util::Result<std::string> String(const std::string& field, std::string fallback = "") const {
    const auto it = r_.find(field);
    if (it == r_.end() || it->is_null()) return fallback;
    if (!it->is_string()) return Error(field, "is not a string");
    return it->get<std::string>();
  }
  util::Result<std::optional<int64_t>> Integer(const std::string& field) const {
    const auto it = r_.find(field);
    if (it == r_.end() || it->is_null()) return std::optional<int64_t>();
    if (it->is_number_unsigned()) {
      // Slurm writes NO_VAL-like values as large unsigned numbers; they fit in int64.
      const uint64_t v = it->get<uint64_t>();
      if (v > static_cast<uint64_t>(INT64_MAX)) return Error(field, "is out of range");
      return std::optional<int64_t>(static_cast<int64_t>(v));
    }
    if (!it->is_number_integer()) return Error(field, "is not an integer");
    return std::optional<int64_t>(it->get<int64_t>());
  }
  util::Result<std::vector<std::string>> Strings(const std::string& field) const {
    std::vector<std::string> out;
    const auto it = r_.find(field);
    if (it == r_.end() || it->is_null()) return out;
    if (!it->is_array()) return Error(field, "is not a list");
    for (const json& v : *it) {
      if (!v.is_string()) return Error(field, "holds something that is not a string");
      out.push_back(v.get<std::string>());
    }
    return out;
  }

 private:
  const json& r_;
  std::string where_;
};

util::Result<json> ParseDocument(std::string_view text, const char* command, const char* list) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return util::Status::InvalidArgument(fmt::format("{}: the output is not JSON", command));
  }
  if (!doc.is_object() || !doc.contains(list) || !doc[list].is_array()) {
    return util::Status::InvalidArgument(
        fmt::format("{}: the output has no \"{}\" list (a Slurm without the openapi/v0.0.38 "
                    "data format?)",
                    command, list));
  }
  if (doc.contains("errors") && doc["errors"].is_array() && !doc["errors"].empty()) {
    return util::Status::Unavailable(
        fmt::format("{}: Slurm reports errors: {}", command, doc["errors"].dump()));
  }
  return doc;
}

// GRES entries as Slurm writes them: "gpu:a100:4,gpu:t4:2".
std::string GresText(const std::vector<Gres>& gres) {
  std::string out;
  for (const Gres& g : gres) {
    out += fmt::format("{}{}:{}{}", out.empty() ? "" : ",", g.name,
                       g.type.empty() ? "" : g.type + ":", g.count);
  }
  return out;
}

}  // namespace

util::Result<std::vector<Gres>> ParseGres(std::string_view text) {
  std::vector<Gres> out;
  for (std::string entry : SplitList(text, ",")) {
    const std::string original = entry;
    if (const size_t paren = entry.find('('); paren != std::string::npos) entry.resize(paren);
    if (entry.rfind("gres:", 0) == 0) entry = entry.substr(5);
    const std::vector<std::string> parts = SplitList(entry, ":");
    Gres g;
    int64_t count = 0;
    if (parts.size() == 1 || parts.size() > 3 || !ParseCount(parts.back(), &count)) {
      // "gpu" alone means one; "gpu:a100" (no count) too.
      if (parts.size() == 1 || (parts.size() == 2 && !ParseCount(parts[1], &count))) {
        g.name = parts[0];
        if (parts.size() == 2) g.type = parts[1];
        g.count = 1;
        out.push_back(g);
        continue;
      }
      return util::Status::InvalidArgument(fmt::format(
          "GRES '{}' does not read (expected NAME[:TYPE][:COUNT], e.g. gpu:a100:4)", original));
    }
    g.name = parts[0];
    if (parts.size() == 3) g.type = parts[1];
    g.count = count;
    out.push_back(g);
  }
  return out;
}

util::Result<std::vector<Node>> ParseSinfoJson(std::string_view text) {
  ASSIGN_OR_RETURN(json doc, ParseDocument(text, "sinfo --json", "nodes"));
  std::vector<Node> out;
  const json& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string where = fmt::format("sinfo --json: nodes[{}]", i);
    if (!nodes[i].is_object()) {
      return util::Status::InvalidArgument(where + ": is not an object");
    }
    const Fields f(nodes[i], where);
    Node n;
    ASSIGN_OR_RETURN(n.name, f.String("name"));
    if (n.name.empty()) return f.Error("name", "is missing");
    ASSIGN_OR_RETURN(n.address, f.String("address"));
    ASSIGN_OR_RETURN(n.state, f.String("state"));
    std::transform(n.state.begin(), n.state.end(), n.state.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    ASSIGN_OR_RETURN(n.flags, f.Strings("state_flags"));
    ASSIGN_OR_RETURN(std::string features, f.String("active_features"));
    n.features = SplitList(features, ",");
    ASSIGN_OR_RETURN(n.partitions, f.Strings("partitions"));
    ASSIGN_OR_RETURN(std::string gres, f.String("gres"));
    if (gres != "(null)") {
      auto parsed = ParseGres(gres);
      if (!parsed.ok()) return f.Error("gres", parsed.status().message());
      n.gres = std::move(parsed).value();
    }
    ASSIGN_OR_RETURN(auto sockets, f.Integer("sockets"));
    if (sockets) {
      if (*sockets < 1 || *sockets > 4096) return f.Error("sockets", "is not from 1 to 4096");
      n.sockets = static_cast<int32_t>(*sockets);
    }
    ASSIGN_OR_RETURN(auto cpus, f.Integer("cpus"));
    if (cpus) {
      if (*cpus < 1 || *cpus > 1 << 20) return f.Error("cpus", "is not from 1 to 1048576");
      n.cpus = static_cast<int32_t>(*cpus);
    }
    ASSIGN_OR_RETURN(n.reason, f.String("reason"));
    out.push_back(std::move(n));
  }
  return out;
}

util::Result<std::vector<Job>> ParseSqueueJson(std::string_view text) {
  ASSIGN_OR_RETURN(json doc, ParseDocument(text, "squeue --json", "jobs"));
  std::vector<Job> out;
  const json& jobs = doc["jobs"];
  out.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string where = fmt::format("squeue --json: jobs[{}]", i);
    if (!jobs[i].is_object()) {
      return util::Status::InvalidArgument(where + ": is not an object");
    }
    const Fields f(jobs[i], where);
    Job j;
    ASSIGN_OR_RETURN(auto id, f.Integer("job_id"));
    if (!id || *id <= 0) return f.Error("job_id", "is missing or not positive");
    j.id = *id;
    ASSIGN_OR_RETURN(j.name, f.String("name"));
    ASSIGN_OR_RETURN(j.state, f.String("job_state"));
    if (j.state.empty()) return f.Error("job_state", "is missing");
    ASSIGN_OR_RETURN(j.reason, f.String("state_reason"));
    ASSIGN_OR_RETURN(j.partition, f.String("partition"));
    ASSIGN_OR_RETURN(j.account, f.String("account"));
    ASSIGN_OR_RETURN(j.nodes, f.String("nodes"));
    ASSIGN_OR_RETURN(j.required_nodes, f.String("required_nodes"));
    ASSIGN_OR_RETURN(j.comment, f.String("comment"));
    ASSIGN_OR_RETURN(j.admin_comment, f.String("admin_comment"));
    ASSIGN_OR_RETURN(j.features, f.String("features"));
    ASSIGN_OR_RETURN(j.command, f.String("command"));
    ASSIGN_OR_RETURN(auto priority, f.Integer("priority"));
    j.priority = priority.value_or(0);
    ASSIGN_OR_RETURN(auto node_count, f.Integer("node_count"));
    if (node_count) {
      if (*node_count < 0 || *node_count > 100000) {
        return f.Error("node_count", "is not from 0 to 100000");
      }
      j.node_count = static_cast<int32_t>(*node_count);
    }
    ASSIGN_OR_RETURN(std::string tres_per_node, f.String("tres_per_node"));
    auto gres = ParseGres(tres_per_node);
    if (!gres.ok()) return f.Error("tres_per_node", gres.status().message());
    j.gres_per_node = std::move(gres).value();
    ASSIGN_OR_RETURN(j.time_limit_min, f.Integer("time_limit"));
    ASSIGN_OR_RETURN(auto exit_status, f.Integer("exit_code"));
    j.exit_status = static_cast<int32_t>(std::min<int64_t>(exit_status.value_or(0), INT32_MAX));
    ASSIGN_OR_RETURN(auto restarts, f.Integer("restart_cnt"));
    j.restarts = static_cast<int32_t>(std::min<int64_t>(restarts.value_or(0), INT32_MAX));
    out.push_back(std::move(j));
  }
  return out;
}

bool NodeDrained(const Node& node) {
  return node.state == "drained" || node.state == "draining" ||
         std::find(node.flags.begin(), node.flags.end(), "DRAIN") != node.flags.end();
}

bool NodeUsable(const Node& node) {
  static const char* const kUnusableFlags[] = {"FAIL",        "POWERED_DOWN",  "POWERING_DOWN",
                                               "POWER_DOWN",  "POWERING_UP",   "NOT_RESPONDING",
                                               "MAINTENANCE", "REBOOT_ISSUED", "INVALID_REG"};
  // Drained nodes are usable in this sense: their jobs run on (NodeDrained says the rest).
  if (node.state == "down" || node.state == "future" || node.state == "unknown" ||
      node.state == "error") {
    return false;
  }
  for (const std::string& flag : node.flags) {
    for (const char* bad : kUnusableFlags) {
      if (flag == bad) return false;
    }
  }
  return true;
}

bool JobEnded(const std::string& state) {
  return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" ||
         state == "NODE_FAIL" || state == "PREEMPTED" || state == "BOOT_FAIL" ||
         state == "DEADLINE" || state == "OUT_OF_MEMORY";
}

std::optional<std::string> CatalogTypeFor(const std::string& slurm_name, const Mapping& mapping,
                                          const model::DeviceCatalog& catalog) {
  if (auto it = mapping.device_types.find(slurm_name); it != mapping.device_types.end()) {
    return it->second;
  }
  if (const model::DeviceType* t = catalog.Find(slurm_name)) return t->name;
  return std::nullopt;
}

BackendNode DescribeNode(const Node& node, const Mapping& mapping,
                         const model::DeviceCatalog& catalog) {
  BackendNode out;
  out.name = node.name;
  out.address = node.address;
  out.up = NodeUsable(node);
  out.drained = NodeDrained(node);
  for (const Gres& g : node.gres) {
    if (g.name != "gpu" || g.count == 0) continue;  // other GRES (mps, shards) are not devices
    std::optional<std::string> type;
    if (!g.type.empty()) {
      type = CatalogTypeFor(g.type, mapping, catalog);
    } else {
      for (const std::string& feature : node.features) {
        if ((type = CatalogTypeFor(feature, mapping, catalog))) break;
      }
    }
    if (!type) {
      out.devices.clear();
      out.problem = g.type.empty()
                        ? fmt::format(
                              "its GPUs have no GRES type and none of its features ({}) maps to a "
                              "catalog device type (add one under slurm.device_types)",
                              fmt::join(node.features, ","))
                        : fmt::format(
                              "GRES type '{}' maps to no catalog device type (add '{}: TYPE' "
                              "under slurm.device_types; `hetsched catalog` lists the types)",
                              g.type, g.type);
      return out;
    }
    if (g.count > 4096) {
      out.devices.clear();
      out.problem = fmt::format("GRES '{}' counts {} GPUs, more than 4096", g.type, g.count);
      return out;
    }
    out.devices.emplace_back(*type, static_cast<int32_t>(g.count));
  }
  if (out.devices.empty()) {
    if (mapping.cpu_type.empty()) {
      out.problem =
          "it has no GPUs and slurm.cpu_type (the catalog CPU its sockets are) is not set";
      return out;
    }
    out.devices.emplace_back(mapping.cpu_type, node.sockets);
  }
  return out;
}

GpuRequest GpusPerNode(const Job& job) {
  GpuRequest out;
  for (const Gres& g : job.gres_per_node) {
    if (g.name != "gpu") continue;
    out.count += g.count;
    if (!g.type.empty()) out.type = g.type;
  }
  return out;
}

std::string NoNodeHolds(const Job& job, const std::vector<Node>& nodes, const Mapping& mapping,
                        const model::DeviceCatalog& catalog) {
  const GpuRequest asked = GpusPerNode(job);
  if (asked.count == 0) return "";
  const std::optional<std::string> asked_type =
      asked.type.empty() ? std::nullopt : CatalogTypeFor(asked.type, mapping, catalog);
  const Node* largest = nullptr;
  std::pair<std::string, int64_t> largest_holds;  // (catalog type, count) on `largest`
  for (const Node& n : nodes) {
    // Devices by catalog type: the daemon places a gang on one type.
    std::map<std::string, int64_t> by_type;
    for (const auto& [type, count] : DescribeNode(n, mapping, catalog).devices) {
      const bool allowed = asked_type ? type == *asked_type : type != mapping.cpu_type;
      if (allowed) by_type[type] += count;
    }
    for (const auto& [type, count] : by_type) {
      if (count >= asked.count) return "";
      if (largest == nullptr || count > largest_holds.second) {
        largest = &n;
        largest_holds = {type, count};
      }
    }
  }
  if (largest == nullptr) return "";
  return fmt::format(
      "it asks for gpu:{}{} on one node (a --gres count is per node), and no node holds that "
      "many: the largest, {}, has {} {} (GRES {})",
      asked.type.empty() ? "" : asked.type + ":", asked.count, largest->name, largest_holds.second,
      largest_holds.first, GresText(largest->gres));
}

std::string UnreachableHint(std::string_view said, const std::string& conf) {
  const auto says = [&](std::string_view what) { return said.find(what) != said.npos; };
  // Slurm 22.05 without a slurm.conf: "resolve_ctls_from_dns_srv: res_nsearch error: Unknown
  // host", then "fatal: Could not establish a configuration source".
  if (says("Could not establish a configuration source") || says("DNS SRV lookup failed") ||
      says("res_nsearch error")) {
    return "Slurm found no slurm.conf and looked its controller up in DNS: set slurm.conf in "
           "hetsched's config (exported as SLURM_CONF) to the cluster's slurm.conf "
           "(docs/slurm.md, \"Configuration\")";
  }
  // A controller that does not answer: the tools say "Unable to contact slurm controller
  // (connect failure)"; sinfo --json and squeue --json exit 0 with the error "Unspecified
  // error".
  if (says("Unable to contact slurm controller") || says("Unspecified error")) {
    return fmt::format(
        "the controller that {} names does not answer: is slurmctld running, and does this "
        "machine reach its SlurmctldHost? (docs/slurm.md, \"Configuration\")",
        conf.empty() ? "Slurm's default slurm.conf" : "SLURM_CONF=" + conf);
  }
  return "";
}

util::Result<std::string> JobRequestOf(const Job& job, const std::string& job_name,
                                       const Mapping& mapping,
                                       const model::DeviceCatalog& catalog) {
  if (job.node_count > 1) {
    return util::Status::InvalidArgument(fmt::format(
        "it asks for {} nodes; hetsched places single-node Slurm jobs (submit gangs that span "
        "nodes with `hetsched submit`)",
        job.node_count));
  }
  json request = {{"name", job_name}};
  request["command"] = {job.command.empty() ? fmt::format("(batch script of Slurm job {})", job.id)
                                            : job.command};
  const auto [gpus, gpu_type] = GpusPerNode(job);
  request["gang_size"] = std::max<int64_t>(gpus, 1);
  // Stacks: "stacks=a,b" in the comment, else a constraint naming stacks, else the default.
  std::vector<std::string> stacks;
  for (const std::string& word : SplitList(job.comment, " \t;")) {
    if (word.rfind("stacks=", 0) == 0) stacks = SplitList(word.substr(7), ",");
  }
  if (stacks.empty()) {
    for (const std::string& feature : SplitList(job.features, "&|,[]()")) {
      if (model::ParseStackRequirement(feature).ok() && !catalog.Find(feature)) {
        bool known = false;
        for (const model::DeviceType& t : catalog.types()) {
          for (const model::SoftwareStack& s : t.stacks) known = known || s.name == feature;
        }
        if (known) stacks.push_back(feature);
      }
    }
  }
  if (stacks.empty()) {
    if (gpus > 0) {
      stacks = mapping.default_stacks;
    } else if (const model::DeviceType* cpu = catalog.Find(mapping.cpu_type)) {
      for (const model::SoftwareStack& s : cpu->stacks) stacks.push_back(s.name);
    }
  }
  request["stacks"] = stacks;
  if (!gpu_type.empty()) {
    const auto type = CatalogTypeFor(gpu_type, mapping, catalog);
    if (!type) {
      return util::Status::InvalidArgument(
          fmt::format("it asks for GPU type '{}', which maps to no catalog device type", gpu_type));
    }
    // Only that type: the throughput table lists the types a job may use.
    request["throughput"] = {{*type, 1}};
  } else if (gpus == 0 && !mapping.cpu_type.empty()) {
    request["throughput"] = {{mapping.cpu_type, 1}};
  }
  if (job.time_limit_min && *job.time_limit_min > 0 && *job.time_limit_min < 5256000) {
    request["time_limit"] = fmt::format("{}m", *job.time_limit_min);
  }
  if (mapping.tenants && !job.account.empty()) {
    const auto mapped = mapping.account_tenants.find(job.account);
    request["tenant"] = mapped == mapping.account_tenants.end() ? job.account : mapped->second;
  }
  return request.dump();
}

util::Result<model::Cluster> ClusterOfNodes(const std::vector<BackendNode>& nodes, double boot_s,
                                            double shutdown_s, std::vector<std::string>* problems) {
  std::string nodes_yaml;
  for (const BackendNode& n : nodes) {
    if (!n.problem.empty() || n.devices.empty()) {
      problems->push_back(
          fmt::format("{}: {}", n.name, n.problem.empty() ? "no devices" : n.problem));
      continue;
    }
    nodes_yaml += fmt::format("  - name: '{}'\n    devices:\n", n.name);
    for (const auto& [type, count] : n.devices) {
      nodes_yaml += fmt::format("      - {{type: '{}', count: {}}}\n", type, count);
    }
    nodes_yaml += fmt::format(
        "    nic: {{bandwidth: 100Gb/s, latency: 2us}}\n    boot_time: {}s\n    shutdown_time: "
        "{}s\n",
        boot_s, shutdown_s);
  }
  if (nodes_yaml.empty()) {
    return util::Status::InvalidArgument(
        "Slurm lists no node hetsched can use in the managed partitions (see the problems "
        "above, and slurm.partitions)");
  }
  // Link figures are the shorthand's defaults (docs/cluster-format.md): pass a cluster file
  // for real ones.
  const std::string yaml = fmt::format(
      "name: slurm\n"
      "racks:\n"
      "  - {{name: rack-1, uplink_bandwidth: 100Gb/s, latency: 1us}}\n"
      "nodes:\n{}",
      nodes_yaml);
  return model::io::ParseClusterYaml(yaml, "<Slurm's nodes>");
}

}  // namespace hetsched::svc::slurm
