// ServingLoop: inference services (`kind: service`) run live by the daemon. Each service's
// replicas are ordinary jobs of the daemon (one per replica, its command the service's template
// with {port}, {tp} and {model} filled in), sized and placed by the same replica plan as the
// simulator (sched/replica_plan.h, sched/replica_placement.h) from the load the replicas report
// on their Prometheus endpoint (obs/server_load.h). A replica that ends is replaced; a smaller
// plan drains replicas only once the new ones are ready (make-before-break). Services and their
// replicas are kept in the daemon's database, so a restarted daemon carries on with them.
// docs/serving-live.md.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/serving_view.h"
#include "model/job.h"
#include "model/request_stream.h"
#include "obs/log.h"
#include "obs/server_load.h"
#include "sched/replica_placement.h"
#include "sched/replica_plan.h"
#include "util/status.h"

namespace hetsched::svc {

class Service;

struct LiveServingOptions {
  double tick_s = 0.2;         // how often replicas' job states are looked at
  double scrape_every_s = 5;   // each replica's GET /metrics
  double replan_every_s = 60;  // the replica plan; its forecast uses the last intervals' rates
  double window_s = 60;        // what `measured` covers
  // The forecast's burst term: requests/s over windows this long (the simulator's length).
  double burst_window_s = sched::kBurstWindowS;
  double ready_timeout_s = 600;  // a replica not ready by then is reported (and kept)
  double headroom = 0.2;         // capacity kept above the forecast (fraction)
  double usd_per_kwh = 0.12;     // energy price in the cost the plan minimises
  // New replicas are not started after this many replicas in a row ended before they were
  // ready (a command that cannot start); a replica that becomes ready resets the count.
  int32_t max_failed_starts = 3;
  std::string host = "127.0.0.1";  // where replicas listen on the local backend (this machine)
  // serving.ports: the ports replicas listen on, on whatever node they run; each replica gets
  // one no other replica of this daemon holds. 0: a port the kernel finds free here (the local
  // backend only; on Slurm that says nothing of the node).
  int port_first = 0, port_last = 0;
  // When set, the ready replicas of every service are written there as nginx upstream blocks
  // whenever they change (serving_endpoints.h).
  std::string endpoints_file;
  // A draining replica is stopped this long after it left the published endpoints, so that a
  // gateway has reloaded them before it goes.
  double unpublished_before_stop_s = 5;
  // After a replica of a service took devices back from preemptible jobs, the plan drains
  // none of the service's replicas for this long (a drained one would hand its devices to
  // training), so that a load hovering at a replica boundary does not preempt training again
  // at each rise (0: no hold).
  double hold_taken_back_s = 600;
};

// Thread-safe: Add, Get and Remove may be called from any thread while the loop runs.
class ServingLoop {
 public:
  // `service` and `logger` outlive the loop.
  ServingLoop(Service* service, LiveServingOptions options, Logger* logger);
  ~ServingLoop();  // Stop
  // Reads back the services a previous run kept (their replicas are the daemon's jobs, which
  // it recovered) and starts the loop.
  void Start();
  void Stop();
  // kUnavailable until Start() has read the services back (and while the daemon recovers, which
  // is before): Add, Get, PushLoad and Remove answer so too, and List has none to show yet.
  util::Status Ready();

  // Takes a service parsed from POST /v1/jobs (kind service, its command holding {port}) and
  // the request as stored (JobRequest::spec_json), kept in the database with its replicas so
  // that a restarted daemon carries on with them (Start reads them back).
  // kInvalidArgument when the backend runs no commands (or is Slurm without port_first), the
  // model is no preset, or no device type of the cluster meets its SLO (saying why, per type);
  // kAlreadyExists when the name is taken.
  util::Result<ServingView> Add(model::Job job, std::string spec_json);
  util::Result<ServingView> Get(const std::string& name);
  // Every service, by name.
  std::vector<ServingView> List();
  // A gateway's measure of the service's request rate (requests/s, finite, not negative): the
  // forecast uses it for an interval in which the replicas counted no request. kNotFound when
  // there is no such service.
  util::Result<ServingView> PushLoad(const std::string& name, double requests_per_s);
  // Stops every replica and forgets the service; its last view.
  util::Result<ServingView> Remove(const std::string& name);

