// HttpApi: the daemon's JSON-over-HTTP interface (docs/api.md): jobs, nodes, the cluster
// summary, Prometheus metrics, the OpenAPI document and the dashboard, with bearer tokens.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "svc/log.h"
#include "svc/metrics.h"
#include "svc/service.h"
#include "util/status.h"

namespace httplib {
class Server;
}

namespace hetsched::svc {

// What a token may do; each role includes the ones before it.
enum class Role { kRead, kSubmit, kAdmin };
util::Result<Role> ParseRole(std::string_view text);  // read, submit, admin

struct ApiToken {
  std::string token;  // the secret; never logged
  Role role = Role::kRead;
};

struct HttpApiOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (port() says which)
  std::vector<ApiToken> tokens;
  // Reads (GET) without a token; writes always need one.
  bool anonymous_read = true;
  double request_timeout_s = 10;
  int threads = 8;
};

// Routes, handlers and the server thread. Thread-safe: handlers run on the server's pool.
class HttpApi {
 public:
  // Binds the listening socket (kIoError naming the address when it cannot); serving starts
  // with Start. `service`, `metrics` and `logger` outlive the API.
  static util::Result<std::unique_ptr<HttpApi>> Create(HttpApiOptions options, Service* service,
                                                       MetricsRegistry* metrics, Logger* logger);
  ~HttpApi();  // Stop

  void Start();  // serves on its own thread
  void Stop();
  int port() const { return port_; }

 private:
  HttpApi(HttpApiOptions options, Service* service, Logger* logger);
  void Route(MetricsRegistry* metrics);

  HttpApiOptions options_;
  Service* service_;
  Logger* logger_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// The OpenAPI 3.0 document served at GET /openapi.json.
const std::string& OpenApiDocument();
// The dashboard page served at GET / (svc/dashboard.html, embedded at build time).
std::string_view DashboardHtml();

}  // namespace hetsched::svc
