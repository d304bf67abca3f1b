// `hetsched demo`: the whole story on the shipped seed scenario in under a minute. Simulates the
// naive baseline (FIFO, first free device, software stacks ignored, machines always on) and
// hetsched's default configuration on the same cluster and day of jobs, plans the largest model
// the whole cluster can train against the largest the NVIDIA servers alone can, prints a
// side-by-side table and writes an HTML report (report/html*.h).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/data_dir.h"
#include "cli/sim_flags.h"
#include "model/model_spec.h"
#include "plan/largest_model.h"
#include "report/html.h"
#include "report/html_plan.h"
#include "report/html_sim.h"
#include "report/table.h"
#include "util/file.h"

namespace hetsched::cli {

namespace {

struct DemoFlags {
  std::string cluster;
  std::string workload;
  std::string out = "out/demo";
  bool no_plan = false;
  bool quiet = false;
};

// Prints "[i/n] what ..." before a step and its wall time after it (stderr, unless --quiet).
class Steps {
 public:
  Steps(int total, bool quiet) : total_(total), quiet_(quiet) {}
  void Begin(const std::string& what) {
    start_ = std::chrono::steady_clock::now();
    if (!quiet_) std::fprintf(stderr, "[%d/%d] %s ... ", ++done_, total_, what.c_str());
    std::fflush(stderr);
  }
  void End(const std::string& note) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!quiet_) std::fprintf(stderr, "%s(%.1f s)\n", note.empty() ? "" : (note + " ").c_str(), s);
  }

 private:
  int total_;
  bool quiet_;
  int done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

std::string Pct(double u) { return std::isnan(u) ? "n/a" : fmt::format("{:.1f} %", 100 * u); }
std::string Hours(double s) { return fmt::format("{:.2f} h", s / 3600); }

// "-38 %" from a to b; empty when a is 0 or either is not a number.
std::string Change(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || a == 0) return "";
  return fmt::format("{:+.0f} %", 100 * (b - a) / a);
}

struct PlanOutcome {
  std::string scope;  // "whole cluster", "NVIDIA servers only (a100-80g)"
  std::optional<plan::LargestModel> largest;
  std::string why_none;  // when nothing fits, or the scope does not exist in the cluster
};

// The NVIDIA accelerator type with the most devices in the cluster, or "" when there is none.
std::string NvidiaType(const model::Cluster& cluster) {
  std::string best;
  int32_t most = 0;
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
    const model::DeviceType& t = cluster.catalog.Get(id);
    if (t.vendor == "nvidia" && t.kind != model::DeviceKind::kCpu && count > most) {
      best = t.name;
      most = count;
    }
  }
  return best;
}

util::Result<PlanOutcome> PlanLargest(const model::Cluster& cluster, const std::string& only_type,
                                      const std::string& scope) {
  PlanOutcome out;
  out.scope = scope;
  plan::ModelPartitionOptions options;
  options.only_type = only_type;
  auto r = plan::FindLargestModel(model::PresetNames(), model::PresetOptions{}, cluster, options);
  if (r.ok()) {
    out.largest = std::move(r).value();
  } else if (r.status().code() == util::StatusCode::kInfeasible) {
    out.why_none = r.status().message();
  } else {
    return r.status();
  }
  return out;
}

std::string Accelerators(const plan::ModelPlan& p) {
  std::map<std::string, int> by_type;
  for (const plan::StagePlan& s : p.stages) by_type[s.device_type] += s.devices.size();
  std::string parts;
  for (const auto& [type, n] : by_type) {
    parts += fmt::format("{}{} x {}", parts.empty() ? "" : " + ", n, type);
  }
  return parts;
}

