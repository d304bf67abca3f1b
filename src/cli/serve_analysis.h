// The simulator and the plan writers of report/, handed to the daemon for its what-if and plan
// endpoints (svc::AnalysisHooks): the daemon itself includes neither.
#pragma once

#include "daemon/analysis.h"

namespace hetsched::cli {

// simulate: sim::Simulate from an empty cluster with no throughput profile (the jobs' own
// speeds); model_plan_json and dag_schedule_json: report/plan_json.h.
svc::AnalysisHooks ServeAnalysisHooks();

}  // namespace hetsched::cli
