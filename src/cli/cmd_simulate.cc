#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "cli/command.h"
#include "cli/sim_flags.h"
#include "report/html.h"
#include "report/html_sim.h"
#include "report/sim_json.h"
#include "report/table.h"
#include "sched/allocation_policy.h"
#include "sched/policy.h"
#include "util/file.h"
#include "util/progress.h"

namespace hetsched::cli {
namespace {

// One row per tenant: its share of normalized throughput, device-hours, JCT, borrowed, lent.
void AddTenantRows(const sim::SimResult& r,
                   std::vector<std::pair<std::string, std::string>>& rows) {
  for (const auto& [name, t] : r.tenants) {
    rows.push_back(
        {"tenant " + name,
         fmt::format("share {:.3f}, {:.1f} device-h, avg JCT {:.3f} h, borrowed {:.1f} "
                     "device-h, lent {:.1f}",
                     t.normalized_share,
                     std::accumulate(t.device_hours.begin(), t.device_hours.end(), 0.0,
                                     [](double a, const auto& kv) { return a + kv.second; }),
                     t.avg_jct_s / 3600, t.borrowed_device_hours, t.lent_device_hours)});
  }
}

std::vector<std::pair<std::string, std::string>> Rows(const sim::SimResult& r) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"policy", r.policy},
      {"estimates", r.estimates == "oracle" ? "oracle (true sizes)" : r.estimates},
      {"jobs_completed", fmt::format("{}", r.jobs_completed)},
      {"jobs_failed", fmt::format("{}", r.jobs_failed)},
      {"jobs_unfinished", fmt::format("{}", r.jobs_unfinished)},
      {"measured_jobs", fmt::format("{}", r.measured_jobs)},
      {"avg_jct_h", fmt::format("{:.3f}", r.avg_jct_s / 3600)},
      {"p50_jct_h", fmt::format("{:.3f}", r.p50_jct_s / 3600)},
      {"p99_jct_h", fmt::format("{:.3f}", r.p99_jct_s / 3600)},
      {"avg_queue_h", fmt::format("{:.3f}", r.avg_queue_s / 3600)},
      {"makespan_h", fmt::format("{:.3f}", r.makespan_s / 3600)},
      {"power_policy", r.power_policy},
      {"horizon_h", fmt::format("{:.3f}", r.horizon_s / 3600)},
      {"energy_kwh", fmt::format("{:.1f}", r.energy_kwh)},
      {"energy_cost_usd", fmt::format("{:.2f}", r.energy_cost)},
      {"peak_power_kw", fmt::format("{:.2f}", r.peak_power_w / 1000)},
      {"node_power_transitions", fmt::format("{}", r.node_power_transitions)},
      {"node_boot_failures", fmt::format("{}", r.node_boot_failures)},
  };
  if (r.carbon_kg) rows.push_back({"carbon_kg", fmt::format("{:.1f}", *r.carbon_kg)});
  for (const auto& [type, u] : r.utilization) {
    rows.push_back({"utilization " + type, fmt::format("{:.3f}", u)});
  }
  const std::vector<std::pair<std::string, std::string>> tail = {
      {"compat_failures", fmt::format("{}", r.compat_failures)},
      {"wasted_device_hours", fmt::format("{:.2f}", r.wasted_device_hours)},
      {"lost_device_hours", fmt::format("{:.2f}", r.lost_device_hours)},
      {"faults", fmt::format("{}", r.faults)},
      {"preemptions", fmt::format("{}", r.preemptions)},
      {"preemptions_per_job", fmt::format("{:.2f}", r.preemptions_per_job)},
      // Device-hours without progress that preemptions cost, and their share of capacity.
      {"checkpoint_save_device_hours", fmt::format("{:.2f}", r.checkpoint_save_device_hours)},
      {"restore_device_hours", fmt::format("{:.2f}", r.restore_device_hours)},
      {"restart_device_hours", fmt::format("{:.2f}", r.restart_device_hours)},
      {"preemption_share", fmt::format("{:.4f}", r.preemption_share)},
      {"migrations", fmt::format("{}", r.migrations)},
      {"resizes", fmt::format("{}", r.resizes)},
      {"cross_vendor_restarts", fmt::format("{}", r.cross_vendor_restarts)},
      // Gavel's window: did arrivals continue until every measured job was done?
      {"arrivals_ended_early", r.arrivals_ended_early
                                   ? fmt::format("yes (last at {:.1f} h)", r.last_arrival_s / 3600)
                                   : "no"},
      {"network_gb", fmt::format("{:.1f}", r.network_bytes / 1e9)},
      {"gangs_within_node", fmt::format("{:.3f}", r.gangs_within_node)},
      {"decisions", fmt::format("{}", r.decisions)},
      {"sched_wall_s", fmt::format("{:.3f}", r.sched_wall_s)},
      {"decision_p99_us", fmt::format("{:.1f}", r.decision_p99_us)},
      {"events", fmt::format("{}", r.events)},
      {"sim_wall_s", fmt::format("{:.3f}", r.sim_wall_s)},
  };
  rows.insert(rows.end(), tail.begin(), tail.end());
  if (r.serving) {
    const sim::ServingResult& sv = *r.serving;
    rows.push_back({"serving", sv.mode});
    rows.push_back({"requests", fmt::format("{}", sv.requests)});
    rows.push_back({"slo_attainment", fmt::format("{:.5f}", sv.slo_attainment)});
    rows.push_back({"serving_cost_usd", fmt::format("{:.2f}", sv.cost_usd)});
    rows.push_back({"serving_energy_kwh", fmt::format("{:.1f}", sv.energy_kwh)});
    rows.push_back({"lent_device_hours", fmt::format("{:.1f}", r.lent_device_hours)});
    for (const sim::ServiceOutcome& o : sv.services) {
      rows.push_back({"service " + o.name,
                      fmt::format("{:.4f} in SLO, p99 TTFT {:.2f} s, TPOT {:.0f} ms, peak {} "
                                  "replicas",
                                  o.requests > 0 ? 1.0 * o.within_slo / o.requests : 1.0,
                                  o.ttft_p99_s, o.tpot_p99_s * 1e3, o.peak_replicas)});
    }
  }
  AddTenantRows(r, rows);
  if (r.space_sharing) {
    rows.push_back({"pairs_formed", fmt::format("{}", r.pairs_formed)});
    rows.push_back({"shared_device_hours", fmt::format("{:.2f}", r.shared_device_hours)});
  }
  return rows;
}

}  // namespace