// The side-by-side table of the two simulations, as rows (metric, baseline, hetsched, change).
std::vector<std::vector<std::string>> SimRows(const model::Cluster& cluster,
                                              const sim::SimResult& a, const sim::SimResult& b) {
  const report::UtilizationSummary ua = report::SummarizeUtilization(cluster, a);
  const report::UtilizationSummary ub = report::SummarizeUtilization(cluster, b);
  return {
      {"GPU/NPU utilization", Pct(ua.accelerator), Pct(ub.accelerator),
       Change(ua.accelerator, ub.accelerator)},
      {"CPU utilization", Pct(ua.cpu), Pct(ub.cpu), Change(ua.cpu, ub.cpu)},
      {"jobs completed", fmt::format("{} of {}", a.jobs_completed, a.jobs_total),
       fmt::format("{} of {}", b.jobs_completed, b.jobs_total), ""},
      {"average JCT", Hours(a.avg_jct_s), Hours(b.avg_jct_s), Change(a.avg_jct_s, b.avg_jct_s)},
      {"p99 JCT", Hours(a.p99_jct_s), Hours(b.p99_jct_s), Change(a.p99_jct_s, b.p99_jct_s)},
      {"average wait in queue", Hours(a.avg_queue_s), Hours(b.avg_queue_s),
       Change(a.avg_queue_s, b.avg_queue_s)},
      {"starts failed on incompatible devices", std::to_string(a.compat_failures),
       std::to_string(b.compat_failures), ""},
      {"device-hours wasted on them", fmt::format("{:.1f}", a.wasted_device_hours),
       fmt::format("{:.1f}", b.wasted_device_hours), ""},
      {"energy", fmt::format("{:.0f} kWh", a.energy_kwh), fmt::format("{:.0f} kWh", b.energy_kwh),
       Change(a.energy_kwh, b.energy_kwh)},
      {"electricity cost", fmt::format("{:.2f} USD", a.energy_cost),
       fmt::format("{:.2f} USD", b.energy_cost), Change(a.energy_cost, b.energy_cost)},
      {"peak power", fmt::format("{:.1f} kW", a.peak_power_w / 1000),
       fmt::format("{:.1f} kW", b.peak_power_w / 1000), Change(a.peak_power_w, b.peak_power_w)},
      {"node power-state changes", std::to_string(a.node_power_transitions),
       std::to_string(b.node_power_transitions), ""},
  };
}

std::vector<std::vector<std::string>> PlanRows(const std::vector<PlanOutcome>& plans) {
  std::vector<std::vector<std::string>> rows(5);
  rows[0] = {"largest preset that fits"};
  rows[1] = {"accelerators used"};
  rows[2] = {"pipeline stages"};
  rows[3] = {"step time"};
  rows[4] = {"throughput"};
  for (const PlanOutcome& p : plans) {
    if (!p.largest) {
      rows[0].push_back("none fits");
      for (size_t i = 1; i < rows.size(); ++i) rows[i].push_back("-");
      continue;
    }
    const plan::ModelPlan& m = p.largest->plan;
    rows[0].push_back(fmt::format("{} ({:.0f}B)", p.largest->spec.name,
                                  static_cast<double>(p.largest->spec.ParameterCount()) / 1e9));
    rows[1].push_back(Accelerators(m));
    rows[2].push_back(std::to_string(m.stages.size()));
    rows[3].push_back(fmt::format("{:.2f} s", m.step_s));
    rows[4].push_back(fmt::format("{:.0f} tokens/s", m.tokens_per_s));
  }
  return rows;
}

std::string RenderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  report::Table t(headers);
  for (const auto& r : rows) t.AddRow(r);
  return t.Render();
}

