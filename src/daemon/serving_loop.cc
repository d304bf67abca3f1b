#include "daemon/serving_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "daemon/service.h"
#include "daemon/serving_endpoints.h"
#include "daemon/serving_loop_internal.h"
#include "daemon/serving_replica_io.h"
#include "sched/replica_plan.h"
#include "util/file.h"

namespace hetsched::svc {

namespace {

// A replica is ready after loading its weights: the simulator's figures (sim/serving.h).
constexpr double kStartupFixedS = 30;
constexpr double kLoadBandwidth = 2e9;  // bytes/s
// The replica plan's solver gets this long (wall seconds).
constexpr double kPlanSeconds = 5;

// Seconds since midnight UTC of unix time `t`: where a rate curve stands.
double SecondsOfDay(double t) { return std::fmod(t, 86400.0); }

// The increase of a counter between two reads (the whole value after a restart).
double Increase(std::optional<double> now, std::optional<double> before) {
  if (!now) return 0;
  if (!before || *now < *before) return *now;
  return *now - *before;
}

void AddHistogram(LatencyHistogram& into, const LatencyHistogram& h) {
  if (into.buckets.empty()) {
    into = h;
    return;
  }
  if (into.buckets.size() != h.buckets.size()) return;  // other bounds: not comparable
  for (size_t i = 0; i < h.buckets.size(); ++i) {
    if (into.buckets[i].first != h.buckets[i].first) return;
  }
  for (size_t i = 0; i < h.buckets.size(); ++i) into.buckets[i].second += h.buckets[i].second;
}

std::string ShapeName(const model::DeviceCatalog& catalog, const sched::ServiceShape& shape) {
  const std::string& type = catalog.Get(shape.type).name;
  return shape.tp == 1 ? type : fmt::format("{} (tp {})", type, shape.tp);
}

}  // namespace

namespace {

// What one replica reported since its previous read, added to its service's round.
void AddToRound(Round& round, const ServerLoad& now, const ServerLoad& before) {
  round.counted = round.counted || now.requests.has_value();
  round.requests += Increase(now.requests, before.requests);
  round.prompt_tokens += Increase(now.prompt_tokens, before.prompt_tokens);
  round.generation_tokens += Increase(now.generation_tokens, before.generation_tokens);
  if (now.ttft && before.ttft) AddHistogram(round.ttft, HistogramSince(*now.ttft, *before.ttft));
  if (now.tpot && before.tpot) AddHistogram(round.tpot, HistogramSince(*now.tpot, *before.tpot));
}

// What `plan.why` adds after the choice: devices lent by training, load left without room.
std::string PlanCaveats(const sched::ReplicaPlan& plan, int32_t lent) {
  std::string caveats;
  if (lent > 0) {
    caveats += fmt::format(
        " {} device(s) that preemptible jobs hold counted as free: a replica placed there "
        "preempts them.",
        lent);
  }
  if (plan.headroom_left[0] > 0) {
    caveats += fmt::format(
        " {:.3g} requests/s of the forecast's headroom left uncovered: only device types costing "
        "more than {:g} % over the cheapest per request had room for it.",
        plan.headroom_left[0], sched::kHeadroomCostMargin * 100);
  }
  if (plan.uncovered[0] > 0) {
    caveats += fmt::format(" {:.3g} requests/s find no room in the cluster.", plan.uncovered[0]);
  }
  return caveats;
}

}  // namespace

struct ServingLoop::ScrapeResult {
  std::string service;
  int32_t replica = 0;
  util::Status status;
  ServerLoad load;
};

ServingLoop::ServingLoop(Service* service, LiveServingOptions options, Logger* logger)
    : service_(service),
      options_(std::move(options)),
      logger_(logger),
      calibrations_(cost::MakeCalibrations({})) {}

ServingLoop::~ServingLoop() { Stop(); }

void ServingLoop::Start() {
  std::lock_guard lock(mu_);
  if (loop_.joinable() || stopping_) return;
  Restore();
  restored_ = true;
  loop_ = std::thread([this] { Loop(); });
}

util::Status ServingLoop::Ready() {
  std::lock_guard lock(mu_);
  return ReadyLocked();
}

util::Status ServingLoop::ReadyLocked() const {
  // Before Start() the stored services are not read back: an Add would store its service over
  // them, and the others would answer as if there were none.
  if (!restored_) {
    return util::Status::Unavailable("the daemon is recovering its services; try again");
  }
  return util::Status::Ok();
}

void ServingLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (loop_.joinable()) loop_.join();
}

