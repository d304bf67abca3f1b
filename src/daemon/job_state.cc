#include "daemon/job_state.h"

#include <string>

namespace hetsched::svc {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kStarting:
      return "starting";
    case JobState::kRunning:
      return "running";
    case JobState::kStopping:
      return "stopping";
    case JobState::kCompleted:
      return "completed";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (const JobState state : kJobStates) {
    if (JobStateName(state) == name) return state;
  }
  return std::nullopt;
}

std::string_view JobStateNames() {
  static const std::string names = [] {
    std::string out;
    for (size_t i = 0; i < kJobStates.size(); ++i) {
      if (i > 0) out += i + 1 == kJobStates.size() ? " or " : ", ";
      out += JobStateName(kJobStates[i]);
    }
    return out;
  }();
  return names;
}

}  // namespace hetsched::svc
