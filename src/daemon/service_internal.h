// The private parts of Service that its files share (service.cc, service_attempts.cc,
// service_nodes.cc, service_recover.cc, service_views.cc); nothing else includes this.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/service.h"

namespace hetsched::svc {

inline constexpr const char* kClockKey = "scheduler_clock";
inline constexpr const char* kBeliefKey = "size_belief";
inline constexpr const char* kTenantUsageKey = "tenant_usage";

// Whether a job of `tenant` is within `scope` (Service's TenantScope).
inline bool InScope(const std::string& tenant, const TenantScope& scope) {
  return !scope || *scope == tenant;
}

// The answer about a job that does not exist, or that the caller may not see.
inline util::Status NoJob(const std::string& name) {
  return util::Status::NotFound(fmt::format("no job '{}'", name));
}

struct Service::Entry {
  std::string name;
  // As submitted but for its size, shared with the scheduler (which sees no size): its `work`
  // is 0, and `work` below is the true size when the user gave one. Never null once made.
  std::shared_ptr<const model::Job> job;
  double work = 0;  // steps
  std::string spec_json;
  std::string idempotency_key;
  JobState state = JobState::kQueued;
  model::JobId slot;  // valid while the job is live
  double submitted_s = 0, started_s = -1, ended_s = -1;
  std::optional<int> exit_status;
  std::string device_type;
  std::vector<model::DeviceId> devices;
  int64_t attempt = 0;  // as stored: its last attempt's number (drive::Attempts numbers them)
  int32_t preemptions = 0;
  double done_work = 0;
  std::string message;
};

struct Service::PendingSubmit {
  model::Job job;
  std::string spec_json;
  std::string idempotency_key;
  bool done = false;
  util::Status status;
  JobView view;
};

struct Service::TenantMetrics {
  GaugeFamily share, usage, devices, normalized, borrowed, lent;
};

struct Service::Metrics {
  CounterFamily submitted, placements, preemptions, ended, energy_j;
  HistogramFamily decision_s;
  GaugeFamily jobs, devices_used, devices_offered, power_w, draw_w, nodes;
  // What the last recovery of the stored state took: wall and this thread's CPU seconds.
  GaugeFamily recovery_s;
};

}  // namespace hetsched::svc
