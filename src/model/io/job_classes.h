// Per job kind, a priority added to each job's and a weight multiplied into its fairness
// weight (Job::priority_weight): the `classes` section of `simulate --config` and
// `serve --config` (docs/simulator.md, docs/operations.md). Services (kind service) are
// served, not queued, and have no class.
//
//   classes:
//     batch: {priority: -1, weight: 0.5}
//     training: {weight: 2}
#pragma once

#include <cstdint>
#include <map>

#include "model/io/document.h"
#include "model/job.h"
#include "util/status.h"

namespace hetsched::model::io {

struct JobClass {
  int32_t priority = 0;  // added to the job's priority
  double weight = 1;     // multiplied into its priority_weight
};
using JobClasses = std::map<JobKind, JobClass>;

// The mapping at `node` (field "classes"); errors are located ("file:line:column: field: ...").
util::Result<JobClasses> ParseJobClasses(const DocReader& r, const DocValue& node);

// `job` with its kind's class applied (unchanged when its kind has none).
void ApplyJobClass(const JobClasses& classes, Job& job);

}  // namespace hetsched::model::io
