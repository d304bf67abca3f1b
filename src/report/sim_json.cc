#include "report/sim_json.h"

#include <map>
#include <string>
#include <vector>

namespace hetsched::report {

namespace {

// The services of a serving run: requests, SLO attainment, tail latencies, cost and replicas.
nlohmann::json ServingJson(const sim::ServingResult& sv) {
  nlohmann::json services = nlohmann::json::array();
  for (const sim::ServiceOutcome& o : sv.services) {
    services.push_back(
        {{"name", o.name},
         {"requests", o.requests},
         {"within_slo", o.within_slo},
         {"unserved", o.unserved},
         {"slo_attainment", o.requests > 0 ? 1.0 * o.within_slo / o.requests : 1},
         {"ttft_p99_s", o.ttft_p99_s},
         {"tpot_p99_s", o.tpot_p99_s},
         {"cost_usd", o.cost_usd},
         {"energy_kwh", o.energy_kwh},
         {"device_hours", o.device_hours},
         {"peak_replicas", o.peak_replicas},
         {"replicas_started", o.replicas_started},
         {"error_budget", {{"earned", o.error_budget_earned}, {"spent", o.error_budget_spent}}}});
  }
  const sim::PlanAudit& a = sv.plans;
  return {{"mode", sv.mode},
          {"plans",
           {{"solved", a.plans},
            {"single_type_covers", a.single_type_covers},
            {"mix_cheaper", a.mix_cheaper},
            {"single_type_kept", a.single_type_kept},
            {"headroom_left", a.headroom_left},
            {"risk_left", a.risk_left},
            {"mix_usd_per_hour", a.mix_usd_per_hour},
            {"single_type_usd_per_hour", a.single_type_usd_per_hour}}},
          {"requests", sv.requests},
          {"services", services},
          {"pool_devices", sv.pool.size()},
          {"notes", sv.notes}};
}

// Faults and preemptions, and what the scheduler's decisions and the simulation cost in time.
void AddDisruptionsAndDecisions(const sim::SimResult& r, nlohmann::json& j) {
  j["faults"] = r.faults;
  j["preemptions"] = r.preemptions;
  j["preemptions_per_job"] = r.preemptions_per_job;
  j["checkpoint_save_device_hours"] = r.checkpoint_save_device_hours;
  j["restore_device_hours"] = r.restore_device_hours;
  j["restart_device_hours"] = r.restart_device_hours;
  j["preemption_share"] = r.preemption_share;
  j["migrations"] = r.migrations;
  j["resizes"] = r.resizes;
  j["decisions"] = r.decisions;
  j["sched_wall_s"] = r.sched_wall_s;
  j["decision_p50_us"] = r.decision_p50_us;
  j["decision_p99_us"] = r.decision_p99_us;
  j["decision_max_us"] = r.decision_max_us;
  if (r.allocation_failures > 0) {
    j["allocation_failures"] = r.allocation_failures;
    j["allocation_log"] = r.allocation_log;
  }
  j["events"] = r.events;
  j["sim_wall_s"] = r.sim_wall_s;
}

// Bytes moved (network, staging, checkpoints) and power: energy, cost, peaks, carbon.
void AddTrafficAndPower(const sim::SimResult& r, nlohmann::json& j) {
  j["network_bytes"] = r.network_bytes;
  j["gangs_within_node"] = r.gangs_within_node;
  j["staged_bytes"] = r.staged_bytes;
  j["avg_staging_s"] = r.avg_staging_s;
  j["checkpoint_bytes"] = r.checkpoint_bytes;
  j["spine_bytes"] = r.spine_bytes;
  j["power_policy"] = r.power_policy;
  j["energy_kwh"] = r.energy_kwh;
  j["energy_cost"] = r.energy_cost;
  j["peak_power_w"] = r.peak_power_w;
  j["node_power_transitions"] = r.node_power_transitions;
  j["node_boot_failures"] = r.node_boot_failures;
  j["energy_by_state"] = r.energy_by_state;
  j["energy_by_type"] = r.energy_by_type;
  j["capped_device_hours"] = r.capped_device_hours;
  if (r.carbon_kg) j["carbon_kg"] = *r.carbon_kg;
}

nlohmann::json JobOutcomesJson(const std::vector<sim::JobOutcome>& outcomes) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& o : outcomes) {
    nlohmann::json jo;
    jo["id"] = o.id;
    jo["status"] = o.status == sim::JobStatus::kCompleted   ? "completed"
                   : o.status == sim::JobStatus::kFailed    ? "failed"
                   : o.status == sim::JobStatus::kCancelled ? "cancelled"
                                                            : "unfinished";
    jo["attempts"] = o.attempts;
    if (!o.reason.empty()) jo["reason"] = o.reason;
    jo["arrival_s"] = o.arrival_s;
    jo["first_start_s"] = o.first_start_s;
    jo["completion_s"] = o.completion_s;
    jo["preemptions"] = o.preemptions;
    jobs.push_back(jo);
  }
  return jobs;
}

