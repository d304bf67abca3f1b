// `hetsched plan dag FILE`: schedule a task DAG with HEFT, CPOP, PEFT, a search (`best`) or the
// exact branch and bound; and the hidden `plan compare-random` that produced docs/results.md.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "model/io/cluster_reader.h"
#include "model/io/dag_reader.h"
#include "model/random_dag.h"
#include "model/topology.h"
#include "plan/cpop.h"
#include "plan/dag_exact.h"
#include "plan/dag_search.h"
#include "plan/heft.h"
#include "plan/peft.h"
#include "plan/schedule.h"
#include "report/html.h"
#include "report/html_plan.h"
#include "report/plan_json.h"
#include "report/table.h"
#include "util/file.h"

namespace hetsched::cli {
namespace {

const std::vector<std::string> kAlgos = {"heft", "cpop", "peft", "best", "exact"};

struct PlanDagFlags {
  std::string file;
  std::string algo = "heft";
  bool json = false;
  std::string html;  // write the schedules as Gantt charts to this HTML file
  std::string cluster;
  int32_t procs = 0;
  bool no_comm = false;
  int64_t iterations = -1;  // best: schedule evaluations; -1: no cap (the time limit ends it)
  double time_limit = 10;   // seconds for each of best and exact
  uint64_t seed = 1;
  int64_t max_nodes = 50'000'000;
};

// Largest --time-limit: about 11.6 days, far inside what a steady_clock deadline can hold.
constexpr double kMaxTimeLimit = 1e6;

struct AlgoRun {
  std::string algo;
  plan::Schedule schedule;
  std::string note;                       // "found by peft", "not proved optimal", ...
  std::optional<report::DagProof> proof;  // best and exact
  double seconds = 0;
};

// "80", "63.333", "0.5": three decimals without trailing zeros.
std::string Num(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{:.3f}", x);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

util::Status CheckFlags(const PlanDagFlags& flags) {
  if (!(flags.time_limit > 0 && flags.time_limit <= kMaxTimeLimit)) {
    return util::Status::InvalidArgument(
        fmt::format("--time-limit {:g}: expected a number of seconds > 0 and <= {:g}",
                    flags.time_limit, kMaxTimeLimit));
  }
  if (flags.max_nodes < 0) {
    return util::Status::InvalidArgument(
        fmt::format("--max-nodes {}: expected a whole number >= 0", flags.max_nodes));
  }
  if (flags.iterations < -1) {
    return util::Status::InvalidArgument(
        fmt::format("--iterations {}: expected a whole number >= 0", flags.iterations));
  }
  if (flags.procs < 0) {
    return util::Status::InvalidArgument(
        fmt::format("--procs {}: expected a whole number >= 1", flags.procs));
  }
  return util::Status::Ok();
}

// "12.5 s"; the limits a run stopped at, in its note.
std::string Seconds(double s) { return fmt::format("{:g} s", s); }

util::Result<AlgoRun> RunAlgo(const std::string& algo, const plan::DagProblem& problem,
                              const PlanDagFlags& flags) {
  AlgoRun run;
  run.algo = algo;
  const auto begin = std::chrono::steady_clock::now();
  // Each searching algorithm gets the whole limit, counted from its own start.
  const auto deadline = begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(flags.time_limit));
  const auto out_of_time = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  if (algo == "heft") {
    run.schedule = plan::Heft(problem);
  } else if (algo == "cpop") {
    run.schedule = plan::Cpop(problem);
  } else if (algo == "peft") {
    run.schedule = plan::Peft(problem);
  } else if (algo == "best") {
    plan::SearchOptions o;
    o.max_evaluations =
        flags.iterations >= 0 ? flags.iterations : std::numeric_limits<int64_t>::max();
    o.seed = flags.seed;
    o.should_stop = out_of_time;
    o.lower_bound = plan::MakespanLowerBound(problem);
    plan::SearchResult r = plan::BestSchedule(problem, o);
    run.schedule = std::move(r.schedule);
    report::DagProof proof;
    proof.proved_optimal = r.reached_lower_bound;
    proof.lower_bound = r.reached_lower_bound ? run.schedule.makespan : o.lower_bound;
    if (r.reached_lower_bound) {
      run.note = fmt::format("optimal: meets the lower bound; found by {} after {} evaluations",
                             r.found_by, r.evaluations);
    } else {
      const bool capped = r.evaluations >= o.max_evaluations;
      proof.stopped_by = capped ? "iteration limit" : "time limit";
      run.note = fmt::format("found by {} after {} evaluations; not proved optimal: {} ({})",
                             r.found_by, r.evaluations, proof.stopped_by,
                             capped ? std::to_string(flags.iterations) : Seconds(flags.time_limit));
    }
    run.proof = proof;
  } else if (algo == "exact") {
    plan::ExactOptions o;
    o.max_nodes = flags.max_nodes;
    o.should_stop = out_of_time;
    plan::ExactResult r = plan::ExactSchedule(problem, o);
    run.schedule = std::move(r.schedule);
    report::DagProof proof;
    proof.proved_optimal = r.optimal;
    proof.lower_bound = r.lower_bound;
    if (r.optimal) {
      run.note = fmt::format("optimal ({} search nodes)", r.nodes);
    } else {
      proof.stopped_by = r.stopped ? "time limit" : "node limit";
      run.note = fmt::format(
          "NOT proved optimal: the {} ({}) ran out after {} search nodes; best schedule found "
          "shown (raise {})",
          proof.stopped_by, r.stopped ? Seconds(flags.time_limit) : std::to_string(flags.max_nodes),
          r.nodes, r.stopped ? "--time-limit" : "--max-nodes");
    }
    run.proof = proof;
  } else {
    return util::Status::InvalidArgument(
        fmt::format("--algo {}: unknown algorithm (expected one of heft, cpop, peft, best, "
                    "exact, all)",
                    algo));
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  // A planner returning an invalid schedule is a bug, never something to print as a plan.
  util::Status valid = plan::ValidateSchedule(problem, run.schedule);
  if (!valid.ok()) {
    return util::Status::Internal(
        fmt::format("{} produced an invalid schedule: {}", algo, valid.message()));
  }
  return run;
}

// "73 (proved optimal)", "64 (gap 3.1%, not proved optimal)".
std::string BoundText(const AlgoRun& run) {
  const report::DagProof& p = *run.proof;
  if (p.proved_optimal) return Num(p.lower_bound) + " (proved optimal)";
  const double m = run.schedule.makespan;
  return fmt::format("{} (gap {:.1f}%, not proved optimal)", Num(p.lower_bound),
                     p.lower_bound > 0 ? 100 * (m / p.lower_bound - 1) : 0.0);
}

std::string SummaryText(const AlgoRun& run, const plan::DagProblem& problem) {
  const model::TaskGraph& g = problem.graph();
  std::vector<int32_t> order(g.num_tasks());
  for (int32_t t = 0; t < g.num_tasks(); ++t) order[t] = t;
  const auto& pl = run.schedule.placements;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (pl[a].start != pl[b].start) return pl[a].start < pl[b].start;
    return pl[a].processor < pl[b].processor;
  });
  report::Table table({"task", "processor", "start", "finish"});
  for (int32_t t : order) {
    table.AddRow(
        {g.tasks[t].name, g.processors[pl[t].processor].name, Num(pl[t].start), Num(pl[t].finish)});
  }
  std::string out =
      fmt::format("algorithm: {}{}\n", run.algo, run.note.empty() ? "" : " (" + run.note + ")");
  out += table.Render();
  out += fmt::format("makespan: {}\n", Num(run.schedule.makespan));
  if (run.proof) out += fmt::format("lower bound: {}\n", BoundText(run));
  const double seq = problem.BestSequentialTime();
  if (std::isfinite(seq) && run.schedule.makespan > 0) {
    out += fmt::format("speedup: {} (over the best single processor, {})\n",
                       Num(seq / run.schedule.makespan), Num(seq));
  } else {
    out += "speedup: n/a (no single processor can run every task)\n";
  }
  const double cp = problem.MinCostCriticalPath();
  if (cp > 0) {
    out += fmt::format("SLR: {} (makespan / critical path at minimum costs, {})\n",
                       Num(run.schedule.makespan / cp), Num(cp));
  }
  return out;
}

// Processors from a cluster: every device, named node/index, with its device type.
struct ClusterSetup {
  std::unique_ptr<model::Cluster> cluster;
  std::unique_ptr<model::Topology> topology;
  std::vector<model::DagProcessor> processors;
};

util::Result<ClusterSetup> LoadClusterSetup(const std::string& path) {
  ClusterSetup setup;
  ASSIGN_OR_RETURN(model::Cluster cluster, model::io::LoadCluster(path));
  setup.cluster = std::make_unique<model::Cluster>(std::move(cluster));
  setup.topology = std::make_unique<model::Topology>(*setup.cluster);
  const model::Cluster& c = *setup.cluster;
  if (c.devices.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("--cluster {}: the cluster has no devices", path));
  }
  for (size_t d = 0; d < c.devices.size(); ++d) {
    const model::Device& dev = c.devices[d];
    setup.processors.push_back({fmt::format("{}/{}", c.node(dev.node).name, dev.local_index),
                                c.type_of(model::DeviceId(static_cast<int32_t>(d))).name});
  }
  return setup;
}