void ServingLoop::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    Tick();
    lock.lock();
    wake_.wait_for(lock, std::chrono::duration<double>(options_.tick_s),
                   [this] { return stopping_; });
  }
}

void ServingLoop::Tick() {
  const double now = service_->WallNow();
  struct Target {
    std::string service;
    int32_t replica;
    std::string host;
    int port;
  };
  std::vector<Target> targets;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, s] : services_) {
      Refresh(*s, now);
      for (Replica& r : s->replicas) {
        if (r.state == "queued" || r.host.empty() || now < r.next_scrape_s) continue;
        r.next_scrape_s = now + options_.scrape_every_s;
        targets.push_back({name, r.id, r.host, r.port});
      }
    }
  }
  // Reading the replicas takes up to seconds each: outside the lock.
  std::vector<ScrapeResult> results;
  for (const Target& t : targets) {
    ScrapeResult result{t.service, t.replica, util::Status::Ok(), {}};
    auto load = Scrape(t.host, t.port);
    if (load.ok()) {
      result.load = *std::move(load);
    } else {
      result.status = load.status();
    }
    results.push_back(std::move(result));
  }
  std::lock_guard lock(mu_);
  std::map<std::string, Round> rounds;
  for (const ScrapeResult& result : results) {
    auto it = services_.find(result.service);
    if (it == services_.end()) continue;
    for (Replica& r : it->second->replicas) {
      if (r.id != result.replica) continue;
      Round& round = rounds[result.service];
      round.at_s = now;
      if (result.status.ok() && r.last) AddToRound(round, result.load, *r.last);
      ApplyScrape(*it->second, r, result, now);
    }
  }
  const double keep_s = std::max(options_.window_s, options_.replan_every_s);
  for (auto& [name, s] : services_) {
    if (auto round = rounds.find(name); round != rounds.end() && s->first_read_s) {
      s->bursts.Add(round->second.at_s, round->second.requests, round->second.counted);
      s->rounds.push_back(std::move(round->second));
    }
    while (!s->rounds.empty() && s->rounds.front().at_s < now - keep_s) s->rounds.pop_front();
    while (!s->pushed.empty() && s->pushed.front().first < now - keep_s) s->pushed.pop_front();
    if (now >= s->next_plan_s) Replan(*s, now);
    RetireDrained(*s, now);
  }
  if (dirty_) Persist();
  PublishEndpoints(now);
}

void ServingLoop::PublishEndpoints(double now) {
  if (options_.endpoints_file.empty()) return;
  std::vector<ServingView> views;
  for (const auto& [name, s] : services_) views.push_back(ViewOf(*s, now));
  std::string text = NginxUpstreams(views);
  if (text == published_) return;
  if (auto st = util::ReplaceFile(options_.endpoints_file, text); !st.ok()) {
    logger_->Error("writing the endpoints file failed", {{"error", st.message()}});
    return;
  }
  published_ = std::move(text);
}

