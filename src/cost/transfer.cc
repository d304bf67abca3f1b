#include "cost/transfer.h"

#include <algorithm>
#include <limits>

namespace hetsched::cost {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

double TransferSeconds(double bytes, double bandwidth, double latency_s) {
  if (!(bytes > 0)) return 0;
  if (!(bandwidth > 0)) return kInfinity;
  return latency_s + bytes / bandwidth;
}

double TransferSeconds(const model::Path& path, uint64_t bytes) {
  if (path.distance == model::Distance::kSameDevice) return 0;
  return TransferSeconds(static_cast<double>(bytes), path.bandwidth, path.latency_s);
}

double RingAllReduceBytesPerWorker(double bytes, int workers) {
  if (workers <= 1) return 0;
  return 2.0 * (workers - 1) / workers * bytes;
}

double RingAllReduceBytesTotal(double bytes, int workers) {
  if (workers <= 1) return 0;
  return 2.0 * (workers - 1) * bytes;
}

double RingAllReduceSeconds(double bytes, int workers, double bandwidth, double latency_s,
                            double count) {
  if (workers <= 1 || !(bytes > 0)) return 0;
  if (!(bandwidth > 0)) return kInfinity;
  const double steps = 2.0 * (workers - 1);  // per all-reduce
  return RingAllReduceBytesPerWorker(bytes, workers) / bandwidth + steps * latency_s * count;
}

double RingAllReduceSeconds(uint64_t bytes, int workers, const model::Path& bottleneck) {
  if (bottleneck.distance == model::Distance::kSameDevice) return 0;
  return RingAllReduceSeconds(static_cast<double>(bytes), workers, bottleneck.bandwidth,
                              bottleneck.latency_s);
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
