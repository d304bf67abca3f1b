#include "cli/sim_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "cli/data_dir.h"
#include "cli/sim_config.h"
#include "cost/serving.h"
#include "model/io/cluster_reader.h"
#include "model/io/gavel_reader.h"
#include "model/io/tenants_reader.h"
#include "model/io/workload_reader.h"
#include "sched/policy.h"
#include "util/units.h"

namespace hetsched::cli {
namespace {

// Two whole numbers joined by `separator` ("4000-5000", "1:8"); nullopt when `text` is not
// exactly that.
std::optional<std::pair<int32_t, int32_t>> ParseIntPair(const std::string& text, char separator) {
  const size_t at = text.find(separator);
  if (at == std::string::npos) return std::nullopt;
  int32_t a = 0, b = 0;
  auto [p1, e1] = std::from_chars(text.data(), text.data() + at, a);
  auto [p2, e2] = std::from_chars(text.data() + at + 1, text.data() + text.size(), b);
  if (e1 != std::errc() || e2 != std::errc() || p1 != text.data() + at ||
      p2 != text.data() + text.size()) {
    return std::nullopt;
  }
  return std::make_pair(a, b);
}

util::Result<std::pair<int32_t, int32_t>> ParseMeasure(const std::string& text) {
  const auto ids = ParseIntPair(text, '-');
  if (!ids || ids->first < 0 || ids->second <= ids->first) {
    return util::Status::InvalidArgument(fmt::format(
        "--measure-jobs '{}': expected FIRST-LAST job ids with FIRST < LAST (e.g. 4000-5000)",
        text));
  }
  return *ids;
}

// "MIN:MAX" with 1 <= MIN <= MAX, whole numbers.
util::Result<std::pair<int32_t, int32_t>> ParseElasticRange(const std::string& text) {
  const auto range = ParseIntPair(text, ':');
  if (!range || range->first < 1 || range->second < range->first) {
    return util::Status::InvalidArgument(fmt::format(
        "--elastic-range '{}': expected MIN:MAX workers, whole numbers with 1 <= MIN <= MAX "
        "(e.g. 1:8)",
        text));
  }
  return *range;
}

// The power flags into `o` (their ranges are checked by power::PowerOptions' validation).
util::Status LoadPowerOptions(const SimFlags& f, power::PowerOptions& o) {
  o = f.power;
  o.exclude_nodes = SplitNonEmpty(f.exclude_nodes, ',');
  o.boot_failure_nodes = SplitNonEmpty(f.boot_failure_nodes, ',');
  if (!f.tariff.empty() && f.price_kwh >= 0) {
    return util::Status::InvalidArgument(
        fmt::format("--price-kwh {} and --tariff '{}': give one of them (a flat price or prices "
                    "by hour of the day)",
                    f.price_kwh, f.tariff));
  }
  if (!f.tariff.empty()) {
    ASSIGN_OR_RETURN(o.tariff, power::Tariff::Parse(f.tariff));
  } else if (f.price_kwh >= 0) {
    o.tariff = power::Tariff::Flat(f.price_kwh);
  }
  if (!f.carbon.empty()) {
    double g = -1;
    const auto [ptr, ec] = std::from_chars(f.carbon.data(), f.carbon.data() + f.carbon.size(), g);
    if (ec != std::errc() || ptr != f.carbon.data() + f.carbon.size() || !(g >= 0)) {
      return util::Status::InvalidArgument(fmt::format(
          "--carbon '{}': expected grams of CO2 per kWh, a number >= 0 (e.g. 400)", f.carbon));
    }
    o.carbon_g_per_kwh = g;
  }
  return util::Status::Ok();
}

// --space-sharing is only meaningful with pair throughputs for the trace's job types: without
// any it would silently change nothing.
util::Status CheckPairEntries(const SimInputs& in, const SimFlags& f) {
  const std::string profile_name = f.throughputs.empty() ? "the shipped Gavel file" : f.throughputs;
  if (!in.profile) {
    return util::Status::InvalidArgument(
        "--space-sharing: no throughput profile is in use (the trace's jobs name no job types "
        "and no --throughputs was given); space sharing needs a profile with pair (co-located) "
        "entries for the trace's job types, e.g. Gavel's simulation_throughputs.json");
  }
  std::set<std::pair<int, std::string>> kinds;  // (gang, job type)
  for (const model::Job& j : in.workload.jobs) {
    if (!j.job_type.empty()) kinds.insert({std::max(1, j.gang_size), j.job_type});
  }
  const auto devices = in.profile->DeviceTypes();
  for (const auto& [gang, a] : kinds) {
    for (auto it = kinds.lower_bound({gang, ""}); it != kinds.end() && it->first == gang; ++it) {
      for (const auto& d : devices) {
        if (in.profile->Colocated(a, gang, it->second, gang, d)) return util::Status::Ok();
      }
    }
  }
  return util::Status::InvalidArgument(fmt::format(
      "--space-sharing: the throughput profile ({}) has no pair (co-located) entries for the "
      "trace's job types ({} job type(s) named); space sharing needs them (Gavel's "
      "simulation_throughputs.json has them under each job's partner keys)",
      profile_name, kinds.size()));
}

// What is simulated: the cluster, the trace, the profile, what is measured and where to.
void AddInputFlags(CLI::App& cmd, SimFlags& f) {
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
}

// How jobs run: rounds, the costs of stopping and resuming, what the scheduler knows of
// sizes, compatibility, sharing, elasticity and faults.
void AddExecutionFlags(CLI::App& cmd, SimFlags& f) {
  cmd.add_option("--round", f.round_s,
                 "scheduling rounds of this many seconds (Gavel: 360); default event-driven");
  cmd.add_option("--restore", f.restore_s,
                 "seconds without progress when a job resumes or migrates: reading its "
                 "checkpoint and restarting (default 60; Gavel's simulator: 0)");
  cmd.add_option("--checkpoint-save", f.checkpoint_save_s,
                 "seconds a preempted job keeps its devices while writing its checkpoint "
                 "(default 30; Gavel's simulator: 0)");
  cmd.add_option("--estimates", f.estimates,
                 "what the scheduler is told about job sizes: workload (the jobs' estimate / "
                 "time_limit, else nothing; default), none, lognormal:SIGMA, user-limit:FACTOR, "
                 "history, oracle (true sizes: an upper bound, labelled so)");
  cmd.add_flag("--ignore-compat", f.ignore_compat,
               "naive baseline: any free device will do; jobs on devices they cannot run fail");
  cmd.add_flag("--space-sharing", f.space_sharing,
               "space sharing (Gavel's packing): a waiting job may share the devices of a running "
               "job of the same gang size when the throughput profile's pair entry says the two "
               "together beat running apart; needs a profile with pair (co-located) entries, as "
               "gavel/simulation_throughputs.json has");
  cmd.add_flag("--no-elastic", f.no_elastic,
               "run every job at its gang_size, elastic range or not (default: jobs with "
               "elastic: {min, max} run at a size the scheduler picks and changes; not under "
               "the LP policies, which plan fixed gangs)");
  cmd.add_option("--elastic-range", f.elastic_range,
                 "MIN:MAX: every training or batch job without an elastic range of its own gets "
                 "one from min(MIN, gang_size) to max(MAX, gang_size), e.g. 1:8 for Gavel traces");
  cmd.add_option("--max-jobs-per-lp", f.max_jobs_per_lp,
                 "LP allocation policies: above this many job classes the LP is split into "
                 "POP sub-problems of about this size (default 1000)");
  cmd.add_option("--startup", f.startup_s,
                 "seconds before a job on an incompatible device fails (default 120)");
  cmd.add_option("--faults", f.faults,
                 "fault file: time_s,node[/index],duration_s[,down|start-failure] per line");
  cmd.add_option("--mtbf", f.mtbf_s, "mean seconds between failures of each node (0: none)");
  cmd.add_option("--mttr", f.mttr_s, "mean seconds to repair a failed node");
  cmd.add_option("--checkpoint-interval", f.checkpoint_s,
                 "seconds of progress between checkpoints; a fault loses the rest (default 1800)");
}

// How the scheduler decides (scorers, placement, services, preemption) and when the run
// stops; the --config file.
void AddSchedulingFlags(CLI::App& cmd, SimFlags& f) {
  cmd.add_option("--scorers", f.scorers,
                 "type scorers with weights, e.g. speed or speed:1,energy:0.5 (known: " +
                     sched::ScorerNames() + ")");
  cmd.add_option("--placement", f.placement,
                 "gang placement: topology (islands, nodes, racks and the job's data first) or "
                 "agnostic (the first free devices of the type, in id order)")
      ->capture_default_str();
  cmd.add_option("--serving", f.serving,
                 "how services (kind: service) get replicas: hetsched (the cheapest mix for the "
                 "forecast load, every interval), strongest (autoscaled, strongest device type "
                 "only), single:TYPE (autoscaled, every replica on TYPE) or static-peak (sized "
                 "for the day's busiest interval, held all day)")
      ->capture_default_str();
  cmd.add_option("--serving-calibration", f.serving_calibration,
                 "measured LLM step times the serving model is fitted to (Splitwise's "
                 "perf_model.csv format), or 'none' for the bare roofline (default: the shipped "
                 "data/inference/splitwise-perf table)");
  cmd.add_option("--serving-interval", f.serving_interval_s,
                 "seconds between autoscaling decisions for services")
      ->capture_default_str()
      ->check(CLI::Range(10.0, 86400.0));
  cmd.add_option("--serving-horizon", f.serving_horizon_s,
                 "seconds over which services take requests (their traces looped to fill it)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0 * 366));
  cmd.add_option("--serving-risk-share", f.serving_risk_share,
                 "the share of each service's error budget (the requests its SLO lets miss so "
                 "far) that plans may spend on measured load left beyond the replicas' ratings "
                 "where only costlier device types have room; 0: never")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--aging", f.aging,
                 "srpt-het-fair: seconds of priority a job gains per second since arrival "
                 "(default 0.25)");
  cmd.add_option("--preempt-interval", f.preempt_interval_s,
                 "preemptive policies reconsider running jobs at most this often (seconds); "
                 "in between they only fill free devices (default 300; 0: every decision)");
  cmd.add_flag("--gavel-rebuilds", f.gavel_rebuilds,
               "fidelity to Gavel's simulator for fifo-het (its fifo_perf): rebuild the "
               "assignment in arrival order, running jobs included, only when a job arrived "
               "or left and --preempt-interval passed (Gavel: 1920); nothing starts in "
               "between (docs/results.md)");
  cmd.add_option("--preempt-quantum", f.preempt_quantum_s,
                 "time-slicing policies (las, las-het, srpt-het, srpt-het-fair, default, the LP "
                 "policies) let a started job run at least this long (seconds) before they stop "
                 "it for another; at least --checkpoint-save + --restore (default: 40 times "
                 "that, an hour with the default costs; 0 when both are 0, as in Gavel's "
                 "simulator)");
  cmd.add_option("--plan-incumbency", f.plan_incumbency,
                 "default's throughput plan, where preemptions cost: a running job's speed on "
                 "the type it holds counts this fraction more, so the plan moves it only for a "
                 "clear gain (default 0.2; ignored when --checkpoint-save and --restore are 0)");
  cmd.add_option("--until", f.until_s,
                 "stop at this virtual time (seconds) and report what was measured so far");
  cmd.add_option("--horizon", f.horizon_s,
                 "book energy, cost and utilization to this virtual time (seconds) when the "
                 "last job ends before it: idle machines keep drawing power, or are suspended "
                 "as the power policy would do it; to compare runs over the same span");
  cmd.add_option("--max-rounds", f.max_rounds,
                 "stop after this many scheduling decisions (rounds under --round)");
  cmd.add_flag("--quiet,-q", f.quiet, "no progress bar");
  cmd.add_option("--config", f.config,
                 "configuration file (YAML): the training policy, scorer weights, preempt "
                 "interval and elasticity, the services' placement and interval, and a priority "
                 "and weight per job kind (docs/simulator.md); flags given here win over it");
}

// Node power policies, energy prices and carbon.
void AddPowerFlags(CLI::App& cmd, SimFlags& f) {
  cmd.add_option(
      "--power", f.power.policy,
      "node power policy (default always-on; docs/power.md): " + power::PowerPolicyNames());
  cmd.add_option("--suspend-time", f.power.suspend_time_s,
                 "seconds a node must be idle before it is suspended (Slurm SuspendTime, "
                 "default 600)");
  cmd.add_option("--suspend-timeout", f.power.suspend_timeout_s,
                 "seconds after a suspend before the node may be resumed (Slurm "
                 "SuspendTimeout, default 120)");
  cmd.add_option("--resume-timeout", f.power.resume_timeout_s,
                 "seconds a resumed node may take to come up before it is marked down (Slurm "
                 "ResumeTimeout, default 600)");
  cmd.add_option("--suspend-rate", f.power.suspend_rate,
                 "most nodes suspended per minute, 0: no limit (default 60)");
  cmd.add_option("--resume-rate", f.power.resume_rate,
                 "most nodes resumed per minute, 0: no limit (default 300)");
  cmd.add_option("--exclude-nodes", f.exclude_nodes, "nodes never suspended: name,name,...");
  cmd.add_option("--headroom", f.power.headroom,
                 "consolidate: free devices per type kept powered on (default 2)");
  cmd.add_option("--cap-max-slowdown", f.power.cap_max_slowdown,
                 "cap: throughput a job without a deadline may lose to a lower power cap "
                 "(fraction, default 0.05)");
  cmd.add_option("--standby-fraction", f.power.standby_fraction,
                 "share of base power an off node still draws (default 0.005)");
  cmd.add_option("--boot-failure-nodes", f.boot_failure_nodes,
                 "fault injection: these nodes never finish booting (name,name,...)");
  cmd.add_option("--price-kwh", f.price_kwh, "electricity price, USD per kWh (default 0.12)");
  cmd.add_option("--tariff", f.tariff,
                 "electricity prices by hour of day, USD per kWh, covering 0-24: "
                 "e.g. 0-7:0.10,7-22:0.25,22-24:0.10 (time 0 is midnight)");
  cmd.add_option("--carbon", f.carbon, "carbon intensity, g CO2 per kWh (reports carbon_kg)");
}

// Times (plain seconds or with a unit: 90s, 6m, 12h) and counts: a negative or malformed
// value is rejected naming the flag.
void CheckTimesAndCounts(CLI::App& cmd) {
  const CLI::Validator non_negative(
      [](std::string& value) -> std::string {
        auto seconds = util::ParseDuration(value);
        if (!seconds.ok() || !(*seconds >= 0)) {
          return "expected a number >= 0 (seconds, or with a unit: 90s, 6m, 12h), got '" + value +
                 "'";
        }
        value = fmt::format("{}", *seconds);
        return "";
      },
      "TIME");
  for (const char* name :
       {"--round", "--restore", "--checkpoint-save", "--startup", "--mtbf", "--mttr",
        "--checkpoint-interval", "--preempt-interval", "--preempt-quantum", "--until", "--horizon",
        "--suspend-time", "--suspend-timeout", "--resume-timeout"}) {
    cmd.get_option(name)->transform(non_negative);
  }
  // CLI11's NonNegativeNumber would answer "not in range 0 to 1.79e308", also for a word.
  const CLI::Validator finite_non_negative(
      [](const std::string& value) -> std::string {
        double number = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, number);
        if (ec != std::errc() || ptr != end || !std::isfinite(number) || number < 0) {
          return "expected a finite number >= 0, got '" + value + "'";
        }
        return "";
      },
      "NUMBER");
  cmd.get_option("--aging")->check(finite_non_negative);
  cmd.get_option("--plan-incumbency")->check(finite_non_negative);
  cmd.get_option("--max-rounds")->check(CLI::NonNegativeNumber);
}

}  // namespace