void ServingLoop::ApplyScrape(Served& s, Replica& r, const ScrapeResult& result, double now) {
  if (r.state == "queued") return;  // stopped and queued again while it was read
  if (!result.status.ok()) {
    // Logged once, not at every read: a page that is no model server's at any time, no answer
    // once it was ready (before, no answer is its start-up).
    if (r.message != result.status.message() && !r.cancelled &&
        (r.ready_once || result.status.code() == util::StatusCode::kInvalidArgument)) {
      logger_->Warn("replica metrics unreadable",
                    {{"service", s.job.name}, {"job", r.job}, {"error", result.status.message()}});
    }
    r.message = result.status.message();
    if (r.ready_once) r.state = "unreachable";
    if (!r.ready_once && !r.late_reported && now - r.submitted_s > options_.ready_timeout_s) {
      r.late_reported = true;
      Problem(s, fmt::format("replica {} is not ready after {:.0f} s: {}", r.job,
                             now - r.submitted_s, r.message));
    }
    return;
  }
  if (!r.ready_once) {
    logger_->Info("service replica ready", {{"service", s.job.name},
                                            {"job", r.job},
                                            {"endpoint", fmt::format("{}:{}", r.host, r.port)}});
  }
  r.ready_once = true;
  r.message.clear();
  s.failed_starts = 0;
  r.state = "ready";
  if (!s.first_read_s) s.first_read_s = now;
  r.last = result.load;
}

void ServingLoop::Problem(Served& s, const std::string& message) {
  if (s.message == message) return;  // said already (e.g. no start, at every plan)
  s.message = message;
  logger_->Warn("service", {{"service", s.job.name}, {"problem", message}});
}

util::Result<std::unique_ptr<ServingLoop::Served>> ServingLoop::MakeServed(model::Job job,
                                                                           std::string spec_json) {
  auto s = std::make_unique<Served>();
  const model::ServiceSpec& spec = *job.service;
  auto served = cost::ServedPreset(spec.model);
  if (!served.ok()) {
    return util::Status::InvalidArgument("request body: model: " + served.status().message());
  }
  s->served = *std::move(served);
  s->slo = {spec.ttft_s, spec.tpot_s, spec.percentile};
  if (!spec.rate.empty()) {
    ASSIGN_OR_RETURN(model::RateCurve curve, model::MakeRateCurve(spec.rate));
    s->rate = std::move(curve);
  }
  s->input_tokens = std::max(1, spec.input_tokens);
  s->output_tokens = std::max(1, spec.output_tokens);
  const sched::ReplicaSizing sizing{s->served, s->slo, s->input_tokens, s->output_tokens, 0};
  auto shapes = sched::ChooseServiceShapes(service_->cluster(), job, sizing, calibrations_,
                                           {options_.usd_per_kwh, nullptr});
  if (!shapes.ok()) {
    return util::Status::InvalidArgument(
        fmt::format("request body: service '{}': {}", job.name, shapes.status().message()));
  }
  s->shapes = *std::move(shapes);
  s->bursts = BurstWindows(options_.burst_window_s);
  s->job = std::move(job);
  s->spec_json = std::move(spec_json);
  return s;
}

util::Result<ServingView> ServingLoop::Add(model::Job job, std::string spec_json) {
  ASSIGN_OR_RETURN(ClusterView cluster, service_->Cluster());
  if (cluster.backend != "local" && cluster.backend != "slurm") {
    return util::Status::InvalidArgument(fmt::format(
        "request body: kind: 'service' runs its replicas as jobs of a backend that runs commands "
        "(local, slurm); this daemon's backend is {}",
        cluster.backend));
  }
  if (cluster.backend != "local" && options_.port_first == 0) {
    return util::Status::InvalidArgument(fmt::format(
        "request body: kind: 'service' on the {} backend needs serving.ports in the daemon's "
        "config (the ports replicas may listen on, on any node, like 20000-20999): a port "
        "free on the daemon's machine says nothing of the node a replica runs on",
        cluster.backend));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Served> s, MakeServed(std::move(job), std::move(spec_json)));
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyLocked());
  if (services_.count(s->job.name) != 0) {
    return util::Status::AlreadyExists(
        fmt::format("service '{}': the name is taken (expected a new name)", s->job.name));
  }
  const std::string name = s->job.name;
  logger_->Info("service added", {{"service", name}, {"model", s->job.service->model}});
  services_[name] = std::move(s);
  Persist();
  wake_.notify_all();
  return ViewOf(*services_[name], service_->WallNow());
}

util::Result<ServingView> ServingLoop::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyLocked());
  auto it = services_.find(name);
  if (it == services_.end()) {
    return util::Status::NotFound(fmt::format("service '{}': no such service", name));
  }
  return ViewOf(*it->second, service_->WallNow());
}

