// Charts of plans for the HTML reports: a model plan drawn as pipeline stages across the
// cluster's devices (plan/model_partition.h), and a DAG schedule as a Gantt chart per processor
// (plan/schedule.h).
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/model_spec.h"
#include "model/task_graph.h"
#include "plan/model_partition.h"
#include "plan/schedule.h"
#include "report/html.h"

namespace hetsched::report {

// Top: the model's layers from input to output, one band per stage. Below: every accelerator of
// the nodes shown (all accelerator nodes when there are at most `max_nodes`, else only those
// the plan uses), each cell coloured by the stage it serves, grey when unused.
std::string ModelPlanChart(const model::Cluster& cluster, const model::ModelSpec& spec,
                           const plan::ModelPlan& plan, const std::string& id,
                           const std::string& title, int max_nodes = 40);

// One row per stage: layers, devices, nodes, tp x dp, memory used, latency.
std::vector<std::vector<std::string>> ModelPlanRows(const model::ModelSpec& spec,
                                                    const plan::ModelPlan& plan);
std::vector<std::string> ModelPlanHeaders();

// A section with the plan's summary line, its chart and its stage table.
void AddModelPlanSection(HtmlPage& page, const model::Cluster& cluster,
                         const model::ModelSpec& spec, const plan::ModelPlan& plan,
                         const std::string& heading, const std::string& id);

// Tasks as bars on the processors they run on; `label` names the algorithm.
std::string DagScheduleChart(const model::TaskGraph& graph, const plan::Schedule& schedule,
                             const std::string& id, const std::string& label);

}  // namespace hetsched::report
