// JobState: where a job the daemon knows stands. Its names are the API's, the CLI's and the
// store's (the jobs table keeps them as text, as every schema version did).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hetsched::svc {

enum class JobState : uint8_t {
  kQueued,     // waiting in the scheduler's queue
  kStarting,   // placed; the backend has not reported every part running
  kRunning,    // every part runs
  kStopping,   // asked to stop (a preemption, a cancel, its time limit), not yet gone
  kCompleted,  // ended: every part exited 0
  kFailed,     // ended: an error, a time limit, or it can never run here
  kCancelled,  // ended: the user or the backend cancelled it
};

inline constexpr std::array<JobState, 7> kJobStates = {
    JobState::kQueued,    JobState::kStarting, JobState::kRunning,  JobState::kStopping,
    JobState::kCompleted, JobState::kFailed,   JobState::kCancelled};

// queued, starting, running, stopping, completed, failed, cancelled.
std::string_view JobStateName(JobState state);
// The inverse of JobStateName; nullopt for any other text.
std::optional<JobState> ParseJobState(std::string_view name);
// "queued, starting, ... or cancelled": for messages that list what is accepted.
std::string_view JobStateNames();

// A JobState as an index into arrays of kJobStates.size() (counts by state).
constexpr size_t JobStateIndex(JobState state) { return static_cast<size_t>(state); }

// Completed, failed and cancelled jobs have left the scheduler; the others are live.
constexpr bool IsEnded(JobState state) { return state >= JobState::kCompleted; }

}  // namespace hetsched::svc
