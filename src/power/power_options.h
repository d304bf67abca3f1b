// PowerOptions: how the power manager (src/power) runs a cluster's nodes: the policy by name and
// its knobs, and the electricity prices and carbon intensity energy is accounted with.
// The simulator takes them in sim::SimOptions::power; the daemon will take the same.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "power/tariff.h"
#include "util/status.h"

namespace hetsched::power {

struct PowerOptions {
  // always-on | idle-timeout | consolidate | cap, or idle-timeout+cap / consolidate+cap
  // (see power/power_manager.h for what each does).
  std::string policy = "always-on";
  // Slurm's SuspendTime: a node idle this long is suspended (powered down).
  double suspend_time_s = 600;
  // Slurm's SuspendTimeout: after a suspend request the node cannot be resumed for this long
  // (nor before its own shutdown time has passed).
  double suspend_timeout_s = 120;
  // Slurm's ResumeTimeout: a node not up this long after a resume request is marked down.
  double resume_timeout_s = 600;
  // Slurm's SuspendRate / ResumeRate: at most this many nodes suspended / resumed per minute;
  // 0: no limit (Slurm's defaults are 60 and 300).
  int32_t suspend_rate = 60;
  int32_t resume_rate = 300;
  std::vector<std::string> exclude_nodes;  // never suspended (Slurm's SuspendExcNodes)
  // consolidate: free devices per device type kept powered on beyond what the queue needs.
  int32_t headroom = 2;
  // An off node draws this fraction of its base power (BMC, NIC wake-on-LAN, PSU losses).
  double standby_fraction = 0.005;
  // cap: a job without a deadline runs at the most energy-efficient cap that costs at most
  // this fraction of its throughput.
  double cap_max_slowdown = 0.05;
  // Fault injection: boots of these nodes never complete (each is marked down after
  // resume_timeout_s).
  std::vector<std::string> boot_failure_nodes;

  Tariff tariff = Tariff::Flat(0.12);      // USD per kWh
  std::optional<double> carbon_g_per_kwh;  // carbon intensity of the electricity, when known
};

// Which parts of the policy are on.
struct PolicyParts {
  bool suspends = false;     // idle-timeout or consolidate
  bool consolidate = false;  // headroom + wake ahead
  bool caps = false;
};
util::Result<PolicyParts> ParsePowerPolicy(const std::string& name);
std::string PowerPolicyNames();

// Checks the options against the cluster: known policy and node names, non-negative times,
// rates, prices and fractions; device types with idle <= peak watts and nodes with base power
// >= 0; under a suspending policy every node that may be suspended boots in more than 0 s and
// within resume_timeout_s.
util::Status ValidatePowerOptions(const PowerOptions& options, const model::Cluster& cluster);

}  // namespace hetsched::power
