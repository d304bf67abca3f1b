// `hetsched demo`: the whole story on the shipped seed scenario in under a minute. Runs an
// ablation ladder on the same cluster and day of jobs (a naive baseline, then one piece of
// hetsched added per rung, up to its full configuration), all booked to one common horizon;
// runs the same ladder on a small homogeneous cluster as a contrast; plans the largest model the
// whole cluster can train against the largest the NVIDIA servers alone can; prints the tables,
// writes an HTML report (report/html*.h, report/ladder.h) and, with --json, the same as JSON.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/data_dir.h"
#include "cli/sim_flags.h"
#include "model/model_spec.h"
#include "plan/largest_model.h"
#include "report/html.h"
#include "report/html_plan.h"
#include "report/html_sim.h"
#include "report/ladder.h"
#include "report/sim_json.h"
#include "report/table.h"
#include "sched/placement.h"
#include "util/file.h"

namespace hetsched::cli {

namespace {

struct DemoFlags {
  std::string cluster;
  std::string workload;
  std::string out = "out/demo";
  std::string json;  // also write the results as JSON here
  bool no_plan = false;
  bool no_homogeneous = false;
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

// How a stack is usually written: "CUDA", "ROCm", "CANN"; others as the catalog names them.
std::string StackName(const std::string& name) {
  if (name == "cuda") return "CUDA";
  if (name == "rocm") return "ROCm";
  if (name == "cann") return "CANN";
  return name;
}

// The software stacks the plan's stages run on, in stage order, each once.
std::vector<std::string> PlanStacks(const model::Cluster& cluster, const plan::ModelPlan& p) {
  std::vector<std::string> out;
  for (const plan::StagePlan& s : p.stages) {
    const model::DeviceType* type = cluster.catalog.Find(s.device_type);
    if (type == nullptr) continue;
    for (const model::SoftwareStack& st : type->stacks) {
      const std::string name = StackName(st.name);
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

// What the largest-model table means, printed under it and kept in the report and the JSON.
constexpr const char* kFitsMeans =
    "fits: the planner found stages whose weights, gradients, optimizer state and in-flight "
    "activations fit in 90 % of every device's memory, optimizer state or embeddings moved to "
    "CPU-server memory where they did not; step time and throughput are the cost model's "
    "estimates from datasheet peaks and link speeds, not measurements "
    "(docs/model-partitioning.md).";
constexpr const char* kCrossStackAssumes =
    "A plan whose stages use more than one software stack is one pipeline across vendors: it "
    "assumes a training framework that runs pipeline stages on different vendors' stacks "
    "(CUDA, ROCm, CANN) and moves activations and their gradients between them over the "
    "network. hetsched plans such a pipeline; it does not provide that framework.";

// One rung of the ablation ladder: the options it sets on top of the demo's inputs.
struct Rung {
  const char* key;
  const char* name;
  const char* adds;
  bool mixed_hardware;  // report::LadderRow::mixed_hardware
  const char* policy;
  bool ignore_compat;
  sched::PlacementMode placement;
  const char* power;
};

const std::vector<Rung>& Rungs() {
  using sched::PlacementMode;
  static const std::vector<Rung> rungs = {
      {"naive", "(1) naive",
       "policy fifo: jobs in arrival order, the first that cannot start blocks the rest, each "
       "on the device type with the most free devices among those with enough memory for it "
       "(CPU sockets count as devices; ties go to the type first in the device catalog), "
       "software stacks ignored (a start where the job's stack is "
       "missing fails after 120 s, and the job never goes back to that type), the first free "
       "devices in id order, every machine always on",
       false, "fifo", true, PlacementMode::kAgnostic, "always-on"},
      {"stack-filter", "(2) + stack filter",
       "only device types whose software stack the job can run on", true, "fifo", false,
       PlacementMode::kAgnostic, "always-on"},
      {"device-type-choice", "(3) + device-type choice",
       "policy fifo-het: each job on its fastest device type with room, re-decided as devices "
       "free up",
       true, "fifo-het", false, PlacementMode::kAgnostic, "always-on"},
      {"policy", "(4) + policy",
       "hetsched's default policy, srpt-het-fair: preemptive, smallest expected remaining time "
       "first, waiting jobs age, device types by a max-throughput plan",
       false, "default", false, PlacementMode::kAgnostic, "always-on"},
      {"power-management", "(5) + power management",
       "power policy consolidate: work packed onto fewer machines, idle ones powered down", false,
       "default", false, PlacementMode::kAgnostic, "consolidate"},
      {"data-aware-placement", "(6) + data-aware placement",
       "placement topology: a gang on the node or rack holding the job's data first, then in "
       "one island, one node, one rack",
       false, "default", false, PlacementMode::kTopology, "consolidate"},
  };
  return rungs;
}

// The `hetsched simulate` command that reproduces a rung on the demo's inputs.
std::string RungCommand(const Rung& r, const std::string& cluster, const std::string& workload,
                        double horizon_s) {
  return fmt::format(
      "hetsched simulate --cluster {} --trace {} --policy {}{} --placement {} --power {} "
      "--horizon {}",
      cluster, workload, r.policy, r.ignore_compat ? " --ignore-compat" : "",
      sched::PlacementModeName(r.placement), r.power, horizon_s);
}

// The ladder on one cluster and workload: every rung run once, then again to the common
// horizon, the latest end of the first runs. `charted`: rungs that get a timeline.
struct LadderRuns {
  std::vector<sim::SimResult> results;  // one per rung, all with the same horizon_s
  double horizon_s = 0;
  std::vector<report::LadderRow> Rows(const std::string& cluster,
                                      const std::string& workload) const {
    std::vector<report::LadderRow> rows;
    for (size_t i = 0; i < results.size(); ++i) {
      const Rung& r = Rungs()[i];
      rows.push_back({r.key, r.name, r.adds, RungCommand(r, cluster, workload, horizon_s),
                      r.mixed_hardware, &results[i]});
    }
    return rows;
  }
};

util::Result<std::vector<sim::SimResult>> RunRungs(SimInputs& in, double horizon_s,
                                                   double sample_s) {
  const sim::SimOptions base = in.options;
  std::vector<sim::SimResult> out;
  for (size_t i = 0; i < Rungs().size(); ++i) {
    const Rung& rung = Rungs()[i];
    in.options.sched.ignore_compat = rung.ignore_compat;
    in.options.sched.placement = rung.placement;
    in.options.power.policy = rung.power;
    in.options.horizon_s = horizon_s;
    const bool charted = i == 0 || i + 1 == Rungs().size();
    in.options.timeline_sample_s = charted ? sample_s : 0;
    auto r = RunOnePolicy(in, rung.policy, true);
    in.options = base;
    if (!r.ok()) return r.status();
    out.push_back(std::move(r).value());
  }
  return out;
}

util::Result<LadderRuns> RunLadder(SimInputs& in, double sample_s, Steps* steps) {
  LadderRuns out;
  ASSIGN_OR_RETURN(auto first, RunRungs(in, 0, 0));
  for (const sim::SimResult& r : first) out.horizon_s = std::max(out.horizon_s, r.end_s);
  // A whole second, so that the printed `simulate --horizon` commands reproduce the runs.
  out.horizon_s = std::ceil(out.horizon_s);
  if (steps != nullptr) {
    steps->End(fmt::format("latest end {}", Hours(out.horizon_s)));
    steps->Begin(fmt::format("the same runs again, each booked to {}", Hours(out.horizon_s)));
  }
  ASSIGN_OR_RETURN(out.results, RunRungs(in, out.horizon_s, sample_s));
  if (steps != nullptr) steps->End("");
  return out;
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

std::vector<std::vector<std::string>> PlanRows(const model::Cluster& cluster,
                                               const std::vector<PlanOutcome>& plans) {
  std::vector<std::vector<std::string>> rows(7);
  rows[0] = {"largest preset that fits"};
  rows[1] = {"accelerators used"};
  rows[2] = {"software stacks of its stages"};
  rows[3] = {"one pipeline across stacks"};
  rows[4] = {"pipeline stages"};
  rows[5] = {"step time (estimate)"};
  rows[6] = {"throughput (estimate)"};
  for (const PlanOutcome& p : plans) {
    if (!p.largest) {
      rows[0].push_back("none fits");
      for (size_t i = 1; i < rows.size(); ++i) rows[i].push_back("-");
      continue;
    }
    const plan::ModelPlan& m = p.largest->plan;
    const std::vector<std::string> stacks = PlanStacks(cluster, m);
    std::string joined;
    for (const std::string& st : stacks) joined += (joined.empty() ? "" : " + ") + st;
    rows[0].push_back(fmt::format("{} ({:.0f}B)", p.largest->spec.name,
                                  static_cast<double>(p.largest->spec.ParameterCount()) / 1e9));
    rows[1].push_back(Accelerators(m));
    rows[2].push_back(joined);
    rows[3].push_back(stacks.size() > 1 ? "yes (see below)" : "no");
    rows[4].push_back(std::to_string(m.stages.size()));
    rows[5].push_back(fmt::format("{:.2f} s", m.step_s));
    rows[6].push_back(fmt::format("{:.0f} tokens/s", m.tokens_per_s));
  }
  return rows;
}

std::string RenderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  report::Table t(headers);
  for (const auto& r : rows) t.AddRow(r);
  return t.Render();
}

// Each line of `text` broken into lines of at most `width` columns, the continuations after
// `indent`; never between a number and its " %".
std::string Wrap(const std::string& text, const std::string& indent = "", size_t width = 100) {
  std::string out;
  for (const std::string& para : SplitNonEmpty(text, '\n')) {
    std::vector<std::string> words;
    for (size_t pos = 0; pos < para.size();) {
      size_t space = para.find(' ', pos);
      if (space == std::string::npos) space = para.size();
      const std::string w = para.substr(pos, space - pos);
      if (!w.empty() && w[0] == '%' && !words.empty()) {
        words.back() += " " + w;
      } else if (!w.empty()) {
        words.push_back(w);
      }
      pos = space + 1;
    }
    // A line's own leading spaces stay.
    std::string line = para.substr(0, para.find_first_not_of(' '));
    const size_t lead = line.size();
    for (const std::string& w : words) {
      if (line.size() > lead && line.size() + 1 + w.size() > width) {
        out += line + "\n";
        line = indent + w;
        continue;
      }
      line += (line.size() > lead ? " " : "") + w;
    }
    out += line + "\n";
  }
  return out;
}

// `path` relative to the working directory when it lies under it, else as given: shorter
// commands to print.
std::string DisplayPath(const std::string& path) {
  std::error_code ec;
  const auto rel = std::filesystem::relative(path, std::filesystem::current_path(ec), ec);
  if (ec || rel.empty() || rel.string().starts_with("..")) return path;
  return rel.string();
}

// The ladder of one cluster and workload, with what its output and JSON need to say about it.
struct LadderPart {
  SimInputs in;
  std::string cluster_file, workload_file, workload_name;
  LadderRuns runs;
  std::vector<report::LadderRow> rows;  // point into runs.results

  nlohmann::json Json() const {
    nlohmann::json j;
    j["cluster"] = {
        {"name", in.cluster.name}, {"file", cluster_file}, {"nodes", in.cluster.nodes.size()}};
    j["workload"] = {
        {"name", workload_name}, {"file", workload_file}, {"jobs", in.workload.jobs.size()}};
    j["horizon_s"] = runs.horizon_s;
    nlohmann::json all = nlohmann::json::array();
    for (const report::LadderRow& row : rows) {
      nlohmann::json r = report::ToJson(*row.result);  // as `simulate --json` writes it
      r.erase("timeline");
      r["key"] = row.key;
      r["name"] = row.name;
      all.push_back(std::move(r));
    }
    j["runs"] = std::move(all);
    j["ladder"] = report::LadderJson(rows);
    j["mixed_hardware_pieces_buy_nothing"] = report::MixedHardwarePiecesBuyNothing(rows);
    j["verdict"] = report::LadderVerdict(rows);
    return j;
  }
};

util::Result<LadderPart> RunPart(const std::string& cluster_file, const std::string& workload_file,
                                 bool timeline, Steps* steps) {
  SimFlags sf;
  sf.cluster = cluster_file;
  sf.trace = workload_file;
  sf.quiet = true;
  ASSIGN_OR_RETURN(SimInputs in, LoadSimInputs(sf));
  if (steps != nullptr) {
    steps->End(fmt::format("{} nodes, {} jobs", in.cluster.nodes.size(), in.workload.jobs.size()));
    steps->Begin(
        fmt::format("ablation ladder: {} configurations, each adding one piece", Rungs().size()));
  }
  LadderPart part;
  part.cluster_file = cluster_file;
  part.workload_file = workload_file;
  part.workload_name = std::filesystem::path(workload_file).stem().string();
  ASSIGN_OR_RETURN(part.runs, RunLadder(in, timeline ? TimelineSampleFor(in.workload) : 0, steps));
  part.in = std::move(in);
  return part;
}

std::string LadderText(const LadderPart& part) {
  std::string text =
      RenderTable(report::LadderHeaders(), report::LadderTableRows(part.rows)) + "\n";
  for (const report::LadderRow& row : part.rows) {
    text += Wrap(row.name + ": " + row.adds + ".", "    ");
  }
  return text + "\n" + Wrap(report::LadderSummary(part.rows), "      ") +
         Wrap(report::LadderVerdict(part.rows), "") + "\n";
}

nlohmann::json PlanJson(const model::Cluster& cluster, const PlanOutcome& p) {
  nlohmann::json j;
  j["scope"] = p.scope;
  j["fits"] = p.largest.has_value();
  if (!p.largest) {
    j["why_none"] = p.why_none;
    return j;
  }
  const plan::ModelPlan& m = p.largest->plan;
  std::map<std::string, int> by_type;
  for (const plan::StagePlan& st : m.stages) by_type[st.device_type] += st.devices.size();
  const std::vector<std::string> stacks = PlanStacks(cluster, m);
  j["model"] = p.largest->spec.name;
  j["parameters"] = p.largest->spec.ParameterCount();
  j["accelerators"] = by_type;
  j["stages"] = m.stages.size();
  j["stacks"] = stacks;
  j["crosses_stacks"] = stacks.size() > 1;
  j["step_s"] = m.step_s;
  j["tokens_per_s"] = m.tokens_per_s;
  j["host_bytes"] = m.host_bytes;
  return j;
}

// The homogeneous contrast: the same ladder on the shipped three-GPU cluster and its day.
util::Result<LadderPart> RunHomogeneous(Steps& steps) {
  const std::string cluster_file = ExamplePath("clusters/homogeneous-3gpu.yaml");
  const std::string workload_file = ExamplePath("workloads/homogeneous-day.yaml");
  steps.Begin(
      "homogeneous contrast: the same ladder on homogeneous-3gpu.yaml and "
      "homogeneous-day.yaml, twice");
  ASSIGN_OR_RETURN(LadderPart part, RunPart(cluster_file, workload_file, false, nullptr));
  part.rows = part.runs.Rows(cluster_file, workload_file);
  steps.End(fmt::format("latest end {}", Hours(part.runs.horizon_s)));
  return part;
}

// The largest model: whole cluster against the NVIDIA servers alone.
util::Result<std::vector<PlanOutcome>> PlanLargestModels(const model::Cluster& cluster,
                                                         Steps& steps) {
  std::vector<PlanOutcome> outcomes;
  steps.Begin("largest model the whole cluster can train");
  ASSIGN_OR_RETURN(PlanOutcome whole, PlanLargest(cluster, "", "whole cluster"));
  steps.End(whole.largest ? whole.largest->spec.name : "none fits");
  outcomes.push_back(std::move(whole));
  const std::string nv = NvidiaType(cluster);
  steps.Begin("largest model the NVIDIA servers alone can train");
  if (nv.empty()) {
    PlanOutcome none;
    none.scope = "NVIDIA servers only";
    none.why_none = "the cluster has no NVIDIA accelerators";
    outcomes.push_back(std::move(none));
    steps.End("no NVIDIA accelerators");
    return outcomes;
  }
  ASSIGN_OR_RETURN(PlanOutcome nvidia,
                   PlanLargest(cluster, nv, "NVIDIA servers only (" + nv + ")"));
  steps.End(nvidia.largest ? nvidia.largest->spec.name : "none fits");
  outcomes.push_back(std::move(nvidia));
  return outcomes;
}

// Everything the demo found, and the sentences and tables its text and report share.
struct DemoStory {
  LadderPart seed;
  std::optional<LadderPart> homo;
  bool plans = false;
  std::vector<PlanOutcome> outcomes;

  const model::Cluster& cluster() const { return seed.in.cluster; }
  const sim::SimResult& baseline() const { return *seed.rows.front().result; }
  const sim::SimResult& het() const { return *seed.rows.back().result; }
  std::string Horizon() const { return Hours(seed.runs.horizon_s); }
  std::string SameHorizon() const {
    const std::string horizon = Horizon();
    return fmt::format(
        "Every run of this cluster is booked over the same {}, the latest end of any of them: a "
        "run that ends sooner keeps its machines drawing power (or powered down, as its power "
        "policy does it) until then, and utilization is busy device time over the device time of "
        "those {}. Job completion times (JCT) are unaffected.",
        horizon, horizon);
  }
  std::string Versus() const {
    return fmt::format(
        "naive baseline: rung {}; hetsched: rung {}, its full "
        "configuration (the ablation ladder below).",
        seed.rows.front().name, seed.rows.back().name);
  }
  std::vector<std::vector<std::string>> SimTable() const {
    return SimRows(cluster(), baseline(), het());
  }
  std::vector<std::string> PlanHeaders() const {
    std::vector<std::string> headers = {"largest model"};
    for (const PlanOutcome& p : outcomes) headers.push_back(p.scope);
    return headers;
  }
};

std::string DemoText(const DemoStory& d, const DemoFlags& f) {
  const model::Cluster& cluster = d.cluster();
  std::string text =
      fmt::format("hetsched demo: cluster {} ({} nodes), workload {} ({} jobs)\n\n", cluster.name,
                  cluster.nodes.size(), d.seed.workload_name, d.seed.in.workload.jobs.size()) +
      Wrap(d.SameHorizon(), "") + "\n" + Wrap(d.Versus(), "") + "\n" +
      RenderTable({"", "naive baseline", "hetsched", "change"}, d.SimTable());
  text += fmt::format("\nAblation ladder on {}: each rung adds one piece to the one above\n\n",
                      cluster.name);
  text += LadderText(d.seed);
  text += Wrap(fmt::format("Each rung is `hetsched simulate --cluster {} --trace {} --horizon {}` "
                           "with its policy, --ignore-compat, --placement and --power "
                           "(--json lists each command; docs/results.md).",
                           DisplayPath(f.cluster), DisplayPath(f.workload), d.seed.runs.horizon_s),
               "");
  if (d.homo) {
    const LadderPart& homo = *d.homo;
    text += fmt::format(
        "\nHomogeneous contrast: cluster {} ({} nodes), workload {} ({} jobs), the same ladder "
        "booked over {}\n\n",
        homo.in.cluster.name, homo.in.cluster.nodes.size(), homo.workload_name,
        homo.in.workload.jobs.size(), Hours(homo.runs.horizon_s));
    text += RenderTable(report::LadderHeaders(), report::LadderTableRows(homo.rows)) + "\n" +
            Wrap(report::LadderSummary(homo.rows), "      ") +
            Wrap(report::LadderVerdict(homo.rows), "");
  }
  if (d.plans) {
    text += "\n" + RenderTable(d.PlanHeaders(), PlanRows(cluster, d.outcomes));
    for (const PlanOutcome& p : d.outcomes) {
      if (!p.largest) text += fmt::format("{}: {}\n", p.scope, p.why_none);
    }
    text += Wrap(kFitsMeans, "") + Wrap(kCrossStackAssumes, "");
  }
  return text;
}

// A ladder's table, its summary lines, its verdict and its charts, as a section's body.
void AddLadderBody(report::HtmlPage& page, const std::vector<report::LadderRow>& rows,
                   bool with_adds, const std::string& chart_id) {
  page.AddTable(report::LadderHeaders(), report::LadderTableRows(rows));
  if (with_adds) {
    for (const report::LadderRow& row : rows) page.AddText(row.name + ": " + row.adds + ".");
  }
  for (const std::string& line : SplitNonEmpty(report::LadderSummary(rows), '\n'))
    page.AddText(line);
  page.AddText(report::LadderVerdict(rows));
  page.AddCharts(report::LadderCharts(rows, chart_id));
}

void AddLargestModelSections(report::HtmlPage& page, const DemoStory& d) {
  const model::Cluster& cluster = d.cluster();
  for (size_t i = 0; i < d.outcomes.size(); ++i) {
    const PlanOutcome& p = d.outcomes[i];
    if (p.largest) {
      std::string stacks;
      for (const std::string& st : PlanStacks(cluster, p.largest->plan)) {
        stacks += (stacks.empty() ? "" : " + ") + st;
      }
      report::AddModelPlanSection(page, cluster, p.largest->spec, p.largest->plan,
                                  fmt::format("Largest model: {} ({})", p.scope, stacks),
                                  fmt::format("model-plan-{}", i));
    } else {
      page.AddSection("Largest model: " + p.scope, p.why_none);
    }
  }
}

report::HtmlPage DemoReport(const DemoStory& d) {
  const model::Cluster& cluster = d.cluster();
  report::HtmlPage page(
      "hetsched demo",
      fmt::format("Cluster {} ({} nodes) running workload {} ({} jobs): a naive baseline, then "
                  "one piece of hetsched added at a time, up to its full configuration.",
                  cluster.name, cluster.nodes.size(), d.seed.workload_name,
                  d.seed.in.workload.jobs.size()));
  page.AddSection("Summary", d.SameHorizon());
  page.AddText(d.Versus());
  page.AddTable({"", "naive baseline", "hetsched", "change"}, d.SimTable());
  page.AddSection("The demo's ablation ladder",
                  fmt::format("Each rung adds one piece to the one above, on {} and {}, booked "
                              "over the same {}.",
                              cluster.name, d.seed.workload_name, d.Horizon()));
  AddLadderBody(page, d.seed.rows, true, "ladder");
  if (d.homo) {
    const LadderPart& homo = *d.homo;
    page.AddSection(
        "Homogeneous contrast",
        fmt::format("The same ladder on cluster {} ({} nodes) running workload {} "
                    "({} jobs), booked over {}.",
                    homo.in.cluster.name, homo.in.cluster.nodes.size(), homo.workload_name,
                    homo.in.workload.jobs.size(), Hours(homo.runs.horizon_s)));
    AddLadderBody(page, homo.rows, false, "homogeneous");
  }
  if (d.plans) {
    page.AddSection("Largest model", kFitsMeans);
    page.AddText(kCrossStackAssumes);
    page.AddTable(d.PlanHeaders(), PlanRows(cluster, d.outcomes));
  }
  const std::vector<report::SimRun> runs = {{"naive baseline", &d.baseline(), "#8a949e", true},
                                            {"hetsched", &d.het(), "#1f77b4", false}};
  report::AddSimulationSections(page, cluster, &d.seed.in.workload, runs);
  AddLargestModelSections(page, d);
  return page;
}

nlohmann::json DemoJson(const DemoStory& d) {
  nlohmann::json j = d.seed.Json();
  j["threshold"] = report::kNegligibleChange;
  j["baseline"] = d.seed.rows.front().key;
  j["hetsched"] = d.seed.rows.back().key;
  j["homogeneous"] = d.homo ? d.homo->Json() : nlohmann::json(nullptr);
  nlohmann::json plan_list = nlohmann::json::array();
  for (const PlanOutcome& p : d.outcomes) plan_list.push_back(PlanJson(d.cluster(), p));
  j["plans"] = std::move(plan_list);
  j["plan_notes"] = {{"fits", kFitsMeans}, {"crosses_stacks", kCrossStackAssumes}};
  return j;
}

int RunDemo(const DemoFlags& f) {
  DemoStory d;
  d.plans = !f.no_plan;
  const bool homogeneous = !f.no_homogeneous;
  Steps steps(3 + (homogeneous ? 1 : 0) + (d.plans ? 2 : 0), f.quiet);
  steps.Begin("loading " + std::filesystem::path(f.cluster).filename().string() + " and " +
              std::filesystem::path(f.workload).filename().string());
  auto main_part = RunPart(f.cluster, f.workload, true, &steps);
  if (!main_part.ok()) {
    if (!f.quiet) std::fputs("\n", stderr);
    return ReportError(main_part.status());
  }
  d.seed = std::move(main_part).value();
  d.seed.rows = d.seed.runs.Rows(f.cluster, f.workload);
  if (homogeneous) {
    auto homo = RunHomogeneous(steps);
    if (!homo.ok()) return ReportError(homo.status());
    d.homo = std::move(homo).value();
  }
  if (d.plans) {
    auto outcomes = PlanLargestModels(d.cluster(), steps);
    if (!outcomes.ok()) return ReportError(outcomes.status());
    d.outcomes = std::move(outcomes).value();
  }

  std::string text = DemoText(d, f);
  const std::string path = f.out + "/report.html";
  if (auto st = util::WriteFile(path, DemoReport(d).Render()); !st.ok()) return ReportError(st);
  text += "\nreport: " + path + "\n";
  if (!f.json.empty()) {
    if (auto st = util::WriteFile(f.json, DemoJson(d).dump(2) + "\n"); !st.ok()) {
      return ReportError(st);
    }
    text += "json: " + f.json + "\n";
  }
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

void AddDemoCommand(CLI::App& app, CommandResult& result) {
  auto flags = std::make_shared<DemoFlags>();
  auto* cmd = app.add_subcommand(
      "demo",
      "The whole story in a minute: an ablation ladder from a naive baseline to hetsched on the "
      "seed start-up cluster, the same on a homogeneous cluster, the largest model it can "
      "train, and an HTML report");
  cmd->add_option("--cluster", flags->cluster,
                  "cluster YAML (default: the shipped clusters/seed-startup.yaml)");
  cmd->add_option("--workload", flags->workload,
                  "workload YAML/JSONL or Gavel trace (default: the shipped "
                  "workloads/seed-day.yaml)");
  cmd->add_option("--out", flags->out, "folder for report.html")->capture_default_str();
  cmd->add_option("--json", flags->json,
                  "also write what the demo prints as JSON to this file (docs/report.md)");
  cmd->add_flag("--no-plan", flags->no_plan, "skip the largest-model plans");
  cmd->add_flag("--no-homogeneous", flags->no_homogeneous,
                "skip the homogeneous contrast (the ladder on a three-GPU cluster)");
  cmd->add_flag("--quiet,-q", flags->quiet, "no progress lines");
  cmd->callback([flags, &result] {
    DemoFlags f = *flags;
    if (f.cluster.empty()) f.cluster = ExamplePath("clusters/seed-startup.yaml");
    if (f.workload.empty()) f.workload = ExamplePath("workloads/seed-day.yaml");
    result.exit_code = RunDemo(f);
  });
}

}  // namespace hetsched::cli