// How long data takes between processors: none with --no-comm, the cluster's paths with
// --cluster, else the DAG file's one bandwidth.
plan::TransferModel TransferFor(const model::TaskGraph& graph, const PlanDagFlags& flags,
                                const std::optional<ClusterSetup>& setup) {
  if (flags.no_comm) return plan::TransferModel::None(graph.num_processors());
  if (!setup) return plan::TransferModel::Uniform(graph.num_processors(), graph.bandwidth);
  const model::Topology& topo = *setup->topology;
  return plan::TransferModel::FromLinks(graph.num_processors(), [&](int32_t a, int32_t b) {
    const model::Path path = topo.Between(model::DeviceId(a), model::DeviceId(b));
    return plan::TransferModel::Link{path.latency_s, path.bandwidth};
  });
}

util::Status WriteScheduleHtml(const PlanDagFlags& flags, const model::TaskGraph& graph,
                               const std::vector<AlgoRun>& runs) {
  report::HtmlPage page(
      "hetsched plan dag: " + (graph.name.empty() ? flags.file : graph.name),
      fmt::format("{} tasks, {} edges, {} processors{}", graph.num_tasks(), graph.edges.size(),
                  graph.num_processors(), flags.no_comm ? " (communication ignored)" : ""));
  page.AddSection("Schedules",
                  "Each bar is a task on the processor it runs on, from its start to its "
                  "finish; gaps are waits for predecessors and their data. Hover a bar for "
                  "the task.");
  for (const AlgoRun& r : runs) {
    page.AddChart(report::DagScheduleChart(graph, r.schedule, "dag-" + r.algo, r.algo));
  }
  return util::WriteFile(flags.html, page.Render());
}

