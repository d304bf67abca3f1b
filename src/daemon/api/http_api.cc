#include "daemon/api/http_api.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "daemon/api/embedded.h"
#include "daemon/api/listen.h"
#include "daemon/api/paging.h"
#include "daemon/api/replies.h"
#include "daemon/api/serving_json.h"
#include "daemon/job_request.h"
#include "daemon/plan_request.h"

namespace hetsched::svc {

namespace {

using nlohmann::json;

json TimeOrNull(double unix_s) { return unix_s < 0 ? json(nullptr) : json(unix_s); }

json JobJson(const JobView& v) {
  return {{"name", v.name},
          {"tenant", v.tenant.empty() ? json(nullptr) : json(v.tenant)},
          {"state", JobStateName(v.state)},
          {"kind", v.kind},
          {"gang", v.gang},
          {"stacks", v.stacks},
          {"submitted", v.submitted_s},
          {"started", TimeOrNull(v.started_s)},
          {"ended", TimeOrNull(v.ended_s)},
          {"exit_status", v.exit_status ? json(*v.exit_status) : json(nullptr)},
          {"device_type", v.device_type.empty() ? json(nullptr) : json(v.device_type)},
          {"devices", v.devices},
          {"preemptions", v.preemptions},
          {"attempt", v.attempt},
          {"attained_service_s", v.attained_s ? json(*v.attained_s) : json(nullptr)},
          {"message", v.message}};
}

json NodeJson(const NodeView& n) {
  json devices = json::array();
  for (const DeviceView& d : n.devices) {
    devices.push_back({{"index", d.index}, {"type", d.type}, {"state", d.state}, {"job", d.job}});
  }
  return {{"name", n.name},
          {"rack", n.rack},
          {"drained", n.drained},
          {"power_state", n.power_state},
          {"power_since_s", n.power_since_s},
          {"devices", devices}};
}

// One sample of GET /v1/history.
json SampleJson(const StoredSample& s) {
  json types = json::array();
  for (const StoredSample::Type& t : s.types) {
    types.push_back({{"type", t.type},
                     {"used", t.used},
                     {"offered", t.offered},
                     {"utilization", t.offered > 0 ? static_cast<double>(t.used) / t.offered : 0}});
  }
  return {{"at", s.at_s},
          {"power_w", s.power_w},
          {"jobs", {{"queued", s.jobs_queued}, {"running", s.jobs_running}}},
          {"types", types}};
}

json KubernetesNodeJson(const k8s::ExtenderNodeView& n) {
  const k8s::NodeInfo& i = n.info;
  json stacks = json::array();
  for (const model::SoftwareStack& st : i.device.stacks) stacks.push_back(model::ToString(st));
  return {{"name", i.name},
          {"resource", i.resource},
          {"accelerators", i.accelerators},
          {"device_type", i.problem.empty() ? i.device.name : ""},
          {"stacks", stacks},
          {"driver_known", i.driver_known},
          {"memory_bytes", i.device.memory_bytes},
          {"rack", i.rack},
          {"schedulable", i.schedulable},
          {"used", n.used},
          {"reserved", n.reserved},
          {"problem", i.problem}};
}

// The `limit` of a list route: kDefaultPageLimit when not given.
util::Result<size_t> LimitOf(const httplib::Request& req) {
  if (!req.has_param("limit")) return kDefaultPageLimit;
  return ParsePageLimit(req.get_param_value("limit"));
}

// A page of a list: `body` with {KEY: [...], "next_cursor": a cursor or null} added, and when
// more remain a Link header (RFC 8288) to the next page: `path`, `query` (the page's other
// parameters, each ending in '&') and the cursor.
void ReplyPage(httplib::Response& res, json body, const char* key, json list,
               const std::string& path, const std::string& query,
               const std::optional<std::string>& next) {
  body[key] = std::move(list);
  body["next_cursor"] = next ? json(*next) : json(nullptr);
  if (next) {
    res.set_header("Link", fmt::format("<{}?{}cursor={}>; rel=\"next\"", path, query, *next));
  }
  Reply(res, 200, body);
}

// Compares without an early exit, so the time taken does not tell how much of a guess matched.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0;
    const unsigned char y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

// What a tenant's token is told of any service: that there is none of that name.
util::Status NoService(const std::string& name) {
  return util::Status::NotFound(fmt::format("service '{}': no such service", name));
}

}  // namespace

util::Result<Role> ParseRole(std::string_view text) {
  if (text == "read") return Role::kRead;
  if (text == "submit") return Role::kSubmit;
  if (text == "admin") return Role::kAdmin;
  return util::Status::InvalidArgument(
      fmt::format("role '{}' is unknown (expected read, submit or admin)", text));
}

HttpApi::HttpApi(HttpApiOptions options, Service* service, Logger* logger, k8s::Extender* extender,
                 ServingLoop* serving)
    : options_(std::move(options)),
      service_(service),
      logger_(logger),
      extender_(extender),
      serving_(serving),
      server_(std::make_unique<httplib::Server>()) {}

HttpApi::~HttpApi() { Stop(); }

util::Result<std::unique_ptr<HttpApi>> HttpApi::Create(HttpApiOptions options, Service* service,
                                                       MetricsRegistry* metrics, Logger* logger,
                                                       k8s::Extender* extender,
                                                       ServingLoop* serving) {
  if (options.threads < 1) return util::Status::InvalidArgument("API threads must be >= 1");
  if (extender && (options.extender_prefix.empty() || options.extender_prefix[0] != '/' ||
                   options.extender_prefix.back() == '/')) {
    return util::Status::InvalidArgument(
        fmt::format("extender prefix '{}': expected a path like /k8s (a leading slash, none at "
                    "the end)",
                    options.extender_prefix));
  }
  auto api =
      std::unique_ptr<HttpApi>(new HttpApi(std::move(options), service, logger, extender, serving));
  api->Route(metrics);
  api->SetErrorHandler();
  httplib::Server& s = *api->server_;
  const int threads = api->options_.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(extender ? kMaxExtenderRequestBytes : kMaxJobRequestBytes);
  // Clients that submit in a loop keep their connection (httplib closes after 5 by default).
  s.set_keep_alive_max_count(100000);
  // Replies are small and written in pieces: without this, Nagle's algorithm and delayed ACKs
  // hold each one for tens of milliseconds.
  s.set_tcp_nodelay(true);
  const auto timeout = std::chrono::duration<double>(api->options_.request_timeout_s);
  s.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  s.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  const std::string& host = api->options_.host;
  api->port_ = BindServer(s, host, api->options_.port, logger);
  if (api->port_ <= 0) {
    return util::Status::InvalidArgument(
        fmt::format("cannot listen on {}:{}: the port is in use (another hetsched serve?), or the "
                    "host is not an address of this machine; choose another with --listen",
                    host, api->options_.port));
  }
  return api;
}

void HttpApi::Start() {
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listen_ended_ = true;
  });
}

