#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"
#include "cli/sim_flags.h"
#include "report/sim_json.h"
#include "sched/policy.h"
#include "util/file.h"

namespace hetsched::cli {

void AddCompareCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "compare", "Run several policies on the same cluster and trace, side by side");
  auto flags = std::make_shared<SimFlags>();
  auto policies = std::make_shared<std::vector<std::string>>();
  AddSimFlags(*cmd, *flags);
  cmd->add_option("--policies", *policies, "comma-separated policies:\n" + sched::PolicyHelp())
      ->delimiter(',')
      ->required();
  cmd->callback([flags, policies, &result] {
    for (const auto& p : *policies) {
      if (auto made = sched::MakePolicy(p); !made.ok()) {
        result.exit_code = ReportError(made.status());
        return;
      }
    }
    auto in = LoadSimInputs(*flags);
    if (!in.ok()) {
      result.exit_code = ReportError(in.status());
      return;
    }
    std::vector<sim::SimResult> results;
    nlohmann::json json = nlohmann::json::array();
    for (const auto& p : *policies) {
      auto r = RunOnePolicy(*in, p, flags->quiet);
      if (!r.ok()) {
        result.exit_code = ReportError(r.status());
        return;
      }
      json.push_back(report::ToJson(*r));
      results.push_back(std::move(r).value());
    }
    std::fputs(ResultTable(results).c_str(), stdout);
    if (!flags->json.empty()) {
      if (auto st = util::WriteFile(flags->json, json.dump(2) + "\n"); !st.ok()) {
        result.exit_code = ReportError(st);
        return;
      }
    }
    result.exit_code = kExitOk;
  });
}

}  // namespace hetsched::cli