std::vector<ServingView> ServingLoop::List() {
  std::lock_guard lock(mu_);
  std::vector<ServingView> views;
  for (const auto& [name, s] : services_) views.push_back(ViewOf(*s, service_->WallNow()));
  return views;
}

util::Result<ServingView> ServingLoop::PushLoad(const std::string& name, double requests_per_s) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyLocked());
  auto it = services_.find(name);
  if (it == services_.end()) {
    return util::Status::NotFound(fmt::format("service '{}': no such service", name));
  }
  const double now = service_->WallNow();
  it->second->pushed.emplace_back(now, requests_per_s);
  return ViewOf(*it->second, now);
}

util::Result<ServingView> ServingLoop::Remove(const std::string& name) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(ReadyLocked());
  auto it = services_.find(name);
  if (it == services_.end()) {
    return util::Status::NotFound(fmt::format("service '{}': no such service", name));
  }
  for (Replica& r : it->second->replicas) {
    if (auto cancelled = service_->Cancel(r.job); !cancelled.ok()) {
      logger_->Warn("service replica cancel",
                    {{"job", r.job}, {"error", cancelled.status().message()}});
    }
    r.draining = r.cancelled = true;
  }
  ServingView view = ViewOf(*it->second, service_->WallNow());
  services_.erase(it);
  Persist();
  logger_->Info("service removed", {{"service", name}});
  return view;
}

void ServingLoop::Refresh(Served& s, double now) {
  std::vector<int32_t> replace;  // shapes of the replicas that ended on their own
  std::erase_if(s.replicas, [&](Replica& r) {
    auto job = service_->Get(r.job);
    if (!job.ok()) return false;  // the daemon cannot answer now; look again next tick
    if (!IsEnded(job->state)) {
      if (job->state == JobState::kQueued) r.state = "queued";
      if (job->state != JobState::kQueued && r.state == "queued") r.state = "starting";
      if (!job->devices.empty()) {  // placed: where, and the node's address as the backend has it
        r.device_type = job->device_type;
        r.node = job->devices.front().substr(0, job->devices.front().rfind('/'));
        const std::string address = service_->NodeAddress(r.node);
        r.host = address.empty() ? options_.host : address;
      }
      return false;
    }
    if (r.draining) {
      dirty_ = true;
      return true;
    }
    std::string how =
        fmt::format("replica {} {} ({})", r.job, JobStateName(job->state), job->message);
    if (!r.ready_once && !r.node.empty()) {
      how += fmt::format(
          " before it was ready, on {} with port {} (a port taken there ends a "
          "replica so; the next one gets another port)",
          r.node, r.port);
    }
    if (!r.ready_once) {
      ++s.failed_starts;
      s.last_failure = how;
    }
    Problem(s, how + "; a new replica replaces it");
    replace.push_back(r.shape);
    dirty_ = true;
    return true;
  });
  for (int32_t shape : replace) StartReplica(s, shape, now);
}