void HttpApi::Stop() {
  if (!thread_.joinable()) return;
  // stop() does nothing before the server runs: right after Start, join would wait forever.
  while (!server_->is_running() && !listen_ended_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_->stop();
  thread_.join();
}

void HttpApi::Route(MetricsRegistry* metrics) {
  auto latency = metrics->AddHistogram(
      "hetsched_api_request_seconds", "Wall time to answer an API request, by route.",
      {1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1, 3}, {"route"});
  auto requests =
      metrics->AddCounter("hetsched_api_requests_total",
                          "API requests answered, by route and status.", {"route", "code"});
  // Registration fails only for a programming error (a duplicate name).
  if (!latency.ok() || !requests.ok()) std::abort();
  latency_.emplace(*latency);
  requests_.emplace(*requests);
  RouteOperations(metrics);
  if (extender_) RouteExtender();
  if (service_) {
    RouteJobs();
    if (serving_) RouteServices();
    RouteNodes();
    RouteCluster();
    RouteHistory();
    RouteTenants();
    On("GET", "/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(DashboardHtml()), "text/html; charset=utf-8");
    });
  }
  openapi_ = ServedOpenApi();
  // httplib 0.11 bounds a body by its Content-Length only, and inflates gzip and brotli bodies
  // without a bound, before any handler (the token check included) runs: a few KiB could take
  // gigabytes. Compressed bodies are refused unread.
  server_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_header("Content-Encoding") ||
        req.get_header_value("Content-Encoding") == "identity") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ReplyError(res, 415, "bad_request", "send the body uncompressed (no Content-Encoding)");
    res.set_header("Connection", "close");
    return httplib::Server::HandlerResponse::Handled;
  });
}

