// FakeKubeApi: a Kubernetes API server for tests, over HTTPS on 127.0.0.1 with the test CA of
// tests/data/k8s/tls: canned bodies, scripted watch streams, error statuses, recorded requests.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "k8s/client.h"
#include "testing/build_paths.h"
#include "util/file.h"

namespace hetsched::testing {

// One piece of a watch stream: sent as one HTTP chunk, `delay_s` after the one before.
struct WatchChunk {
  std::string data;  // not empty
  double delay_s = 0;
};

struct RecordedRequest {
  std::string method;  // GET, POST
  std::string path;    // without the query
  std::string query;   // as sent, without '?'
  httplib::Headers headers;
  std::string body;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// Serves what a test set, per method and exact path; a reply set with `query_has` is only for
// requests whose query contains that text, and wins over one without (the longest `query_has`
// of those that match wins). Anything else: 404.
// Thread-safe; the server stops in the destructor, also when the test failed.
class FakeKubeApi {
 public:
  struct Options {
    std::string host = "127.0.0.1";    // another 127.x address: a host the certificate misnames
    bool tls = true;                   // false: plain http
    bool require_client_cert = false;  // TLS clients must show a certificate of the test CA
  };

  // tests/data/k8s/tls/NAME (ca.pem, other-ca.pem, client.pem, client-key.pem, ...).
  static std::string TlsFile(const std::string& name) {
    return std::string(HETSCHED_SOURCE_DIR) + "/tests/data/k8s/tls/" + name;
  }
  static std::string ReadTlsFile(const std::string& name) {
    auto text = util::ReadFile(TlsFile(name));
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? *text : "";
  }
  // The API's error body: {"kind":"Status",...,"code":CODE}.
  static std::string StatusJson(int code, const std::string& reason, const std::string& message) {
    return nlohmann::json{
        {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
        {"status", "Failure"}, {"message", message}, {"reason", reason},
        {"code", code}}
        .dump();
  }

  FakeKubeApi() : FakeKubeApi(Options{}) {}
  explicit FakeKubeApi(Options options) : options_(std::move(options)) {
    if (!options_.tls) {
      server_ = std::make_unique<httplib::Server>();
    } else if (options_.require_client_cert) {
      server_ = std::make_unique<httplib::SSLServer>(TlsFile("server.pem").c_str(),
                                                     TlsFile("server-key.pem").c_str(),
                                                     TlsFile("ca.pem").c_str());
    } else {
      server_ = std::make_unique<httplib::SSLServer>(TlsFile("server.pem").c_str(),
                                                     TlsFile("server-key.pem").c_str());
    }
    // One request per connection: no idle keep-alive connection holds up the destructor.
    server_->set_keep_alive_max_count(1);
    const auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, res);
    };
    server_->Get(".*", handler);
    server_->Post(".*", handler);
    if (!server_->is_valid()) {
      ADD_FAILURE() << "FakeKubeApi: the server cannot start (TLS files in " << TlsFile("") << "?)";
      return;
    }
    port_ = server_->bind_to_any_port(options_.host);
    if (port_ <= 0) {
      ADD_FAILURE() << "FakeKubeApi: cannot listen on " << options_.host;
      return;
    }
    listener_ = std::thread([this] { server_->listen_after_bind(); });
    // stop() before the accept loop runs would be lost, and the destructor would wait forever.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!server_->is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  ~FakeKubeApi() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();  // streams waiting out a delay or staying open
    if (listener_.joinable()) {
      server_->stop();
      listener_.join();
    }
  }
  FakeKubeApi(const FakeKubeApi&) = delete;
  FakeKubeApi& operator=(const FakeKubeApi&) = delete;

  int port() const { return port_; }
  std::string url() const {
    return fmt::format("{}://{}:{}", options_.tls ? "https" : "http", options_.host, port_);
  }

  // An ApiConfig for this server: its URL, the test CA, the required token if any, and the
  // test client certificate when it requires one.
  svc::k8s::ApiConfig config() const {
    svc::k8s::ApiConfig c;
    c.server = url();
    if (options_.tls) c.ca_pem = ReadTlsFile("ca.pem");
    {
      std::lock_guard lock(mu_);
      c.token = token_;
    }
    if (options_.require_client_cert) {
      c.client_cert_pem = ReadTlsFile("client.pem");
      c.client_key_pem = ReadTlsFile("client-key.pem");
    }
    c.timeout_s = 5;
    c.source = "fake API server";
    return c;
  }