 private:
  struct Replica;
  struct Served;
  struct ScrapeResult;

  // The service as Add and Restore build it: its model, SLO and replica shapes.
  util::Result<std::unique_ptr<Served>> MakeServed(model::Job job, std::string spec_json);
  // Writes every service and its replicas to the database (mu_ held); Restore reads them.
  void Persist();
  void Restore();
  void Loop();
  void Tick();
  // Replicas' job states from the daemon; ended ones dropped, and replaced unless draining.
  void Refresh(Served& s, double now);
  void ApplyScrape(Served& s, Replica& r, const ScrapeResult& result, double now);
  void Replan(Served& s, double now);
  // Books the interval since the last plan (its measured rate, or the rate curve's while no
  // replica reported in it) among the last sched::kScaleDownIntervals; says what they are.
  std::string CloseInterval(Served& s, double now);
  // Sets s.plan's forecast and what it was made from (the intervals' rates, the burst
  // windows of their span); says what the bursts added.
  std::string Forecast(Served& s, double now);
  // The replica counts the plan asks for, per shape; nullopt when none was found (why set).
  std::optional<std::vector<int32_t>> PlanTargets(Served& s, double forecast);
  void StartReplica(Served& s, int32_t shape, double now);
  // The port a new replica listens on (mu_ held): the next of options_' range after the last
  // one given that no replica holds, so that a port just found taken on a node is not given
  // again at once; else one free on this machine.
  util::Result<int> PickPort();
  // Where a new replica of `shape` goes when no node has tp devices of its type free: a node
  // where free devices and those preemptible jobs hold make up tp. The devices to pin it to
  // and the jobs to preempt; nullopt when none is needed or none can be had (the replica
  // queues as any job). serving_lending.cc.
  struct Reclaim {
    std::vector<std::string> pinned;  // "node/index"
    std::vector<std::string> jobs;    // preemptible jobs on them
  };
  std::optional<Reclaim> ReclaimFor(const sched::ServiceShape& shape);
  // Whether a new replica of `shape` is put off to a later plan: it would take devices back
  // from preemptible jobs, whose preemptions have a price (the scheduler's
  // preemption_cost_s per device of each job), while the replicas kept already carry
  // `carried` requests/s, at least the forecast without its headroom: the take-back would buy
  // only headroom. s.plan.why then says so. serving_lending.cc.
  bool DeferTakeBack(Served& s, int32_t shape, double carried);
  // Whether job `name` is a preemptible job of the daemon (training lent a device).
  bool Lendable(const std::string& name);
  // `drain` (replica ids the plan drops), or none while the service's drains are held (it took
  // devices back from training within options_.hold_taken_back_s; s.plan.why then says how many
  // were kept). serving_lending.cc.
  std::vector<int32_t> HoldTakenBack(Served& s, std::vector<int32_t> drain, double now);
  // Draining replicas are stopped once every other replica of the service is ready and they
  // have been unpublished for options_.unpublished_before_stop_s.
  void RetireDrained(Served& s, double now);
  // Writes options_.endpoints_file when the published endpoints changed (mu_ held).
  void PublishEndpoints(double now);
  MeasuredLoad Measure(const Served& s, double now) const;
  ServingView ViewOf(const Served& s, double now) const;
  void Problem(Served& s, const std::string& message);
  util::Status ReadyLocked() const;  // Ready(), mu_ held

  Service* service_;
  LiveServingOptions options_;
  Logger* logger_;
  cost::ServingCalibrations calibrations_;
  std::mutex mu_;  // guards services_, stopping_ and restored_
  std::map<std::string, std::unique_ptr<Served>> services_;
  bool stopping_ = false;
  bool restored_ = false;  // Start() read the stored services back
  bool dirty_ = false;     // replicas started, ended or drained since the last Persist
  std::string published_;  // what options_.endpoints_file holds
  int last_port_ = 0;      // the range's port PickPort gave last
  std::condition_variable wake_;
  std::thread loop_;
};

}  // namespace hetsched::svc