HttpApi::Handler HttpApi::Guarded(std::string route, Role need, Handler handler, bool open) {
  return Guarded(
      std::move(route), need,
      ScopedHandler([handler = std::move(handler)](const TenantScope&, const httplib::Request& req,
                                                   httplib::Response& res) { handler(req, res); }),
      open);
}

HttpApi::Handler HttpApi::Guarded(std::string route, Role need, ScopedHandler handler, bool open) {
  return [this, route, need, handler, latency = *latency_, requests = *requests_, open](
             const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool write = req.method != "GET" && req.method != "HEAD";
    const std::string auth = req.get_header_value("Authorization");
    std::optional<Role> role;
    TenantScope scope;
    if (auth.rfind("Bearer ", 0) == 0) {
      const std::string_view given = std::string_view(auth).substr(7);
      for (const ApiToken& t : options_.tokens) {
        if (!ConstantTimeEquals(given, t.token)) continue;
        role = t.role;
        if (!t.tenant.empty()) scope = t.tenant;
      }
    }
    if (open) role = need;
    if (!role && !auth.empty()) {
      res.set_header("WWW-Authenticate", "Bearer");
      ReplyError(res, 401, "unauthorized", "the token is not valid");
    } else if (!role && (write || need > Role::kRead || !options_.anonymous_read)) {
      res.set_header("WWW-Authenticate", "Bearer");
      ReplyError(res, 401, "unauthorized",
                 "this request needs a token: send 'Authorization: Bearer TOKEN'");
    } else if (role.value_or(Role::kRead) < need) {
      ReplyError(
          res, 403, "forbidden",
          fmt::format("this request needs the {} role", need == Role::kAdmin ? "admin" : "submit"));
    } else {
      try {
        handler(scope, req, res);
      } catch (const std::exception& e) {
        logger_->Error("request failed", {{"route", route}, {"error", e.what()}});
        ReplyError(res, 500, "internal", "the request failed inside the daemon");
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (auto h = latency.Get({route}); h.ok()) h->Observe(seconds);
    // A handler that only sets content leaves the status to httplib, which makes it 200.
    const int code = res.status == -1 ? 200 : res.status;
    if (auto c = requests.Get({route, std::to_string(code)}); c.ok()) c->Inc();
  };
}

void HttpApi::RouteOperations(MetricsRegistry* metrics) {
  On("GET", "/healthz", [this](const httplib::Request&, httplib::Response& res) {
    // Without the service's lock: a scheduling pass that holds it (the first after a restart
    // re-places every job that ran) does not delay the answer.
    if (service_) {
      if (auto st = service_->Health(); !st.ok()) {
        Reply(res, 503, {{"status", "unavailable"}, {"message", st.message()}});
        return;
      }
    }
    if (extender_ && !extender_->ready()) {
      Reply(res, 503,
            {{"status", "unavailable"},
             {"message", "the node cache has not read the cluster's nodes and pods yet"}});
      return;
    }
    Reply(res, 200, {{"status", "ok"}});
  });

  On("GET", "/metrics",
     Guarded("/metrics", Role::kRead,
             [this, metrics](const httplib::Request&, httplib::Response& res) {
               // Without waiting for recovery or the first pass after it: the gauges keep
               // their last values then, and the header says why.
               if (service_) {
                 if (auto st = service_->RefreshGauges(); !st.ok()) {
                   res.set_header("Warning",
                                  fmt::format("199 - \"gauges not refreshed: {}\"", st.message()));
                 }
               }
               res.set_content(metrics->Render(), std::string(kMetricsContentType));
             }));

  On("GET", "/openapi.json", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(openapi_, "application/json");
  });
}

void HttpApi::RouteExtender() {
  const auto post = [&](const std::string& verb,
                        k8s::ExtenderReply (k8s::Extender::*call)(std::string_view)) {
    const std::string route = options_.extender_prefix + "/" + verb;
    On("POST", route,
       Guarded(
           route, Role::kRead,
           [this, call](const httplib::Request& req, httplib::Response& res) {
             k8s::ExtenderReply reply = (extender_->*call)(req.body);
             res.status = reply.status;
             res.set_content(std::move(reply.body), "application/json");
           },
           /*open=*/true));
  };
  post("filter", &k8s::Extender::Filter);
  post("prioritize", &k8s::Extender::Prioritize);
  post("bind", &k8s::Extender::Bind);
  post("preempt", &k8s::Extender::Preempt);
  On("GET", "/v1/k8s/nodes",
     Guarded("/v1/k8s/nodes", Role::kRead,
             [this](const httplib::Request& req, httplib::Response& res) {
               auto limit = LimitOf(req);
               if (!limit.ok()) return ReplyStatus(res, limit.status());
               std::string after;
               if (req.has_param("cursor")) {
                 auto read = ReadKubernetesNodeCursor(req.get_param_value("cursor"));
                 if (!read.ok()) return ReplyStatus(res, read.status());
                 after = std::move(read).value();
               }
               json list = json::array();
               std::optional<std::string> next;
               // By name: a node that joins between pages is shown when its name is still ahead.
               for (const k8s::ExtenderNodeView& n : extender_->Nodes()) {
                 if (n.info.name <= after) continue;
                 if (list.size() == *limit) {
                   next = KubernetesNodeCursor(list.back()["name"].get<std::string>());
                   break;
                 }
                 list.push_back(KubernetesNodeJson(n));
               }
               ReplyPage(res, {{"synced", extender_->ready()}}, "nodes", std::move(list),
                         "/v1/k8s/nodes", fmt::format("limit={}&", *limit), next);
             }));
}

void HttpApi::RouteJobs() {
  On("POST", "/v1/jobs",
     Guarded("/v1/jobs", Role::kSubmit,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               auto parsed = ParseJobRequest(req.body, service_->cluster().catalog);
               if (!parsed.ok()) return ReplyStatus(res, parsed.status());
               if (!TakeForTenant(scope, *parsed, res)) return;
               if (parsed->job.kind == model::JobKind::kService) {
                 return AddService(std::move(parsed->job), std::move(parsed->spec_json), res);
               }
               const std::string key = req.get_header_value("Idempotency-Key");
               if (key.size() > 256) {
                 return ReplyError(res, 400, "invalid_argument",
                                   "Idempotency-Key: longer than 256 characters");
               }
               auto submitted = service_->Submit(std::move(parsed->job), parsed->spec_json, key);
               if (!submitted.ok()) return ReplyStatus(res, submitted.status());
               json body = JobJson(submitted->job);
               body["speed_assumed"] = parsed->speed_assumed;
               if (!submitted->created) res.set_header("Idempotency-Replayed", "true");
               Reply(res, submitted->created ? 201 : 200, body);
             }));

  On("GET", "/v1/jobs",
     Guarded("/v1/jobs", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               JobFilter filter;
               filter.tenant = scope;
               std::string query;
               if (const std::string state = req.get_param_value("state"); !state.empty()) {
                 filter.state = ParseJobState(state);
                 if (!filter.state) {
                   return ReplyError(res, 400, "invalid_argument",
                                     fmt::format("state: '{}' is not a job state (expected {})",
                                                 state, JobStateNames()));
                 }
                 query = fmt::format("state={}&", state);
               }
               auto limit = LimitOf(req);
               if (!limit.ok()) return ReplyStatus(res, limit.status());
               filter.limit = *limit;
               if (req.has_param("cursor")) {
                 auto after = ReadJobCursor(req.get_param_value("cursor"), filter.state);
                 if (!after.ok()) return ReplyStatus(res, after.status());
                 filter.after = *after;
               }
               auto page = service_->List(filter);
               if (!page.ok()) return ReplyStatus(res, page.status());
               json list = json::array();
               for (const JobView& v : page->jobs) list.push_back(JobJson(v));
               std::optional<std::string> next;
               if (page->next) next = JobCursor(*page->next, filter.state);
               ReplyPage(res, json::object(), "jobs", std::move(list), "/v1/jobs",
                         fmt::format("{}limit={}&", query, filter.limit), next);
             }));

  On("GET", R"(/v1/jobs/([^/]+))",
     Guarded("/v1/jobs/{name}", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               auto job = service_->Get(req.matches[1], scope);
               if (!job.ok()) return ReplyStatus(res, job.status());
               Reply(res, 200, JobJson(*job));
             }));

  On("DELETE", R"(/v1/jobs/([^/]+))",
     Guarded("/v1/jobs/{name}", Role::kSubmit,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               auto job = service_->Cancel(req.matches[1], scope);
               if (!job.ok()) return ReplyStatus(res, job.status());
               Reply(res, 202, JobJson(*job));
             }));

  On("GET", R"(/v1/jobs/([^/]+)/why)",
     Guarded("/v1/jobs/{name}/why", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               auto why = service_->Why(req.matches[1], scope);
               if (!why.ok()) return ReplyStatus(res, why.status());
               Reply(res, 200, {{"name", req.matches[1]}, {"why", *why}});
             }));
}

