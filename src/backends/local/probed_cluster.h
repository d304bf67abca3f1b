// Probed cluster: what `serve --backend local` schedules on when given no cluster. One node,
// named after this machine, holding its CPU sockets and the accelerators the vendors' tools
// report (backends/local/device_probe.h), each mapped to a catalog type by the model name
// the tool gives.
//
// The mapping never guesses an accelerator: a model the table below does not name (or names
// as ambiguous) is an error that names it and asks for --cluster. CPUs are matched by model
// too; a CPU the catalog does not list falls back, with a note saying so, to the catalog CPU
// of its vendor and architecture, since the format has no figure-less "generic" type and the
// scheduler needs the CPU only for its stack (x86_64).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/local/device_probe.h"
#include "model/cluster.h"
#include "util/status.h"

namespace hetsched::svc {

// This machine as the probe sees it (the inputs of BuildProbedCluster besides the devices).
struct HostInfo {
  std::string hostname;      // gethostname(2); becomes the node's name
  std::string arch;          // uname(2) machine: "x86_64", "aarch64", ...
  std::string cpu_vendor;    // /proc/cpuinfo vendor_id: "GenuineIntel", "AuthenticAMD"; "" if none
  std::string cpu_model;     // /proc/cpuinfo "model name" of the first processor; "" if none
  int32_t sockets = 1;       // distinct "physical id" values; 1 when the file gives none
  int32_t logical_cpus = 0;  // "processor" entries
};

// Fills the cpu_* fields, sockets and logical_cpus from the text of /proc/cpuinfo (hostname
// and arch are left alone). Text it does not understand leaves the defaults; never fails.
void ParseCpuInfo(std::string_view text, HostInfo* host);

// This machine: gethostname, uname and /proc/cpuinfo. kIoError when the hostname or the
// machine type cannot be read.
util::Result<HostInfo> ProbeHost();

// The catalog type for an accelerator, from its vendor and its model as the vendor's tool
// names it ("NVIDIA A100-SXM4-80GB" -> "a100-80g", "Arcturus GL-XL [AMD Instinct MI100]" ->
// "mi100", "910B3" -> "ascend-910b"). kNotFound when no catalog type is known to be that model
// (the message says why: unknown, or a name that covers parts of different figures).
util::Result<std::string> CatalogTypeForAccelerator(const ProbedDevice& device);

struct ProbedCluster {
  model::Cluster cluster;  // one rack, one node; devices: accelerators in probe order, CPUs last
  std::string yaml;        // the same cluster as a cluster file (docs/cluster-format.md)
  // One line per decision: the CPU's type and why, each vendor's devices and their types.
  std::vector<std::string> notes;
};

// Builds the node from `host` and `devices` (as ProbeDevices reports them). The devices of a
// vendor must carry the indices 0..n-1 (the runtime's numbering, which the daemon derives from
// their order in the node; see LaunchSpec::visible_devices). Errors (kInvalidArgument, each
// telling the user to pass --cluster): an accelerator no catalog type matches (all of them
// named at once), indices with gaps or repeats, a hostname that is no valid node name, and a
// machine with neither a catalog CPU nor an accelerator.
util::Result<ProbedCluster> BuildProbedCluster(const HostInfo& host,
                                               const std::vector<ProbedDevice>& devices);

// This machine: ProbeDevices(options), ProbeHost, then BuildProbedCluster. The probe's notes
// come first in the result's. A vendor tool that exists but failed is an error too (kUnavailable,
// its note included): the machine likely has devices it could not list, and a node without
// them would misdescribe it. `notes` gets the probe's notes even when this fails.
util::Result<ProbedCluster> ProbeLocalCluster(const ProbeOptions& options,
                                              std::vector<std::string>* notes);

}  // namespace hetsched::svc