  // Writes a kubeconfig with one context, `context`, for config()'s settings (files named by
  // absolute path). False when it cannot be written.
  bool WriteKubeconfig(const std::string& path, const std::string& context = "fake") const {
    const svc::k8s::ApiConfig c = config();
    std::string user;
    if (!c.token.empty()) user += fmt::format("    token: {}\n", c.token);
    if (options_.require_client_cert) {
      user += fmt::format("    client-certificate: {}\n    client-key: {}\n", TlsFile("client.pem"),
                          TlsFile("client-key.pem"));
    }
    const std::string text = fmt::format(
        "apiVersion: v1\nkind: Config\ncurrent-context: {0}\n"
        "clusters:\n- name: {0}\n  cluster:\n    server: {1}\n{2}"
        "users:\n- name: {0}\n  user:{3}"
        "contexts:\n- name: {0}\n  context:\n    cluster: {0}\n    user: {0}\n",
        context, c.server,
        options_.tls ? fmt::format("    certificate-authority: {}\n", TlsFile("ca.pem")) : "",
        user.empty() ? " {}\n" : "\n" + user);
    return util::WriteFile(path, text).ok();
  }

  // `status` with `body` (JSON) for `method` `path`.
  void SetReply(const std::string& method, const std::string& path, int status, std::string body,
                const std::string& query_has = "") {
    Reply r;
    r.status = status;
    r.body = std::move(body);
    Set(method, path, std::move(r), query_has);
  }
  // 200 with `body` for GET `path`.
  void SetBody(const std::string& path, std::string body, const std::string& query_has = "") {
    SetReply("GET", path, 200, std::move(body), query_has);
  }
  // `code` with a Status body, like the API's errors.
  void SetStatus(const std::string& path, int code, const std::string& reason,
                 const std::string& message, const std::string& query_has = "",
                 const std::string& method = "GET") {
    SetReply(method, path, code, StatusJson(code, reason, message), query_has);
  }
  // A watch stream for GET `path` with `query_has` (watch=1 by default).
  void SetWatch(const std::string& path, std::vector<WatchChunk> chunks, bool stay_open = false,
                const std::string& query_has = "watch=1") {
    Reply r;
    r.stream = true;
    r.chunks = std::move(chunks);
    r.stay_open = stay_open;
    Set("GET", path, std::move(r), query_has);
  }
  // Requests without `Authorization: Bearer TOKEN` get 401.
  void RequireToken(std::string token) {
    std::lock_guard lock(mu_);
    token_ = std::move(token);
  }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  // What to answer: a body, or (stream) chunks sent one by one, after which the stream ends or,
  // with stay_open, stays open until the server stops.
  struct Reply {
    int status = 200;
    std::string body;
    bool stream = false;
    std::vector<WatchChunk> chunks;
    bool stay_open = false;
  };

  void Set(const std::string& method, const std::string& path, Reply reply,
           const std::string& query_has) {
    std::lock_guard lock(mu_);
    replies_[{method, path, query_has}] = std::move(reply);
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    RecordedRequest r{req.method, req.path, "", req.headers, req.body};
    if (size_t q = req.target.find('?'); q != std::string::npos) r.query = req.target.substr(q + 1);
    Reply reply;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(r);
      if (!token_.empty() && r.Header("Authorization") != "Bearer " + token_) {
        reply.status = 401;
        reply.body = StatusJson(401, "Unauthorized", "Unauthorized");
      } else if (const Reply* found = Find(r)) {
        reply = *found;
      } else {
        reply.status = 404;
        reply.body =
            StatusJson(404, "NotFound", "the server could not find the requested resource");
      }
    }
    res.status = reply.status;
    if (!reply.stream) {
      res.set_content(reply.body, "application/json");
      return;
    }
    res.set_chunked_content_provider(
        "application/json",
        [this, reply, next = size_t{0}](size_t, httplib::DataSink& sink) mutable {
          if (next < reply.chunks.size()) {
            const WatchChunk& c = reply.chunks[next++];
            if (!SleepUnlessStopping(c.delay_s)) return false;
            return sink.write(c.data.data(), c.data.size());
          }
          if (reply.stay_open) return SleepUnlessStopping(0.05);
          sink.done();
          return true;
        });
  }

  // Under mu_.
  const Reply* Find(const RecordedRequest& r) const {
    const Reply* best = nullptr;
    size_t best_size = 0;
    for (const auto& [key, reply] : replies_) {
      const auto& [method, path, query_has] = key;
      if (method != r.method || path != r.path || r.query.find(query_has) == std::string::npos) {
        continue;
      }
      if (best == nullptr || query_has.size() > best_size) {
        best = &reply;
        best_size = query_has.size();
      }
    }
    return best;
  }

  // False when the server is stopping.
  bool SleepUnlessStopping(double seconds) {
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_; });
    return !stopping_;
  }

  Options options_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = -1;
  std::thread listener_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string token_;
  std::map<std::tuple<std::string, std::string, std::string>, Reply> replies_;
  std::vector<RecordedRequest> requests_;
};

}  // namespace hetsched::testing
