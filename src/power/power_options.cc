#include "power/power_options.h"

#include <fmt/format.h>

#include <cmath>

namespace hetsched::power {
namespace {

bool NonNegative(double x) { return std::isfinite(x) && x >= 0; }

util::Status CheckNodes(const std::vector<std::string>& names, const model::Cluster& cluster,
                        const char* flag) {
  for (const std::string& n : names) {
    if (!cluster.FindNode(n)) {
      return util::Status::InvalidArgument(fmt::format(
          "{} '{}': no node of that name in cluster '{}' (expected node names separated by "
          "commas, e.g. {})",
          flag, n, cluster.name, cluster.nodes.empty() ? "node-01" : cluster.nodes[0].name));
    }
  }
  return util::Status::Ok();
}

}  // namespace

std::string PowerPolicyNames() {
  return "always-on, idle-timeout, consolidate, cap, idle-timeout+cap, consolidate+cap";
}

util::Result<PolicyParts> ParsePowerPolicy(const std::string& name) {
  PolicyParts p;
  if (name == "always-on") return p;
  if (name == "cap") {
    p.caps = true;
    return p;
  }
  std::string base = name;
  const std::string suffix = "+cap";
  if (base.size() > suffix.size() &&
      base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    p.caps = true;
    base.resize(base.size() - suffix.size());
  }
  if (base == "idle-timeout") {
    p.suspends = true;
    return p;
  }
  if (base == "consolidate") {
    p.suspends = p.consolidate = true;
    return p;
  }
  return util::Status::InvalidArgument(
      fmt::format("--power '{}': unknown power policy (known: {})", name, PowerPolicyNames()));
}

util::Status ValidatePowerOptions(const PowerOptions& o, const model::Cluster& cluster) {
  ASSIGN_OR_RETURN(const PolicyParts parts, ParsePowerPolicy(o.policy));
  const std::pair<const char*, double> times[] = {{"--suspend-time", o.suspend_time_s},
                                                  {"--suspend-timeout", o.suspend_timeout_s},
                                                  {"--resume-timeout", o.resume_timeout_s},
                                                  {"--cap-max-slowdown", o.cap_max_slowdown},
                                                  {"--standby-fraction", o.standby_fraction}};
  for (const auto& [flag, v] : times) {
    if (!NonNegative(v)) {
      return util::Status::InvalidArgument(fmt::format("{} {}: expected a number >= 0", flag, v));
    }
  }
  if (o.cap_max_slowdown >= 1) {
    return util::Status::InvalidArgument(fmt::format(
        "--cap-max-slowdown {}: expected a fraction of throughput in [0, 1)", o.cap_max_slowdown));
  }
  if (o.standby_fraction > 1) {
    return util::Status::InvalidArgument(fmt::format(
        "--standby-fraction {}: expected a fraction of base power in [0, 1]", o.standby_fraction));
  }
  if (o.suspend_rate < 0 || o.resume_rate < 0 || o.headroom < 0) {
    return util::Status::InvalidArgument(
        fmt::format("--suspend-rate {}, --resume-rate {}, --headroom {}: expected counts >= 0",
                    o.suspend_rate, o.resume_rate, o.headroom));
  }
  if (o.carbon_g_per_kwh && !NonNegative(*o.carbon_g_per_kwh)) {
    return util::Status::InvalidArgument(
        fmt::format("--carbon {}: expected grams of CO2 per kWh >= 0", *o.carbon_g_per_kwh));
  }
  for (const TariffBand& b : o.tariff.bands()) {
    if (!NonNegative(b.usd_per_kwh)) {
      return util::Status::InvalidArgument(
          fmt::format("electricity price {}: expected USD per kWh >= 0", b.usd_per_kwh));
    }
  }
  RETURN_IF_ERROR(CheckNodes(o.exclude_nodes, cluster, "--exclude-nodes"));
  RETURN_IF_ERROR(CheckNodes(o.boot_failure_nodes, cluster, "--boot-failure-nodes"));
  for (const auto& [type, count] : cluster.DeviceTypeCounts()) {
    const model::DeviceType& t = cluster.catalog.Get(type);
    if (!NonNegative(t.idle_watts) || !NonNegative(t.peak_watts)) {
      return util::Status::InvalidArgument(
          fmt::format("device type '{}': idle_watts {} / peak_watts {}: expected watts >= 0",
                      t.name, t.idle_watts, t.peak_watts));
    }
    if (t.peak_watts < t.idle_watts) {
      return util::Status::InvalidArgument(fmt::format(
          "device type '{}': peak_watts {} is below idle_watts {} (expected peak >= idle)", t.name,
          t.peak_watts, t.idle_watts));
    }
  }
  for (const model::Node& n : cluster.nodes) {
    if (!NonNegative(n.base_watts) || !NonNegative(n.boot_s) || !NonNegative(n.shutdown_s)) {
      return util::Status::InvalidArgument(
          fmt::format("node '{}': base_power {} W, boot_time {} s, shutdown_time {} s: expected "
                      "values >= 0",
                      n.name, n.base_watts, n.boot_s, n.shutdown_s));
    }
    if (!parts.suspends) continue;
    bool excluded = false;
    for (const std::string& e : o.exclude_nodes) excluded = excluded || e == n.name;
    if (excluded) continue;
    if (n.boot_s <= 0) {
      return util::Status::InvalidArgument(fmt::format(
          "node '{}': boot_time 0 with power policy '{}', which powers nodes down (expected the "
          "node's boot_time in the cluster file, e.g. 180s, or --exclude-nodes {})",
          n.name, o.policy, n.name));
    }
    if (n.boot_s > o.resume_timeout_s) {
      return util::Status::InvalidArgument(fmt::format(
          "--resume-timeout {}: node '{}' boots in {} s, so every resume would time out "
          "(expected a resume timeout >= the longest boot time)",
          o.resume_timeout_s, n.name, n.boot_s));
    }
  }
  return util::Status::Ok();
}

}  // namespace hetsched::power
