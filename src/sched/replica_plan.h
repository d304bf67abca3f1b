// Replica planning for inference services: how much load to provision for (a forecast from
// the arrivals seen so far), and which replicas carry it at the least cost, chosen exactly as
// an integer program (COIN-OR CBC). Pure decisions over plain data: the simulator's serving
// loop (sim/serving.h) drives them, as a daemon would.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/request_stream.h"

namespace hetsched::sched {

// Requests/s to provision for, from the arrivals seen: the busiest of `recent_rates` (the last
// few intervals' mean rates, newest last: load must stay low that long before replicas go),
// or the newest interval's trend carried one interval ahead, whichever is higher, plus
// `headroom` (a fraction). A short TTFT target cannot wait out a burst: `burst_rates` are the
// rates over windows of `burst_window_s` of the same span, and the forecast is at least their
// mean plus how far their 99th percentile exceeds what Poisson arrivals at that mean would
// reach. Poisson's own spread is left to the replicas' sizing (its M/M/1 waiting-time tail,
// cost/serving.h), so only burstiness beyond it is provisioned for here. 0 when both lists
// are empty.
double ForecastRequestRate(const std::vector<double>& recent_rates, std::vector<double> burst_rates,
                           double burst_window_s, double headroom);

// Load must stay low this many intervals before replicas are drained (Kubernetes' autoscaler
// waits five minutes by default; services here decide every five).
inline constexpr int kScaleDownIntervals = 3;
// Arrivals are counted over windows this long to see bursts.
inline constexpr double kBurstWindowS = 10;

// The part of a forecast that arrived: the busiest of `recent_rates` or the burst term of
// ForecastRequestRate, whichever is higher; neither the trend nor the headroom.
double MeasuredRequestRate(const std::vector<double>& recent_rates, std::vector<double> burst_rates,
                           double burst_window_s);

// Requests/s to provision for, and the part of it that was measured.
struct Forecast {
  double requests_per_s = 0;           // ForecastRequestRate
  double measured_requests_per_s = 0;  // MeasuredRequestRate of the same rates
};

// The forecast at `now_s` from `arrivals` (sorted by arrival time): the mean rates of the last
// kScaleDownIntervals intervals of `interval_s` (those from t = 0 on) and the rates over
// kBurstWindowS windows of the same span. Before one interval has passed, the arrivals of the
// first interval stand in for that history (a look ahead, as a service running since yesterday
// has seen such a day).
Forecast ForecastAt(std::span<const model::InferenceRequest> arrivals, double now_s,
                    double interval_s, double headroom);

// The highest mean rate of an interval of `interval_s` over [0, horizon_s): what a replica set
// sized once, from hindsight, provisions for.
double PeakIntervalRate(std::span<const model::InferenceRequest> arrivals, double horizon_s,
                        double interval_s);

// The smallest count k with P(N <= k) >= p for N Poisson-distributed with mean `mean`.
int64_t PoissonQuantile(double mean, double p);

// One way to build a replica of a service: `tp` devices of one type.
struct ReplicaShape {
  int32_t type = 0;         // a device type id
  int32_t tp = 1;           // devices per replica, all on one node
  double usd_per_hour = 0;  // what a replica costs while held (price and energy)
  double capacity = 0;      // requests/s one replica carries within the SLO; <= 0: unusable
  int32_t live = 0;         // replicas of this shape up now
};

struct ServiceDemand {
  double requests_per_s = 0;  // to provision for
  // The part of requests_per_s that was measured (MeasuredRequestRate); the rest, the
  // forecast's headroom, goes only on cheap shapes (PlanReplicas). < 0: all of it.
  double measured_requests_per_s = -1;
  double startup_h = 0;  // a new replica's start-up, charged once at its hourly cost
  // Requests/s of the measured load the plan may leave beyond its replicas' ratings where the
  // cheap shapes are full and only costly ones have room (ErrorBudget::RateAllowed); 0: none.
  double risk_requests_per_s = 0;
  std::vector<ReplicaShape> shapes;
};

// A service's error budget: its SLO lets (100 - percentile) % of its requests miss. Plans may
// spend a share of what it earned so far on measured load left beyond the replicas' ratings
// on a full cheap type (PlanReplicas), counting every such request as put at risk, but never
// the part of the budget the requests that missed have used.
struct ErrorBudget {
  double earned = 0;  // requests the SLO let miss so far: requests arrived x (1 - percentile)
  double missed = 0;  // requests that missed the SLO so far, as measured
  double spent = 0;   // requests plans put at risk: load left beyond ratings x its span

