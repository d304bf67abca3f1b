#include "report/html_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/html_sim.h"
#include "report/svg.h"
#include "util/units.h"

namespace hetsched::report {
namespace {

// Ten well-separated hues (Tableau 10 without its grey) for pipeline stages.
const std::vector<std::string>& StageColors() {
  static const std::vector<std::string> colors = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                  "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                  "#9c755f", "#2f4b7c"};
  return colors;
}

std::string N(double v) { return fmt::format("{:.1f}", v); }

std::string Seconds(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string StageLayers(const plan::StagePlan& s) {
  if (s.last_layer - s.first_layer == 1) return s.first_layer_name;
  return fmt::format("{}..{} ({})", s.first_layer_name, s.last_layer_name,
                     s.last_layer - s.first_layer);
}

}  // namespace

std::vector<std::string> ModelPlanHeaders() {
  return {"stage", "layers", "devices", "nodes", "tp x dp", "memory used", "latency / micro-batch"};
}

std::vector<std::vector<std::string>> ModelPlanRows(const model::ModelSpec& /*spec*/,
                                                    const plan::ModelPlan& plan) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const plan::StagePlan& s = plan.stages[i];
    std::string nodes;
    if (s.nodes.size() <= 2) {
      for (const std::string& n : s.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    } else {
      nodes = fmt::format("{}..{} ({})", s.nodes.front(), s.nodes.back(), s.nodes.size());
    }
    rows.push_back(
        {std::to_string(i), StageLayers(s), fmt::format("{} x {}", s.devices.size(), s.device_type),
         nodes, fmt::format("{} x {}", s.cost.tp, s.cost.dp),
         fmt::format(
             "{:.0f}% of {}",
             s.memory_capacity > 0 ? 100.0 * s.cost.memory.total() / s.memory_capacity : 0.0,
             util::FormatBytes(s.memory_capacity)),
         Seconds(s.cost.latency_s)});
  }
  return rows;
}

namespace {

// Where everything of a model plan chart goes: the strip of layers (coloured by stage) on top,
// a lane of device cells per node below, notes, then the legend.
struct PlanChartLayout {
  int width = 900;
  double left = 0, right = 20;
  double strip_y = 58, strip_h = 24, strip_w = 0;
  double grid_y = 0, lane = 22, grid_h = 0;
  double cell = 0;  // one device's width
  int32_t max_devices = 1;
  int legend_cols = 3;
  double legend_y = 0, height = 0;
  double layers = 1;

  PlanChartLayout(const model::Cluster& cluster, const model::ModelSpec& spec,
                  const plan::ModelPlan& plan, const std::vector<int32_t>& nodes, int hidden) {
    double name_w = 60;
    for (int32_t n : nodes) {
      max_devices = std::max(max_devices, cluster.nodes[n].device_count);
      name_w = std::max(name_w, 7.0 * cluster.nodes[n].name.size());
    }
    left = std::min(name_w, 170.0) + 16;
    grid_y = strip_y + strip_h + 34;
    cell = std::clamp((width - left - right - 150) / max_devices - 3, 6.0, 22.0);
    grid_h = std::max<size_t>(nodes.size(), 1) * lane;
    legend_y = grid_y + grid_h + (hidden > 0 ? 16 : 0) + (plan.host_bytes > 0 ? 16 : 0) + 22;
    const double legend_rows =
        static_cast<double>((plan.stages.size() + 1 + legend_cols - 1) / legend_cols);
    height = legend_y + legend_rows * 18 + 12;
    layers = std::max<double>(1, spec.layers.size());
    strip_w = width - left - right;
  }
  double LayerX(double layer) const { return left + layer / layers * strip_w; }
  double CellX(int32_t local_index) const { return left + local_index * (cell + 3); }
};

// Nodes with accelerators, in cluster order; beyond `max_nodes` of them only those the plan
// uses, with `hidden` the number left out.
std::vector<int32_t> ChartNodes(const model::Cluster& cluster, const plan::ModelPlan& plan,
                                int max_nodes, int& hidden) {
  std::vector<int32_t> nodes;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const model::Node& node = cluster.nodes[n];
    bool accel = false;
    for (int32_t k = 0; k < node.device_count; ++k) {
      accel = accel || cluster.type_of(cluster.device_of(model::NodeId(n), k)).kind !=
                           model::DeviceKind::kCpu;
    }
    if (accel) nodes.push_back(static_cast<int32_t>(n));
  }
  hidden = 0;
  if (static_cast<int>(nodes.size()) > max_nodes) {
    std::set<int32_t> used_nodes;
    for (const plan::StagePlan& st : plan.stages) {
      for (model::DeviceId d : st.devices) used_nodes.insert(cluster.device(d).node.value());
    }
    const size_t before = nodes.size();
    std::erase_if(nodes, [&](int32_t n) { return used_nodes.count(n) == 0; });
    hidden = static_cast<int>(before - nodes.size());
  }
  return nodes;
}

// Node lanes: names, a grey cell per accelerator no stage uses, the device type's colour swatch
// and name after the cells.
std::string NodeLanes(const model::Cluster& cluster, const plan::ModelPlan& plan,
                      const std::vector<int32_t>& nodes, const PlanChartLayout& at) {
  const auto type_colors = DeviceTypeColors(cluster);
  std::set<int32_t> used_devices;
  for (const plan::StagePlan& st : plan.stages) {
    for (model::DeviceId d : st.devices) used_devices.insert(d.value());
  }
  std::string out = "<g class=\"lanes\" fill=\"#4a5561\" font-size=\"11\">\n";
  for (size_t r = 0; r < nodes.size(); ++r) {
    const model::Node& node = cluster.nodes[nodes[r]];
    const double y = at.grid_y + r * at.lane;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", N(at.left - 8),
                       N(y + 14), EscapeXml(node.name));
    std::string type;
    for (int32_t k = 0; k < node.device_count; ++k) {
      const model::DeviceType& t = cluster.type_of(cluster.device_of(model::NodeId(nodes[r]), k));
      if (t.kind == model::DeviceKind::kCpu) continue;
      if (type.empty()) type = t.name;
      if (used_devices.count(node.first_device.value() + k)) continue;
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" rx=\"2\" fill=\"#e3e7eb\">"
          "<title>{}/{} {}: unused</title></rect>",
          N(at.CellX(k)), N(y + 2), N(at.cell), EscapeXml(node.name), k, EscapeXml(t.name));
    }
    auto c = type_colors.find(type);
    const double tx = at.CellX(at.max_devices) + 10;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" rx=\"2\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        N(tx), N(y + 5), c == type_colors.end() ? "#7f7f7f" : c->second, N(tx + 15), N(y + 14),
        EscapeXml(type));
  }
  return out + "</g>\n";
}