void AddSimFlags(CLI::App& cmd, SimFlags& f) {
  // In this order: --help lists the flags as they are added.
  AddInputFlags(cmd, f);
  AddExecutionFlags(cmd, f);
  AddSchedulingFlags(cmd, f);
  f.app = &cmd;
  AddPowerFlags(cmd, f);
  CheckTimesAndCounts(cmd);
}

double TimelineSampleFor(const model::Workload& workload) {
  double span = 0;
  for (const model::Job& j : workload.jobs) span = std::max(span, j.arrival_s);
  for (double s : {30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0}) {
    if (span / s <= 1500) return s;
  }
  return 3600;
}

namespace {

// `flags` with what `config` sets and the command line does not.
SimFlags WithConfig(const SimFlags& flags, const SimConfig& config) {
  SimFlags f = flags;
  const auto given = [&](const char* name) {
    return f.app != nullptr && f.app->get_option(name)->count() > 0;
  };
  if (config.scorers && !given("--scorers")) f.scorers = *config.scorers;
  if (config.preempt_interval_s && !given("--preempt-interval")) {
    f.preempt_interval_s = *config.preempt_interval_s;
  }
  if (config.elastic && !given("--no-elastic") && !given("--elastic-range")) {
    f.no_elastic = !*config.elastic;
  }
  if (config.serving && !given("--serving")) f.serving = *config.serving;
  if (config.serving_interval_s && !given("--serving-interval")) {
    f.serving_interval_s = *config.serving_interval_s;
  }
  return f;
}

// The throughput profile when the trace names job types (or --throughputs names one), with
// every (job type, gang size) the trace needs from it.
util::Status LoadProfile(const SimFlags& f, SimInputs& in) {
  bool needs_profile = false;
  for (const model::Job& j : in.workload.jobs) {
    if (j.throughput.empty() && !j.ops && !j.job_type.empty()) needs_profile = true;
  }
  if (!needs_profile && f.throughputs.empty()) return util::Status::Ok();
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
  return util::Status::Ok();
}

// --elastic-range on every rigid training or batch job of the workload.
util::Status ApplyElasticRange(const SimFlags& f, model::Workload& workload) {
  if (f.elastic_range.empty()) return util::Status::Ok();
  if (f.no_elastic) {
    return util::Status::InvalidArgument("--elastic-range and --no-elastic: give one or neither");
  }
  ASSIGN_OR_RETURN(const auto range, ParseElasticRange(f.elastic_range));
  for (model::Job& j : workload.jobs) {
    const bool rigid = j.min_workers == j.max_workers;
    const bool kind = j.kind == model::JobKind::kTraining || j.kind == model::JobKind::kBatch;
    if (!kind || !rigid || !j.pinned_devices.empty()) continue;
    j.min_workers = std::min(range.first, std::max(1, j.gang_size));
    j.max_workers = std::max(range.second, std::max(1, j.gang_size));
  }
  return util::Status::Ok();
}

// The config's services.training_value, per device type the cluster has.
util::Status LoadTrainingValues(const SimConfig& config, const model::Cluster& cluster,
                                sim::ServingOptions& serving) {
  for (const auto& [name, tv] : config.training_value) {
    const model::DeviceType* type = cluster.catalog.Find(name);
    std::string types;
    bool present = false;
    for (const auto& [t, n] : cluster.DeviceTypeCounts()) {
      const std::string& have = cluster.catalog.Get(t).name;
      types += (types.empty() ? "" : ", ") + have;
      present = present || (type != nullptr && type->name == have);
    }
    if (!present) {
      return util::InputError(tv.where, "services.training_value." + name,
                              "is not a device type of the cluster", "one of: " + types);
    }
    serving.training_value[type->name] = tv.value;
  }
  return util::Status::Ok();
}

// The config's tenants, checked against the cluster and the workload's jobs, into the
// scheduler's options (none: nothing changes).
util::Status LoadTenants(SimConfig& config, SimInputs& in) {
  if (config.tenants.empty()) return util::Status::Ok();
  RETURN_IF_ERROR(model::io::ResolveTenants(in.cluster, &config.tenants));
  RETURN_IF_ERROR(model::io::CheckJobTenants(config.tenants, in.workload));
  in.options.sched.tenants = std::make_shared<const model::Tenants>(std::move(config.tenants));
  return util::Status::Ok();
}

// The scheduler's options that simulate's flags set, checked.
util::Status ApplySchedulerFlags(const SimFlags& f, sched::SchedulerOptions& o) {
  if (f.max_jobs_per_lp < 1) {
    return util::Status::InvalidArgument(
        fmt::format("--max-jobs-per-lp {}: expected a whole number >= 1 (job classes per LP "
                    "before it is split into POP sub-problems; default 1000)",
                    f.max_jobs_per_lp));
  }
  o.ignore_compat = f.ignore_compat;
  o.scorers = f.scorers;
  auto placement = sched::ParsePlacementMode(f.placement);
  if (!placement.ok()) {
    return util::Status::InvalidArgument("--placement: " + placement.status().message());
  }
  o.placement = *placement;
  o.tuning.aging = f.aging;
  o.preempt_interval_s = f.preempt_interval_s;
  o.gavel_rebuilds = f.gavel_rebuilds;
  if (f.preempt_quantum_s >= 0 && f.preempt_quantum_s < f.checkpoint_save_s + f.restore_s) {
    return util::Status::InvalidArgument(fmt::format(
        "--preempt-quantum {:g}: below what one preemption costs (--checkpoint-save {:g} + "
        "--restore {:g} = {:g} s); expected at least that, or leave it out for 40 times that",
        f.preempt_quantum_s, f.checkpoint_save_s, f.restore_s, f.checkpoint_save_s + f.restore_s));
  }
  o.preempt_quantum_s = f.preempt_quantum_s;
  o.plan_incumbency = f.plan_incumbency;
  o.space_sharing = f.space_sharing;
  o.elastic = !f.no_elastic;
  o.allocation.max_jobs_per_lp = f.max_jobs_per_lp;
  return util::Status::Ok();
}

}  // namespace

