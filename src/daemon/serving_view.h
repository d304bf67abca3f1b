// What the daemon shows of a live inference service (daemon/serving_loop.h): its replicas,
// what they measured, its replica plan; GET /v1/services and the endpoints file read these.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/serving.h"

namespace hetsched::svc {

struct ReplicaView {
  std::string job;       // the daemon's job that runs it
  std::string endpoint;  // http://HOST:PORT
  // queued, starting (placed, its metrics not read yet), ready, unreachable (was ready, its
  // metrics do not answer or do not read now), draining (the plan dropped it: stopped once the
  // service's other replicas are ready)
  std::string state;
  std::string node;
  std::string device_type;
  int32_t tp = 1;
  std::string message;  // why it is not ready, when known
  // Its share of the gateway's traffic: what one replica of its shape carries within the SLO
  // at the last plan, in whole requests/s, at least 1; 0 when it is not published (not ready,
  // or draining while another replica of the service is ready).
  int32_t weight = 0;
};

// Read from the replicas' metrics over the last LiveServingOptions::window_s.
struct MeasuredLoad {
  double window_s = 0;  // the span the figures cover (0: nothing read yet)
  double requests_per_s = 0;
  std::optional<double> ttft_p50_s, ttft_slo_s;  // slo: at the SLO's percentile
  std::optional<double> tpot_p50_s, tpot_slo_s;
  double running = 0, waiting = 0;                       // summed over the replicas, as last read
  double mean_input_tokens = 0, mean_output_tokens = 0;  // 0 when no request completed
};

struct PlanView {
  double planned_at_s = 0;  // unix seconds; 0: not planned yet
  double forecast_requests_per_s = 0;
  // The part of the forecast that arrived (sched::MeasuredRequestRate: neither trend nor
  // headroom); the rest is bought only on cheap device types (sched::PlanReplicas).
  double measured_requests_per_s = 0;
  // What the forecast was made from: the last intervals' mean rates (oldest first) and the
  // rates over the short windows of the same span in which a replica counted requests, with
  // their mean length.
  std::vector<double> interval_rates;
  std::vector<double> burst_rates;
  double burst_window_s = 0;
  std::map<std::string, int32_t> replicas;  // by "type" or "type (tp N)": how many
  std::string why;
};

struct ServingView {
  std::string name;
  std::string model;
  cost::ServingSlo slo;
  std::vector<ReplicaView> replicas;
  MeasuredLoad measured;
  PlanView plan;
  // The request rate a gateway pushed last (POST /v1/services/{name}/load), if any.
  std::optional<double> pushed_requests_per_s;
  double pushed_at_s = 0;  // unix seconds
  std::string message;     // the latest problem (a replica replaced, no room, a start refused)
};

}  // namespace hetsched::svc