// Stage `i` in its colour: its span of the layer strip and a cell per device it uses, on the
// lanes of `row_of` (node id -> lane).
std::string StageMarks(const model::Cluster& cluster, const plan::ModelPlan& plan, size_t i,
                       const std::map<int32_t, size_t>& row_of, const PlanChartLayout& at) {
  const plan::StagePlan& s = plan.stages[i];
  const std::string color = StageColors()[i % StageColors().size()];
  std::string out = fmt::format("<g data-series=\"stage {}\" fill=\"{}\">\n", i, color);
  const double x0 = at.LayerX(s.first_layer), x1 = at.LayerX(s.last_layer);
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" stroke=\"#fff\"><title>stage {}: "
      "{}</title></rect>",
      N(x0), N(at.strip_y), N(std::max(1.0, x1 - x0)), N(at.strip_h), i, EscapeXml(StageLayers(s)));
  if (x1 - x0 >= 26) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#fff\" font-weight=\"600\">S{}"
        "</text>",
        N((x0 + x1) / 2), N(at.strip_y + 16), i);
  }
  for (model::DeviceId d : s.devices) {
    const model::Device& dev = cluster.device(d);
    auto r = row_of.find(dev.node.value());
    if (r == row_of.end()) continue;
    const double x = at.CellX(dev.local_index);
    const double y = at.grid_y + r->second * at.lane + 2;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" rx=\"2\"><title>{}/{} {}: stage {} "
        "({})</title></rect>",
        N(x), N(y), N(at.cell), EscapeXml(cluster.node(dev.node).name), dev.local_index,
        EscapeXml(s.device_type), i, EscapeXml(StageLayers(s)));
    if (at.cell >= 16) {
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#fff\" font-size=\"10\">{}"
          "</text>",
          N(x + at.cell / 2), N(y + 12), i);
    }
  }
  return out + "</g>\n";
}

// Legend: each stage's colour and devices, then "unused".
std::string StageLegend(const plan::ModelPlan& plan, const PlanChartLayout& at) {
  const size_t stages = plan.stages.size();
  std::string out = "<g class=\"legend\" fill=\"#1d2733\">\n";
  const double col_w = (at.width - at.left - at.right) / at.legend_cols;
  for (size_t i = 0; i <= stages; ++i) {
    const double x = at.left + (i % at.legend_cols) * col_w;
    const double y = at.legend_y + (i / at.legend_cols) * 18;
    const std::string color =
        i < stages ? StageColors()[i % StageColors().size()] : std::string("#e3e7eb");
    const std::string label =
        i < stages ? fmt::format("S{}: {} x {}, {} layers", i, plan.stages[i].devices.size(),
                                 plan.stages[i].device_type,
                                 plan.stages[i].last_layer - plan.stages[i].first_layer)
                   : std::string("unused accelerator");
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" rx=\"2\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        N(x), N(y - 9), color, N(x + 22), N(y), EscapeXml(label));
  }
  return out + "</g>\n";
}

}  // namespace

