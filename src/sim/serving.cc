#include "sim/serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <utility>

#include "model/io/azure_trace_reader.h"
#include "sched/replica_placement.h"
#include "sched/replica_plan.h"
#include "util/source_location.h"

namespace hetsched::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Running {
  int32_t request = 0;
  int32_t left = 0;  // tokens still to generate
  double first_token_s = 0;
};

struct Replica {
  int32_t service = 0;
  int32_t shape = 0;
  std::unique_ptr<cost::ServingModel> model;
  int32_t max_batch = 1;
  std::vector<model::DeviceId> devices;
  double held_from_s = 0;
  double ready_s = 0;
  double released_s = -1;  // >= 0 once its devices are given back
  // Dropped by the plan: it takes requests until retire_s (when the replicas started in its
  // place are ready: make before break), then finishes what it has and gives its devices back.
  bool draining = false;
  double retire_s = kInf;
  bool busy = false;
  double busy_s = 0;  // time in iterations
  int64_t chunk = 1;  // prompt tokens prefilled per iteration at the sized batch
  // Per number of running sequences (0 to max_batch): the prompt tokens an iteration prefills
  // within the TPOT's step limit. Fewer decodes leave room for a longer chunk (Sarathi-Serve's
  // token budget counts decode tokens too).
  std::vector<int64_t> chunk_at;
  double step_s = 0;            // an iteration at the sized batch and chunk (ReplicaCapacity)
  std::deque<int32_t> waiting;  // not yet through prefill (ServiceState::prefilled: how far)
  std::vector<Running> running;
  double context_sum = 0;  // tokens of context over `running`
  // The iteration under way: requests at the front of `waiting` whose prefill it completes,
  // and tokens it prefills of the next one.
  int32_t completing = 0;
  int64_t partial_tokens = 0;
};

// What replicas are sized for: mean token counts of the requests seen so far.
struct TokenMeans {
  double input = 1;
  double output = 1;
};

struct ServiceState {
  const model::Job* job = nullptr;
  cost::ServedModel served;
  cost::ServingSlo slo;
  std::vector<sched::ServiceShape> shapes;
  const std::vector<model::InferenceRequest>* requests = nullptr;
  size_t next = 0;                 // next request to arrive
  std::vector<float> ttft, tpot;   // per request; +infinity: never served
  std::vector<int32_t> prefilled;  // per request: prompt tokens prefilled so far
  std::vector<int32_t> shape_of;   // per request: the shape of the replica it was routed to
  std::vector<int32_t> replicas;   // indices into Simulator::replicas_ (all, ever)
  ServiceOutcome outcome;
  double static_rate = -1;  // kStaticPeak: the rate it is provisioned for
  TokenMeans tokens;        // of the last plan
};

// A replica's iteration ends, it becomes ready (its weights are loaded), or it stops taking
// requests (it is retired).
enum class EventKind { kIterationEnd, kReady, kRetire };
struct Event {
  double time_s;
  int32_t replica;
  EventKind kind;
  bool operator>(const Event& o) const {
    if (time_s != o.time_s) return time_s > o.time_s;
    return replica != o.replica ? replica > o.replica : kind > o.kind;
  }
};

std::string ServiceError(const model::Job& job, const std::string& problem) {
  if (job.origin.line <= 0 || job.origin.file == nullptr) {
    return fmt::format("service '{}': {}", job.name, problem);
  }
  return util::FormatInputError({*job.origin.file, job.origin.line, job.origin.column},
                                fmt::format("jobs[{}]", job.origin.entry),
                                fmt::format("service '{}': {}", job.name, problem));
}

