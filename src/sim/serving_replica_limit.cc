// The serving simulation's ratings from one simulated replica (sim/serving.h, ReplicaLimit):
// the highest constant rate one replica of a shape carries within the SLO, serving its
// service's own arrivals alone, found by bisection over runs of the same replica loop.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/serving_internal.h"

namespace hetsched::sim::serving_internal {
namespace {

// One replica's limit (SimulatedLimit) is probed with this many of its service's requests: at
// p99 its TTFT percentile is taken over 200 requests beyond it, and each run is bounded.
constexpr size_t kProbeRequests = 20000;
// The search for a limit stops once its bracket is narrower than this share of the rate.
constexpr double kProbePrecision = 0.02;

}  // namespace

bool Simulator::OneReplicaMeetsSlo(const ServiceState& st, int32_t shape, const TokenMeans& tokens,
                                   const std::vector<model::InferenceRequest>& requests) const {
  if (requests.empty()) return false;  // nothing served says nothing
  ServingOptions one = options_;
  one.horizon_s = requests.back().arrival_s + 1;
  Simulator sim(cluster_, one);
  ServiceState probed;
  probed.job = st.job;
  probed.served = st.served;
  probed.slo = st.slo;
  probed.shapes = {st.shapes[shape]};
  probed.tokens = tokens;
  Track(probed, requests);
  sim.services_.push_back(std::move(probed));
  // The percentile's request (Percentile) misses the target once more requests miss than this.
  const auto n = static_cast<double>(requests.size());
  sim.probe_.allowed =
      static_cast<int64_t>(n - std::max(1.0, std::ceil(st.slo.percentile / 100 * n)));
  if (!sim.StartReplica(0, 0, 0)) return false;  // the cluster has no node for it
  sim.Loop(/*autoscale=*/false);
  ServiceState& served = sim.services_[0];
  if (sim.probe_.misses > sim.probe_.allowed) return false;
  return Percentile(served.ttft, st.slo.percentile) <= st.slo.ttft_s &&
         Percentile(served.tpot, st.slo.percentile) <= st.slo.tpot_s;
}

double Simulator::SimulatedLimit(int32_t service, int32_t shape) {
  const auto key = std::make_pair(service, shape);
  if (const auto it = limits_.find(key); it != limits_.end()) return it->second;
  const ServiceState& st = services_[service];
  const sched::ServiceShape& sh = st.shapes[shape];
  const model::RateCurve* curve = st.curve ? &*st.curve : nullptr;
  auto at_rate = [&](double rate) {
    return AtConstantRate(*st.requests, curve, rate, kProbeRequests);
  };
  // The probe's tokens are the same at every rate; the replica is sized for them, as the
  // autoscaler sizes replicas for the mean tokens it has seen.
  const std::vector<model::InferenceRequest> sample = at_rate(1);
  const TokenMeans tokens = MeanTokensOf(sample);
  // As for a measured raise: the percentile must be taken over cost::kMinCalibrationTail
  // requests beyond it (1,000 requests at p99), or the model's rating stands unprobed.
  const double needed = cost::kMinCalibrationTail / (1 - st.slo.percentile / 100);
  const double rating =
      ModelOf(st, shape).CapacityAt(st.slo, tokens.input, tokens.output).requests_per_s;
  ReplicaLimit found{st.job->name, cluster_.catalog.Get(sh.type).name, sh.tp, rating};
  auto meets = [&](double rate) {
    ++found.runs;
    return OneReplicaMeetsSlo(st, shape, tokens, at_rate(rate));
  };
  double low = rating, high = cost::kMaxCalibratedRaise * rating;
  const bool enough = static_cast<double>(sample.size()) >= needed;
  if (enough && rating > 0 && meets(low)) {
    if (meets(high)) low = high;
    while (high - low > kProbePrecision * low) {
      const double mid = (low + high) / 2;
      (meets(mid) ? low : high) = mid;
    }
    found.limit = low;
  }
  limits_[key] = found.limit;
  const std::string replica = fmt::format("{}: one {} (tp {}) replica alone in the simulation",
                                          found.service, found.device_type, found.tp);
  if (!enough) {
    notes_.push_back(fmt::format(
        "{}: not run, {} requests are too few for the SLO's percentile (at least {:.0f}); the "
        "model's rating of {:.2f} stands",
        replica, sample.size(), needed, rating));
  } else {
    notes_.push_back(
        found.limit > 0
            ? fmt::format("{}: within the SLO up to {:.2f} requests/s (the model's rating {:.2f}; "
                          "{} runs)",
                          replica, found.limit, rating, found.runs)
            : fmt::format("{}: misses the SLO at the model's rating of {:.2f}, which stands",
                          replica, rating));
  }
  replica_limits_.push_back(found);
  return found.limit;
}

}  // namespace hetsched::sim::serving_internal
