#include "cli/sim_flags.h"

#include <fmt/format.h>

#include <charconv>
#include <set>

#include "cli/data_dir.h"
#include "model/io/cluster_reader.h"
#include "model/io/gavel_reader.h"
#include "model/io/workload_reader.h"
#include "sched/policy.h"

namespace hetsched::cli {
namespace {

util::Result<std::pair<int32_t, int32_t>> ParseMeasure(const std::string& text) {
  const size_t dash = text.find('-');
  int32_t a = -1, b = -1;
  bool ok = dash != std::string::npos;
  if (ok) {
    auto [p1, e1] = std::from_chars(text.data(), text.data() + dash, a);
    auto [p2, e2] = std::from_chars(text.data() + dash + 1, text.data() + text.size(), b);
    ok = e1 == std::errc() && e2 == std::errc() && p1 == text.data() + dash &&
         p2 == text.data() + text.size() && a >= 0 && b > a;
  }
  if (!ok) {
    return util::Status::InvalidArgument(fmt::format(
        "--measure-jobs '{}': expected FIRST-LAST job ids with FIRST < LAST (e.g. 4000-5000)",
        text));
  }
  return std::make_pair(a, b);
}

}  // namespace

void AddSimFlags(CLI::App& cmd, SimFlags& f) {
  cmd.add_option("--cluster", f.cluster,
                 "cluster YAML file, or a shorthand like v100=36,p100=36,k80=36")
      ->required();
  cmd.add_option("--trace", f.trace, "workload: Gavel .trace, YAML or JSONL")->required();
  cmd.add_option("--throughputs", f.throughputs,
                 "throughput profile (Gavel format); default: the shipped "
                 "gavel/simulation_throughputs.json when the trace names job types");
  cmd.add_option("--measure-jobs", f.measure,
                 "average JCT over job ids [FIRST, LAST) and stop once they are done "
                 "(Gavel: 4000-5000)");
  cmd.add_option("--seed", f.seed, "seed for random faults");
  cmd.add_option("--json", f.json, "write the results as JSON to this file");
  cmd.add_option("--round", f.round_s,
                 "scheduling rounds of this many seconds (Gavel: 360); default event-driven");
  cmd.add_option("--restore", f.restore_s,
                 "seconds of checkpoint + restore paid when a job resumes or migrates (default 0)");
  cmd.add_flag("--ignore-compat", f.ignore_compat,
               "naive baseline: any free device will do; jobs on devices they cannot run fail");
  cmd.add_option("--startup", f.startup_s,
                 "seconds before a job on an incompatible device fails (default 120)");
  cmd.add_option("--faults", f.faults, "fault file: time_s,node[/index],duration_s per line");
  cmd.add_option("--mtbf", f.mtbf_s, "mean seconds between failures of each node (0: none)");
  cmd.add_option("--mttr", f.mttr_s, "mean seconds to repair a failed node");
  cmd.add_option("--checkpoint-interval", f.checkpoint_s,
                 "seconds of progress between checkpoints; a fault loses the rest (default 1800)");
  cmd.add_option("--scorers", f.scorers,
                 "type scorers with weights, e.g. speed or speed:1,energy:0.5 (known: " +
                     sched::ScorerNames() + ")");
  cmd.add_option("--aging", f.aging,
                 "srpt-het-fair: seconds of priority a job gains per second since arrival "
                 "(default 0.5)");
  cmd.add_option("--preempt-interval", f.preempt_interval_s,
                 "preemptive policies reconsider running jobs at most this often (seconds); "
                 "in between they only fill free devices (default 0: every decision)");
  cmd.add_option("--until", f.until_s,
                 "stop at this virtual time (seconds) and report what was measured so far");
  cmd.add_option("--max-rounds", f.max_rounds,
                 "stop after this many scheduling decisions (rounds under --round)");
  cmd.add_flag("--quiet,-q", f.quiet, "no progress bar");
  // Times, rates and counts: a negative value is rejected by name.
  const CLI::Validator non_negative(
      [](std::string& value) -> std::string {
        double v = 0;
        if (CLI::detail::lexical_cast(value, v) && v >= 0) return "";
        return "expected a number >= 0, got '" + value + "'";
      },
      ">=0");
  for (const char* name :
       {"--round", "--restore", "--startup", "--mtbf", "--mttr", "--checkpoint-interval", "--aging",
        "--preempt-interval", "--until", "--max-rounds"}) {
    cmd.get_option(name)->check(non_negative);
  }
}

util::Result<SimInputs> LoadSimInputs(const SimFlags& f) {
  SimInputs in;
  ASSIGN_OR_RETURN(in.cluster, model::io::LoadCluster(f.cluster));
  ASSIGN_OR_RETURN(in.workload, model::io::LoadWorkload(f.trace));
  bool needs_profile = false;
  for (const model::Job& j : in.workload.jobs) {
    if (j.throughput.empty() && !j.ops && !j.job_type.empty()) needs_profile = true;
  }
  if (needs_profile || !f.throughputs.empty()) {
    const std::string path =
        f.throughputs.empty() ? DataPath("gavel/simulation_throughputs.json") : f.throughputs;
    ASSIGN_OR_RETURN(auto profile, model::io::LoadGavelThroughputs(path));
    in.profile = std::move(profile);
    // Every job whose speed must come from the profile needs its (type, gang size) there.
    std::set<std::pair<std::string, int>> known;
    const auto types = in.profile->DeviceTypes();
    for (const model::Job& j : in.workload.jobs) {
      if (!j.throughput.empty() || j.ops || j.job_type.empty()) continue;
      if (known.count({j.job_type, j.gang_size})) continue;
      bool found = false;
      for (const auto& t : types) found = found || in.profile->Isolated(j.job_type, j.gang_size, t);
      if (!found) {
        return util::Status::InvalidArgument(fmt::format(
            "{}: job '{}': job type '{}' at {} worker(s) is not in the throughput file {} "
            "(it has {} job types)",
            f.trace, j.name, j.job_type, j.gang_size, path, in.profile->JobTypes().size()));
      }
      known.insert({j.job_type, j.gang_size});
    }
  }
  sim::SimOptions& o = in.options;
  o.round_s = f.round_s;
  o.restore_s = f.restore_s;
  o.compat_startup_s = f.startup_s;
  o.checkpoint_interval_s = f.checkpoint_s;
  o.node_mtbf_s = f.mtbf_s;
  o.node_mttr_s = f.mttr_s;
  o.seed = f.seed;
  o.sched.ignore_compat = f.ignore_compat;
  o.sched.scorers = f.scorers;
  o.sched.tuning.aging = f.aging;
  o.sched.preempt_interval_s = f.preempt_interval_s;
  o.until_s = f.until_s;
  o.max_rounds = f.max_rounds;
  if (!f.measure.empty()) {
    ASSIGN_OR_RETURN(auto m, ParseMeasure(f.measure));
    o.measure = m;
  }
  if (!f.faults.empty()) {
    ASSIGN_OR_RETURN(o.faults, sim::LoadFaults(f.faults, in.cluster));
  }
  return in;
}

}  // namespace hetsched::cli
