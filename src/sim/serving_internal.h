// The serving simulation's Simulator and what its files share (serving.cc,
// serving_replica_limit.cc, serving_requests.cc); nothing else includes this.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cost/serving.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/request_stream.h"
#include "sched/replica_placement.h"
#include "sched/replica_plan.h"
#include "sim/serving.h"
#include "util/status.h"

namespace hetsched::sim {

// `problem` located at the service's place in its workload file ("file:line:column: jobs[0]:
// service 'chat': ..."), or prefixed with the service's name when it has no place.
std::string ServiceError(const model::Job& job, const std::string& problem);

namespace serving_internal {

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
  std::optional<model::RateCurve> curve;  // of the service's spec, when it has one
  size_t next = 0;                        // next request to arrive
  std::vector<float> ttft, tpot;          // per request; +infinity: never served
  std::vector<int32_t> prefilled;         // per request: prompt tokens prefilled so far
  std::vector<int32_t> shape_of;          // per request: the shape of the replica it was routed to
  std::vector<int32_t> replicas;          // indices into Simulator::replicas_ (all, ever)
  ServiceOutcome outcome;
  double static_rate = -1;  // kStaticPeak: the rate it is provisioned for
  TokenMeans tokens;        // of the last plan
  sched::ErrorBudget budget;
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

// Mean token counts of `requests` (at least 1 each).
TokenMeans MeanTokensOf(std::span<const model::InferenceRequest> requests);

// The `percentile` of `v` (reordered), 0 when empty.
double Percentile(std::vector<float>& v, double percentile);

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
  // Sets up `s` to serve `reqs`: none answered yet.
  static void Track(ServiceState& s, const std::vector<model::InferenceRequest>& reqs);
  // Runs the events until none are left; the autoscaler plans every interval when `autoscale`.
  // Stops early when a probe's TTFT misses exceed what its percentile allows (Probe).
  void Loop(bool autoscale);
  // The highest constant rate at which one replica of `shape` of `service`, alone and sized
  // for them, serves the service's own arrivals (its first kProbeRequests, AtConstantRate)
  // within its SLO, searched by bisection between the model's rating for their token means
  // and cost::kMaxCalibratedRaise times it; 0 when it misses the SLO at that rating.
  // Simulated once per run for each (service, shape): later calls return the first answer.
  double SimulatedLimit(int32_t service, int32_t shape);
  // Whether one replica of `shape` of `st` sized for `tokens`, up from t = 0 with no
  // autoscaler, serves `requests` with both TTFT and TPOT within the SLO at its percentile.
  bool OneReplicaMeetsSlo(const ServiceState& st, int32_t shape, const TokenMeans& tokens,
                          const std::vector<model::InferenceRequest>& requests) const;
  // Requests of `s` that arrived before now_s and are known to have missed the SLO by then:
  // no first token within the TTFT target, or a TPOT beyond its target.
  int64_t MissedSoFar(const ServiceState& s, double now_s) const;
  // The requests that arrived in [from, to) (the whole list when none did).
  std::span<const model::InferenceRequest> Arrived(const ServiceState& s, double from_s,
                                                   double to_s) const;
  TokenMeans MeanTokens(const ServiceState& s, double from_s, double to_s) const;
  // The serving model of a replica of `shape` of `s`.
  cost::ServingModel ModelOf(const ServiceState& s, int32_t shape) const;
  // The prompt length at the service's SLO percentile.
  double LongPrompt(const ServiceState& s, double from_s, double to_s) const;
  // Plans the replicas for the load to come (sched/replica_plan.h) and applies the plan.
  void Autoscale(double now_s);
  // Counts `plan` against the cheapest single-type plan (ServingResult::plans).
  void Audit(const sched::ReplicaPlan& plan);
  // Notes what `plan` left of `service`'s forecast (no room, headroom, load at risk) and
  // spends the error budget on the load it left at risk for `span_s`.
  void NoteWhatIsLeft(const sched::ReplicaPlan& plan, int32_t service, double now_s, double span_s);
  // What `service` asks of the plan at now_s for `span_s`, with `live` its replicas up now per
  // shape; sizes the replicas for the mean tokens seen so far.
  sched::ServiceDemand DemandOf(int32_t service, double now_s, double span_s,
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
  // SimulatedLimit's answers by (service, shape), and what they were found from.
  std::map<std::pair<int32_t, int32_t>, double> limits_;
  std::vector<ReplicaLimit> replica_limits_;
  // A one-replica probe (OneReplicaMeetsSlo) of service 0: requests before `decided` are past
  // their TTFT deadline, `misses` of them missed it; it stops once misses exceed `allowed`.
  struct Probe {
    int64_t allowed = -1;  // -1: not a probe
    size_t decided = 0;
    int64_t misses = 0;
  } probe_;
};

}  // namespace serving_internal
}  // namespace hetsched::sim