void PrintScheduleJson(const std::vector<AlgoRun>& runs, const plan::DagProblem& problem) {
  if (runs.size() == 1) {
    std::printf("%s\n",
                report::DagScheduleJson(runs[0].algo, runs[0].schedule, problem, runs[0].proof)
                    .dump(1)
                    .c_str());
    return;
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const AlgoRun& r : runs)
    all.push_back(report::DagScheduleJson(r.algo, r.schedule, problem, r.proof));
  std::printf("%s\n", nlohmann::ordered_json{{"results", all}}.dump(1).c_str());
}

// Several algorithms side by side, each against HEFT (the first), the best single processor
// and the critical path.
std::string ComparisonText(const std::vector<AlgoRun>& runs, const plan::DagProblem& problem) {
  const double heft = runs[0].schedule.makespan;
  const double seq = problem.BestSequentialTime();
  const double cp = problem.MinCostCriticalPath();
  report::Table table(
      {"algorithm", "makespan", "lower bound", "vs heft", "speedup", "SLR", "time ms", "note"});
  for (const AlgoRun& r : runs) {
    const double m = r.schedule.makespan;
    table.AddRow({r.algo, Num(m), r.proof ? Num(r.proof->lower_bound) : "-",
                  heft > 0 ? Num(m / heft) : "n/a",
                  std::isfinite(seq) && m > 0 ? Num(seq / m) : "n/a", cp > 0 ? Num(m / cp) : "n/a",
                  Num(r.seconds * 1e3), r.note});
  }
  return table.Render();
}

