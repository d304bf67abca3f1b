#include "cli/command.h"

namespace hetsched::cli {

void AddPlanCommand(CLI::App& app, CommandResult& result) {
  auto* plan = app.add_subcommand(
      "plan",
      "Split one job: schedule a task DAG, partition a model across devices, or size an LLM "
      "service's replicas");
  plan->require_subcommand(1);
  // Subcommands (one line each): plan dag, plan model, plan service, plan live.
  AddPlanModelCommand(*plan, result);
  AddPlanDagCommand(*plan, result);
  AddPlanServiceCommand(*plan, result);
  AddPlanLiveCommand(*plan, result);
  (void)result;
}

}  // namespace hetsched::cli
