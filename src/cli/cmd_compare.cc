#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/command.h"
#include "cli/sim_flags.h"
#include "report/sim_json.h"
#include "sched/policy.h"
#include "util/file.h"

namespace hetsched::cli {

void AddCompareCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Run several policies on the same cluster and trace, side by side, each booked to the "
      "latest end among them (energy, cost and utilization over the same span)");
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
    for (const auto& p : *policies) {
      auto r = RunOnePolicy(*in, p, flags->quiet);
      if (!r.ok()) {
        result.exit_code = ReportError(r.status());
        return;
      }
      results.push_back(std::move(r).value());
    }
    // Energy, cost and utilization compare only over the same span: the runs that ended before
    // the latest one run again, booked to its end (--horizon). Runs cut short by --until,
    // --max-rounds or --measure-jobs keep their own ends.
    const sim::SimOptions& o = in->options;
    if (o.until_s <= 0 && o.max_rounds <= 0 && !o.measure) {
      double horizon = 0;
      for (const sim::SimResult& r : results) horizon = std::max(horizon, r.horizon_s);
      in->options.horizon_s = horizon;
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i].horizon_s >= horizon) continue;
        auto r = RunOnePolicy(*in, (*policies)[i], flags->quiet);
        if (!r.ok()) {
          result.exit_code = ReportError(r.status());
          return;
        }
        results[i] = std::move(r).value();
      }
    }
    nlohmann::json json = nlohmann::json::array();
    for (const sim::SimResult& r : results) json.push_back(report::ToJson(r));
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