int RunDemo(const DemoFlags& f) {
  const bool plans = !f.no_plan;
  Steps steps(plans ? 5 : 3, f.quiet);
  steps.Begin("loading " + std::filesystem::path(f.cluster).filename().string() + " and " +
              std::filesystem::path(f.workload).filename().string());
  SimFlags sf;
  sf.cluster = f.cluster;
  sf.trace = f.workload;
  sf.quiet = true;
  auto in = LoadSimInputs(sf);
  if (!in.ok()) {
    if (!f.quiet) std::fputs("\n", stderr);
    return ReportError(in.status());
  }
  in->options.timeline_sample_s = TimelineSampleFor(in->workload);
  steps.End(fmt::format("{} nodes, {} jobs", in->cluster.nodes.size(), in->workload.jobs.size()));

  // (1) What many clusters run today: one FIFO queue, the first free accelerator whatever its
  // software stack, every machine left on.
  SimInputs baseline_in = *in;
  baseline_in.options.sched.ignore_compat = true;
  baseline_in.options.power.policy = "always-on";
  steps.Begin("naive baseline: FIFO, first free device, stacks ignored, always on");
  auto baseline = RunOnePolicy(baseline_in, "fifo", true);
  if (!baseline.ok()) return ReportError(baseline.status());
  steps.End("");
  // (2) hetsched's defaults: the default policy, compatible devices only, consolidation.
  SimInputs het_in = std::move(*in);
  het_in.options.power.policy = "consolidate";
  steps.Begin("hetsched: default policy, compatible devices, power consolidation");
  auto het = RunOnePolicy(het_in, "default", true);
  if (!het.ok()) return ReportError(het.status());
  steps.End("");
  const model::Cluster& cluster = het_in.cluster;

  // (3) The largest model: whole cluster against the NVIDIA servers alone.
  std::vector<PlanOutcome> outcomes;
  if (plans) {
    steps.Begin("largest model the whole cluster can train");
    auto whole = PlanLargest(cluster, "", "whole cluster");
    if (!whole.ok()) return ReportError(whole.status());
    steps.End(whole->largest ? whole->largest->spec.name : "none fits");
    outcomes.push_back(std::move(whole).value());
    const std::string nv = NvidiaType(cluster);
    steps.Begin("largest model the NVIDIA servers alone can train");
    if (nv.empty()) {
      PlanOutcome none;
      none.scope = "NVIDIA servers only";
      none.why_none = "the cluster has no NVIDIA accelerators";
      outcomes.push_back(std::move(none));
      steps.End("no NVIDIA accelerators");
    } else {
      auto nvidia = PlanLargest(cluster, nv, "NVIDIA servers only (" + nv + ")");
      if (!nvidia.ok()) return ReportError(nvidia.status());
      steps.End(nvidia->largest ? nvidia->largest->spec.name : "none fits");
      outcomes.push_back(std::move(nvidia).value());
    }
  }

  const std::string workload_name = std::filesystem::path(f.workload).stem().string();
  const std::string intro =
      fmt::format("hetsched demo: cluster {} ({} nodes), workload {} ({} jobs)\n\n", cluster.name,
                  cluster.nodes.size(), workload_name, het_in.workload.jobs.size());
  const auto sim_rows = SimRows(cluster, *baseline, *het);
  std::string text = intro + RenderTable({"", "naive baseline", "hetsched", "change"}, sim_rows);
  std::vector<std::string> plan_headers = {"largest model"};
  for (const PlanOutcome& p : outcomes) plan_headers.push_back(p.scope);
  const auto plan_rows = PlanRows(outcomes);
  if (plans) {
    text += "\n" + RenderTable(plan_headers, plan_rows);
    for (const PlanOutcome& p : outcomes) {
      if (!p.largest) text += fmt::format("{}: {}\n", p.scope, p.why_none);
    }
  }

  // The report.
  report::HtmlPage page(
      "hetsched demo",
      fmt::format("Cluster {} ({} nodes) running workload {} ({} jobs): the naive baseline "
                  "against hetsched's default configuration.",
                  cluster.name, cluster.nodes.size(), workload_name, het_in.workload.jobs.size()));
  page.AddSection("Summary",
                  "Naive baseline: one FIFO queue, the first free device whatever its software "
                  "stack, every machine always on. hetsched: the default policy, only devices "
                  "whose stack the job can run on, idle machines consolidated and powered down.");
  page.AddTable({"", "naive baseline", "hetsched", "change"}, sim_rows);
  if (plans) page.AddTable(plan_headers, plan_rows);
  const std::vector<report::SimRun> runs = {{"naive baseline", &*baseline, "#8a949e", true},
                                            {"hetsched", &*het, "#1f77b4", false}};
  report::AddSimulationSections(page, cluster, &het_in.workload, runs);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const PlanOutcome& p = outcomes[i];
    if (p.largest) {
      report::AddModelPlanSection(page, cluster, p.largest->spec, p.largest->plan,
                                  "Largest model: " + p.scope, fmt::format("model-plan-{}", i));
    } else {
      page.AddSection("Largest model: " + p.scope, p.why_none);
    }
  }
  const std::string path = f.out + "/report.html";
  if (auto st = util::WriteFile(path, page.Render()); !st.ok()) return ReportError(st);
  text += "\nreport: " + path + "\n";
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

void AddDemoCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<DemoFlags>();
  auto* cmd = app.add_subcommand(
      "demo",
      "The whole story in a minute: a naive baseline against hetsched on the seed start-up "
      "cluster, the largest model it can train, and an HTML report");
  cmd->add_option("--cluster", flags->cluster,
                  "cluster YAML (default: the shipped clusters/seed-startup.yaml)");
  cmd->add_option("--workload", flags->workload,
                  "workload YAML/JSONL or Gavel trace (default: the shipped "
                  "workloads/seed-day.yaml)");
  cmd->add_option("--out", flags->out, "folder for report.html")->capture_default_str();
  cmd->add_flag("--no-plan", flags->no_plan, "skip the largest-model plans");
  cmd->add_flag("--quiet,-q", flags->quiet, "no progress lines");
  cmd->callback([flags, &result] {
    DemoFlags f = *flags;
    if (f.cluster.empty()) f.cluster = ExamplePath("clusters/seed-startup.yaml");
    if (f.workload.empty()) f.workload = ExamplePath("workloads/seed-day.yaml");
    result.exit_code = RunDemo(f);
  });
}

}  // namespace hetsched::cli
