// What Slurm says about its nodes and jobs (`sinfo --json`, `squeue --json`: the openapi
// v0.0.38 records of Slurm 22.05), read into plain structs, and turned into what the daemon
// schedules: a node's devices as catalog types, a job's request in the daemon's job format.
// Pure functions: the Slurm backend (backends/slurm/slurm_backend.h) runs the commands,
// tests feed recorded outputs (tests/data/slurm/).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "model/catalog.h"
#include "model/cluster.h"
#include "util/status.h"

namespace hetsched::svc::slurm {

// One generic resource entry: "gpu:a100:4(S:0-1)" -> {gpu, a100, 4}; "gpu:4" -> {gpu, "", 4}.
struct Gres {
  std::string name;
  std::string type;  // "" when untyped
  int64_t count = 0;
};

struct Node {
  std::string name;
  std::string state;               // base state, lower case: idle, mixed, allocated, down, ...
  std::vector<std::string> flags;  // DRAIN, POWERED_DOWN, POWERING_UP, NOT_RESPONDING, ...
  std::vector<std::string> features;
  std::vector<std::string> partitions;
  std::vector<Gres> gres;
  int32_t sockets = 1;
  int32_t cpus = 1;
  std::string reason;
  std::string address;  // NodeAddr (Slurm makes it the name when none is set)
};

struct Job {
  int64_t id = 0;
  std::string name;
  std::string state;   // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, NODE_FAIL, ...
  std::string reason;  // state_reason: JobHeldAdmin, JobHeldUser, None, ...
  std::string partition;
  std::string account;
  std::string nodes;           // allocated (a hostlist expression)
  std::string required_nodes;  // what --nodelist / scontrol update NodeList asked for
  std::string comment;
  std::string admin_comment;
  std::string features;  // --constraint
  std::string command;   // the batch script's path ("" for sbatch --wrap)
  int64_t priority = 0;  // 0: held
  int32_t node_count = 1;
  std::vector<Gres> gres_per_node;        // from tres_per_node ("gres:gpu:a100:2")
  std::optional<int64_t> time_limit_min;  // none: unlimited
  int32_t exit_status = 0;                // waitpid status as Slurm keeps it (exit code << 8)
  int32_t restarts = 0;
};

// "gpu:a100:4(S:0-1),gpu:t4:2" or "gres:gpu:2" (the tres form, its "gres:" prefix dropped).
// kInvalidArgument naming the entry that does not read.
util::Result<std::vector<Gres>> ParseGres(std::string_view text);

// The whole output of `sinfo --json` / `squeue --json`. Errors (kInvalidArgument) name the
// record and field, e.g. "squeue --json: jobs[3].job_id: is not an integer".
util::Result<std::vector<Node>> ParseSinfoJson(std::string_view text);
util::Result<std::vector<Job>> ParseSqueueJson(std::string_view text);

// Whether Slurm would start jobs on the node now (up and responding, not drained, powered on).
bool NodeUsable(const Node& node);
bool NodeDrained(const Node& node);
// A state a job never leaves (it ran, or was cancelled, or Slurm gave it up).
bool JobEnded(const std::string& state);

// How Slurm's names map to the catalog (ServeConfig's `slurm:` block).
struct Mapping {
  // A GPU's GRES type, or for untyped GPUs a node feature, to a catalog device type
  // ("a100" -> "a100-80g"). A catalog type's own name maps to itself without an entry.
  std::map<std::string, std::string> device_types;
  // Nodes without GPUs hold one device of this catalog CPU type per socket ("" : such nodes
  // cannot join, and say so).
  std::string cpu_type;
  // Stacks of a GPU job that declares none (docs/slurm.md).
  std::vector<std::string> default_stacks = {"cuda"};
  // With tenants (serve --config's tenants:), a job's Slurm account names its tenant: the
  // account's entry here, else the account's own name.
  bool tenants = false;
  std::map<std::string, std::string> account_tenants;
};

// The node's devices as (catalog type, count) in Slurm's device order, or `problem` set.
BackendNode DescribeNode(const Node& node, const Mapping& mapping,
                         const model::DeviceCatalog& catalog);

// A job submitted with sbatch, as a request in the daemon's job format (docs/api.md) named
// `job_name`: its gang is its GPUs (one CPU socket without GPUs), its stacks those it declares
// (comment "stacks=..." or a --constraint naming stacks; else `default_stacks` for GPU jobs,
// the CPU type's for CPU jobs), a typed GPU request allows only that type, its time limit is
// Slurm's, its command the batch script (Slurm runs it; the daemon only needs to know that a
// command decides when the job ends), its tenant its account's (Mapping::tenants). kInvalidArgument
// saying why for what hetsched cannot place (several nodes, an unmapped GPU type).
util::Result<std::string> JobRequestOf(const Job& job, const std::string& job_name,
                                       const Mapping& mapping, const model::DeviceCatalog& catalog);

// The GPUs a job asks for on each of its nodes (a --gres count is per node, whatever --nodes
// says): their number, its gpu entries summed, and their GRES type ("" untyped).
struct GpuRequest {
  int64_t count = 0;
  std::string type;
};
GpuRequest GpusPerNode(const Job& job);

// Why no node of `nodes` can hold the job's GPUs on one node, naming its GRES and the largest
// node of a type it may use; "" when one can, and when no node has such GPUs at all (the
// daemon says why it cannot run then). O(nodes x GRES entries).
std::string NoNodeHolds(const Job& job, const std::vector<Node>& nodes, const Mapping& mapping,
                        const model::DeviceCatalog& catalog);

// What to do about what a Slurm tool said (`said`: its stderr, or the errors of its JSON) when
// that means it found no controller: no slurm.conf, or a controller that does not answer
// (`conf`: the SLURM_CONF hetsched exports, "" for Slurm's default). "" for other failures.
std::string UnreachableHint(std::string_view said, const std::string& conf);

// The catalog type for a GRES type or node feature (`mapping`, then the catalog's own names).
std::optional<std::string> CatalogTypeFor(const std::string& slurm_name, const Mapping& mapping,
                                          const model::DeviceCatalog& catalog);

// The cluster the daemon schedules when no cluster file describes Slurm's nodes: one rack
// (Slurm's topology is not read), each listed node with its devices, booting in `boot_s` and
// shutting down in `shutdown_s` (the power block's resume and suspend timeouts: Slurm knows
// bounds, not measurements). Nodes with a problem are left out and said in `problems`
// ("NODE: PROBLEM"). kInvalidArgument when no node is left.
util::Result<model::Cluster> ClusterOfNodes(const std::vector<BackendNode>& nodes, double boot_s,
                                            double shutdown_s, std::vector<std::string>* problems);

}  // namespace hetsched::svc::slurm
