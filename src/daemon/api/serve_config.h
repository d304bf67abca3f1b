// ServeConfig: what `hetsched serve --config FILE` reads (docs/operations.md): the cluster,
// backend, policy, listen address, tokens and database. Every field has a default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/slurm/slurm_records.h"
#include "daemon/api/http_api.h"
#include "daemon/serving_loop.h"
#include "k8s/objects.h"
#include "model/io/job_classes.h"
#include "model/tenant.h"
#include "obs/log.h"
#include "power/power_options.h"
#include "sched/placement.h"
#include "util/status.h"

namespace hetsched::svc {

struct ServeConfig {
  // A cluster YAML file or shorthand ("v100=4,k80=4"); empty: the shipped seed start-up
  // cluster for the virtual backend.
  std::string cluster;
  // virtual | local | slurm | kubernetes (a kube-scheduler extender: no job queue of its own)
  std::string backend = "virtual";
  std::string policy = "default";
  // Jobs with `elastic: {min, max}` run at a size the scheduler picks and changes (as
  // simulate's); false: at their gang_size.
  bool elastic = true;
  // Per job kind: added to each job's priority, multiplied into its weight (as simulate's).
  model::io::JobClasses classes;
  // Type scorers with weights (sched::MakeScorers, e.g. "speed:1,locality:0.3") and gang
  // placement (topology or agnostic), as `simulate --scorers` and `--placement` take them.
  std::string scorers = "speed";
  sched::PlacementMode placement = sched::PlacementMode::kTopology;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string database = "hetsched.db";
  double time_scale = 1;  // virtual backend: modeled seconds per wall second
  LogLevel log_level = LogLevel::kInfo;
  bool anonymous_read = true;
  std::vector<ApiToken> tokens;  // empty: an admin token is generated (hetsched.token)
  // tenants: and fair_share:, read as simulate's --config reads them (model/io/tenants_reader.h);
  // resolved against the cluster when the daemon starts. Empty: one queue, no tenants.
  model::Tenants tenants;
  double stop_grace_s = 30;
  // What a stop and resume costs a job (checkpoint write plus restore): the scheduler prices
  // preemptions with it (sched::SchedulerOptions::preemption_cost_s).
  double preemption_cost_s = 90;
  double keep_ended_s = 0;
  double history_every_s = 10;  // samples of the charted figures (GET /v1/history); 0: none
  // power: {policy, suspend_time, suspend_timeout, resume_timeout, suspend_rate, resume_rate,
  // exclude_nodes, headroom} (docs/operations.md); always-on by default.
  power::PowerOptions power;
  // serving: {scrape_every, replan_every, window, burst_window, ready_timeout, endpoints_file,
  // ports, hold_taken_back}
  // (docs/serving-live.md).
  LiveServingOptions serving;     // ended jobs deleted from the database this long after (0: never)
  bool synchronous_full = false;  // fsync every commit (survives power loss), else NORMAL
  // Local backend: logs, pid and exit files. Empty: `hetsched-local` beside the database, like
  // the token file, so a daemon's files stay together whatever its working directory.
  std::string local_state_dir;
  // slurm: {conf, bin_dir, partitions, device_types, cpu_type, default_stacks, output_dir,
  // poll_interval, start_timeout, accounts} (docs/slurm.md).
  struct Slurm {
    std::string conf;
    std::string bin_dir;
    std::vector<std::string> partitions;
    slurm::Mapping mapping;
    std::string output_dir = "hetsched-slurm";
    double poll_interval_s = 1;
    // A placement Slurm leaves pending this long is taken back (SlurmBackendOptions).
    double start_timeout_s = 120;
  } slurm;
  // kubernetes: {prefix, api, kubeconfig, context, node_cache, device_types, cpu_type,
  // rack_label, scorers, packing, locality, group_timeout, tenant_from, tenant_map}
  // (docs/kubernetes.md).
  struct Kubernetes {
    std::string prefix = "/k8s";
    std::string api = "none";  // none | in-cluster | kubeconfig
    std::string kubeconfig;    // empty: $KUBECONFIG, else ~/.kube/config
    std::string context;       // empty: the kubeconfig's current context
    bool node_cache = false;
    k8s::Mapping mapping;
    std::string scorers = "speed";
    double packing = 1;
    double locality = 1;
    double group_timeout_s = 60;
  } kubernetes;
};

// Parses a config document; relative paths (cluster file, database, local state dir) are
// resolved against `base_dir` (the config file's folder). Errors are
// "file:line:column: field: problem (expected ...)".
util::Result<ServeConfig> ParseServeConfig(std::string_view text, const std::string& file_name,
                                           const std::string& base_dir);
util::Result<ServeConfig> LoadServeConfig(const std::string& path);

// The local backend's state folder: `local_state_dir`, or `hetsched-local` beside the database.
std::string LocalStateDir(const ServeConfig& config);

// "HOST:PORT" with PORT 0..65535 (0: any free port) into the config's host and port.
util::Status ParseListen(std::string_view text, ServeConfig* config);

}  // namespace hetsched::svc
