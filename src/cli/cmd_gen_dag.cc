// `hetsched gen-dag`: a random task DAG in the JSON format that `plan dag` reads.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "model/io/dag_reader.h"
#include "model/random_dag.h"
#include "util/file.h"

namespace hetsched::cli {

void AddGenDagCommand(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<model::RandomDagOptions>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "gen-dag",
      "Write a random task DAG (Topcuoglu et al. 2002 generator: shape alpha, heterogeneity "
      "beta, communication-to-computation ratio CCR)");
  cmd->add_option("--tasks", o->tasks, "Number of tasks")->capture_default_str();
  cmd->add_option("--ccr", o->ccr, "Mean transfer time / mean task cost")->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Shape: about sqrt(v)/alpha levels")->capture_default_str();
  cmd->add_option("--beta", o->beta, "Cost spread across processors, 0 <= beta < 2")
      ->capture_default_str();
  cmd->add_option("--procs", o->processors, "Number of processors")->capture_default_str();
  cmd->add_option("--out-degree", o->out_degree, "Largest number of children per task")
      ->capture_default_str();
  cmd->add_option("--mean-cost", o->mean_cost, "Mean task cost")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  cmd->add_option("-o,--output", *out, "Write here instead of standard output");
  cmd->callback([o, out, &result] {
    util::Result<model::TaskGraph> g = model::GenerateRandomDag(*o);
    if (!g.ok()) {
      result.exit_code = ReportError(g.status());
      return;
    }
    const std::string text = model::io::FormatDagJson(*g);
    if (out->empty()) {
      std::fputs(text.c_str(), stdout);
      return;
    }
    util::Status st = util::WriteFile(*out, text);
    if (!st.ok()) result.exit_code = ReportError(st);
  });
}

}  // namespace hetsched::cli
