// The flags `simulate` and `compare` share, and loading their inputs (cluster, trace,
// throughput file, faults) into simulator options, with exit-status-2 errors for bad input.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "model/profile.h"
#include "power/power_options.h"
#include "sched/replica_plan.h"
#include "sim/engine.h"
#include "util/status.h"

namespace hetsched::cli {

struct SimFlags {
  std::string cluster;
  std::string trace;
  std::string throughputs;  // empty: the shipped Gavel file, when the trace needs one
  std::string measure;      // "A-B"
  std::string faults;
  std::string json;
  std::string scorers = "speed";
  std::string placement = "topology";
  double round_s = 0;
  // Realistic preemption costs by default (docs/simulator.md); Gavel comparisons pass 0.
  double restore_s = 60;
  double checkpoint_save_s = 30;
  std::string estimates = "workload";
  double startup_s = 120;
  double checkpoint_s = 1800;
  double mtbf_s = 0;
  double mttr_s = 0;
  double aging = 0.25;
  double preempt_interval_s = 300;
  bool gavel_rebuilds = false;
  double preempt_quantum_s = -1;  // -1: from the preemption cost (sched::PreemptionPrice)
  double plan_incumbency = -1;    // -1: sched::PreemptionPrice::kPlanIncumbency
  double until_s = 0;
  double horizon_s = 0;
  int64_t max_rounds = 0;
  uint64_t seed = 0;
  bool ignore_compat = false;
  bool space_sharing = false;
  bool no_elastic = false;
  std::string elastic_range;  // "MIN:MAX" for every job that declares no range of its own
  int32_t max_jobs_per_lp = 1000;
  bool quiet = false;
  // Power (power/power_options.h); the lists and the tariff as given, parsed by LoadSimInputs.
  power::PowerOptions power;
  std::string exclude_nodes;       // "node,node,..."
  std::string boot_failure_nodes;  // same
  std::string tariff;              // "0-7:0.10,7-22:0.25,22-24:0.10"
  double price_kwh = -1;           // -1: not given (0.12 USD/kWh)
  std::string carbon;              // g CO2 per kWh; empty: not given
  // Inference services (sim/serving.h).
  std::string serving = "hetsched";
  std::string serving_calibration;  // empty: the shipped Splitwise table; "none": roofline
  double serving_interval_s = 300;
  double serving_horizon_s = 86400;                     // sim::ServingOptions::horizon_s
  double serving_risk_share = sched::kRiskBudgetShare;  // sim::ServingOptions::risk_share
  // A configuration file (cli/sim_config.h); flags given on the command line win over it.
  std::string config;
  const CLI::App* app = nullptr;  // the command these flags belong to (which flags were given)
};

// Adds the shared options to `cmd`.
void AddSimFlags(CLI::App& cmd, SimFlags& flags);

struct SimInputs {
  model::Cluster cluster;
  model::Workload workload;
  std::optional<model::ThroughputProfile> profile;
  sim::SimOptions options;  // everything but the policy and progress callback
  // The configuration file's training policy, when it names one (simulate runs it unless
  // --policy is given; compare takes its policies from --policies).
  std::optional<std::string> config_policy;
};

// Loads and checks the inputs: job types missing from the throughput file, a bad
// --measure-jobs, an unreadable fault file, --space-sharing without pair throughputs for the
// trace's job types, --max-jobs-per-lp below 1 are InvalidArgument / NotFound.
util::Result<SimInputs> LoadSimInputs(const SimFlags& flags);

// One simulation under `policy`, with a progress bar unless `quiet` ("default" shows as what it
// stands for); warns on stderr about failed LP solves. Defined in cli/cmd_simulate.cc, used by
// simulate, compare and demo.
util::Result<sim::SimResult> RunOnePolicy(const SimInputs& in, const std::string& policy,
                                          bool quiet);
// The metric table of `simulate` / `compare`, one column per result (cli/cmd_simulate.cc).
std::string ResultTable(const std::vector<sim::SimResult>& results);
// A timeline sample period that gives charts about a thousand to two thousand points over the
// span of the workload's arrivals: 60 s for a day.
double TimelineSampleFor(const model::Workload& workload);

// The non-empty pieces of `text` between `separator`s: "a,,b" -> {a, b}.
std::vector<std::string> SplitNonEmpty(const std::string& text, char separator);

}  // namespace hetsched::cli