bool HttpApi::TakeForTenant(const TenantScope& scope, JobRequest& request,
                            httplib::Response& res) const {
  if (!scope) return true;
  const std::string& tenant = *scope;
  if (request.job.kind == model::JobKind::kService) {
    ReplyError(res, 403, "forbidden",
               fmt::format("request body: kind: a service belongs to no tenant (expected a job of "
                           "tenant '{}'; a token without a tenant submits services)",
                           tenant));
    return false;
  }
  if (request.job.tenant.empty()) {
    // Stored with its tenant: a restart reads the job back from its spec.
    json spec = json::parse(request.spec_json);
    spec["tenant"] = tenant;
    request.spec_json = spec.dump(-1, ' ', false, json::error_handler_t::replace);
    request.job.tenant = tenant;
  } else if (request.job.tenant != tenant) {
    ReplyError(res, 403, "forbidden",
               fmt::format("request body: tenant: '{}' is not this token's tenant (expected '{}' "
                           "or no tenant)",
                           request.job.tenant, tenant));
    return false;
  }
  return true;
}

void HttpApi::AddService(model::Job job, std::string spec_json, httplib::Response& res) {
  if (!serving_) {
    return ReplyError(res, 400, "invalid_argument",
                      "request body: kind: 'service': this daemon runs no services");
  }
  auto added = serving_->Add(std::move(job), std::move(spec_json));
  if (!added.ok()) return ReplyStatus(res, added.status());
  Reply(res, 201, ServingJson(*added));
}

