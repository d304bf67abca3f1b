// SimConfig: what `simulate --config FILE` and `compare --config FILE` read (docs/simulator.md,
// "Configuration file"): the policy of each class of work, its weights, and per job kind a
// priority and a fairness weight, so that a study is one file rather than a command line.
//
//   training:            # every job that is not a service
//     policy: default
//     scorers: {speed: 1, energy: 0.5}
//     preempt_interval: 5m
//     elastic: true
//   services:            # kind: service
//     placement: hetsched
//     interval: 5m
//     training_value: {a100-80g: 1}
//   classes:
//     batch: {priority: -1, weight: 0.5}
//   tenants:             # teams, their weights and quotas (model/io/tenants_reader.h)
//     - {name: vision, weight: 1, quota: {v100: 2}}
//   fair_share: {reference_type: v100, half_life: 1h}
//
// Flags given on the command line win over the file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/io/job_classes.h"
#include "model/job.h"
#include "model/tenant.h"
#include "util/source_location.h"
#include "util/status.h"

namespace hetsched::cli {

struct SimConfig {
  std::optional<std::string> policy;
  std::optional<std::string> scorers;  // "name:weight,..." (sched::MakeScorers)
  std::optional<double> preempt_interval_s;
  std::optional<bool> elastic;
  std::optional<std::string> serving;  // sim::ServingMode name
  std::optional<double> serving_interval_s;
  // By device type name: what a device-hour of the type is worth to training, as a multiple
  // of its price (sim::ServingOptions::training_value); where the file says it, for errors
  // that need the cluster (a type it does not have).
  struct TrainingValue {
    double value = 0;
    util::SourceLocation where;
  };
  std::map<std::string, TrainingValue> training_value;
  // Added to the priority and multiplied into the priority_weight of every job of a kind.
  model::io::JobClasses classes;
  // Teams sharing the cluster; empty: one queue, as without a configuration file. Checked
  // against the cluster by model::io::ResolveTenants once it is known.
  model::Tenants tenants;
};

// Errors are "file:line:column: field: problem (expected ...)".
util::Result<SimConfig> ParseSimConfig(std::string_view text, const std::string& file_name);
util::Result<SimConfig> LoadSimConfig(const std::string& path);

// The classes' priorities and weights applied to the jobs of `workload`.
void ApplyClasses(const SimConfig& config, model::Workload& workload);

}  // namespace hetsched::cli