  // Earned over `arrived` requests (all so far) at `percentile` (e.g. 99).
  void EarnFrom(int64_t arrived, double percentile);
  // Requests plans may still put at risk: `share` of what was earned, or what the misses left
  // of it if less, less what plans spent; at least 0.
  double Left(double share) const;
  // The rate a plan holding for `span_s` may leave beyond the ratings: Left / span_s.
  double RateAllowed(double share, double span_s) const;
  // A plan left `requests_per_s` beyond the ratings for `span_s`.
  void Spend(double requests_per_s, double span_s);
};

// The share of its error budget a service's plans may spend on load left beyond the ratings.
// Half: a plan's risk is an estimate (it counts every request beyond the ratings as a miss,
// an upper bound while the excess is small, as the ratings are the SLO's percentile of what
// one replica carries), and the budget must also absorb the misses no plan foresees (bursts
// within an interval, replicas starting, the forecast's lag behind a rise), those of the
// interval a plan starts included. Half leaves those as much as the plans take
// (docs/serving.md, "Spends part of the error budget").
inline constexpr double kRiskBudgetShare = 0.5;

struct ReplicaPlan {
  bool solved = false;                         // false: keep what runs (message says why)
  std::string message;                         // the solver's, when not solved
  std::vector<std::vector<int32_t>> replicas;  // per service and shape: how many to run
  std::vector<double> uncovered;               // per service: requests/s with no room
  // Per service: requests/s of the forecast's headroom left uncovered because only shapes
  // costlier than kHeadroomCostMargin over the cheapest had room for it.
  std::vector<double> headroom_left;
  // Per service: requests/s of measured load left beyond the replicas' ratings, within the
  // service's risk_requests_per_s, because only costlier shapes had room for it.
  std::vector<double> risk_left;
  double usd_per_hour = 0;  // PlanCostPerHour of `replicas`
  // The cheapest plan with every replica on one device type that covers as much of each
  // service's demand as this one: its type (-1 when no single type does) and cost.
  int32_t single_type = -1;
  double single_type_usd_per_hour = 0;
  // `replicas` are that single type's: the mix of types saved less than kMixSavingsNeeded.
  bool single_type_kept = false;
};

// What a plan costs by the measure PlanReplicas minimises: per shape, replicas up to those
// live at their hourly cost, each one more at its cost plus its start-up plus a quarter hour
// (so equal mixes do not churn).
double PlanCostPerHour(const std::vector<ServiceDemand>& services,
                       const std::vector<std::vector<int32_t>>& replicas);

// A mix of device types must cost this much less than the cheapest single type covering as
// much, or that single type's plan is kept. A mix that saves little tends to pay for it later:
// its replicas on the weaker type carry less, so a rise in load moves them (start-up and
// make-before-break); on a 20-minute window of Azure's conversation trace, a first plan that
// saved 0.7 % so cost 1.4 % more over the window (docs/results.md).
inline constexpr double kMixSavingsNeeded = 0.02;

// Weighs `single`, a plan for the same demands with every replica on device type `type`,
// against `plan`. When it leaves no more of any service's demand uncovered and costs less than
// the single type recorded so far, it becomes plan's single type; when it also costs less than
// `plan` plus kMixSavingsNeeded, its replicas replace plan's (single_type_kept).
void WeighSingleType(ReplicaPlan& plan, const ReplicaPlan& single, int32_t type);

// A forecast's headroom (beyond what was measured) is insurance against load not yet seen,
// and the replica ratings are conservative already (cost/serving.h): it is bought only on
// shapes that cost at most this much more per request/s than the service's cheapest shape
// (the margin below which kMixSavingsNeeded calls two plans equally cheap). On the seed
// cluster, spilling it onto A100s cost 4.4x MI250X's price per request for chat, and the
// load that came did not need it (docs/results.md).
inline constexpr double kHeadroomCostMargin = kMixSavingsNeeded;

// Replica counts per service and shape. Minimises PlanCostPerHour subject to: each service's
// demand carried (or reported uncovered, at a prohibitive cost); each service keeping at least
// one replica; a type giving at most its free devices; and replicas of tp devices numbering at
// most the sum over nodes of free / tp (a replica stays within one node).
// `free_devices[{type, node}]` counts the devices no replica holds plus those of the live
// replicas (the plan may keep or drop them). Solved by CBC within `max_seconds`. First, when
// a service's forecast exceeds what was measured or it may leave load at risk (its
// risk_requests_per_s), with only its cheap shapes (within
// kHeadroomCostMargin of its cheapest per request/s): where they leave part of the forecast
// uncovered, the service's demand drops to what they covered, but not below the measured
// rate less its risk_requests_per_s (of the drop, what costly shapes had room for is
// headroom_left above the measured rate and risk_left below it, the rest uncovered).
// Then once for the mix of all shapes and, when the shapes span several device types, once
// per type with that type's shapes alone (WeighSingleType): the mix is kept only when it
// costs kMixSavingsNeeded less than every single type that covers as much, so no plan costs
// more than such a type's.
ReplicaPlan PlanReplicas(const std::vector<ServiceDemand>& services,
                         const std::map<std::pair<int32_t, int32_t>, int32_t>& free_devices,
                         double max_seconds = 10);

}  // namespace hetsched::sched