void HttpApi::RouteServices() {
  On("GET", "/v1/services",
     Guarded("/v1/services", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request&, httplib::Response& res) {
               json list = json::array();
               // Services belong to no tenant: a tenant's token knows none.
               if (!scope) {
                 // Not an empty list while the daemon has not read its services back.
                 if (auto st = service_->Health(); !st.ok()) return ReplyStatus(res, st);
                 if (auto st = serving_->Ready(); !st.ok()) return ReplyStatus(res, st);
                 for (const ServingView& v : serving_->List()) {
                   list.push_back(ServiceEndpointsJson(v));
                 }
               }
               Reply(res, 200, {{"services", std::move(list)}});
             }));
  On("POST", R"(/v1/services/([^/]+)/load)",
     Guarded("/v1/services/{name}/load", Role::kSubmit,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               if (scope) return ReplyStatus(res, NoService(req.matches[1]));
               auto rate = ParsePushedLoad(req.body);
               if (!rate.ok()) return ReplyStatus(res, rate.status());
               auto view = serving_->PushLoad(req.matches[1], *rate);
               if (!view.ok()) return ReplyStatus(res, view.status());
               Reply(res, 200, ServingJson(*view));
             }));
  On("GET", R"(/v1/services/([^/]+))",
     Guarded("/v1/services/{name}", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               // Services belong to no tenant: a tenant's token knows none.
               if (scope) return ReplyStatus(res, NoService(req.matches[1]));
               auto view = serving_->Get(req.matches[1]);
               if (!view.ok()) return ReplyStatus(res, view.status());
               Reply(res, 200, ServingJson(*view));
             }));
  On("DELETE", R"(/v1/services/([^/]+))",
     Guarded("/v1/services/{name}", Role::kSubmit,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               if (scope) return ReplyStatus(res, NoService(req.matches[1]));
               auto view = serving_->Remove(req.matches[1]);
               if (!view.ok()) return ReplyStatus(res, view.status());
               Reply(res, 202, ServingJson(*view));
             }));
}

