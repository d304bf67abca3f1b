#include "report/html_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "report/svg.h"

namespace hetsched::report {
namespace {

// Base colours: the vendors' own brand hues where they are distinct (NVIDIA green, AMD red),
// others chosen to stay apart from those.
std::vector<std::string> Shades(const model::DeviceType& t) {
  const bool cpu = t.kind == model::DeviceKind::kCpu;
  if (cpu && t.vendor == "amd") return {"#2a9d8f", "#57b8ad", "#1c6e65"};
  if (cpu) return {"#3b6fb6", "#6c93cf", "#284f85"};
  if (t.vendor == "nvidia") return {"#76b900", "#4e7d00", "#a3d94a"};
  if (t.vendor == "amd") return {"#d62728", "#9e1b1c", "#f07a7b"};
  if (t.vendor == "huawei") return {"#8e5cc4", "#6a3f99", "#b993e0"};
  if (t.vendor == "intel") return {"#0071c5", "#004f8a", "#5aa7e0"};
  return {"#e08e1b", "#b06a0c", "#f2b766", "#7f7f7f", "#bcbd22"};
}

double Hours(double s) { return s / 3600; }

std::string HoursText(double s) {
  if (s < 3600) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.2f} h", s / 3600);
}

bool AllPowerZero(const std::vector<SimRun>& runs) {
  for (const SimRun& r : runs) {
    for (const sim::TimelineSample& s : r.result->timeline.samples) {
      if (s.power_w != 0) return false;
    }
  }
  return true;
}

}  // namespace

std::map<std::string, std::string> DeviceTypeColors(const model::Cluster& cluster) {
  std::map<std::string, std::string> colors;
  std::map<std::string, int> used;  // vendor/kind -> shades handed out
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
    const model::DeviceType& t = cluster.catalog.Get(id);
    const std::string key = t.vendor + "/" + std::string(model::DeviceKindName(t.kind));
    const std::vector<std::string> shades = Shades(t);
    colors[t.name] = shades[used[key]++ % shades.size()];
  }
  return colors;
}

