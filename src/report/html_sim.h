// Charts and tables of simulation runs for the HTML reports: utilization over time per device
// type, a Gantt chart of job runs per node, power and queue length over time, and side-by-side
// comparison bars. Built from sim::SimResult and its Timeline (SimOptions::timeline_sample_s).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "report/html.h"
#include "sim/engine.h"

namespace hetsched::report {

// One simulation to draw, under a label such as "naive baseline" or "hetsched".
struct SimRun {
  std::string label;
  const sim::SimResult* result = nullptr;  // not owned; must outlive the call
  std::string color;                       // its colour in charts comparing runs
  bool dashed = false;
};

// Colour of each device type of the cluster, by vendor and kind (NVIDIA green, AMD red, Huawei
// purple, CPU sockets blues); several types of one vendor get shades. Keys: type names.
std::map<std::string, std::string> DeviceTypeColors(const model::Cluster& cluster);

// Busy / available device time over the run, weighted by device count: accelerators (GPU, NPU,
// ASIC) and CPU sockets. NaN when the cluster has none of that kind.
struct UtilizationSummary {
  double accelerator = 0;
  double cpu = 0;
};
UtilizationSummary SummarizeUtilization(const model::Cluster& cluster,
                                        const sim::SimResult& result);

// Percent of each device type busy over time (one chart per run). `x_max_h` > 0 fixes the end
// of the time axis (hours) so that charts of several runs share it.
std::string UtilizationChart(const model::Cluster& cluster, const SimRun& run,
                             const std::string& id, double x_max_h = 0);
// Job runs as bars on the nodes they held, coloured by device type; failed runs in black.
// `workload` (optional) names the jobs in the tooltips.
std::string NodeGanttChart(const model::Cluster& cluster, const SimRun& run,
                           const model::Workload* workload, const std::string& id,
                           double x_max_h = 0);
// Cluster power draw (kW) over time, one line per run.
std::string PowerChart(const std::vector<SimRun>& runs, const std::string& id);
// Jobs waiting over time, one line per run.
std::string QueueChart(const std::vector<SimRun>& runs, const std::string& id);
// Small bar charts, one per metric (utilization, JCT, incompatible starts, energy, cost), with a
// bar per run.
std::vector<std::string> ComparisonCharts(const model::Cluster& cluster,
                                          const std::vector<SimRun>& runs);

// Adds the sections above for `runs` (one run: no comparison bars).
void AddSimulationSections(HtmlPage& page, const model::Cluster& cluster,
                           const model::Workload* workload, const std::vector<SimRun>& runs);

}  // namespace hetsched::report