void HttpApi::RouteNodes() {
  On("GET", "/v1/nodes",
     Guarded("/v1/nodes", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               auto limit = LimitOf(req);
               if (!limit.ok()) return ReplyStatus(res, limit.status());
               std::optional<int32_t> after;
               if (req.has_param("cursor")) {
                 auto read = ReadNodeCursor(req.get_param_value("cursor"));
                 if (!read.ok()) return ReplyStatus(res, read.status());
                 after = *read;
               }
               auto page = service_->Nodes(*limit, after, scope);
               if (!page.ok()) return ReplyStatus(res, page.status());
               json list = json::array();
               for (const NodeView& n : page->nodes) list.push_back(NodeJson(n));
               std::optional<std::string> next;
               if (page->next_after) next = NodeCursor(*page->next_after);
               ReplyPage(res, json::object(), "nodes", std::move(list), "/v1/nodes",
                         fmt::format("limit={}&", *limit), next);
             }));

  On("GET", R"(/v1/nodes/([^/]+))",
     Guarded("/v1/nodes/{node}", Role::kRead,
             [this](const TenantScope& scope, const httplib::Request& req, httplib::Response& res) {
               auto h = service_->Node(req.matches[1], 100, scope);
               if (!h.ok()) return ReplyStatus(res, h.status());
               json events = json::array();
               for (const StoredEvent& e : h->events) {
                 events.push_back({{"at", e.at_s}, {"kind", e.kind}, {"detail", e.detail}});
               }
               json body = NodeJson(h->node);
               body["history"] = events;
               body["older_history"] = h->older_events;
               Reply(res, 200, body);
             }));

  for (const bool drain : {true, false}) {
    const std::string verb = drain ? "drain" : "undrain";
    On("POST", "/v1/nodes/([^/]+)/" + verb,
       Guarded("/v1/nodes/{node}/" + verb, Role::kAdmin,
               [this, drain](const httplib::Request& req, httplib::Response& res) {
                 auto node = service_->SetDrained(req.matches[1], drain);
                 if (!node.ok()) return ReplyStatus(res, node.status());
                 Reply(res, 200, NodeJson(*node));
               }));
  }
}