UtilizationSummary SummarizeUtilization(const model::Cluster& cluster,
                                        const sim::SimResult& result) {
  double acc_busy = 0, acc_n = 0, cpu_busy = 0, cpu_n = 0;
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
    const model::DeviceType& t = cluster.catalog.Get(id);
    auto it = result.utilization.find(t.name);
    const double u = it == result.utilization.end() ? 0 : it->second;
    if (t.kind == model::DeviceKind::kCpu) {
      cpu_busy += u * count;
      cpu_n += count;
    } else {
      acc_busy += u * count;
      acc_n += count;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {acc_n > 0 ? acc_busy / acc_n : nan, cpu_n > 0 ? cpu_busy / cpu_n : nan};
}

std::string UtilizationChart(const model::Cluster& cluster, const SimRun& run,
                             const std::string& id, double x_max_h) {
  const sim::Timeline& t = run.result->timeline;
  const auto colors = DeviceTypeColors(cluster);
  LineChartSpec spec;
  spec.id = id;
  spec.title = "Utilization by device type: " + run.label;
  spec.x_label = "time (h)";
  spec.y_label = "devices busy (%)";
  spec.y_max = 100;
  spec.x_max = x_max_h;
  spec.width = 900;
  for (size_t k = 0; k < t.types.size(); ++k) {
    LineSeries s;
    auto c = colors.find(t.types[k]);
    s.color = c == colors.end() ? "#7f7f7f" : c->second;
    const int total = k < t.type_total.size() ? t.type_total[k] : 0;
    s.name = fmt::format("{} ({})", t.types[k], total);
    for (const sim::TimelineSample& x : t.samples) {
      if (total <= 0 || k >= x.busy.size()) continue;
      s.x.push_back(Hours(x.time_s));
      s.y.push_back(100.0 * x.busy[k] / total);
    }
    spec.series.push_back(std::move(s));
  }
  return LineChart(spec);
}

std::string NodeGanttChart(const model::Cluster& cluster, const SimRun& run,
                           const model::Workload* workload, const std::string& id, double x_max_h) {
  const sim::Timeline& t = run.result->timeline;
  const auto colors = DeviceTypeColors(cluster);
  GanttSpec spec;
  spec.id = id;
  spec.title = "Jobs per node: " + run.label;
  spec.x_label = "time (h)";
  spec.rows = t.nodes;
  spec.x_max = std::max(x_max_h, Hours(run.result->horizon_s));
  for (const std::string& type : t.types) {
    auto c = colors.find(type);
    spec.series.push_back({type, c == colors.end() ? "#7f7f7f" : c->second});
  }
  const int failed = static_cast<int>(spec.series.size());
  spec.series.push_back({"failed run (incompatible device or fault)", "#1d2733"});
  for (const sim::RunSpan& r : t.runs) {
    const bool bad = r.end == sim::RunEnd::kFailed || r.end == sim::RunEnd::kFault;
    std::string job = fmt::format("job {}", r.job);
    if (workload != nullptr && r.job >= 0 && r.job < static_cast<int>(workload->jobs.size())) {
      job = workload->jobs[r.job].name;
    }
    const std::string type =
        r.type >= 0 && r.type < static_cast<int>(t.types.size()) ? t.types[r.type] : "?";
    const std::string tip =
        fmt::format("{}: {} x {}, {} to {} h ({}), {}", job, r.devices, type,
                    fmt::format("{:.2f}", Hours(r.start_s)), fmt::format("{:.2f}", Hours(r.end_s)),
                    HoursText(r.end_s - r.start_s), sim::RunEndName(r.end));
    for (int32_t node : r.nodes) {
      GanttBar b;
      b.row = node;
      b.start = Hours(r.start_s);
      b.end = Hours(r.end_s);
      b.series = bad ? failed : r.type;
      b.tooltip = tip;
      b.outlined = r.end == sim::RunEnd::kPreempted;
      spec.bars.push_back(std::move(b));
    }
  }
  return GanttChart(spec);
}

std::string PowerChart(const std::vector<SimRun>& runs, const std::string& id) {
  LineChartSpec spec;
  spec.id = id;
  spec.title = "Cluster power draw";
  spec.x_label = "time (h)";
  spec.y_label = "power (kW)";
  for (const SimRun& r : runs) {
    LineSeries s{r.label, r.color, {}, {}, r.dashed, true};
    for (const sim::TimelineSample& x : r.result->timeline.samples) {
      s.x.push_back(Hours(x.time_s));
      s.y.push_back(x.power_w / 1000);
    }
    spec.series.push_back(std::move(s));
  }
  return LineChart(spec);
}

std::string QueueChart(const std::vector<SimRun>& runs, const std::string& id) {
  LineChartSpec spec;
  spec.id = id;
  spec.title = "Jobs waiting in the queue";
  spec.x_label = "time (h)";
  spec.y_label = "jobs waiting";
  for (const SimRun& r : runs) {
    LineSeries s{r.label, r.color, {}, {}, r.dashed, true};
    for (const sim::TimelineSample& x : r.result->timeline.samples) {
      s.x.push_back(Hours(x.time_s));
      s.y.push_back(x.queued);
    }
    spec.series.push_back(std::move(s));
  }
  return LineChart(spec);
}

std::vector<std::string> ComparisonCharts(const model::Cluster& cluster,
                                          const std::vector<SimRun>& runs) {
  struct Metric {
    std::string id, title, unit;
    int decimals;
    std::function<double(const sim::SimResult&)> value;
  };
  const std::vector<Metric> metrics = {
      {"cmp-accel-util", "Accelerator utilization", " %", 1,
       [&](const sim::SimResult& r) { return 100 * SummarizeUtilization(cluster, r).accelerator; }},
      {"cmp-cpu-util", "CPU utilization", " %", 1,
       [&](const sim::SimResult& r) { return 100 * SummarizeUtilization(cluster, r).cpu; }},
      {"cmp-avg-jct", "Average job completion time", " h", 2,
       [](const sim::SimResult& r) { return r.avg_jct_s / 3600; }},
      {"cmp-p99-jct", "p99 job completion time", " h", 2,
       [](const sim::SimResult& r) { return r.p99_jct_s / 3600; }},
      {"cmp-compat", "Starts failed on incompatible devices", "", 0,
       [](const sim::SimResult& r) { return static_cast<double>(r.compat_failures); }},
      {"cmp-wasted", "Device-hours wasted on them", " h", 1,
       [](const sim::SimResult& r) { return r.wasted_device_hours; }},
      {"cmp-preemptions", "Preemptions per job", "", 2,
       [](const sim::SimResult& r) { return r.preemptions_per_job; }},
      {"cmp-preemption-cost", "Device-hours preemptions cost (save, restore, restarts)", " h", 1,
       [](const sim::SimResult& r) {
         return r.checkpoint_save_device_hours + r.restore_device_hours + r.restart_device_hours;
       }},
      {"cmp-energy", "Energy", " kWh", 0, [](const sim::SimResult& r) { return r.energy_kwh; }},
      {"cmp-cost", "Electricity cost", " USD", 2,
       [](const sim::SimResult& r) { return r.energy_cost; }},
  };
  std::vector<std::string> out;
  for (const Metric& m : metrics) {
    BarChartSpec spec;
    spec.id = m.id;
    spec.title = m.title;
    spec.unit = m.unit;
    spec.decimals = m.decimals;
    spec.width = 440;
    spec.categories = {""};
    for (const SimRun& r : runs) spec.series.push_back({r.label, r.color, {m.value(*r.result)}});
    out.push_back(BarChart(spec));
  }
  return out;
}

void AddSimulationSections(HtmlPage& page, const model::Cluster& cluster,
                           const model::Workload* workload, const std::vector<SimRun>& runs) {
  if (runs.size() > 1) {
    page.AddSection("Side by side",
                    "The same cluster and workload under each configuration. Lower is better "
                    "for completion times, failures, energy and cost; higher for utilization.");
    page.AddCharts(ComparisonCharts(cluster, runs));
  }
  page.AddSection("Utilization over time",
                  "Share of each device type's devices held by running jobs, sampled every " +
                      HoursText(runs.front().result->timeline.sample_s) +
                      " of simulated time. The legend gives each type's device count.");
  double end_h = 0;  // one time axis for all runs
  for (const SimRun& r : runs) end_h = std::max(end_h, Hours(r.result->horizon_s));
  std::vector<std::string> util;
  for (size_t i = 0; i < runs.size(); ++i) {
    util.push_back(UtilizationChart(cluster, runs[i], fmt::format("utilization-{}", i), end_h));
  }
  page.AddCharts(util);
  page.AddSection("Jobs per node",
                  "Each bar is one run of a job on the node it held devices on, coloured by "
                  "device type; black bars are runs that failed (a job started on a device its "
                  "software stack cannot use, or a node fault); outlined bars were preempted. "
                  "Hover a bar for the job.");
  for (size_t i = 0; i < runs.size(); ++i) {
    page.AddChart(NodeGanttChart(cluster, runs[i], workload, fmt::format("gantt-{}", i), end_h));
  }
  page.AddSection(
      "Power and queue",
      AllPowerZero(runs)
          ? "No power model was attached to these runs, so power reads 0 kW."
          : "Power: the whole cluster's draw, nodes and devices, including idle machines left "
            "on. Queue: jobs that have arrived and wait for devices.");
  page.AddCharts({PowerChart(runs, "power"), QueueChart(runs, "queue")});
}

}  // namespace hetsched::report