void ServingLoop::StartReplica(Served& s, int32_t shape, double now) {
  if (s.failed_starts >= options_.max_failed_starts) {
    Problem(s, fmt::format("no new replica started: {} in a row ended before they were ready "
                           "(the last: {})",
                           s.failed_starts, s.last_failure));
    return;
  }
  const sched::ServiceShape& sh = s.shapes[shape];
  const std::string& type = service_->cluster().catalog.Get(sh.type).name;
  const util::Result<int> port = PickPort();
  if (!port.ok()) return Problem(s, "no port for a replica: " + port.status().message());
  model::Job job;
  job.kind = model::JobKind::kInference;
  job.stacks = s.job.stacks;
  job.gang_size = job.min_workers = job.max_workers = sh.tp;
  job.throughput = {{type, 1}};  // only this type: the plan chose it
  job.priority = s.job.priority;
  job.preemptible = false;
  job.command = FilledCommand(s.job.command, *port, sh.tp, s.job.service->model);
  const std::optional<Reclaim> reclaim = ReclaimFor(sh);
  if (reclaim) job.pinned_devices = reclaim->pinned;
  nlohmann::json stacks = nlohmann::json::array();
  for (const model::StackRequirement& st : job.stacks) {
    stacks.push_back(st.min_version.empty() ? st.name : st.name + ">=" + st.min_version);
  }
  for (int tries = 0; tries < 10; ++tries) {
    job.name = fmt::format("{}.r{}", s.job.name, s.next_id++);
    nlohmann::json spec = {{"name", job.name},          {"kind", "inference"},
                           {"stacks", stacks},          {"gang_size", sh.tp},
                           {"throughput", {{type, 1}}}, {"preemptible", false},
                           {"priority", job.priority},  {"command", job.command}};
    if (reclaim) spec["pinned_devices"] = reclaim->pinned;
    auto submitted = service_->Submit(job, spec.dump(), "");
    if (submitted.ok()) {
      Replica r;
      r.id = s.next_id - 1;
      r.job = job.name;
      r.port = *port;
      r.shape = shape;
      r.device_type = type;
      r.submitted_s = now;
      if (reclaim) r.pinned = reclaim->pinned;
      if (reclaim && !reclaim->jobs.empty()) {
        s.drains_held_until_s = now + options_.hold_taken_back_s;
      }
      s.replicas.push_back(std::move(r));
      dirty_ = true;
      logger_->Info("service replica submitted",
                    {{"service", s.job.name}, {"job", job.name}, {"port", *port}});
      for (const std::string& lent : reclaim ? reclaim->jobs : std::vector<std::string>{}) {
        const std::string why = fmt::format(
            "preempted: service '{}' takes its device back for replica {}", s.job.name, job.name);
        auto preempted = service_->Preempt(lent, why);
        logger_->Info("service takes a lent device back",
                      {{"service", s.job.name},
                       {"job", lent},
                       {"replica", job.name},
                       {"error", preempted.ok() ? "" : preempted.status().message()}});
      }
      return;
    }
    if (submitted.status().code() != util::StatusCode::kAlreadyExists) {
      return Problem(s,
                     fmt::format("replica {} refused: {}", job.name, submitted.status().message()));
    }
  }
  Problem(s, "no free job name for a replica");
}

util::Result<int> ServingLoop::PickPort() {
  std::set<int> held;
  for (const auto& [name, s] : services_) {
    for (const Replica& r : s->replicas) held.insert(r.port);
  }
  if (options_.port_first == 0) {
    util::Result<int> port = FreePort(options_.host);
    for (int tries = 0; port.ok() && held.count(*port) != 0 && tries < 10; ++tries) {
      port = FreePort(options_.host);
    }
    return port;
  }
  const int count = options_.port_last - options_.port_first + 1;
  for (int i = 1; i <= count; ++i) {
    const int port =
        options_.port_first + (std::max(last_port_ - options_.port_first, -1) + i) % count;
    if (held.count(port) != 0) continue;
    last_port_ = port;
    return port;
  }
  return util::Status::Unavailable(
      fmt::format("every port of serving.ports ({}-{}) is held by a replica", options_.port_first,
                  options_.port_last));
}

void ServingLoop::RetireDrained(Served& s, double now) {
  const bool handed_over = std::none_of(s.replicas.begin(), s.replicas.end(), [](const Replica& r) {
    return !r.draining && r.state != "ready";
  });
  if (!handed_over) return;
  for (Replica& r : s.replicas) {
    if (!r.draining || r.cancelled) continue;
    if (r.handed_over_s == 0) r.handed_over_s = now;  // unpublished from now on
    if (now - r.handed_over_s < options_.unpublished_before_stop_s) continue;
    r.cancelled = true;
    if (auto cancelled = service_->Cancel(r.job); !cancelled.ok()) {
      r.message = "cancel: " + cancelled.status().message();
    }
  }
}