// The `percentile` of `v` (reordered), 0 when empty.
double Percentile(std::vector<float>& v, double percentile) {
  if (v.empty()) return 0;
  const size_t k = std::min(
      v.size() - 1,
      static_cast<size_t>(std::ceil(percentile / 100 * static_cast<double>(v.size()))) - 1);
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

class Simulator {
 public:
  Simulator(const model::Cluster& cluster, const ServingOptions& options)
      : cluster_(cluster), options_(options), held_(cluster.devices.size(), 0) {
    if (options.mode == ServingMode::kSingleType) {
      single_type_ = cluster.catalog.FindId(options.single_type);
    }
  }

  util::Status AddService(const model::Job& job, const std::vector<model::InferenceRequest>& reqs);
  util::Result<ServingResult> Run();

 private:
  // The requests that arrived in [from, to) (the whole list when none did).
  std::span<const model::InferenceRequest> Arrived(const ServiceState& s, double from_s,
                                                   double to_s) const;
  TokenMeans MeanTokens(const ServiceState& s, double from_s, double to_s) const;
  // The prompt length at the service's SLO percentile.
  double LongPrompt(const ServiceState& s, double from_s, double to_s) const;
  // Plans the replicas for the load to come (sched/replica_plan.h) and applies the plan.
  void Autoscale(double now_s);
  // Counts `plan` against the cheapest single-type plan (ServingResult::plans).
  void Audit(const sched::ReplicaPlan& plan);
  // What `service` asks of the plan at now_s, with `live` its replicas up now per shape; sizes
  // the replicas for the mean tokens seen so far.
  sched::ServiceDemand DemandOf(int32_t service, double now_s,
                                const std::vector<sched::ShapeReplicas>& live);
  // Drains the replicas `changes` drops and starts those it adds (make before break).
  void ApplyChanges(const sched::ReplicaChanges& changes, double now_s);
  // Starts a replica where sched::PlaceReplica puts it; false when no node has room.
  bool StartReplica(int32_t service, int32_t shape, double now_s);
  void Route(int32_t service, int32_t request, double now_s);
  void MaybeStart(int32_t replica, double now_s);
  void FinishIteration(int32_t replica, double now_s);
  void Release(int32_t replica, double now_s);
  // Whether a replica takes new requests at now_s.
  bool TakesRequests(const Replica& r, double now_s) const {
    return r.released_s < 0 && (!r.draining || now_s < r.retire_s);
  }
  // Releases a retired replica once it has nothing left to do.
  void ReleaseIfDone(int32_t replica, double now_s);
  // What the replicas of `shape` of `service` did over the forecast's span before now_s.
  cost::ReplicaMeasurement Measure(int32_t service, int32_t shape, double now_s) const;
  // Adds what `st` served, what its replicas cost, and the devices they held to `result`.
  void Book(const ServiceState& st, ServingResult& result) const;

  const model::Cluster& cluster_;
  const ServingOptions& options_;
  std::vector<ServiceState> services_;
  std::vector<Replica> replicas_;
  std::vector<char> held_;  // by device
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<std::string> notes_;
  PlanAudit audit_;
  // kSingleType: the type every replica goes on (nothing otherwise).
  std::optional<model::DeviceTypeId> single_type_;
  // (service, shape) the last plan asked for that found no room: started as soon as a
  // release frees enough devices (as a pending pod is), until the next plan.
  std::vector<std::pair<int32_t, int32_t>> pending_starts_;
};

util::Status Simulator::AddService(const model::Job& job,
                                   const std::vector<model::InferenceRequest>& reqs) {
  ServiceState s;
  s.job = &job;
  const model::ServiceSpec& spec = *job.service;
  auto served = cost::ServedPreset(spec.model);
  if (!served.ok())
    return util::Status::InvalidArgument(ServiceError(job, served.status().message()));
  s.served = *std::move(served);
  s.slo = {spec.ttft_s, spec.tpot_s, spec.percentile};
  s.requests = &reqs;
  s.ttft.assign(reqs.size(), std::numeric_limits<float>::infinity());
  s.tpot.assign(reqs.size(), std::numeric_limits<float>::infinity());
  s.prefilled.assign(reqs.size(), 0);
  s.shape_of.assign(reqs.size(), -1);
  s.outcome.name = job.name;
  // The shapes are chosen once, for the first interval's requests (standing in for the
  // service's history).
  s.tokens = MeanTokens(s, 0, options_.interval_s);
  const sched::ReplicaSizing sizing{s.served, s.slo, s.tokens.input, s.tokens.output,
                                    LongPrompt(s, 0, options_.interval_s)};
  const sched::ReplicaPricing pricing{options_.usd_per_kwh, &options_.training_value};
  auto shapes = single_type_ ? sched::ShapesOnType(cluster_, job, *single_type_, sizing,
                                                   options_.calibrations, pricing)
                             : sched::ChooseServiceShapes(cluster_, job, sizing,
                                                          options_.calibrations, pricing);
  if (!shapes.ok())
    return util::Status::InvalidArgument(ServiceError(job, shapes.status().message()));
  s.shapes = *std::move(shapes);
  if (options_.mode == ServingMode::kStrongest) {
    s.shapes = sched::StrongestShapes(cluster_.catalog, std::move(s.shapes));
  }
  services_.push_back(std::move(s));
  return util::Status::Ok();
}

std::span<const model::InferenceRequest> Simulator::Arrived(const ServiceState& s, double from_s,
                                                            double to_s) const {
  auto cmp = [](const model::InferenceRequest& q, double t) { return q.arrival_s < t; };
  const auto& r = *s.requests;
  auto lo = std::lower_bound(r.begin(), r.end(), from_s, cmp);
  auto hi = std::lower_bound(lo, r.end(), to_s, cmp);
  return lo == hi ? std::span(r) : std::span(lo, hi);
}

TokenMeans Simulator::MeanTokens(const ServiceState& s, double from_s, double to_s) const {
  const auto arrived = Arrived(s, from_s, to_s);
  double in = 0, out = 0;
  for (const model::InferenceRequest& q : arrived) {
    in += q.input_tokens;
    out += q.output_tokens;
  }
  const double n = std::max<double>(1, static_cast<double>(arrived.size()));
  return {std::max(1.0, in / n), std::max(1.0, out / n)};
}

double Simulator::LongPrompt(const ServiceState& s, double from_s, double to_s) const {
  const auto arrived = Arrived(s, from_s, to_s);
  if (arrived.empty()) return 0;
  std::vector<int32_t> lengths;
  for (const model::InferenceRequest& q : arrived) lengths.push_back(q.input_tokens);
  const double n = static_cast<double>(lengths.size());
  const size_t k =
      std::min(lengths.size() - 1, static_cast<size_t>(std::ceil(s.slo.percentile / 100 * n)) - 1);
  std::nth_element(lengths.begin(), lengths.begin() + k, lengths.end());
  return lengths[k];
}

void Simulator::Autoscale(double now_s) {
  if (options_.mode == ServingMode::kStaticPeak && now_s > 0) return;  // planned once
  // Replicas up now per (service, shape); devices free per (type, node): those no replica
  // holds, plus those of live replicas (the plan may keep them or let them go).
  std::vector<std::vector<sched::ShapeReplicas>> live(services_.size());
  for (size_t s = 0; s < services_.size(); ++s) {
    for (const sched::ServiceShape& sh : services_[s].shapes) live[s].push_back({sh.tp, {}});
  }
  std::map<std::pair<int32_t, int32_t>, int32_t> free;
  for (size_t d = 0; d < cluster_.devices.size(); ++d) {
    if (!held_[d]) ++free[{cluster_.devices[d].type.value(), cluster_.devices[d].node.value()}];
  }
  for (size_t id = 0; id < replicas_.size(); ++id) {
    const Replica& r = replicas_[id];
    if (r.released_s >= 0 || r.draining) continue;
    const auto outstanding = static_cast<int64_t>(r.waiting.size() + r.running.size());
    live[r.service][r.shape].live.push_back({static_cast<int32_t>(id), outstanding});
    const model::Device& d = cluster_.device(r.devices.front());
    free[{d.type.value(), d.node.value()}] += static_cast<int32_t>(r.devices.size());
  }
  std::vector<sched::ServiceDemand> demands;
  for (size_t s = 0; s < services_.size(); ++s) {
    demands.push_back(DemandOf(static_cast<int32_t>(s), now_s, live[s]));
  }
  const sched::ReplicaPlan plan = sched::PlanReplicas(demands, free);
  if (!plan.solved) {
    notes_.push_back(fmt::format(
        "t={:.0f}s: replica placement found no solution ({}); replicas kept as they were", now_s,
        plan.message));
    return;
  }
  Audit(plan);
  for (size_t s = 0; s < services_.size(); ++s) {
    if (plan.uncovered[s] > 0) {
      notes_.push_back(fmt::format(
          "t={:.0f}s: {}: {:.2f} requests/s of forecast load find no room in the cluster", now_s,
          services_[s].job->name, plan.uncovered[s]));
    }
    if (plan.headroom_left[s] > 0) {
      notes_.push_back(fmt::format(
          "t={:.0f}s: {}: {:.2f} requests/s of forecast headroom left uncovered: only costlier "
          "types had room",
          now_s, services_[s].job->name, plan.headroom_left[s]));
    }
  }
  ApplyChanges(sched::ChangesToward(live, plan.replicas), now_s);
}

void Simulator::Audit(const sched::ReplicaPlan& plan) {
  ++audit_.plans;
  if (std::any_of(plan.headroom_left.begin(), plan.headroom_left.end(),
                  [](double left) { return left > 0; })) {
    ++audit_.headroom_left;
  }
  if (plan.single_type < 0) return;
  ++audit_.single_type_covers;
  audit_.mix_usd_per_hour += plan.usd_per_hour;
  audit_.single_type_usd_per_hour += plan.single_type_usd_per_hour;
  if (plan.usd_per_hour < plan.single_type_usd_per_hour - 1e-9) ++audit_.mix_cheaper;
  if (plan.single_type_kept) ++audit_.single_type_kept;
}

sched::ServiceDemand Simulator::DemandOf(int32_t service, double now_s,
                                         const std::vector<sched::ShapeReplicas>& live) {
  ServiceState& st = services_[service];
  const double dt = options_.interval_s;
  const bool hindsight = options_.mode == ServingMode::kStaticPeak;
  sched::ServiceDemand demand;
  // Hindsight: the busiest interval of the day, as an operator provisions from history.
  if (hindsight) {
    demand.requests_per_s =
        sched::PeakIntervalRate(*st.requests, options_.horizon_s, dt) * (1 + options_.headroom);
  } else {
    const sched::Forecast forecast = sched::ForecastAt(*st.requests, now_s, dt, options_.headroom);
    demand.requests_per_s = forecast.requests_per_s;
    demand.measured_requests_per_s = forecast.measured_requests_per_s;
  }
  demand.startup_h =
      (options_.startup_fixed_s + st.served.weight_bytes / options_.load_bandwidth) / 3600;
  // Token means of every request seen so far (the whole day's for the static plan); the
  // replica count is a matter of throughput, sized for the mean request.
  st.tokens = MeanTokens(st, 0, hindsight ? options_.horizon_s : std::max(dt, now_s));
  for (size_t k = 0; k < st.shapes.size(); ++k) {
    const sched::ServiceShape& sh = st.shapes[k];
    const model::DeviceType& type = cluster_.catalog.Get(sh.type);
    const cost::ServingModel m(st.served, type, sh.tp, options_.calibrations.For(type.name),
                               sh.link_bandwidth);
    // The model's rating, raised where the replicas were measured doing better
    // (cost::CalibratedRate).
    const cost::ReplicaMeasurement measured = Measure(service, static_cast<int32_t>(k), now_s);
    const double capacity = cost::CalibratedRate(
        m.CapacityAt(st.slo, st.tokens.input, st.tokens.output), st.slo, measured);
    // Load beyond the rating is what the forecast left without room, or a burst: worth saying,
    // as a plan that leaves load without room relies on the replicas carrying it.
    if (measured.requests > 0 && measured.requests_per_s > capacity) {
      notes_.push_back(fmt::format(
          "t={:.0f}s: {}: its {} (tp {}) replicas carried {:.2f} requests/s each over the last "
          "{:.0f} s, above their rating of {:.2f} (TTFT p{:g} {:.2f} s)",
          now_s, st.job->name, type.name, sh.tp, measured.requests_per_s,
          std::min(now_s, sched::kScaleDownIntervals * dt), capacity, st.slo.percentile,
          measured.ttft_s));
    }
    demand.shapes.push_back({sh.type.value(), sh.tp, sh.usd_per_hour, capacity,
                             static_cast<int32_t>(live[k].live.size())});
  }
  return demand;
}

cost::ReplicaMeasurement Simulator::Measure(int32_t service, int32_t shape, double now_s) const {
  const ServiceState& st = services_[service];
  const double from_s = std::max(0.0, now_s - sched::kScaleDownIntervals * options_.interval_s);
  // Seconds that replicas of the shape were up (ready, not yet retired) in [from_s, now_s).
  double replica_s = 0;
  for (int32_t id : st.replicas) {
    const Replica& r = replicas_[id];
    if (r.shape != shape) continue;
    const double end = r.released_s >= 0 ? r.released_s : std::min(now_s, r.retire_s);
    replica_s += std::max(0.0, std::min(end, now_s) - std::max(r.ready_s, from_s));
  }
  // Time to first token of the requests that arrived then and went to the shape; one still
  // waiting counts as waiting until now.
  const auto& reqs = *st.requests;
  auto before = [](const model::InferenceRequest& q, double t) { return q.arrival_s < t; };
  const auto lo = std::lower_bound(reqs.begin(), reqs.end(), from_s, before) - reqs.begin();
  const auto hi = std::lower_bound(reqs.begin(), reqs.end(), now_s, before) - reqs.begin();
  std::vector<float> ttft;
  for (auto q = lo; q < hi; ++q) {
    if (st.shape_of[q] != shape) continue;
    ttft.push_back(std::isfinite(st.ttft[q]) ? st.ttft[q]
                                             : static_cast<float>(now_s - reqs[q].arrival_s));
  }
  cost::ReplicaMeasurement m;
  if (ttft.empty() || replica_s <= 0) return m;
  m.requests = static_cast<int64_t>(ttft.size());
  m.requests_per_s = static_cast<double>(ttft.size()) / replica_s;
  m.ttft_s = Percentile(ttft, st.slo.percentile);
  return m;
}

void Simulator::ApplyChanges(const sched::ReplicaChanges& changes, double now_s) {
  for (const std::vector<int32_t>& drained : changes.drain) {
    for (int32_t id : drained) replicas_[id].draining = true;
  }
  // A service that starts nothing retires what it drops at once (idle replicas give their
  // devices back now, busy ones when done), so that other services' starts find the room.
  // One that starts replicas keeps serving on the dropped ones until the new ones are ready,
  // or, when a start finds no room, keeps them.
  pending_starts_.clear();
  std::vector<char> starts(services_.size(), 0);
  for (const auto& [s, k] : changes.start) starts[s] = 1;
  auto retire = [&](int32_t id, double at_s) {
    replicas_[id].retire_s = at_s;
    if (at_s > now_s) {
      events_.push({at_s, id, EventKind::kRetire});
    } else {
      ReleaseIfDone(id, now_s);
    }
  };
  for (size_t s = 0; s < services_.size(); ++s) {
    if (!starts[s]) {
      for (int32_t id : changes.drain[s]) retire(id, now_s);
    }
  }
  std::vector<char> all_started(services_.size(), 1);
  std::vector<double> handover_s(services_.size(), now_s);  // when the new replicas are ready
  for (const auto& [s, k] : changes.start) {
    if (all_started[s] && StartReplica(s, k, now_s)) {
      handover_s[s] = std::max(handover_s[s], replicas_.back().ready_s);
      continue;
    }
    pending_starts_.emplace_back(s, k);
    if (all_started[s]) {
      all_started[s] = 0;
      const sched::ServiceShape& sh = services_[s].shapes[k];
      // Devices the program counted on are still held by draining replicas, or free in pieces
      // too small for the replica.
      notes_.push_back(fmt::format("t={:.0f}s: {}: no node has {} free {} for a replica yet", now_s,
                                   services_[s].job->name, sh.tp,
                                   cluster_.catalog.Get(sh.type).name));
    }
  }
  for (size_t s = 0; s < services_.size(); ++s) {
    if (!starts[s]) continue;
    for (int32_t id : changes.drain[s]) {
      if (all_started[s]) {
        retire(id, handover_s[s]);
      } else {
        replicas_[id].draining = false;
      }
    }
  }
}

bool Simulator::StartReplica(int32_t service, int32_t shape, double now_s) {
  ServiceState& st = services_[service];
  const sched::ServiceShape& sh = st.shapes[shape];
  std::vector<model::DeviceId> devices = sched::PlaceReplica(cluster_, held_, sh.type, sh.tp);
  if (devices.empty()) return false;
  Replica r;
  r.service = service;
  r.shape = shape;
  const model::DeviceType& type = cluster_.catalog.Get(sh.type);
  r.model = std::make_unique<cost::ServingModel>(
      st.served, type, sh.tp, options_.calibrations.For(type.name), sh.link_bandwidth);
  const TokenMeans& tokens = st.tokens;  // of the last plan
  const cost::ReplicaCapacity capacity = r.model->CapacityAt(st.slo, tokens.input, tokens.output);
  r.max_batch = std::max(1, capacity.batch);
  r.chunk = std::max<int64_t>(1, capacity.chunk);
  for (int32_t b = 0; b <= r.max_batch; ++b) {
    r.chunk_at.push_back(std::max(
        r.chunk, r.model->LargestChunk(b, tokens.input + tokens.output / 2,
                                       cost::ServingModel::kStepShareOfTpot * st.slo.tpot_s)));
  }
  r.step_s = capacity.step_s;
  for (model::DeviceId d : devices) held_[d.value()] = 1;
  r.devices = std::move(devices);
  r.held_from_s = now_s;
  // At t = 0 the day's first replicas are already up (they served the night before).
  r.ready_s = now_s == 0 ? 0
                         : now_s + options_.startup_fixed_s +
                               st.served.weight_bytes / std::max(1.0, options_.load_bandwidth);
  const int32_t id = static_cast<int32_t>(replicas_.size());
  replicas_.push_back(std::move(r));
  st.replicas.push_back(id);
  ++st.outcome.replicas_started;
  if (replicas_[id].ready_s > now_s) events_.push({replicas_[id].ready_s, id, EventKind::kReady});
  return true;
}

void Simulator::Route(int32_t service, int32_t request, double now_s) {
  ServiceState& st = services_[service];
  int32_t best = -1;
  double best_load = kInf;
  for (int32_t r : st.replicas) {
    const Replica& rep = replicas_[r];
    if (!TakesRequests(rep, now_s)) continue;
    // Outstanding requests per batch slot; a replica still starting counts as its start-up
    // time worth of full load.
    double load = static_cast<double>(rep.waiting.size() + rep.running.size()) / rep.max_batch;
    if (rep.ready_s > now_s) load += 1 + (rep.ready_s - now_s);
    if (load < best_load) {
      best_load = load;
      best = r;
    }
  }
  if (best < 0) {
    // Every replica is draining: the newest one is taken back rather than turn a request away.
    for (auto it = st.replicas.rbegin(); it != st.replicas.rend() && best < 0; ++it) {
      if (replicas_[*it].released_s < 0) {
        replicas_[*it].draining = false;
        replicas_[*it].retire_s = kInf;
        best = *it;
      }
    }
  }
  if (best < 0) return;  // no replica at all: the request is never served (counted as a miss)
  st.shape_of[request] = replicas_[best].shape;
  replicas_[best].waiting.push_back(request);
  MaybeStart(best, now_s);
}

void Simulator::MaybeStart(int32_t id, double now_s) {
  Replica& r = replicas_[id];
  if (r.busy || r.ready_s > now_s || r.released_s >= 0) return;
  if (r.waiting.empty() && r.running.empty()) return;
  ServiceState& st = services_[r.service];
  const auto& reqs = *st.requests;
  // Prompts that can still get their first token within the TTFT target go first, in arrival
  // order; those that cannot any more follow. Under a burst, FIFO would let every queued
  // request miss; this serves as many within the target as the replica can.
  auto slack = [&](int32_t q) {
    const double left = reqs[q].input_tokens - st.prefilled[q];
    const double iterations = std::ceil(left / static_cast<double>(r.chunk));
    return reqs[q].arrival_s + st.slo.ttft_s - now_s - iterations * r.step_s;
  };
  std::stable_partition(r.waiting.begin(), r.waiting.end(),
                        [&](int32_t q) { return slack(q) >= 0; });
  // Chunked prefill: up to `chunk` prompt tokens from the front of the queue, as long as the
  // requests it completes find a place in the batch.
  const int64_t max_chunk = r.chunk_at[r.running.size()];
  int64_t budget = max_chunk;
  const int32_t slots = r.max_batch - static_cast<int32_t>(r.running.size());
  r.completing = 0;
  r.partial_tokens = 0;
  for (size_t i = 0; i < r.waiting.size() && budget > 0 && r.completing < slots; ++i) {
    const int64_t need = reqs[r.waiting[i]].input_tokens - st.prefilled[r.waiting[i]];
    if (need <= budget) {
      budget -= need;
      ++r.completing;
    } else {
      r.partial_tokens = budget;
      budget = 0;
    }
  }
  const int64_t chunk = max_chunk - budget;
  if (chunk == 0 && r.running.empty()) return;  // the batch is full of nothing: cannot happen
  const int32_t batch = static_cast<int32_t>(r.running.size());
  const double duration =
      r.model->IterationSeconds(batch, batch > 0 ? r.context_sum / batch : 0, chunk);
  r.busy = true;
  r.busy_s += duration;
  events_.push({now_s + duration, id, EventKind::kIterationEnd});
}

void Simulator::FinishIteration(int32_t id, double now_s) {
  Replica& r = replicas_[id];
  ServiceState& st = services_[r.service];
  const auto& reqs = *st.requests;
  r.busy = false;
  // Every running sequence got one token.
  size_t kept = 0;
  for (Running& run : r.running) {
    --run.left;
    r.context_sum += 1;
    if (run.left > 0) {
      r.running[kept++] = run;
      continue;
    }
    const int32_t out = reqs[run.request].output_tokens;
    st.tpot[run.request] = static_cast<float>((now_s - run.first_token_s) / (out - 1));
    r.context_sum -= reqs[run.request].input_tokens + out;
  }
  r.running.resize(kept);
  // The prompt the iteration prefilled in part is the one after those it completed.
  if (r.partial_tokens > 0) st.prefilled[r.waiting[r.completing]] += r.partial_tokens;
  // Prompts whose prefill is complete give their first token and join the batch.
  for (int32_t k = 0; k < r.completing; ++k) {
    const int32_t q = r.waiting.front();
    r.waiting.pop_front();
    st.ttft[q] = static_cast<float>(now_s - reqs[q].arrival_s);
    if (reqs[q].output_tokens <= 1) {
      st.tpot[q] = 0;
      continue;
    }
    r.running.push_back({q, reqs[q].output_tokens - 1, now_s});
    r.context_sum += reqs[q].input_tokens + 1;
  }
  r.completing = 0;
  r.partial_tokens = 0;
  ReleaseIfDone(id, now_s);
  MaybeStart(id, now_s);
}

void Simulator::ReleaseIfDone(int32_t id, double now_s) {
  Replica& r = replicas_[id];
  if (r.released_s < 0 && r.draining && now_s >= r.retire_s && !r.busy && r.waiting.empty() &&
      r.running.empty()) {
    Release(id, now_s);
  }
}

void Simulator::Release(int32_t id, double now_s) {
  Replica& r = replicas_[id];
  r.released_s = now_s;
  for (model::DeviceId d : r.devices) held_[d.value()] = 0;
  std::erase_if(pending_starts_,
                [&](const auto& p) { return StartReplica(p.first, p.second, now_s); });
}

void Simulator::Book(const ServiceState& st, ServingResult& result) const {
  ServiceOutcome o = st.outcome;
  o.requests = static_cast<int64_t>(st.requests->size());
  std::vector<float> ttft = st.ttft, tpot = st.tpot;
  for (size_t q = 0; q < ttft.size(); ++q) {
    if (ttft[q] <= st.slo.ttft_s && tpot[q] <= st.slo.tpot_s) ++o.within_slo;
    if (!std::isfinite(tpot[q])) ++o.unserved;
  }
  o.ttft_p99_s = Percentile(ttft, 99);
  o.tpot_p99_s = Percentile(tpot, 99);
  // Replicas alive at once, from their hold intervals.
  std::vector<std::pair<double, int>> edges;
  for (int32_t id : st.replicas) {
    const Replica& r = replicas_[id];
    const model::DeviceType& type = cluster_.catalog.Get(st.shapes[r.shape].type);
    const double held_h = std::max(0.0, r.released_s - r.held_from_s) / 3600;
    const int tp = static_cast<int>(r.devices.size());
    o.device_hours[type.name] += tp * held_h;
    const double kwh =
        tp * (type.idle_watts * held_h + (type.peak_watts - type.idle_watts) * r.busy_s / 3600) /
        1000;
    o.energy_kwh += kwh;
    o.cost_usd += tp * type.price_per_hour * held_h + kwh * options_.usd_per_kwh;
    edges.emplace_back(r.held_from_s, 1);
    edges.emplace_back(r.released_s, -1);
    for (model::DeviceId d : r.devices) {
      Fault f;
      f.time_s = r.held_from_s;
      f.node = cluster_.device(d).node;
      f.device = d;
      f.duration_s = r.released_s - r.held_from_s;
      f.service = true;
      if (f.duration_s > 0 && type.peak_watts > 0) {
        const double busy = std::min(1.0, r.busy_s / f.duration_s);
        f.service_draw =
            (type.idle_watts + (type.peak_watts - type.idle_watts) * busy) / type.peak_watts;
      }
      if (f.duration_s > 0) result.holds.push_back(f);
      result.pool.push_back(d);
    }
  }
  std::sort(edges.begin(), edges.end());
  int alive = 0;
  for (const auto& [t, delta] : edges) {
    alive += delta;
    o.peak_replicas = std::max(o.peak_replicas, alive);
  }
  result.requests += o.requests;
  result.within_slo += o.within_slo;
  result.cost_usd += o.cost_usd;
  result.energy_kwh += o.energy_kwh;
  result.services.push_back(o);
}

util::Result<ServingResult> Simulator::Run() {
  ServingResult result;
  result.mode = std::string(ServingModeName(options_.mode));
  if (options_.mode == ServingMode::kSingleType) result.mode += ":" + options_.single_type;
  double next_tick = 0;
  bool ticking = true;
  while (true) {
    // The next arrival over all services.
    int32_t arriving = -1;
    double arrival = kInf;
    for (size_t s = 0; s < services_.size(); ++s) {
      const ServiceState& st = services_[s];
      if (st.next < st.requests->size() && (*st.requests)[st.next].arrival_s < arrival) {
        arrival = (*st.requests)[st.next].arrival_s;
        arriving = static_cast<int32_t>(s);
      }
    }
    const double event = events_.empty() ? kInf : events_.top().time_s;
    const double tick = ticking ? next_tick : kInf;
    const double now = std::min({arrival, event, tick});
    if (!std::isfinite(now)) break;
    if (tick <= now) {
      Autoscale(now);
      next_tick += options_.interval_s;
      if (next_tick >= options_.horizon_s) ticking = false;
    } else if (event <= now) {
      const Event e = events_.top();
      events_.pop();
      switch (e.kind) {
        case EventKind::kReady:
          MaybeStart(e.replica, now);
          break;
        case EventKind::kIterationEnd:
          FinishIteration(e.replica, now);
          break;
        case EventKind::kRetire:
          ReleaseIfDone(e.replica, now);
          break;
      }
    } else {
      ServiceState& st = services_[arriving];
      Route(arriving, static_cast<int32_t>(st.next), now);
      ++st.next;
    }
  }
  // Services end at the horizon: every replica still held is booked as given back then
  // (requests in flight finish on it; the seconds past the horizon are not booked).
  pending_starts_.clear();
  for (size_t id = 0; id < replicas_.size(); ++id) {
    Replica& r = replicas_[id];
    if (r.released_s < 0) Release(static_cast<int32_t>(id), options_.horizon_s);
  }

  for (const ServiceState& st : services_) Book(st, result);
  std::sort(result.pool.begin(), result.pool.end());
  result.pool.erase(std::unique(result.pool.begin(), result.pool.end()), result.pool.end());
  result.slo_attainment =
      result.requests > 0 ? static_cast<double>(result.within_slo) / result.requests : 1;
  result.notes = std::move(notes_);
  result.plans = audit_;
  return result;
}

}  // namespace

