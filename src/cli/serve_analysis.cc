#include "cli/serve_analysis.h"

#include "report/plan_json.h"
#include "sim/engine.h"

namespace hetsched::cli {

namespace {

util::Result<svc::SimulatedRun> SimulateLive(const model::Cluster& cluster,
                                             const model::Workload& workload,
                                             const std::string& policy,
                                             const sched::SchedulerOptions& options) {
  sim::SimOptions o;
  o.policy = policy;
  o.sched = options;
  ASSIGN_OR_RETURN(sim::SimResult r, sim::Simulate(cluster, workload, nullptr, o));
  return svc::SimulatedRun{r.policy, r.makespan_s, r.avg_jct_s, r.p99_jct_s, r.preemptions};
}

}  // namespace

svc::AnalysisHooks ServeAnalysisHooks() {
  svc::AnalysisHooks hooks;
  hooks.simulate = SimulateLive;
  hooks.model_plan_json = [](const model::ModelSpec& spec, const model::Cluster& cluster,
                             const plan::ModelPlan& plan) {
    return report::ModelPlanJson(spec, cluster, plan);
  };
  hooks.dag_schedule_json = [](const std::string& algo, const plan::Schedule& schedule,
                               const plan::DagProblem& problem) {
    return report::DagScheduleJson(algo, schedule, problem);
  };
  return hooks;
}

}  // namespace hetsched::cli
