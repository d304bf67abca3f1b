#include "model/job.h"

#include <fmt/format.h>

namespace hetsched::model {

std::string_view JobKindName(JobKind kind) {
  switch (kind) {
    case JobKind::kTraining:
      return "training";
    case JobKind::kInference:
      return "inference";
    case JobKind::kBatch:
      return "batch";
    case JobKind::kRealtime:
      return "realtime";
  }
  return "unknown";
}

util::Result<JobKind> ParseJobKind(std::string_view text) {
  for (JobKind k : {JobKind::kTraining, JobKind::kInference, JobKind::kBatch, JobKind::kRealtime}) {
    if (text == JobKindName(k)) return k;
  }
  return util::Status::InvalidArgument(
      fmt::format("unknown job kind '{}' (expected training, inference, batch or realtime)", text));
}

}  // namespace hetsched::model
