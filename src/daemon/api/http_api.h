// HttpApi: the daemon's JSON-over-HTTP interface (docs/api.md): jobs, nodes, the cluster
// summary, Prometheus metrics, the OpenAPI document and the dashboard, with bearer tokens.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/job_request.h"
#include "daemon/service.h"
#include "daemon/serving_loop.h"
#include "k8s/extender.h"
#include "obs/log.h"
#include "obs/metrics.h"
#include "util/status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace hetsched::svc {

// What a token may do; each role includes the ones before it.
enum class Role { kRead, kSubmit, kAdmin };
util::Result<Role> ParseRole(std::string_view text);  // read, submit, admin

struct ApiToken {
  std::string token;  // the secret; never logged
  Role role = Role::kRead;
  // The tenant it acts for: it submits, sees and cancels that tenant's jobs only. Empty: every
  // job (and services, which belong to no tenant).
  std::string tenant;
};

struct HttpApiOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (port() says which)
  std::vector<ApiToken> tokens;
  // Reads (GET) without a token; writes always need one.
  bool anonymous_read = true;
  double request_timeout_s = 10;
  int threads = 8;
  // Where the kube-scheduler extender's verbs live (PREFIX/filter, /prioritize, /bind,
  // /preempt), when the API serves one.
  std::string extender_prefix = "/k8s";
};

// Largest extender request read (bytes): kube-scheduler sends whole NodeLists, ~3.4 KB a node.
inline constexpr size_t kMaxExtenderRequestBytes = 256u << 20;

// Routes, handlers and the server thread. Thread-safe: handlers run on the server's pool.
class HttpApi {
 public:
  // Binds the listening socket (kInvalidArgument naming the address when it cannot: in use,
  // or not this machine's); serving starts with Start. `service`, `metrics`, `logger` and
  // `extender` outlive the API. Without a service (a daemon that only extends kube-scheduler) the
  // /v1 job routes and the dashboard are not served; with an extender its verbs and GET
  // /v1/k8s/nodes are.
  // With `serving`, POST /v1/jobs takes services (kind service) and /v1/services/{name} is
  // served; it outlives the API too.
  static util::Result<std::unique_ptr<HttpApi>> Create(HttpApiOptions options, Service* service,
                                                       MetricsRegistry* metrics, Logger* logger,
                                                       k8s::Extender* extender = nullptr,
                                                       ServingLoop* serving = nullptr);
  ~HttpApi();  // Stop

  void Start();  // serves on its own thread
  void Stop();
  int port() const { return port_; }

 private:
  HttpApi(HttpApiOptions options, Service* service, Logger* logger, k8s::Extender* extender,
          ServingLoop* serving);
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  // A handler whose answer depends on who asks: the scope of the request's token (a tenant's
  // token sees its tenant's jobs only; other tokens and anonymous reads, every job).
  using ScopedHandler =
      std::function<void(const TenantScope&, const httplib::Request&, httplib::Response&)>;
  // Every route, and the refusal of compressed bodies, by resource: operations (health,
  // metrics, the OpenAPI document), the kube-scheduler extender's verbs, jobs, nodes, the
  // cluster (its summary, what-if, plans; the dashboard) and its history; services.
  void Route(MetricsRegistry* metrics);
  void RouteOperations(MetricsRegistry* metrics);
  void RouteExtender();
  void RouteJobs();
  void RouteServices();  // inference services run live (kind service)
  // POST /v1/jobs of a service: 201 with it, or why not.
  void AddService(model::Job job, std::string spec_json, httplib::Response& res);
  void RouteNodes();
  void RouteCluster();
  void RouteHistory();
  // `handler` behind what every route does: authorization (`need`; `open` routes take no
  // token: kube-scheduler's extender client cannot send one), timing and counting under
  // `route`, and no exception escaping into the server.
  Handler Guarded(std::string route, Role need, ScopedHandler handler, bool open = false);
  Handler Guarded(std::string route, Role need, Handler handler, bool open = false);
  // GET /v1/tenants (daemon/api/tenant_routes.cc).
  void RouteTenants();
  // POST /v1/jobs in `scope`: the job of a tenant's token is its tenant's (403 for another
  // tenant's job or a service); false when it answered.
  bool TakeForTenant(const TenantScope& scope, JobRequest& request, httplib::Response& res) const;
  // Registers `handler` for `method` (GET, POST or DELETE) on paths matching `pattern`, and
  // remembers the pair so that another method on the path is a 405 naming the allowed ones.
  void On(const std::string& method, const std::string& pattern, Handler handler);
  // The methods routed on `path` (GET, POST, DELETE); empty when no route matches it.
  std::set<std::string> MethodsAt(const std::string& path) const;
  // The methods served on `path` ("GET, HEAD, POST"); empty when no route matches it.
  std::string AllowedMethods(const std::string& path) const;
  // The embedded OpenAPI document less the operations no route of this server serves, the
  // extender's verbs under its prefix: /openapi.json describes what this mode serves.
  std::string ServedOpenApi() const;
  // JSON replies for unknown routes, methods a route does not serve and httplib's refusals.
  void SetErrorHandler();

  HttpApiOptions options_;
  Service* service_;
  Logger* logger_;
  k8s::Extender* extender_;
  ServingLoop* serving_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listen_ended_{false};                    // the server's listen returned
  std::vector<std::pair<std::regex, std::string>> methods_;  // path pattern, method
  std::string openapi_;                                      // ServedOpenApi(), once routed
  std::optional<HistogramFamily> latency_;                   // by route (from Route on)
  std::optional<CounterFamily> requests_;                    // by route and status
  int port_ = 0;
};

// The OpenAPI 3.0 document of every route (src/daemon/api/openapi.json); GET /openapi.json
// serves the part of it that the server's mode routes.
const std::string& OpenApiDocument();
// The dashboard page served at GET / (daemon/api/dashboard.html, embedded at build time).
std::string_view DashboardHtml();

}  // namespace hetsched::svc
