#include "sched/replica_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "sched/integer_program.h"

namespace hetsched::sched {
namespace {

// Cost per request/s of demand no replica covers: far above any replica's, so the program
// covers all it can and reports the rest.
constexpr double kUncoveredCost = 1e6;
// What a new replica costs beyond its start-up, in hours of its cost: keeps equal mixes from
// trading replicas from one interval to the next.
constexpr double kStartPenaltyH = 0.25;

// Requests of `arrivals` (sorted) that arrived in [from_s, to_s).
double ArrivalsIn(std::span<const model::InferenceRequest> arrivals, double from_s, double to_s) {
  auto cmp = [](const model::InferenceRequest& q, double t) { return q.arrival_s < t; };
  return static_cast<double>(std::lower_bound(arrivals.begin(), arrivals.end(), to_s, cmp) -
                             std::lower_bound(arrivals.begin(), arrivals.end(), from_s, cmp));
}

// The mean rates of the last kScaleDownIntervals intervals before `now_s` and the rates over
// kBurstWindowS windows of the same span (ForecastAt).
std::pair<std::vector<double>, std::vector<double>> RecentAndBursts(
    std::span<const model::InferenceRequest> arrivals, double now_s, double interval_s) {
  const double dt = interval_s;
  std::vector<double> recent, bursts;
  if (now_s < dt) {
    recent.push_back(ArrivalsIn(arrivals, 0, dt) / dt);
  } else {
    for (int i = kScaleDownIntervals; i >= 1; --i) {
      if (now_s - i * dt < 0) continue;
      recent.push_back(ArrivalsIn(arrivals, now_s - i * dt, now_s - (i - 1) * dt) / dt);
    }
  }
  const double to = std::max(dt, now_s);
  for (double t = std::max(0.0, now_s - kScaleDownIntervals * dt); t + kBurstWindowS <= to;
       t += kBurstWindowS) {
    bursts.push_back(ArrivalsIn(arrivals, t, t + kBurstWindowS) / kBurstWindowS);
  }
  return {std::move(recent), std::move(bursts)};
}

// The burst term of ForecastRequestRate: the windows' mean rate plus how far their 99th
// percentile exceeds Poisson's at that mean; 0 without windows.
double BurstRate(std::vector<double> burst_rates, double burst_window_s) {
  if (burst_rates.empty() || burst_window_s <= 0) return 0;
  double mean = 0;
  for (double r : burst_rates) mean += r;
  mean /= static_cast<double>(burst_rates.size());
  const size_t k = static_cast<size_t>(0.99 * static_cast<double>(burst_rates.size() - 1));
  std::nth_element(burst_rates.begin(), burst_rates.begin() + k, burst_rates.end());
  const double poisson =
      static_cast<double>(PoissonQuantile(mean * burst_window_s, 0.99)) / burst_window_s;
  return mean + std::max(0.0, burst_rates[k] - poisson);
}

}  // namespace

Forecast ForecastAt(std::span<const model::InferenceRequest> arrivals, double now_s,
                    double interval_s, double headroom) {
  auto [recent, bursts] = RecentAndBursts(arrivals, now_s, interval_s);
  return {ForecastRequestRate(recent, bursts, kBurstWindowS, headroom),
          MeasuredRequestRate(recent, bursts, kBurstWindowS)};
}

double PeakIntervalRate(std::span<const model::InferenceRequest> arrivals, double horizon_s,
                        double interval_s) {
  double peak = 0;
  for (double t = 0; t < horizon_s; t += interval_s) {
    peak = std::max(peak, ArrivalsIn(arrivals, t, t + interval_s) / interval_s);
  }
  return peak;
}

int64_t PoissonQuantile(double mean, double p) {
  if (!(mean > 0)) return 0;
  if (mean > 1000) {  // the normal approximation, within a count at this size
    return static_cast<int64_t>(std::ceil(mean + 2.3263478740408408 * std::sqrt(mean) - 0.5));
  }
  // Sum the probabilities upward from k = 0; each term in logs, as e^-mean underflows past
  // a mean of 745.
  double log_term = -mean;  // log P(N = 0)
  double cdf = std::exp(log_term);
  int64_t k = 0;
  while (cdf < p && k < 100000) {
    ++k;
    log_term += std::log(mean) - std::log(static_cast<double>(k));
    cdf += std::exp(log_term);
  }
  return k;
}

double ForecastRequestRate(const std::vector<double>& recent_rates, std::vector<double> burst_rates,
                           double burst_window_s, double headroom) {
  double rate = 0;
  for (double r : recent_rates) rate = std::max(rate, r);
  if (recent_rates.size() >= 2) {
    const double last = recent_rates.back();
    const double before = recent_rates[recent_rates.size() - 2];
    rate = std::max(rate, 2 * last - before);
  }
  return std::max(rate * (1 + headroom), BurstRate(std::move(burst_rates), burst_window_s));
}

double MeasuredRequestRate(const std::vector<double>& recent_rates, std::vector<double> burst_rates,
                           double burst_window_s) {
  double rate = 0;
  for (double r : recent_rates) rate = std::max(rate, r);
  return std::max(rate, BurstRate(std::move(burst_rates), burst_window_s));
}

namespace {

// The integer program of PlanReplicas over every shape of `services`.
ReplicaPlan SolvePlan(const std::vector<ServiceDemand>& services,
                      const std::map<std::pair<int32_t, int32_t>, int32_t>& free_devices,
                      double max_seconds) {
  LinearProgram lp(LinearProgram::Sense::kMinimize);
  std::vector<int32_t> demand_row(services.size()), min_row(services.size());
  for (size_t s = 0; s < services.size(); ++s) {
    demand_row[s] = lp.AddRow(services[s].requests_per_s, kLpInfinity);
    min_row[s] = lp.AddRow(1, kLpInfinity);
  }
  std::map<int32_t, int32_t> type_row;
  std::map<std::pair<int32_t, int32_t>, int32_t> slot_row;  // (type, tp)
  for (const ServiceDemand& service : services) {
    for (const ReplicaShape& sh : service.shapes) {
      if (type_row.count(sh.type) == 0) {
        int32_t devices = 0;
        for (const auto& [key, n] : free_devices) devices += key.first == sh.type ? n : 0;
        type_row[sh.type] = lp.AddRow(-kLpInfinity, devices);
      }
      if (slot_row.count({sh.type, sh.tp}) == 0) {
        int32_t slots = 0;
        for (const auto& [key, n] : free_devices) slots += key.first == sh.type ? n / sh.tp : 0;
        slot_row[{sh.type, sh.tp}] = lp.AddRow(-kLpInfinity, slots);
      }
    }
  }
  // Per shape, replicas kept (up to those up now) and replicas started; the uncovered load.
  std::vector<bool> integer;
  std::vector<std::pair<int32_t, int32_t>> vars;  // (service, shape); shape -1: uncovered
  for (size_t s = 0; s < services.size(); ++s) {
    const ServiceDemand& service = services[s];
    for (size_t k = 0; k < service.shapes.size(); ++k) {
      const ReplicaShape& sh = service.shapes[k];
      if (sh.capacity <= 0) continue;
      const std::vector<LinearProgram::Entry> entries = {{demand_row[s], sh.capacity},
                                                         {min_row[s], 1.0},
                                                         {type_row.at(sh.type), 1.0 * sh.tp},
                                                         {slot_row.at({sh.type, sh.tp}), 1.0}};
      if (sh.live > 0) {
        lp.AddVariable(0, sh.live, sh.usd_per_hour, entries);
        integer.push_back(true);
        vars.emplace_back(s, k);
      }
      lp.AddVariable(0, kLpInfinity, sh.usd_per_hour * (1 + service.startup_h + kStartPenaltyH),
                     entries);
      integer.push_back(true);
      vars.emplace_back(s, k);
    }
    lp.AddVariable(0, kLpInfinity, kUncoveredCost, {{demand_row[s], 1.0}, {min_row[s], 1.0}});
    integer.push_back(false);
    vars.emplace_back(s, -1);
  }
  ReplicaPlan plan;
  const LpSolution sol = SolveIntegerProgram(lp, integer, max_seconds);
  if (sol.values.empty()) {
    plan.message = sol.message;
    return plan;
  }
  plan.solved = true;
  plan.uncovered.assign(services.size(), 0);
  plan.replicas.resize(services.size());
  for (size_t s = 0; s < services.size(); ++s) {
    plan.replicas[s].assign(services[s].shapes.size(), 0);
  }
  for (size_t v = 0; v < vars.size(); ++v) {
    const auto [s, k] = vars[v];
    if (k < 0) {
      plan.uncovered[s] = sol.values[v] > 1e-6 ? sol.values[v] : 0;
    } else {
      plan.replicas[s][k] += static_cast<int32_t>(std::lround(sol.values[v]));
    }
  }
  plan.usd_per_hour = PlanCostPerHour(services, plan.replicas);
  return plan;
}

// The least demand WithoutCostlyHeadroom may drop `service`'s to: its measured rate (all of
// the forecast when not given) less the rate it may leave at risk, at least 0.
double LeastDemand(const ServiceDemand& service) {
  const double measured = service.measured_requests_per_s >= 0 ? service.measured_requests_per_s
                                                               : service.requests_per_s;
  return std::max(
      0.0, std::min(measured, service.requests_per_s) - std::max(0.0, service.risk_requests_per_s));
}

// `services` with every shape not on `type` unusable (capacity 0), shape indices kept.
std::vector<ServiceDemand> OnlyType(std::vector<ServiceDemand> services, int32_t type) {
  for (ServiceDemand& service : services) {
    for (ReplicaShape& shape : service.shapes) {
      if (shape.type != type) shape.capacity = 0;
    }
  }
  return services;
}

// `services` with each one's shapes that cost more than kHeadroomCostMargin over its cheapest
// per request/s made unusable.
std::vector<ServiceDemand> OnlyCheapShapes(std::vector<ServiceDemand> services) {
  for (ServiceDemand& service : services) {
    double cheapest = std::numeric_limits<double>::infinity();
    for (const ReplicaShape& shape : service.shapes) {
      if (shape.capacity > 0) cheapest = std::min(cheapest, shape.usd_per_hour / shape.capacity);
    }
    for (ReplicaShape& shape : service.shapes) {
      if (shape.capacity > 0 &&
          shape.usd_per_hour / shape.capacity > cheapest * (1 + kHeadroomCostMargin) + 1e-12) {
        shape.capacity = 0;
      }
    }
  }
  return services;
}

// Whether `service` has a shape that OnlyCheapShapes makes unusable.
bool HasCostlyShape(const ServiceDemand& service, const ServiceDemand& cheap) {
  for (size_t k = 0; k < service.shapes.size(); ++k) {
    if (service.shapes[k].capacity > 0 && cheap.shapes[k].capacity <= 0) return true;
  }
  return false;
}

// The demands PlanReplicas plans for: where a service's cheap shapes cannot carry its whole
// forecast, the part beyond what they carry is dropped (down to LeastDemand); `dropped` says
// how much, per service.
std::vector<ServiceDemand> WithoutCostlyHeadroom(
    std::vector<ServiceDemand> services,
    const std::map<std::pair<int32_t, int32_t>, int32_t>& free_devices, double max_seconds,
    std::vector<double>& dropped) {
  dropped.assign(services.size(), 0);
  const std::vector<ServiceDemand> cheap_only = OnlyCheapShapes(services);
  bool headroom = false;
  for (size_t s = 0; s < services.size(); ++s) {
    const ServiceDemand& service = services[s];
    headroom |=
        LeastDemand(service) < service.requests_per_s && HasCostlyShape(service, cheap_only[s]);
  }
  if (!headroom) return services;
  const ReplicaPlan cheap = SolvePlan(cheap_only, free_devices, max_seconds);
  if (!cheap.solved) return services;
  for (size_t s = 0; s < services.size(); ++s) {
    ServiceDemand& service = services[s];
    if (cheap.uncovered[s] <= 0 || !HasCostlyShape(service, cheap_only[s])) continue;
    const double demand =
        std::max(LeastDemand(service), service.requests_per_s - cheap.uncovered[s]);
    if (demand >= service.requests_per_s) continue;
    dropped[s] = service.requests_per_s - demand;
    service.requests_per_s = demand;
  }
  return services;
}

// Whether `plan` leaves no more of any service's demand uncovered than `than` does.
bool CoversAsMuch(const ReplicaPlan& plan, const ReplicaPlan& than) {
  for (size_t s = 0; s < plan.uncovered.size(); ++s) {
    if (plan.uncovered[s] > than.uncovered[s] + 1e-6) return false;
  }
  return true;
}

// The plan for `demands` weighed against every single type (PlanReplicas).
ReplicaPlan SolveAndWeigh(const std::vector<ServiceDemand>& demands,
                          const std::map<std::pair<int32_t, int32_t>, int32_t>& free_devices,
                          double max_seconds) {
  ReplicaPlan plan = SolvePlan(demands, free_devices, max_seconds);
  if (!plan.solved) return plan;
  std::set<int32_t> types;
  for (const ServiceDemand& service : demands) {
    for (const ReplicaShape& shape : service.shapes) {
      if (shape.capacity > 0) types.insert(shape.type);
    }
  }
  if (types.size() == 1) {  // the mix is that type's plan
    plan.single_type = *types.begin();
    plan.single_type_usd_per_hour = plan.usd_per_hour;
    return plan;
  }
  for (int32_t type : types) {
    const ReplicaPlan single = SolvePlan(OnlyType(demands, type), free_devices, max_seconds);
    if (single.solved) WeighSingleType(plan, single, type);
  }
  return plan;
}

}  // namespace

double PlanCostPerHour(const std::vector<ServiceDemand>& services,
                       const std::vector<std::vector<int32_t>>& replicas) {
  double usd = 0;
  for (size_t s = 0; s < services.size(); ++s) {
    for (size_t k = 0; k < services[s].shapes.size(); ++k) {
      const ReplicaShape& sh = services[s].shapes[k];
      const int32_t kept = std::min(replicas[s][k], sh.live);
      const int32_t started = replicas[s][k] - kept;
      usd += sh.usd_per_hour * (kept + started * (1 + services[s].startup_h + kStartPenaltyH));
    }
  }
  return usd;
}

void WeighSingleType(ReplicaPlan& plan, const ReplicaPlan& single, int32_t type) {
  if (!CoversAsMuch(single, plan)) return;
  if (plan.single_type >= 0 && single.usd_per_hour >= plan.single_type_usd_per_hour) return;
  plan.single_type = type;
  plan.single_type_usd_per_hour = single.usd_per_hour;
  if (single.usd_per_hour < plan.usd_per_hour * (1 + kMixSavingsNeeded) &&
      single.replicas != plan.replicas) {
    plan.replicas = single.replicas;
    plan.uncovered = single.uncovered;
    plan.usd_per_hour = single.usd_per_hour;
    plan.single_type_kept = true;
  }
}

void ErrorBudget::EarnFrom(int64_t arrived, double percentile) {
  earned = static_cast<double>(arrived) * std::max(0.0, 100 - percentile) / 100;
}

double ErrorBudget::Left(double share) const {
  return std::max(0.0, std::min(share * earned, earned - missed) - spent);
}

double ErrorBudget::RateAllowed(double share, double span_s) const {
  return span_s > 0 ? Left(share) / span_s : 0;
}

void ErrorBudget::Spend(double requests_per_s, double span_s) {
  spent += std::max(0.0, requests_per_s) * std::max(0.0, span_s);
}

ReplicaPlan PlanReplicas(const std::vector<ServiceDemand>& services,
                         const std::map<std::pair<int32_t, int32_t>, int32_t>& free_devices,
                         double max_seconds) {
  std::vector<double> dropped;
  const std::vector<ServiceDemand> demands =
      WithoutCostlyHeadroom(services, free_devices, max_seconds, dropped);
  ReplicaPlan plan = SolveAndWeigh(demands, free_devices, max_seconds);
  if (!plan.solved) return plan;
  plan.headroom_left.assign(services.size(), 0);
  plan.risk_left.assign(services.size(), 0);
  if (std::all_of(dropped.begin(), dropped.end(), [](double d) { return d <= 0; })) return plan;
  // Of what was dropped, only the part the costly shapes had room for was left by choice:
  // headroom above the measured rate, load at risk below it. The rest found no room on any
  // shape and is reported uncovered, as without the rule.
  const ReplicaPlan full = SolvePlan(services, free_devices, max_seconds);
  for (size_t s = 0; s < services.size(); ++s) {
    const ServiceDemand& service = services[s];
    const double coverable =
        full.solved ? service.requests_per_s - full.uncovered[s] : service.requests_per_s;
    const double left = std::clamp(coverable - demands[s].requests_per_s, 0.0, dropped[s]);
    const double measured = service.measured_requests_per_s >= 0
                                ? std::min(service.measured_requests_per_s, service.requests_per_s)
                                : service.requests_per_s;
    // The plan's replicas may carry more than the demand asked (whole replicas).
    double carried = 0;
    for (size_t k = 0; k < service.shapes.size(); ++k) {
      carried += plan.replicas[s][k] * std::max(0.0, service.shapes[k].capacity);
    }
    plan.risk_left[s] = std::clamp(
        std::min(coverable, measured) - std::max(carried, demands[s].requests_per_s), 0.0, left);
    plan.headroom_left[s] = left - plan.risk_left[s];
    plan.uncovered[s] += dropped[s] - left;
  }
  return plan;
}

}  // namespace hetsched::sched
