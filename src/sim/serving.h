// Serving simulation: online inference services (model::ServiceSpec) over a day, request by
// request. Every `interval_s` the autoscaler forecasts each service's load from the requests it
// has seen, and chooses the set of replicas (device type, tensor-parallel degree, count) that
// carries it at the least cost, exactly, as an integer program (CBC). Those decisions are
// sched/replica_plan.h's; the shapes a service may use, the node a new replica takes and which
// replicas drain are sched/replica_placement.h's. This file applies them in virtual time. New
// replicas pay their start-up (loading the weights) before they take requests, removed ones
// drain first. Requests go to the replica with the least outstanding work; each replica runs
// continuous batching (prefills first, then one decode step for the whole batch) with step
// times from the serving model (cost/serving.h), so latency and SLO attainment are measured,
// not assumed.
//
// Services come first: the devices their replicas hold, and when, are handed to the training
// simulation (sim/engine.h) as reclaimed devices; everything else is lent to training.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cost/serving.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/request_stream.h"
#include "sched/replica_plan.h"
#include "sim/faults.h"
#include "util/status.h"

namespace hetsched::sim {

// kHetsched: the cheapest replica mix for the forecast load, rescaled every interval.
// kStrongest: the same autoscaling, but only on the strongest device type (fp16 peak) the
// service can run on. kSingleType: the same autoscaling, every replica of every service on one
// named device type. kStaticPeak: one replica set, sized for the day's highest interval rate
// (seen in hindsight, as an operator provisions from yesterday's peak), held all day.
enum class ServingMode { kHetsched, kStrongest, kStaticPeak, kSingleType };
// "hetsched", "strongest", "static-peak", "single"
std::string_view ServingModeName(ServingMode mode);
// A --serving value: a mode's name, or single:TYPE for kSingleType.
struct ServingChoice {
  ServingMode mode = ServingMode::kHetsched;
  std::string single_type;  // kSingleType: the device type's name (not checked here)
};
util::Result<ServingChoice> ParseServingMode(std::string_view text);

struct ServingOptions {
  ServingMode mode = ServingMode::kHetsched;
  std::string single_type;   // kSingleType: a device type of the cluster, by name
  double horizon_s = 86400;  // requests arrive in [0, horizon_s)
  double interval_s = 300;   // autoscaling period
  // Capacity kept above the forecast (fraction), so that bursts within an interval fit.
  double headroom = 0.2;
  // The share of each service's error budget its plans may spend on measured load left beyond
  // the replicas' ratings where only costlier types have room (sched::ErrorBudget); 0: none.
  double risk_share = sched::kRiskBudgetShare;
  // A new replica is ready after startup_fixed_s plus loading its weights at load_bandwidth
  // (bytes/s per replica, e.g. from local NVMe or the storage server).
  double startup_fixed_s = 30;
  double load_bandwidth = 2e9;
  double usd_per_kwh = 0.12;  // energy price in the cost the placement minimises
  // By device type name: what a device-hour of the type is worth to the training queue, as a
  // multiple of its price. The placement adds it to what a replica there costs, so services
  // take such devices only when the others cost more; the reported serving cost leaves it out.
  std::map<std::string, double> training_value;
  cost::ServingCalibrations calibrations;
};

struct ServiceOutcome {
  std::string name;
  int64_t requests = 0;
  int64_t within_slo = 0;  // both TTFT and TPOT within the targets
  int64_t unserved = 0;    // never answered: no replica could take them
  double ttft_p99_s = 0;
  double tpot_p99_s = 0;
  double cost_usd = 0;  // device price for the time replicas are held, plus their energy
  double energy_kwh = 0;
  std::map<std::string, double> device_hours;  // by device type, held by replicas
  int32_t peak_replicas = 0;
  int32_t replicas_started = 0;
  // Its error budget (sched::ErrorBudget), in requests: what the SLO lets miss over all its
  // requests, and what its plans put at risk leaving load beyond the ratings.
  double error_budget_earned = 0;
  double error_budget_spent = 0;
};

// How the autoscaler's plans compared with the cheapest plan putting every replica on one
// device type that covers as much of the forecast (sched::ReplicaPlan::single_type), by the
// planner's own cost measure (sched::PlanCostPerHour).
struct PlanAudit {
  int32_t plans = 0;               // plans solved
  int32_t single_type_covers = 0;  // of them, those some single type covered
  int32_t mix_cheaper = 0;         // of those, the ones where the plan cost less
  int32_t single_type_kept = 0;    // of those, the ones where a mix saved too little to keep
  int32_t headroom_left = 0;    // plans that left headroom to costly types uncovered (any service)
  int32_t risk_left = 0;        // plans that left measured load beyond the ratings (any service)
  double mix_usd_per_hour = 0;  // summed over the plans a single type covered
  double single_type_usd_per_hour = 0;  // the single types' plans for the same intervals
};

// The rate one replica of a shape sustains within the SLO in the serving simulation itself,
// found once per run for each (service, shape) the autoscaler rates (docs/serving.md, "Ratings
// from one simulated replica").
struct ReplicaLimit {
  std::string service;
  std::string device_type;
  int32_t tp = 1;
  double model_rating = 0;  // the serving model's rating (requests/s) the search started from
  // The highest rate (requests/s) at which the replica met the SLO, at most
  // cost::kMaxCalibratedRaise x model_rating; 0 when it missed the SLO at the model's rating,
  // or when the service has too few requests for the SLO's percentile (runs 0).
  double limit = 0;
  int32_t runs = 0;  // one-replica simulations the search ran
};

struct ServingResult {
  std::string mode;  // ServingModeName, or single:TYPE
  PlanAudit plans;
  std::vector<ReplicaLimit> replica_limits;  // in the order they were found
  std::vector<ServiceOutcome> services;
  int64_t requests = 0;
  int64_t within_slo = 0;
  double slo_attainment = 1;  // within_slo / requests over all services (1 with no requests)
  double cost_usd = 0;
  double energy_kwh = 0;
  // Each device some replica held, while it held it (Fault::service set): the training
  // simulation treats these as reclaimed by the service.
  std::vector<Fault> holds;
  std::vector<model::DeviceId> pool;  // devices some replica held at some time
  std::vector<std::string> notes;     // replicas the cluster had no room for, and the like
};

// For kSingleType: InvalidArgument unless some device of `cluster` has options.single_type
// ("single:h100-80g: the cluster has no device of type h100-80g (its types: a100-80g, ...)").
// OK for the other modes.
util::Status CheckSingleType(const model::Cluster& cluster, const ServingOptions& options);

// Simulates `services` (jobs of kind kService, with their requests already generated in
// `requests`, one list per service, sorted by arrival) on `cluster`. Errors (InvalidArgument,
// at the service's place in the workload file): no device type of the cluster can run its
// model within its SLO (saying how far the best misses), its stacks match no device type;
// under kSingleType, that type cannot run it (sched::ShapesOnType says why), or
// CheckSingleType's.
util::Result<ServingResult> SimulateServing(
    const model::Cluster& cluster, const std::vector<const model::Job*>& services,
    const std::vector<std::vector<model::InferenceRequest>>& requests,
    const ServingOptions& options);

// The same errors for one service alone, without simulating: what `validate` reports.
util::Status CheckService(const model::Cluster& cluster, const model::Job& service,
                          const std::vector<model::InferenceRequest>& requests,
                          const ServingOptions& options);

// Whether any job of `workload` is a service (kind service).
bool HasServices(const model::Workload& workload);

// The jobs of `workload` that are not services, ids renumbered to their new positions: what
// the training simulation runs, and what its job ids (SimResult, Timeline) refer to.
model::Workload WithoutServices(const model::Workload& workload);

// The requests of one service over [0, horizon_s): its trace (looped, time-warped to its
// rate curve when it has one) or its rate curve with fixed token counts.
util::Result<std::vector<model::InferenceRequest>> RequestsOf(const model::Job& service,
                                                              double horizon_s, uint64_t seed);

// The first `count` of a service's `requests` (sorted by arrival, as RequestsOf makes them),
// time-warped to arrive at a constant `rate` (requests/s) from t = 0, their tokens kept: by the
// expected count of the service's rate `curve` (a trace bent to the curve comes back to its own
// spacing, Poisson arrivals stay Poisson), or, with no curve, by the requests' own mean rate (a
// replayed trace, stretched or compressed). Empty when `requests` is or rate <= 0.
std::vector<model::InferenceRequest> AtConstantRate(
    std::span<const model::InferenceRequest> requests, const model::RateCurve* curve, double rate,
    size_t count);

}  // namespace hetsched::sim
