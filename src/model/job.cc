#include "model/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

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

void SortByArrival(Workload* workload) {
  std::vector<Job>& jobs = workload->jobs;
  auto earlier = [](const Job& a, const Job& b) { return a.arrival_s < b.arrival_s; };
  if (!std::is_sorted(jobs.begin(), jobs.end(), earlier)) {
    // Jobs are large; sorting positions and moving each job once is much cheaper than letting
    // stable_sort move whole jobs O(n log n) times.
    std::vector<uint32_t> order(jobs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&jobs](uint32_t a, uint32_t b) {
      return jobs[a].arrival_s < jobs[b].arrival_s;
    });
    std::vector<Job> sorted;
    sorted.reserve(jobs.size());
    for (uint32_t i : order) sorted.push_back(std::move(jobs[i]));
    jobs = std::move(sorted);
  }
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].id = JobId(static_cast<int32_t>(i));
}

}  // namespace hetsched::model