void HttpApi::RouteCluster() {
  On("GET", "/v1/cluster",
     Guarded("/v1/cluster", Role::kRead, [this](const httplib::Request&, httplib::Response& res) {
       auto c = service_->Cluster();
       if (!c.ok()) return ReplyStatus(res, c.status());
       json types = json::array();
       for (const TypeSummary& t : c->types) {
         types.push_back({{"type", t.type},
                          {"capacity", t.capacity},
                          {"offered", t.offered},
                          {"used", t.used},
                          {"utilization", t.utilization},
                          {"power_w", t.power_w}});
       }
       json jobs = json::object();
       for (const JobState state : kJobStates) {
         jobs[std::string(JobStateName(state))] = c->jobs_in(state);
       }
       Reply(res, 200,
             {{"policy", c->policy},
              {"backend", c->backend},
              {"now_s", c->now_s},
              {"jobs", jobs},
              {"power",
               {{"draw_w", c->power_w},
                {"energy_j", c->energy_j},
                {"nodes_off", c->nodes_off},
                {"transitions", c->power_transitions}}},
              {"types", types}});
     }));

  On("GET", "/v1/whatif",
     Guarded("/v1/whatif", Role::kSubmit,
             [this](const httplib::Request& req, httplib::Response& res) {
               const std::string policy = req.get_param_value("policy");
               if (policy.empty()) {
                 return ReplyError(res, 400, "invalid_argument",
                                   "policy: missing (expected ?policy=NAME, e.g. fifo or las-het)");
               }
               auto results = service_->WhatIf(policy);
               if (!results.ok()) return ReplyStatus(res, results.status());
               json list = json::array();
               for (const WhatIfResult& w : *results) {
                 list.push_back({{"policy", w.policy},
                                 {"jobs", w.jobs},
                                 {"skipped", w.skipped},
                                 {"makespan_s", w.makespan_s},
                                 {"avg_jct_s", w.avg_jct_s},
                                 {"p99_jct_s", w.p99_jct_s},
                                 {"preemptions", w.preemptions}});
               }
               Reply(res, 200, {{"current", list[0]}, {"candidate", list[1]}});
             }));

  On("POST", "/v1/plan",
     Guarded("/v1/plan", Role::kSubmit,
             [this](const httplib::Request& req, httplib::Response& res) {
               auto request = ParsePlanRequest(req.body);
               if (!request.ok()) return ReplyStatus(res, request.status());
               auto plan = service_->Plan(*request);
               if (!plan.ok()) return ReplyStatus(res, plan.status());
               res.status = 200;
               res.set_content(plan->dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
                               "application/json");
             }));
}

void HttpApi::RouteHistory() {
  On("GET", "/v1/history",
     Guarded("/v1/history", Role::kRead,
             [this](const httplib::Request& req, httplib::Response& res) {
               auto limit = LimitOf(req);
               if (!limit.ok()) return ReplyStatus(res, limit.status());
               HistoryPosition from;
               if (req.has_param("cursor")) {
                 if (req.has_param("since")) {
                   return ReplyError(res, 400, "invalid_argument",
                                     "since: not with a cursor (the cursor keeps the first "
                                     "page's since)");
                 }
                 auto read = ReadHistoryCursor(req.get_param_value("cursor"));
                 if (!read.ok()) return ReplyStatus(res, read.status());
                 from = *read;
               } else if (req.has_param("since")) {
                 auto since = ParseSince(req.get_param_value("since"), service_->WallNow());
                 if (!since.ok()) return ReplyStatus(res, since.status());
                 from.since_s = *since;
               }
               auto page = service_->History(from.since_s, from.after, *limit);
               if (!page.ok()) return ReplyStatus(res, page.status());
               json list = json::array();
               for (const StoredSample& s : page->samples) list.push_back(SampleJson(s));
               std::optional<std::string> next;
               if (page->next_after) next = HistoryCursor({from.since_s, *page->next_after});
               const ServiceOptions& o = service_->options();
               ReplyPage(res, {{"every_s", o.history_every_s}, {"kept", o.history_kept}}, "samples",
                         std::move(list), "/v1/history", fmt::format("limit={}&", *limit), next);
             }));
}

void HttpApi::On(const std::string& method, const std::string& pattern, Handler handler) {
  methods_.emplace_back(std::regex(pattern), method);
  if (method == "GET") {
    server_->Get(pattern, std::move(handler));
  } else if (method == "POST") {
    server_->Post(pattern, std::move(handler));
  } else {
    server_->Delete(pattern, std::move(handler));
  }
}

