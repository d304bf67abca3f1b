// What the daemon's what-if and plan endpoints need from layers above it: a simulation of the
// live jobs, and plans turned into JSON. The daemon includes neither the simulator nor report/
// (docs/architecture.md); `hetsched serve` fills these in (cli/serve_analysis.h).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "model/cluster.h"
#include "model/job.h"
#include "model/model_spec.h"
#include "plan/dag_problem.h"
#include "plan/model_partition.h"
#include "plan/schedule.h"
#include "sched/scheduler.h"
#include "util/status.h"

namespace hetsched::svc {

// One simulated run of a workload from an empty cluster at time 0.
struct SimulatedRun {
  std::string policy;  // as resolved ("default" shows as what it stands for)
  double makespan_s = 0;
  double avg_jct_s = 0;
  double p99_jct_s = 0;
  int64_t preemptions = 0;
};

struct AnalysisHooks {
  // Simulates `workload` on `cluster` under `policy`; kInvalidArgument for an unknown policy.
  std::function<util::Result<SimulatedRun>(
      const model::Cluster& cluster, const model::Workload& workload, const std::string& policy,
      const sched::SchedulerOptions& options)>
      simulate;
  // A model's pipeline plan on `cluster`, as `hetsched plan model --json` prints it.
  std::function<nlohmann::ordered_json(const model::ModelSpec& spec, const model::Cluster& cluster,
                                       const plan::ModelPlan& plan)>
      model_plan_json;
  // A DAG schedule of `algo`, as `hetsched plan dag --json` prints it.
  std::function<nlohmann::ordered_json(const std::string& algo, const plan::Schedule& schedule,
                                       const plan::DagProblem& problem)>
      dag_schedule_json;
};

}  // namespace hetsched::svc