util::Result<SimInputs> LoadSimInputs(const SimFlags& flags) {
  SimConfig config;
  if (!flags.config.empty()) {
    ASSIGN_OR_RETURN(config, LoadSimConfig(flags.config));
  }
  const SimFlags f = WithConfig(flags, config);
  SimInputs in;
  in.config_policy = config.policy;
  ASSIGN_OR_RETURN(in.cluster, model::io::LoadCluster(f.cluster));
  ASSIGN_OR_RETURN(in.workload, model::io::LoadWorkload(f.trace, in.cluster.catalog));
  ApplyClasses(config, in.workload);
  RETURN_IF_ERROR(LoadTenants(config, in));
  RETURN_IF_ERROR(LoadProfile(f, in));
  if (f.space_sharing) RETURN_IF_ERROR(CheckPairEntries(in, f));
  RETURN_IF_ERROR(ApplyElasticRange(f, in.workload));
  sim::SimOptions& o = in.options;
  o.round_s = f.round_s;
  o.restore_s = f.restore_s;
  o.checkpoint_save_s = f.checkpoint_save_s;
  ASSIGN_OR_RETURN(o.estimates, sim::ParseEstimateMode(f.estimates));
  o.compat_startup_s = f.startup_s;
  o.checkpoint_interval_s = f.checkpoint_s;
  o.node_mtbf_s = f.mtbf_s;
  o.node_mttr_s = f.mttr_s;
  o.seed = f.seed;
  RETURN_IF_ERROR(ApplySchedulerFlags(f, o.sched));
  o.until_s = f.until_s;
  o.horizon_s = f.horizon_s;
  o.max_rounds = f.max_rounds;
  if (!f.measure.empty()) {
    ASSIGN_OR_RETURN(auto m, ParseMeasure(f.measure));
    o.measure = m;
  }
  if (!f.faults.empty()) {
    ASSIGN_OR_RETURN(o.faults, sim::LoadFaults(f.faults, in.cluster));
  }
  RETURN_IF_ERROR(LoadPowerOptions(f, o.power));
  RETURN_IF_ERROR(power::ValidatePowerOptions(o.power, in.cluster));
  auto serving = sim::ParseServingMode(f.serving);
  if (!serving.ok())
    return util::Status::InvalidArgument("--serving: " + serving.status().message());
  o.serving.mode = serving->mode;
  o.serving.single_type = serving->single_type;
  if (auto st = sim::CheckSingleType(in.cluster, o.serving); !st.ok()) {
    return util::Status::InvalidArgument("--serving: " + st.message());
  }
  o.serving.interval_s = f.serving_interval_s;
  o.serving.horizon_s = f.serving_horizon_s;
  o.serving.risk_share = f.serving_risk_share;
  RETURN_IF_ERROR(LoadTrainingValues(config, in.cluster, o.serving));
  if (f.price_kwh >= 0) o.serving.usd_per_kwh = f.price_kwh;
  if (sim::HasServices(in.workload)) {
    const std::string calibration = f.serving_calibration.empty()
                                        ? DataPath("inference/splitwise-perf/perf_model.csv")
                                        : f.serving_calibration;
    ASSIGN_OR_RETURN(o.serving.calibrations,
                     cost::LoadServingCalibrations(calibration, in.cluster.catalog));
  }
  return in;
}

std::vector<std::string> SplitNonEmpty(const std::string& text, char separator) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(separator, pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace hetsched::cli
