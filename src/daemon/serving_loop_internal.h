// The state the serving loop keeps per service and replica (daemon/serving_loop.h), shared by
// its files (serving_loop.cc, serving_lending.cc, serving_persist.cc); nothing else includes
// this.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cost/serving.h"
#include "daemon/serving_loop.h"
#include "daemon/serving_view.h"
#include "model/job.h"
#include "model/request_stream.h"
#include "obs/server_load.h"
#include "sched/replica_placement.h"

namespace hetsched::svc {

// What the service's replicas reported between two reads, summed.
struct Round {
  double at_s = 0;
  bool counted = false;  // a replica's metrics counted completed requests
  double requests = 0, prompt_tokens = 0, generation_tokens = 0;
  LatencyHistogram ttft, tpot;
};

struct ServingLoop::Replica {
  int32_t id = 0;
  std::string job;
  int port = 0;
  std::string host;  // where it listens: its node's address, once placed ("" before)
  int32_t shape = 0;
  std::string state = "queued";
  std::string node;
  std::string device_type;
  std::string message;
  double submitted_s = 0;  // wall
  bool ready_once = false;
  bool draining = false;   // the plan dropped it: stopped once the others are ready
  bool cancelled = false;  // its stop was asked for
  bool late_reported = false;
  double handed_over_s = 0;  // draining: when every other replica was ready (0: not yet)
  double next_scrape_s = 0;
  std::optional<ServerLoad> last;  // the last read
};

struct ServingLoop::Served {
  model::Job job;
  std::string spec_json;  // as accepted: what a restarted daemon reads it back from
  cost::ServedModel served;
  cost::ServingSlo slo;
  std::optional<model::RateCurve> rate;
  double input_tokens = 1, output_tokens = 1;  // per request, until measured
  // The means per request measured last (0: none yet); kept across restarts, so that a plan
  // with no request in its window still rates replicas for what was served.
  double measured_input_tokens = 0, measured_output_tokens = 0;
  std::vector<sched::ServiceShape> shapes;
  std::vector<double> capacity;  // per shape: requests/s one replica carries (at the last plan)
  std::vector<Replica> replicas;
  int32_t next_id = 0;
  int32_t failed_starts = 0;  // replicas in a row that ended before they were ready
  std::string last_failure;
  std::deque<Round> rounds;
  std::optional<double> first_read_s;            // when a replica's metrics were first read
  std::deque<std::pair<double, double>> pushed;  // (when, requests/s) from a gateway
  // Per replan interval, newest last: its rate, and where it came from.
  enum class From { kCurve, kReplicas, kGateway };
  std::vector<std::pair<double, From>> interval_rates;
  double interval_start_s = 0;  // 0: before the first plan
  double next_plan_s = 0;       // 0: at once
  PlanView plan;
  std::string message;
  // Wall time before which the plan drains none of its replicas: a replica took devices back
  // from training (serving_lending.cc); 0 when none did.
  double drains_held_until_s = 0;
};

}  // namespace hetsched::svc
