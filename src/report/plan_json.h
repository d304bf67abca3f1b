// Plans as JSON: what `hetsched plan model --json`, `plan dag --json` and the daemon's
// POST /v1/plan print (docs/model-partitioning.md, docs/api.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "model/cluster.h"
#include "model/model_spec.h"
#include "plan/dag_problem.h"
#include "plan/model_partition.h"
#include "plan/schedule.h"

namespace hetsched::report {

// What a stage keeps in CPU-server memory: "-", "optimizer", "embedding", "optimizer+embedding".
std::string OffloadName(uint8_t flags);

// A model's pipeline plan: stages (devices as "node/index"), memory per device, link traffic.
nlohmann::ordered_json ModelPlanJson(const model::ModelSpec& spec, const model::Cluster& cluster,
                                     const plan::ModelPlan& plan);

// What a searching planner (`best`, `exact`) proved about its schedule.
struct DagProof {
  bool proved_optimal = false;
  double lower_bound = 0;  // no valid schedule is shorter
  std::string stopped_by;  // why it ended unproved ("time limit", ...); empty once proved
};

// A DAG schedule of `algo`: makespan, speedup over the best single processor, SLR, with `proof`
// its proved_optimal, lower_bound and stopped_by (null when empty), and one row per task.
nlohmann::ordered_json DagScheduleJson(const std::string& algo, const plan::Schedule& schedule,
                                       const plan::DagProblem& problem,
                                       const std::optional<DagProof>& proof = std::nullopt);

}  // namespace hetsched::report