util::Status RunPlanDag(const PlanDagFlags& flags) {
  RETURN_IF_ERROR(CheckFlags(flags));
  model::io::DagReadOptions read;
  read.stg_processors = flags.procs;
  std::optional<ClusterSetup> setup;
  if (!flags.cluster.empty()) {
    ASSIGN_OR_RETURN(ClusterSetup s, LoadClusterSetup(flags.cluster));
    read.processors = s.processors;
    setup = std::move(s);
  }
  ASSIGN_OR_RETURN(model::TaskGraph graph, model::io::ReadDag(flags.file, read));
  const plan::DagProblem problem(graph, TransferFor(graph, flags, setup));

  const std::vector<std::string> algos =
      flags.algo == "all" ? kAlgos : std::vector<std::string>{flags.algo};
  std::vector<AlgoRun> runs;
  for (const std::string& a : algos) {
    ASSIGN_OR_RETURN(AlgoRun run, RunAlgo(a, problem, flags));
    runs.push_back(std::move(run));
  }
  if (!flags.html.empty()) RETURN_IF_ERROR(WriteScheduleHtml(flags, graph, runs));
  if (flags.json) {
    PrintScheduleJson(runs, problem);
    return util::Status::Ok();
  }
  std::string out = fmt::format("DAG {}: {} tasks, {} edges, {} processors{}\n",
                                graph.name.empty() ? flags.file : graph.name, graph.num_tasks(),
                                graph.edges.size(), graph.num_processors(),
                                flags.no_comm ? " (communication ignored)" : "");
  out += runs.size() == 1 ? SummaryText(runs[0], problem) : ComparisonText(runs, problem);
  std::fputs(out.c_str(), stdout);
  return util::Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// compare-random: the study in docs/results.md, in process and deterministic.

struct CompareFlags {
  std::vector<double> ccrs = {0.1, 0.5, 1, 5, 10};
  std::vector<double> betas = {0.1, 0.5, 1, 1.5};
  std::vector<int32_t> tasks = {30, 60, 100};
  int32_t procs = 4;
  int32_t per_cell = 15;
  int64_t best_evaluations = 1000;
  int32_t exact_tasks = 10;
  int32_t exact_procs = 3;
  int32_t exact_per_cell = 3;
  uint64_t seed = 1;
};

// The makespans of heft, cpop, peft and best (in that order) on one problem.
std::vector<double> HeuristicMakespans(const plan::DagProblem& problem, int64_t best_evaluations,
                                       uint64_t seed) {
  std::vector<double> m;
  m.push_back(plan::Heft(problem).makespan);
  m.push_back(plan::Cpop(problem).makespan);
  m.push_back(plan::Peft(problem).makespan);
  plan::SearchOptions o;
  o.max_evaluations = best_evaluations;
  o.seed = seed;
  m.push_back(plan::BestSchedule(problem, o).schedule.makespan);
  return m;
}

// The first table: each heuristic's mean makespan over HEFT's, per CCR and beta. Draws its DAGs'
// seeds from `seed` on.
util::Result<std::string> RelativeToHeftTable(const CompareFlags& f, uint64_t& seed) {
  std::string out = "Mean makespan relative to HEFT (lower is better)\n\n";
  out +=
      "| CCR | beta | DAGs | CPOP | PEFT | best | best < HEFT |\n|---|---|---|---|---|---|---|\n";
  std::vector<double> total(4, 0);
  int total_n = 0, total_wins = 0;
  for (double ccr : f.ccrs) {
    for (double beta : f.betas) {
      std::vector<double> sum(4, 0);
      int wins = 0;
      for (int32_t i = 0; i < f.per_cell; ++i) {
        model::RandomDagOptions o;
        o.tasks = f.tasks[i % f.tasks.size()];
        o.processors = f.procs;
        o.ccr = ccr;
        o.beta = beta;
        o.alpha = 1.0;
        o.seed = seed++;
        ASSIGN_OR_RETURN(model::TaskGraph g, model::GenerateRandomDag(o));
        const plan::DagProblem problem(g);
        const std::vector<double> m = HeuristicMakespans(problem, f.best_evaluations, o.seed);
        for (int k = 0; k < 4; ++k) sum[k] += m[k] / m[0];
        if (m[3] < m[0] * (1 - 1e-9)) ++wins;
      }
      for (int k = 0; k < 4; ++k) total[k] += sum[k];
      total_n += f.per_cell;
      total_wins += wins;
      out +=
          fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {} |\n", ccr, beta, f.per_cell,
                      sum[1] / f.per_cell, sum[2] / f.per_cell, sum[3] / f.per_cell, wins);
    }
  }
  out += fmt::format("| all | all | {} | {:.3f} | {:.3f} | {:.3f} | {} |\n\n", total_n,
                     total[1] / total_n, total[2] / total_n, total[3] / total_n, total_wins);
  return out;
}