util::Result<sim::SimResult> RunOnePolicy(const SimInputs& in, const std::string& policy,
                                          bool quiet) {
  sim::SimOptions o = in.options;
  o.policy = policy;
  util::ProgressBar bar("simulating " + policy, !quiet);
  o.on_progress = [&bar](double f) { bar.Update(f); };
  auto r = sim::Simulate(in.cluster, in.workload, in.profile ? &*in.profile : nullptr, o);
  bar.Done();
  if (r.ok() && r->allocation_failures > 0) {
    // Not fatal (the last good allocation was kept), but never silent.
    std::fprintf(stderr,
                 "hetsched: warning: %s: %lld allocation solve(s) failed (an LP policy kept its "
                 "last good allocation; default assigned types by regret); latest: %s\n",
                 policy.c_str(), static_cast<long long>(r->allocation_failures),
                 r->allocation_log.empty() ? "-" : r->allocation_log.back().c_str());
  }
  if (r.ok() && o.sched.elastic && sched::MakeAllocationPolicy(policy) != nullptr &&
      std::any_of(in.workload.jobs.begin(), in.workload.jobs.end(),
                  [](const model::Job& j) { return j.min_workers < j.max_workers; })) {
    std::fprintf(stderr,
                 "hetsched: warning: %s plans fixed gangs: elastic jobs ran at their gang_size\n",
                 policy.c_str());
  }
  if (r.ok() && policy == "default") r->policy = "default (" + r->policy + ")";
  return r;
}

std::string ResultTable(const std::vector<sim::SimResult>& results) {
  std::vector<std::string> headers = {"metric"};
  for (const auto& r : results) headers.push_back(r.policy);
  report::Table table(headers);
  const auto first = Rows(results.front());
  std::vector<std::vector<std::pair<std::string, std::string>>> all;
  for (const auto& r : results) all.push_back(Rows(r));
  for (size_t i = 1; i < first.size(); ++i) {
    std::vector<std::string> row = {first[i].first};
    for (const auto& rows : all) row.push_back(i < rows.size() ? rows[i].second : "");
    table.AddRow(row);
  }
  return table.Render();
}

void AddSimulateCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "simulate", "Replay a trace on a cluster in virtual time under one scheduling policy");
  auto flags = std::make_shared<SimFlags>();
  auto policy = std::make_shared<std::string>("default");
  auto html = std::make_shared<std::string>();
  AddSimFlags(*cmd, *flags);
  cmd->add_option("--policy", *policy,
                  "scheduling policy (default: default):\n" + sched::PolicyHelp());
  cmd->add_option("--html", *html,
                  "also write an HTML report (one file, no network): utilization, jobs per "
                  "node, power and queue over time");
  cmd->callback([cmd, flags, policy, html, &result] {
    if (auto p = sched::MakePolicy(*policy); !p.ok()) {
      result.exit_code = ReportError(p.status());
      return;
    }
    auto in = LoadSimInputs(*flags);
    if (!in.ok()) {
      result.exit_code = ReportError(in.status());
      return;
    }
    if (!html->empty()) in->options.timeline_sample_s = TimelineSampleFor(in->workload);
    const bool policy_given = cmd->get_option("--policy")->count() > 0;
    const std::string& chosen = in->config_policy && !policy_given ? *in->config_policy : *policy;
    auto r = RunOnePolicy(*in, chosen, flags->quiet);
    if (!r.ok()) {
      result.exit_code = ReportError(r.status());
      return;
    }
    std::fputs(ResultTable({*r}).c_str(), stdout);
    if (!html->empty()) {
      report::HtmlPage page("hetsched simulate: " + r->policy,
                            fmt::format("Cluster {}, workload {} ({} jobs)", in->cluster.name,
                                        flags->trace, in->workload.jobs.size()));
      // The run's job ids count the jobs that are not services.
      const model::Workload jobs = sim::WithoutServices(in->workload);
      report::AddSimulationSections(page, in->cluster, &jobs, {{r->policy, &*r, "#1f77b4", false}});
      if (auto st = util::WriteFile(*html, page.Render()); !st.ok()) {
        result.exit_code = ReportError(st);
        return;
      }
    }
    if (!flags->json.empty()) {
      if (auto st = util::WriteFile(flags->json, report::ToJson(*r).dump(2) + "\n"); !st.ok()) {
        result.exit_code = ReportError(st);
        return;
      }
    }
    result.exit_code = kExitOk;
  });
}

}  // namespace hetsched::cli
