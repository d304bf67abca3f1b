#include "cli/command.h"

namespace hetsched::cli {

void AddPlanCommand(CLI::App& app, CommandResult& result) {
  auto* plan = app.add_subcommand(
      "plan", "Split one job: schedule a task DAG, or partition a model across devices");
  plan->require_subcommand(1);
  // Subcommands (one line each): plan dag, plan model.
  AddPlanModelCommand(*plan, result);
  AddPlanDagCommand(*plan, result);
  (void)result;
}

}  // namespace hetsched::cli