// The second table: each heuristic's mean gap to the proven optimum on small DAGs, per CCR.
// Draws its DAGs' seeds from `seed` on.
util::Result<std::string> GapToOptimumTable(const CompareFlags& f, uint64_t& seed) {
  std::string out = fmt::format("Mean gap to the optimum (`exact`), {} tasks on {} processors\n\n",
                                f.exact_tasks, f.exact_procs);
  out +=
      "| CCR | DAGs | HEFT | CPOP | PEFT | best | proven optimal "
      "|\n|---|---|---|---|---|---|---|\n";
  std::vector<double> gap_total(4, 0);
  int gap_n = 0, proven_total = 0;
  for (double ccr : f.ccrs) {
    std::vector<double> gap(4, 0);
    int n = 0, proven = 0;
    for (double beta : f.betas) {
      for (int32_t i = 0; i < f.exact_per_cell; ++i) {
        model::RandomDagOptions o;
        o.tasks = f.exact_tasks;
        o.processors = f.exact_procs;
        o.ccr = ccr;
        o.beta = beta;
        o.seed = seed++;
        ASSIGN_OR_RETURN(model::TaskGraph g, model::GenerateRandomDag(o));
        const plan::DagProblem problem(g);
        const plan::ExactResult exact = plan::ExactSchedule(problem);
        if (!exact.optimal) continue;  // counted below: only proven optima measure a gap
        ++proven;
        const std::vector<double> m = HeuristicMakespans(problem, f.best_evaluations, o.seed);
        for (int k = 0; k < 4; ++k) gap[k] += m[k] / exact.schedule.makespan - 1;
        ++n;
      }
    }
    for (int k = 0; k < 4; ++k) gap_total[k] += gap[k];
    gap_n += n;
    proven_total += proven;
    if (n == 0) continue;
    out += fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {}/{} |\n", ccr, n,
                       100 * gap[0] / n, 100 * gap[1] / n, 100 * gap[2] / n, 100 * gap[3] / n,
                       proven, f.betas.size() * f.exact_per_cell);
  }
  if (gap_n > 0) {
    out += fmt::format("| all | {} | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {}/{} |\n", gap_n,
                       100 * gap_total[0] / gap_n, 100 * gap_total[1] / gap_n,
                       100 * gap_total[2] / gap_n, 100 * gap_total[3] / gap_n, proven_total,
                       f.ccrs.size() * f.betas.size() * f.exact_per_cell);
  }
  return out;
}

