// Timeline: what a simulation looked like over time, for charts (report/) and for tests:
// periodic samples of busy devices per type, queue length and power, and every job run
// (which devices of which nodes it held, from when to when, and how the run ended).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetsched::sim {

struct TimelineSample {
  double time_s = 0;
  std::vector<int32_t> busy;  // by Timeline::types: devices held by running jobs
  int32_t queued = 0;         // jobs waiting (arrived, not running, not ended)
  int32_t running = 0;
  double power_w = 0;  // cluster power draw; 0 when no power model is attached
};

enum class RunEnd { kCompleted, kPreempted, kFailed, kFault, kRunning };
const char* RunEndName(RunEnd end);

struct RunSpan {
  int32_t job = -1;
  int32_t type = -1;           // index into Timeline::types
  std::vector<int32_t> nodes;  // node indices (model::NodeId values) it held devices on
  int32_t devices = 0;
  double start_s = 0;
  double end_s = 0;
  RunEnd end = RunEnd::kRunning;  // kRunning: still running when the simulation stopped
};

struct Timeline {
  double sample_s = 0;
  std::vector<std::string> types;   // device type names present in the cluster
  std::vector<int32_t> type_total;  // devices of each type
  std::vector<std::string> nodes;   // node names by index
  std::vector<TimelineSample> samples;
  std::vector<RunSpan> runs;
};

}  // namespace hetsched::sim
