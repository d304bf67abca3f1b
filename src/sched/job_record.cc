#include "sched/job_record.h"

#include <algorithm>
#include <cmath>

#include "cost/job_speed.h"

namespace hetsched::sched {

double JobRecord::DoneAt(double now_s) const {
  if (phase != JobPhase::kRunning) return done_work;
  return RunningDoneAt(done_work, rate, progress_since_s, now_s);
}

RunningKeyInputs RunningKeyInputs::Of(const JobRecord& r) {
  return {r.arrival_s,   r.done_work, r.rate, r.progress_since_s, r.estimated_work, r.ref_speed,
          r.run_start_s, r.seq,       r.id,   r.estimate_source};
}

double JobRecord::AttainedAt(double now_s) const {
  if (phase != JobPhase::kRunning) return attained_s;
  return attained_s + static_cast<double>(devices.size()) * std::max(0.0, now_s - service_since_s);
}

double JobRecord::AttainedNormAt(double now_s) const {
  if (phase != JobPhase::kRunning) return attained_norm_s;
  const double now_speed = partner >= 0 ? pair_speed : speed[type.value()];
  const double rel = best_speed > 0 ? now_speed / best_speed : 1.0;
  return attained_norm_s +
         rel * static_cast<double>(devices.size()) * std::max(0.0, now_s - service_since_s);
}

std::optional<double> GangSpeed(const model::Job& job, const model::DeviceType& type,
                                const model::ThroughputProfile* profile) {
  const std::optional<double> step_s = cost::StepSeconds(job, type, profile);
  if (!step_s || !(*step_s > 0) || std::isinf(*step_s)) return std::nullopt;
  return 1.0 / *step_s;
}

}  // namespace hetsched::sched