std::string ServingLoop::CloseInterval(Served& s, double now) {
  const double from = s.first_read_s ? std::max(s.interval_start_s, *s.first_read_s) : now;
  double requests = 0, pushed = 0;
  bool counted = false;
  for (const Round& r : s.rounds) {
    if (r.at_s <= from) continue;
    requests += r.requests;
    counted = counted || r.counted;
  }
  const auto in_interval = std::count_if(s.pushed.begin(), s.pushed.end(), [&](const auto& p) {
    return p.first > s.interval_start_s;
  });
  for (const auto& [at, rate] : s.pushed) pushed += at > s.interval_start_s ? rate : 0;
  // The replicas' count wins: it is what was served. A gateway's rate stands in where they
  // counted nothing (none ready yet, or servers that count no requests, like llama.cpp's).
  if (s.interval_start_s > 0 && now > from && counted) {
    s.interval_rates.emplace_back(requests / (now - from), Served::From::kReplicas);
  } else if (in_interval > 0) {
    s.interval_rates.emplace_back(pushed / static_cast<double>(in_interval),
                                  Served::From::kGateway);
  } else {
    s.interval_rates.emplace_back(s.rate ? s.rate->RateAt(SecondsOfDay(now)) : 0,
                                  Served::From::kCurve);
  }
  if (s.interval_rates.size() > static_cast<size_t>(sched::kScaleDownIntervals)) {
    s.interval_rates.erase(s.interval_rates.begin());
  }
  s.interval_start_s = now;
  const auto from_source = [&](Served::From source) {
    return std::count_if(s.interval_rates.begin(), s.interval_rates.end(),
                         [&](const auto& r) { return r.second == source; });
  };
  return fmt::format(
      "the rates of the last {} interval(s) of {:g} s ({} measured on the replicas, {} pushed by "
      "a gateway, the others from the service's rate curve at that time of day)",
      s.interval_rates.size(), options_.replan_every_s, from_source(Served::From::kReplicas),
      from_source(Served::From::kGateway));
}

void ServingLoop::Replan(Served& s, double now) {
  s.next_plan_s = now + options_.replan_every_s;
  const std::string source = CloseInterval(s, now);
  dirty_ = true;  // the interval's rate is kept, so that a restarted daemon forecasts on
  const std::string bursts = Forecast(s, now);
  const double forecast = s.plan.forecast_requests_per_s;
  std::optional<std::vector<int32_t>> targets = PlanTargets(s, forecast);
  if (!targets) return;
  s.plan.why = fmt::format("forecast {:.3g} requests/s: {}, plus {:g} % headroom{}. {}", forecast,
                           source, options_.headroom * 100, bursts, s.plan.why);
  std::vector<sched::ShapeReplicas> live;
  for (const sched::ServiceShape& sh : s.shapes) live.push_back({sh.tp, {}});
  for (const Replica& r : s.replicas) {
    if (r.draining) continue;
    const double outstanding =
        r.last ? r.last->running.value_or(0) + r.last->waiting.value_or(0) : 0;
    live[r.shape].live.push_back({r.id, static_cast<int64_t>(outstanding)});
  }
  const sched::ReplicaChanges changes = sched::ChangesToward({live}, {*targets});
  for (int32_t id : HoldTakenBack(s, changes.drain[0], now)) {
    for (Replica& r : s.replicas) r.draining = r.draining || r.id == id;
    dirty_ = true;
  }
  double carried = 0;  // requests/s the replicas kept carry within the SLO
  for (const Replica& r : s.replicas) carried += r.draining ? 0 : s.capacity[r.shape];
  for (const auto& [service, shape] : changes.start) {
    if (DeferTakeBack(s, shape, carried)) continue;
    StartReplica(s, shape, now);
    carried += s.capacity[shape];
  }
}