// By tenant name: share of normalized throughput, device-hours, JCT, borrowed and lent,
// preempted runs, reclaim wait and rho.
nlohmann::json TenantsJson(const std::map<std::string, sim::TenantResult>& tenants) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, t] : tenants) {
    j[name] = {{"normalized_share", t.normalized_share},
               {"normalized_device_hours", t.normalized_device_hours},
               {"device_hours", t.device_hours},
               {"avg_jct_s", t.avg_jct_s},
               {"jobs_completed", t.jobs_completed},
               {"borrowed_device_hours", t.borrowed_device_hours},
               {"lent_device_hours", t.lent_device_hours},
               {"lent_device_hours_by_type", t.lent_device_hours_by_type},
               {"preempted_runs", t.preempted_runs},
               {"reclaim_wait_s", t.reclaim_wait_s},
               {"rho", t.rho}};
  }
  return j;
}

}  // namespace

nlohmann::json ToJson(const sim::SimResult& r) {
  nlohmann::json j;
  j["policy"] = r.policy;
  j["estimates"] = r.estimates;
  if (r.estimates == "oracle") j["oracle"] = "true job sizes: an upper bound no real scheduler has";
  j["seed"] = r.seed;
  j["round_s"] = r.round_s;
  j["jobs_total"] = r.jobs_total;
  j["jobs_completed"] = r.jobs_completed;
  j["jobs_failed"] = r.jobs_failed;
  j["jobs_rejected"] = r.jobs_rejected;
  j["jobs_unfinished"] = r.jobs_unfinished;
  if (r.jobs_cancelled > 0) j["jobs_cancelled"] = r.jobs_cancelled;
  j["failure_reasons"] = r.failure_reasons;
  j["measured_jobs"] = r.measured_jobs;
  j["avg_jct_s"] = r.avg_jct_s;
  j["p50_jct_s"] = r.p50_jct_s;
  j["p99_jct_s"] = r.p99_jct_s;
  j["avg_queue_s"] = r.avg_queue_s;
  j["makespan_s"] = r.makespan_s;
  j["end_s"] = r.end_s;
  j["horizon_s"] = r.horizon_s;
  j["utilization"] = r.utilization;
  j["compat_failures"] = r.compat_failures;
  j["wasted_device_hours"] = r.wasted_device_hours;
  j["lost_device_hours"] = r.lost_device_hours;
  j["lent_device_hours"] = r.lent_device_hours;
  if (r.serving) {
    const sim::ServingResult& sv = *r.serving;
    j["slo_attainment"] = sv.slo_attainment;
    j["serving_cost_usd"] = sv.cost_usd;
    j["serving_energy_kwh"] = sv.energy_kwh;
    j["serving"] = ServingJson(sv);
  }
  AddDisruptionsAndDecisions(r, j);
  AddTrafficAndPower(r, j);
  if (r.space_sharing) {
    j["space_sharing"] = true;
    j["pairs_formed"] = r.pairs_formed;
    j["shared_device_hours"] = r.shared_device_hours;
  }
  if (!r.tenants.empty()) {
    j["tenants"] = TenantsJson(r.tenants);
    j["tenant_jain_index"] = r.tenant_fairness.jain_index;
    j["tenant_worst_rho"] = r.tenant_fairness.worst_rho;
  }
  if (!r.stopped_early.empty()) j["stopped_early"] = r.stopped_early;
  j["last_arrival_s"] = r.last_arrival_s;
  j["arrivals_ended_early"] = r.arrivals_ended_early;
  j["cross_vendor_restarts"] = r.cross_vendor_restarts;
  if (r.timeline.sample_s > 0) j["timeline"] = ToJson(r.timeline);
  if (!r.jobs.empty()) j["jobs"] = JobOutcomesJson(r.jobs);
  return j;
}

nlohmann::json ToJson(const sim::Timeline& t) {
  nlohmann::json j;
  j["sample_s"] = t.sample_s;
  j["types"] = t.types;
  j["type_total"] = t.type_total;
  j["nodes"] = t.nodes;
  nlohmann::json samples = nlohmann::json::array();
  for (const sim::TimelineSample& s : t.samples) {
    samples.push_back({{"time_s", s.time_s},
                       {"busy", s.busy},
                       {"queued", s.queued},
                       {"running", s.running},
                       {"power_w", s.power_w}});
  }
  j["samples"] = std::move(samples);
  nlohmann::json runs = nlohmann::json::array();
  for (const sim::RunSpan& r : t.runs) {
    runs.push_back({{"job", r.job},
                    {"type", r.type},
                    {"nodes", r.nodes},
                    {"devices", r.devices},
                    {"start_s", r.start_s},
                    {"end_s", r.end_s},
                    {"end", sim::RunEndName(r.end)}});
  }
  j["runs"] = std::move(runs);
  return j;
}

}  // namespace hetsched::report