std::set<std::string> HttpApi::MethodsAt(const std::string& path) const {
  std::set<std::string> methods;
  for (const auto& [pattern, method] : methods_) {
    if (std::regex_match(path, pattern)) methods.insert(method);
  }
  return methods;
}

std::string HttpApi::AllowedMethods(const std::string& path) const {
  std::set<std::string> methods = MethodsAt(path);
  if (methods.count("GET")) methods.insert("HEAD");  // httplib answers HEAD with the GET route
  std::string out;
  for (const std::string& m : methods) out += (out.empty() ? "" : ", ") + m;
  return out;
}

std::string HttpApi::ServedOpenApi() const {
  // The document names the extender's verbs under the default prefix.
  constexpr std::string_view kDocumentedPrefix = "/k8s/";
  static const std::set<std::string, std::less<>> kMethods = {"get", "post", "delete"};
  static const std::regex kParameter(R"(\{[^/}]+\})");
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(OpenApiDocument());
  nlohmann::ordered_json paths = nlohmann::ordered_json::object();
  for (const auto& [path, item] : doc["paths"].items()) {
    std::string served = path;
    if (extender_ && path.rfind(kDocumentedPrefix, 0) == 0) {
      served = options_.extender_prefix + path.substr(kDocumentedPrefix.size() - 1);
    }
    // A path parameter matches a route's ([^/]+) as any one segment does.
    const std::string sample = std::regex_replace(served, kParameter, "x");
    const std::set<std::string> routed = MethodsAt(sample);
    nlohmann::ordered_json kept = nlohmann::ordered_json::object();
    bool any = false;
    for (const auto& [key, value] : item.items()) {
      if (kMethods.count(key)) {  // an operation; other keys (parameters) stay with the path
        std::string upper = key;
        for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (!routed.count(upper)) continue;
        any = true;
      }
      kept[key] = value;
    }
    if (any) paths[served] = std::move(kept);
  }
  doc["paths"] = std::move(paths);
  if (extender_) {
    doc["info"]["description"] = fmt::format(
        "hetsched serve --backend kubernetes: kube-scheduler's extender verbs under {}, the node "
        "cache's view, health and metrics (docs/kubernetes.md). No job routes in this mode.",
        options_.extender_prefix);
  }
  return doc.dump(2) + "\n";
}

// Unknown routes, methods a route does not serve, and httplib's own refusals (413 for a body
// over the limit) in JSON.
void HttpApi::SetErrorHandler() {
  const size_t body_limit = extender_ ? kMaxExtenderRequestBytes : kMaxJobRequestBytes;
  server_->set_error_handler([this, body_limit](const httplib::Request& req,
                                                httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string allowed = res.status == 404 ? AllowedMethods(req.path) : "";
    if (!allowed.empty()) {
      res.set_header("Allow", allowed);
      ReplyError(res, 405, "method_not_allowed",
                 fmt::format("{} {}: not served (allowed: {})", req.method, req.path, allowed));
    } else if (res.status == 404) {
      ReplyError(res, 404, "not_found", "no such route (see /openapi.json)");
    } else if (res.status == 413 &&
               req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) ==
                   0) {
      // httplib caps form bodies at 8 KiB whatever the payload limit (curl -d sends one).
      ReplyError(res, 413, "too_large",
                 "a form-encoded body is limited to 8192 bytes: send JSON with Content-Type: "
                 "application/json");
    } else if (res.status == 413) {
      ReplyError(res, 413, "too_large",
                 fmt::format("the request body is over {} bytes", body_limit));
    } else {
      ReplyError(res, res.status, "bad_request",
                 "the request could not be read (a POST needs a Content-Length, 0 for no body)");
    }
  });
}

const std::string& OpenApiDocument() {
  static const std::string doc(embedded::kOpenApiJson);
  return doc;
}

std::string_view DashboardHtml() { return embedded::kDashboardHtml; }

}  // namespace hetsched::svc