util::Result<ServingResult> SimulateServing(
    const model::Cluster& cluster, const std::vector<const model::Job*>& services,
    const std::vector<std::vector<model::InferenceRequest>>& requests,
    const ServingOptions& options) {
  if (options.interval_s <= 0 || options.horizon_s <= 0) {
    return util::Status::InvalidArgument("serving: interval and horizon must be positive");
  }
  RETURN_IF_ERROR(CheckSingleType(cluster, options));
  Simulator sim(cluster, options);
  for (size_t s = 0; s < services.size(); ++s) {
    RETURN_IF_ERROR(sim.AddService(*services[s], requests[s]));
  }
  return sim.Run();
}

util::Status CheckService(const model::Cluster& cluster, const model::Job& service,
                          const std::vector<model::InferenceRequest>& requests,
                          const ServingOptions& options) {
  RETURN_IF_ERROR(CheckSingleType(cluster, options));
  Simulator sim(cluster, options);
  return sim.AddService(service, requests);
}

bool HasServices(const model::Workload& workload) {
  return std::any_of(workload.jobs.begin(), workload.jobs.end(),
                     [](const model::Job& j) { return j.kind == model::JobKind::kService; });
}

model::Workload WithoutServices(const model::Workload& workload) {
  model::Workload rest;
  for (const model::Job& job : workload.jobs) {
    if (job.kind == model::JobKind::kService) continue;
    rest.jobs.push_back(job);
    rest.jobs.back().id = model::JobId(static_cast<int32_t>(rest.jobs.size() - 1));
  }
  return rest;
}

util::Result<std::vector<model::InferenceRequest>> RequestsOf(const model::Job& service,
                                                              double horizon_s, uint64_t seed) {
  const model::ServiceSpec& spec = *service.service;
  std::vector<model::InferenceRequest> trace;
  if (!spec.requests_file.empty()) {
    ASSIGN_OR_RETURN(trace, model::io::LoadAzureTrace(spec.requests_file));
  }
  if (spec.rate.empty()) return model::LoopTrace(trace, 0, horizon_s);
  auto curve = model::MakeRateCurve(spec.rate);
  if (!curve.ok()) {
    return util::Status::InvalidArgument(ServiceError(service, curve.status().message()));
  }
  return model::GenerateRequests(*curve, 0, horizon_s, trace, spec.input_tokens, spec.output_tokens,
                                 seed);
}

}  // namespace hetsched::sim
