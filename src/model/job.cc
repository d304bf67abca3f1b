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
    case JobKind::kService:
      return "service";
  }
  return "unknown";
}

util::Result<JobKind> ParseJobKind(std::string_view text) {
  for (JobKind k : {JobKind::kTraining, JobKind::kInference, JobKind::kBatch, JobKind::kRealtime,
                    JobKind::kService}) {
    if (text == JobKindName(k)) return k;
  }
  return util::Status::InvalidArgument(fmt::format(
      "unknown job kind '{}' (expected training, inference, batch, realtime or service)", text));
}

}  // namespace hetsched::model