std::string ServingLoop::Forecast(Served& s, double now) {
  PlanView& plan = s.plan;
  plan.planned_at_s = now;
  plan.interval_rates.clear();
  for (const auto& [rate, from] : s.interval_rates) plan.interval_rates.push_back(rate);
  // The windows of the intervals' span, as the simulator takes them (sched::ForecastAt).
  plan.burst_rates.clear();
  plan.burst_window_s = 0;
  const auto windows = s.bursts.Since(now - sched::kScaleDownIntervals * options_.replan_every_s);
  for (const BurstWindows::Window& w : windows) {
    plan.burst_rates.push_back(w.rate);
    plan.burst_window_s += w.length_s / static_cast<double>(windows.size());
  }
  const double steady = sched::ForecastRequestRate(plan.interval_rates, {}, 0, options_.headroom);
  plan.forecast_requests_per_s = sched::ForecastRequestRate(plan.interval_rates, plan.burst_rates,
                                                            plan.burst_window_s, options_.headroom);
  plan.measured_requests_per_s =
      sched::MeasuredRequestRate(plan.interval_rates, plan.burst_rates, plan.burst_window_s);
  if (windows.empty()) return "; no burst window measured";
  const std::string counted = fmt::format("{} window(s) of {:.3g} s measured on the replicas",
                                          windows.size(), plan.burst_window_s);
  if (plan.forecast_requests_per_s <= steady) {
    return fmt::format("; no burst beyond Poisson's in {}", counted);
  }
  return fmt::format(", raised from {:.3g} by bursts in {} (plan.burst_rates)", steady, counted);
}

std::optional<std::vector<int32_t>> ServingLoop::PlanTargets(Served& s, double forecast) {
  const model::Cluster& cluster = service_->cluster();
  const MeasuredLoad measured = Measure(s, service_->WallNow());
  if (measured.mean_input_tokens > 0) s.measured_input_tokens = measured.mean_input_tokens;
  if (measured.mean_output_tokens > 0) s.measured_output_tokens = measured.mean_output_tokens;
  const double input = s.measured_input_tokens > 0 ? s.measured_input_tokens : s.input_tokens;
  const double output = s.measured_output_tokens > 0 ? s.measured_output_tokens : s.output_tokens;
  sched::ServiceDemand demand;
  demand.requests_per_s = forecast;
  demand.measured_requests_per_s = std::min(forecast, s.plan.measured_requests_per_s);
  demand.startup_h = (kStartupFixedS + s.served.weight_bytes / kLoadBandwidth) / 3600;
  std::string capacities;
  std::map<std::pair<int32_t, int32_t>, int32_t> free;
  for (size_t k = 0; k < s.shapes.size(); ++k) {
    const sched::ServiceShape& sh = s.shapes[k];
    const model::DeviceType& type = cluster.catalog.Get(sh.type);
    const cost::ServingModel m(s.served, type, sh.tp, calibrations_.For(type.name),
                               sh.link_bandwidth);
    const double capacity = m.CapacityAt(s.slo, input, output).requests_per_s;
    s.capacity.resize(s.shapes.size());
    s.capacity[k] = capacity;
    int32_t live = 0;
    for (const Replica& r : s.replicas) {
      if (r.draining || r.shape != static_cast<int32_t>(k)) continue;
      ++live;
      if (auto node = cluster.FindNode(r.node)) free[{sh.type.value(), node->value()}] += sh.tp;
    }
    demand.shapes.push_back({sh.type.value(), sh.tp, sh.usd_per_hour, capacity, live});
    capacities +=
        fmt::format("{}{}: {:.3g} requests/s at ${:.2f}/h", capacities.empty() ? "" : "; ",
                    ShapeName(cluster.catalog, sh), capacity, sh.usd_per_hour);
  }
  auto nodes = service_->Nodes(cluster.nodes.size() + 1, std::nullopt);
  if (!nodes.ok()) {
    s.plan.why = "no plan: the nodes could not be read: " + nodes.status().message();
    return std::nullopt;
  }
  // Lent: devices that preemptible jobs (training) hold. A replica placed on one preempts the
  // job, which gets the daemon's stop_grace to write its checkpoint.
  int32_t lent = 0;
  for (const NodeView& n : nodes->nodes) {
    const auto node = cluster.FindNode(n.name);
    for (const DeviceView& d : n.devices) {
      const auto type = cluster.catalog.FindId(d.type);
      if (!node || !type) continue;
      const bool held_by_preemptible = d.state == "busy" && Lendable(d.job);
      lent += held_by_preemptible;
      if (d.state == "free" || held_by_preemptible) ++free[{type->value(), node->value()}];
    }
  }
  const sched::ReplicaPlan plan = sched::PlanReplicas({demand}, free, kPlanSeconds);
  if (!plan.solved) {
    s.plan.why = "no plan (" + plan.message + "); the replicas are kept as they are";
    return std::nullopt;
  }
  s.plan.replicas.clear();
  std::string chosen;
  for (size_t k = 0; k < s.shapes.size(); ++k) {
    if (plan.replicas[0][k] == 0) continue;
    const std::string name = ShapeName(cluster.catalog, s.shapes[k]);
    s.plan.replicas[name] = plan.replicas[0][k];
    chosen += fmt::format("{}{} x {}", chosen.empty() ? "" : ", ", name, plan.replicas[0][k]);
  }
  s.plan.why = fmt::format(
      "One replica carries, within the SLO, for requests of {:.0f} prompt and {:.0f} generated "
      "tokens: {}. Chosen: {}, the least hourly cost that carries the forecast (a service keeps "
      "at least one replica).",
      input, output, capacities, chosen);
  s.plan.why += PlanCaveats(plan, lent);
  return plan.replicas[0];
}

