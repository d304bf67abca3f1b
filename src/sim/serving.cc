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

#include "sched/replica_placement.h"
#include "sched/replica_plan.h"
#include "sim/serving_internal.h"

namespace hetsched::sim {
namespace serving_internal {

double Percentile(std::vector<float>& v, double percentile) {
  if (v.empty()) return 0;
  const size_t k = std::min(
      v.size() - 1,
      static_cast<size_t>(std::ceil(percentile / 100 * static_cast<double>(v.size()))) - 1);
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

void Simulator::Track(ServiceState& s, const std::vector<model::InferenceRequest>& reqs) {
  s.requests = &reqs;
  s.next = 0;
  s.ttft.assign(reqs.size(), std::numeric_limits<float>::infinity());
  s.tpot.assign(reqs.size(), std::numeric_limits<float>::infinity());
  s.prefilled.assign(reqs.size(), 0);
  s.shape_of.assign(reqs.size(), -1);
}

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
  Track(s, reqs);
  if (!spec.rate.empty()) {
    auto curve = model::MakeRateCurve(spec.rate);
    if (!curve.ok())
      return util::Status::InvalidArgument(ServiceError(job, curve.status().message()));
    s.curve = *std::move(curve);
  }
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

TokenMeans MeanTokensOf(std::span<const model::InferenceRequest> requests) {
  double in = 0, out = 0;
  for (const model::InferenceRequest& q : requests) {
    in += q.input_tokens;
    out += q.output_tokens;
  }
  const double n = std::max<double>(1, static_cast<double>(requests.size()));
  return {std::max(1.0, in / n), std::max(1.0, out / n)};
}

TokenMeans Simulator::MeanTokens(const ServiceState& s, double from_s, double to_s) const {
  return MeanTokensOf(Arrived(s, from_s, to_s));
}

cost::ServingModel Simulator::ModelOf(const ServiceState& s, int32_t shape) const {
  const sched::ServiceShape& sh = s.shapes[shape];
  const model::DeviceType& type = cluster_.catalog.Get(sh.type);
  return cost::ServingModel(s.served, type, sh.tp, options_.calibrations.For(type.name),
                            sh.link_bandwidth);
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
  // The plan holds until the next one, or the horizon.
  const double span_s = std::min(options_.interval_s, options_.horizon_s - now_s);
  std::vector<sched::ServiceDemand> demands;
  for (size_t s = 0; s < services_.size(); ++s) {
    demands.push_back(DemandOf(static_cast<int32_t>(s), now_s, span_s, live[s]));
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
    NoteWhatIsLeft(plan, static_cast<int32_t>(s), now_s, span_s);
  }
  ApplyChanges(sched::ChangesToward(live, plan.replicas), now_s);
}

void Simulator::NoteWhatIsLeft(const sched::ReplicaPlan& plan, int32_t service, double now_s,
                               double span_s) {
  ServiceState& st = services_[service];
  if (plan.uncovered[service] > 0) {
    notes_.push_back(
        fmt::format("t={:.0f}s: {}: {:.2f} requests/s of forecast load find no room in the cluster",
                    now_s, st.job->name, plan.uncovered[service]));
  }
  if (plan.headroom_left[service] > 0) {
    notes_.push_back(fmt::format(
        "t={:.0f}s: {}: {:.2f} requests/s of forecast headroom left uncovered: only costlier "
        "types had room",
        now_s, st.job->name, plan.headroom_left[service]));
  }
  if (plan.risk_left[service] > 0) {
    st.budget.Spend(plan.risk_left[service], span_s);
    notes_.push_back(fmt::format(
        "t={:.0f}s: {}: {:.2f} requests/s of measured load left beyond the replicas' ratings: "
        "only costlier types had room; {:.0f} requests put at risk; error budget: {:.0f} "
        "earned, {:.0f} missed, {:.0f} put at risk by plans (at most {:g} % of what was earned)",
        now_s, st.job->name, plan.risk_left[service], plan.risk_left[service] * span_s,
        st.budget.earned, st.budget.missed, st.budget.spent, options_.risk_share * 100));
  }
}

void Simulator::Audit(const sched::ReplicaPlan& plan) {
  ++audit_.plans;
  auto any_left = [](const std::vector<double>& left) {
    return std::any_of(left.begin(), left.end(), [](double l) { return l > 0; });
  };
  audit_.headroom_left += any_left(plan.headroom_left);
  audit_.risk_left += any_left(plan.risk_left);
  if (plan.single_type < 0) return;
  ++audit_.single_type_covers;
  audit_.mix_usd_per_hour += plan.usd_per_hour;
  audit_.single_type_usd_per_hour += plan.single_type_usd_per_hour;
  if (plan.usd_per_hour < plan.single_type_usd_per_hour - 1e-9) ++audit_.mix_cheaper;
  if (plan.single_type_kept) ++audit_.single_type_kept;
}

sched::ServiceDemand Simulator::DemandOf(int32_t service, double now_s, double span_s,
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
    // The requests that arrived so far earn the budget the plan may spend; those that missed
    // have used some of it.
    st.budget.EarnFrom(static_cast<int64_t>(st.next), st.slo.percentile);
    st.budget.missed = static_cast<double>(MissedSoFar(st, now_s));
    demand.risk_requests_per_s = st.budget.RateAllowed(options_.risk_share, span_s);
  }
  demand.startup_h =
      (options_.startup_fixed_s + st.served.weight_bytes / options_.load_bandwidth) / 3600;
  // Token means of every request seen so far (the whole day's for the static plan); the
  // replica count is a matter of throughput, sized for the mean request.
  st.tokens = MeanTokens(st, 0, hindsight ? options_.horizon_s : std::max(dt, now_s));
  for (size_t k = 0; k < st.shapes.size(); ++k) {
    const sched::ServiceShape& sh = st.shapes[k];
    const model::DeviceType& type = cluster_.catalog.Get(sh.type);
    const cost::ServingModel m = ModelOf(st, static_cast<int32_t>(k));
    // The model's rating, raised where the replicas were measured doing better
    // (cost::CalibratedRate).
    // and where one replica in the simulation itself carries more: up to the SLO's
    // percentile of that limit (at p99, 1 % below it), as the SLO lets that share miss.
    const cost::ReplicaMeasurement measured = Measure(service, static_cast<int32_t>(k), now_s);
    const cost::ReplicaCapacity modelled = m.CapacityAt(st.slo, st.tokens.input, st.tokens.output);
    const double limit = SimulatedLimit(service, static_cast<int32_t>(k));
    const double capacity =
        std::max(cost::CalibratedRate(modelled, st.slo, measured), st.slo.percentile / 100 * limit);
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

int64_t Simulator::MissedSoFar(const ServiceState& s, double now_s) const {
  const auto& reqs = *s.requests;
  int64_t missed = 0;
  for (size_t q = 0; q < s.next; ++q) {
    const bool late_first_token = std::isfinite(s.ttft[q])
                                      ? s.ttft[q] > s.slo.ttft_s
                                      : now_s - reqs[q].arrival_s > s.slo.ttft_s;
    missed += late_first_token || (std::isfinite(s.tpot[q]) && s.tpot[q] > s.slo.tpot_s);
  }
  return missed;
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
  r.model = std::make_unique<cost::ServingModel>(ModelOf(st, shape));
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
  sched::ErrorBudget whole_run = st.budget;
  whole_run.EarnFrom(o.requests, st.slo.percentile);
  o.error_budget_earned = whole_run.earned;
  o.error_budget_spent = whole_run.spent;
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

void Simulator::Loop(bool autoscale) {
  double next_tick = 0;
  bool ticking = autoscale;
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
    if (probe_.allowed >= 0) {
      // Requests past their TTFT deadline without a first token by then have missed it.
      const ServiceState& st = services_[0];
      const auto& reqs = *st.requests;
      for (; probe_.decided < reqs.size() && reqs[probe_.decided].arrival_s + st.slo.ttft_s < now;
           ++probe_.decided) {
        if (st.ttft[probe_.decided] > st.slo.ttft_s) ++probe_.misses;
      }
      if (probe_.misses > probe_.allowed) return;
    }
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
}

util::Result<ServingResult> Simulator::Run() {
  ServingResult result;
  result.mode = std::string(ServingModeName(options_.mode));
  if (options_.mode == ServingMode::kSingleType) result.mode += ":" + options_.single_type;
  Loop(/*autoscale=*/true);
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
  result.replica_limits = std::move(replica_limits_);
  return result;
}

}  // namespace serving_internal

using serving_internal::Simulator;

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

}  // namespace hetsched::sim