util::Status RunCompare(const CompareFlags& f) {
  if (f.per_cell < 1 || f.exact_per_cell < 0 || f.ccrs.empty() || f.betas.empty() ||
      f.tasks.empty()) {
    return util::Status::InvalidArgument(
        "compare-random: --per-cell must be >= 1, --exact-per-cell >= 0, and the --ccr, --beta "
        "and --tasks lists not empty");
  }
  uint64_t seed = f.seed;  // the exact study's DAGs follow the heuristic study's
  ASSIGN_OR_RETURN(const std::string relative, RelativeToHeftTable(f, seed));
  ASSIGN_OR_RETURN(const std::string gaps, GapToOptimumTable(f, seed));
  std::fputs((relative + gaps).c_str(), stdout);
  return util::Status::Ok();
}

}  // namespace

void AddPlanDagCommand(CLI::App& plan, CommandResult& result) {
  auto flags = std::make_shared<PlanDagFlags>();
  auto* cmd = plan.add_subcommand(
      "dag", "Schedule a task DAG (JSON as data/dag/topcuoglu2002.json, or STG) on processors");
  cmd->add_option("file", flags->file, "DAG file (.json, or .stg from the Kasahara set)")
      ->required();
  cmd->add_option("--algo", flags->algo, "heft, cpop, peft, best, exact, or all to compare them")
      ->capture_default_str();
  cmd->add_flag("--json", flags->json,
                "Print {\"algo\", \"makespan\", \"schedule\": [{task, processor, start, finish}]}; "
                "best and exact add proved_optimal, lower_bound and stopped_by");
  cmd->add_option("--html", flags->html,
                  "Also write the schedules as Gantt charts (one HTML file, no network)");
  cmd->add_option("--cluster", flags->cluster,
                  "Schedule on this cluster's devices (YAML file or shorthand); task costs keyed "
                  "by device type, transfers along the topology");
  cmd->add_option("--procs", flags->procs, "Number of identical processors for an STG file");
  cmd->add_flag("--no-comm", flags->no_comm, "Ignore communication (every transfer is free)");
  cmd->add_option("--iterations", flags->iterations,
                  "best: stop after this many schedule evaluations (default: no cap; the search "
                  "runs until the time limit or until it meets the lower bound)");
  cmd->add_option("--time-limit", flags->time_limit,
                  "best and exact (each of them under --algo all): wall-clock seconds each may "
                  "run; when they run out it returns the best schedule found so far, not proved "
                  "optimal")
      ->capture_default_str();
  cmd->add_option("--seed", flags->seed,
                  "best: random seed (the same seed gives the same result under --iterations "
                  "when the time limit does not end the search first)")
      ->capture_default_str();
  cmd->add_option("--max-nodes", flags->max_nodes,
                  "exact: search nodes before giving up the proof (the time limit usually ends "
                  "it first)")
      ->capture_default_str();
  cmd->callback([flags, &result] {
    util::Status st = RunPlanDag(*flags);
    if (!st.ok()) result.exit_code = ReportError(st);
  });

  auto cf = std::make_shared<CompareFlags>();
  auto* cmp = plan.add_subcommand("compare-random",
                                  "Compare the DAG planners on random DAGs (docs/results.md)");
  cmp->group("");  // hidden: a reproduction tool, not a user command
  cmp->add_option("--ccr", cf->ccrs, "CCR values")->delimiter(',');
  cmp->add_option("--beta", cf->betas, "beta values")->delimiter(',');
  cmp->add_option("--tasks", cf->tasks, "task counts, used in turn")->delimiter(',');
  cmp->add_option("--procs", cf->procs, "processors");
  cmp->add_option("--per-cell", cf->per_cell, "DAGs per (CCR, beta) cell");
  cmp->add_option("--best-iterations", cf->best_evaluations, "evaluations for best");
  cmp->add_option("--exact-tasks", cf->exact_tasks, "tasks of the small DAGs");
  cmp->add_option("--exact-procs", cf->exact_procs, "processors of the small DAGs");
  cmp->add_option("--exact-per-cell", cf->exact_per_cell, "small DAGs per (CCR, beta) cell");
  cmp->add_option("--seed", cf->seed, "first seed");
  cmp->callback([cf, &result] {
    util::Status st = RunCompare(*cf);
    if (!st.ok()) result.exit_code = ReportError(st);
  });
}

}  // namespace hetsched::cli