MeasuredLoad ServingLoop::Measure(const Served& s, double now) const {
  MeasuredLoad m;
  if (!s.first_read_s) return m;
  m.window_s = std::min(options_.window_s, now - *s.first_read_s);
  Round sum;
  for (const Round& r : s.rounds) {
    if (r.at_s < now - options_.window_s) continue;
    sum.requests += r.requests;
    sum.prompt_tokens += r.prompt_tokens;
    sum.generation_tokens += r.generation_tokens;
    AddHistogram(sum.ttft, r.ttft);
    AddHistogram(sum.tpot, r.tpot);
  }
  if (m.window_s > 0) m.requests_per_s = sum.requests / m.window_s;
  if (sum.requests > 0) {
    m.mean_input_tokens = sum.prompt_tokens / sum.requests;
    m.mean_output_tokens = sum.generation_tokens / sum.requests;
  }
  const double q = s.slo.percentile / 100;
  m.ttft_p50_s = HistogramQuantile(sum.ttft, 0.5);
  m.ttft_slo_s = HistogramQuantile(sum.ttft, q);
  m.tpot_p50_s = HistogramQuantile(sum.tpot, 0.5);
  m.tpot_slo_s = HistogramQuantile(sum.tpot, q);
  for (const Replica& r : s.replicas) {
    if (!r.last || r.state != "ready") continue;
    m.running += r.last->running.value_or(0);
    m.waiting += r.last->waiting.value_or(0);
  }
  return m;
}

ServingView ServingLoop::ViewOf(const Served& s, double now) const {
  ServingView v;
  v.name = s.job.name;
  v.model = s.job.service->model;
  v.slo = s.slo;
  // Published: ready and not draining; a draining replica stays published until another one is
  // ready, as it serves still.
  const bool any_kept_ready = std::any_of(s.replicas.begin(), s.replicas.end(), [](const auto& r) {
    return !r.draining && r.state == "ready";
  });
  for (const Replica& r : s.replicas) {
    const bool published = r.state == "ready" && (!r.draining || !any_kept_ready);
    const double capacity =
        r.shape < static_cast<int32_t>(s.capacity.size()) ? s.capacity[r.shape] : 1;
    v.replicas.push_back(
        {r.job, r.host.empty() ? "" : fmt::format("http://{}:{}", r.host, r.port),
         r.draining ? "draining" : r.state, r.node, r.device_type, s.shapes[r.shape].tp, r.message,
         published ? std::max(1, static_cast<int32_t>(std::lround(capacity))) : 0});
  }
  v.measured = Measure(s, now);
  v.plan = s.plan;
  if (!s.pushed.empty()) {
    v.pushed_requests_per_s = s.pushed.back().second;
    v.pushed_at_s = s.pushed.back().first;
  }
  v.message = s.message;
  return v;
}

}  // namespace hetsched::svc
