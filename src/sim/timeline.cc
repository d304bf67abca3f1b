#include "sim/timeline.h"

namespace hetsched::sim {

const char* RunEndName(RunEnd end) {
  switch (end) {
    case RunEnd::kCompleted:
      return "completed";
    case RunEnd::kPreempted:
      return "preempted";
    case RunEnd::kFailed:
      return "failed";
    case RunEnd::kFault:
      return "fault";
    case RunEnd::kRunning:
      return "running";
  }
  return "?";
}

}  // namespace hetsched::sim
