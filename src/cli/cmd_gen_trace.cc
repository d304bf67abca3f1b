#include <cstdio>

#include "cli/command.h"
#include "cli/data_dir.h"
#include "model/io/gavel_reader.h"
#include "sim/trace_gen.h"
#include "util/file.h"

namespace hetsched::cli {

void AddGenTraceCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "gen-trace", "Write a Gavel-style trace (10 columns): Poisson arrivals with Gavel's job mix");
  auto o = std::make_shared<sim::GavelTraceOptions>();
  auto throughputs = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--rate", o->rate_per_hour, "mean arrivals per hour")->required();
  cmd->add_option("--jobs", o->jobs, "number of jobs")->required();
  cmd->add_option("--seed", o->seed, "random seed (default 0)");
  cmd->add_flag("--multi-gpu", o->multi_gpu,
                "scale factors 1/2/4/8 with probability 0.7/0.1/0.15/0.05");
  cmd->add_option("--throughputs", *throughputs,
                  "throughput file (default: the shipped gavel/simulation_throughputs.json)");
  cmd->add_option("--out,-o", *out, "output file (default: stdout)");
  cmd->callback([o, throughputs, out, &result] {
    const std::string path =
        throughputs->empty() ? DataPath("gavel/simulation_throughputs.json") : *throughputs;
    auto profile = model::io::LoadGavelThroughputs(path);
    if (!profile.ok()) {
      result.exit_code = ReportError(profile.status());
      return;
    }
    auto w = sim::GenerateGavelTrace(*profile, *o);
    if (!w.ok()) {
      result.exit_code = ReportError(w.status());
      return;
    }
    const std::string text = model::io::FormatGavelTrace(*w);
    if (out->empty()) {
      std::fputs(text.c_str(), stdout);
    } else if (auto st = util::WriteFile(*out, text); !st.ok()) {
      result.exit_code = ReportError(st);
      return;
    }
    result.exit_code = kExitOk;
  });
}

}  // namespace hetsched::cli
