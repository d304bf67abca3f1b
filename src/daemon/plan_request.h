// Plan requests: the body of POST /v1/plan, asking how one model or task DAG would be split
// over the live cluster (docs/api.md). Only the syntax and ranges are checked here; the
// service builds the model and reads the DAG against the nodes it considers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/model_spec.h"
#include "plan/model_partition.h"
#include "util/status.h"

namespace hetsched::svc {

struct PlanRequest {
  // Exactly one of: a model preset (llama-7b, llama-70b, gpt3-175b, ...) or a DAG document
  // (the JSON of docs/dag-format.md, task costs keyed by device type), kept as compact JSON.
  std::string model;
  std::string dag_json;
  // Which nodes the planner may use: "idle" (powered, undrained, every device up and free) or
  // "all" (the cluster as configured, whatever runs on it now).
  std::string nodes = "idle";
  // Model options, as `hetsched plan model` takes them (0 / "": the planner's default).
  model::PresetOptions preset;
  plan::ModelPartitionOptions partition;
  // DAG option: heft, cpop or peft.
  std::string algo = "heft";
};

// kInvalidArgument naming the field: "request body: batch: -1 (expected a whole number >= 1)".
util::Result<PlanRequest> ParsePlanRequest(std::string_view body);

}  // namespace hetsched::svc