std::string ModelPlanChart(const model::Cluster& cluster, const model::ModelSpec& spec,
                           const plan::ModelPlan& plan, const std::string& id,
                           const std::string& title, int max_nodes) {
  int hidden = 0;
  const std::vector<int32_t> nodes = ChartNodes(cluster, plan, max_nodes, hidden);
  const PlanChartLayout at(cluster, spec, plan, nodes, hidden);
  std::string out = SvgChartStart(id, title, at.width, at.height);
  out += fmt::format(
      "<g fill=\"#4a5561\"><text x=\"{}\" y=\"{}\">layers, input to output ({} layers)</text>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">stages</text>"
      "<text x=\"{}\" y=\"{}\">accelerators by node</text></g>\n",
      N(at.left), N(at.strip_y - 8), spec.layers.size(), N(at.left - 8), N(at.strip_y + 16),
      N(at.left), N(at.grid_y - 10));
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f5f7\" stroke=\"#d5dbe1\"/>\n",
      N(at.left), N(at.strip_y), N(at.strip_w), N(at.strip_h));
  out += NodeLanes(cluster, plan, nodes, at);
  std::map<int32_t, size_t> row_of;
  for (size_t r = 0; r < nodes.size(); ++r) row_of[nodes[r]] = r;
  for (size_t i = 0; i < plan.stages.size(); ++i) out += StageMarks(cluster, plan, i, row_of, at);
  double note_y = at.grid_y + at.grid_h + 14;
  if (hidden > 0) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" fill=\"#4a5561\">{} more accelerator nodes, unused, not "
        "shown</text>\n",
        N(at.left), N(note_y), hidden);
    note_y += 16;
  }
  if (plan.host_bytes > 0) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" fill=\"#4a5561\">plus {} of optimizer state / embeddings "
        "offloaded to CPU-server memory</text>\n",
        N(at.left), N(note_y), EscapeXml(util::FormatBytes(plan.host_bytes)));
  }
  return out + StageLegend(plan, at) + "</svg>\n";
}

void AddModelPlanSection(HtmlPage& page, const model::Cluster& cluster,
                         const model::ModelSpec& spec, const plan::ModelPlan& plan,
                         const std::string& heading, const std::string& id) {
  page.AddSection(
      heading,
      fmt::format("{} ({:.1f}B parameters, {}): {} pipeline stages on {} accelerators; {} per "
                  "step (pipeline bubble {}), {:.0f} tokens/s.",
                  spec.name, static_cast<double>(spec.ParameterCount()) / 1e9,
                  plan.training ? "training" : "inference", plan.stages.size(), plan.devices_used,
                  Seconds(plan.step_s), Seconds(plan.bubble_s), plan.tokens_per_s));
  page.AddChart(ModelPlanChart(cluster, spec, plan, id,
                               fmt::format("{} on cluster {}", spec.name, cluster.name)));
  page.AddTable(ModelPlanHeaders(), ModelPlanRows(spec, plan));
}

std::string DagScheduleChart(const model::TaskGraph& graph, const plan::Schedule& schedule,
                             const std::string& id, const std::string& label) {
  GanttSpec spec;
  spec.id = id;
  spec.title = fmt::format("{}: {} tasks on {} processors, makespan {:.3f}", label,
                           graph.num_tasks(), graph.num_processors(), schedule.makespan);
  spec.x_label = "time (the DAG's time unit; seconds with --cluster)";
  std::map<std::string, int> series_of;
  std::vector<int> proc_series;
  for (const model::DagProcessor& p : graph.processors) {
    spec.rows.push_back(p.type.empty() ? p.name : p.name + " (" + p.type + ")");
    const std::string key = p.type.empty() ? "tasks" : p.type;
    auto [it, inserted] = series_of.emplace(key, static_cast<int>(spec.series.size()));
    if (inserted) {
      spec.series.push_back({key, StageColors()[spec.series.size() % StageColors().size()]});
    }
    proc_series.push_back(it->second);
  }
  for (size_t t = 0; t < schedule.placements.size() && t < graph.tasks.size(); ++t) {
    const plan::TaskPlacement& p = schedule.placements[t];
    if (p.processor < 0 || p.processor >= graph.num_processors()) continue;
    GanttBar b;
    b.row = p.processor;
    b.start = p.start;
    b.end = p.finish;
    b.series = proc_series[p.processor];
    b.tooltip = fmt::format("{}: {:.3f} to {:.3f}", graph.tasks[t].name, p.start, p.finish);
    spec.bars.push_back(std::move(b));
  }
  spec.x_max = schedule.makespan;
  return GanttChart(spec);
}

}  // namespace hetsched::report
