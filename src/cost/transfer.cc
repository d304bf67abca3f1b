#include "cost/transfer.h"

#include <algorithm>
#include <limits>

namespace hetsched::cost {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

double TransferSeconds(const model::Path& path, uint64_t bytes) {
  if (bytes == 0 || path.distance == model::Distance::kSameDevice) return 0;
  if (!(path.bandwidth > 0)) return kInfinity;
  return path.latency_s + static_cast<double>(bytes) / path.bandwidth;
}

double RingAllReduceSeconds(uint64_t bytes, int workers, const model::Path& bottleneck) {
  if (workers <= 1 || bytes == 0) return 0;
  if (bottleneck.distance == model::Distance::kSameDevice) return 0;
  if (!(bottleneck.bandwidth > 0)) return kInfinity;
  const double n = workers;
  const double steps = 2.0 * (n - 1);
  return steps / n * static_cast<double>(bytes) / bottleneck.bandwidth +
         steps * bottleneck.latency_s;
}

model::Path WorstOf(const std::vector<model::Path>& hops) {
  model::Path worst;
  worst.distance = model::Distance::kSameDevice;
  worst.bandwidth = kInfinity;
  worst.latency_s = 0;
  for (const model::Path& hop : hops) {
    if (hop.distance == model::Distance::kSameDevice) continue;  // free hop
    worst.distance = std::max(worst.distance, hop.distance);
    worst.bandwidth = std::min(worst.bandwidth, hop.bandwidth);
    worst.latency_s = std::max(worst.latency_s, hop.latency_s);
  }
  return worst;
}

}  // namespace hetsched::cost
