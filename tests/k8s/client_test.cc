#include "k8s/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testing/fake_kube_api.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace hetsched::svc::k8s {
namespace {

using ::hetsched::testing::FakeKubeApi;
using ::hetsched::testing::TempDir;
using ::hetsched::testing::WatchChunk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kNodes[] = "/api/v1/nodes";
constexpr char kNodeList[] = R"({"kind":"NodeList","items":[]})";

// A config with just a server and a source (for messages).
ApiConfig ServerConfig(const std::string& server, const std::string& source = "test") {
  ApiConfig c;
  c.server = server;
  c.source = source;
  return c;
}

std::unique_ptr<ApiClient> MakeClient(ApiConfig config) {
  auto client = ApiClient::Create(std::move(config));
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

// Every line a watch delivered, and how it ended.
struct Watched {
  util::Status status;
  std::vector<std::string> lines;
};

Watched WatchAll(ApiClient& client, const std::string& path, size_t stop_after = 0) {
  Watched w;
  w.status = client.Watch(path, [&](std::string_view line) {
    w.lines.emplace_back(line);
    return stop_after == 0 || w.lines.size() < stop_after;
  });
  return w;
}

std::string Base64(const std::string& in) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<uint8_t>(in[i + 2]);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < in.size() ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

// Sets (or with nullptr unsets) an environment variable for a test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// ---- TLS --------------------------------------------------------------------------------------

TEST(K8sClientTls, GetsOverTlsWithTheClustersCa) {
  FakeKubeApi api;
  api.SetBody(kNodes, kNodeList);
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, kNodeList);
  const auto requests = api.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path, kNodes);
  EXPECT_EQ(requests[0].Header("Accept"), "application/json");
  EXPECT_EQ(requests[0].Header("Authorization"), "");  // none configured
}

TEST(K8sClientTls, LocalhostIsANameTheCertificateHolds) {
  FakeKubeApi api;
  api.SetBody(kNodes, kNodeList);
  ApiConfig config = api.config();
  config.server = fmt::format("https://localhost:{}", api.port());
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  EXPECT_TRUE(body.ok()) << body.status().ToString();
}

TEST(K8sClientTls, AnotherCaIsRefusedWithTheReason) {
  FakeKubeApi api;
  api.SetBody(kNodes, kNodeList);
  ApiConfig config = api.config();
  config.ca_pem = FakeKubeApi::ReadTlsFile("other-ca.pem");
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), util::StatusCode::kUnavailable);
  const std::string& m = body.status().message();
  EXPECT_THAT(m, StartsWith(fmt::format("GET {}/api/v1/nodes (fake API server): ", api.url())));
  EXPECT_THAT(m, HasSubstr("TLS: the server's certificate is not accepted: unable to get local "
                           "issuer certificate"));
  EXPECT_THAT(m, HasSubstr("/CN=hetsched-test-ca"));
  EXPECT_TRUE(api.requests().empty());  // nothing was sent to an untrusted server
}

TEST(K8sClientTls, NoCaMeansTheSystemsCas) {
  FakeKubeApi api;
  ApiConfig config = api.config();
  config.ca_pem.clear();
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(), HasSubstr("checked against the system's CAs"));
}

TEST(K8sClientTls, TheHostNameIsChecked) {
  // 127.0.0.2 reaches this machine too, but the certificate names 127.0.0.1 and localhost.
  FakeKubeApi::Options options;
  options.host = "127.0.0.2";
  FakeKubeApi api(options);
  ASSERT_GT(api.port(), 0);
  api.SetBody(kNodes, kNodeList);
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(),
              HasSubstr("the server's certificate is not accepted: IP address mismatch"));

  ApiConfig insecure = api.config();
  insecure.ca_pem.clear();
  insecure.insecure_skip_tls_verify = true;
  client = MakeClient(insecure);
  ASSERT_NE(client, nullptr);
  body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, kNodeList);
}

TEST(K8sClientTls, TheDnsNameIsChecked) {
  // glibc resolves "127.1" to 127.0.0.1, but it is not an IP address in URL syntax: a host name
  // the certificate does not hold.
  FakeKubeApi api;
  api.SetBody(kNodes, kNodeList);
  ApiConfig config = api.config();
  config.server = fmt::format("https://127.1:{}", api.port());
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(),
              HasSubstr("the server's certificate is not accepted: hostname mismatch"));
}

TEST(K8sClientTls, HttpsToAPlainHttpServer) {
  FakeKubeApi::Options options;
  options.tls = false;
  FakeKubeApi api(options);
  ApiConfig config = api.config();
  config.server = fmt::format("https://127.0.0.1:{}", api.port());
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(),
              HasSubstr("TLS handshake failed (is it an https server?): wrong version number"));
}

TEST(K8sClientTls, InsecureSkipTlsVerifyTrustsAnyCertificate) {
  FakeKubeApi api;
  api.SetBody(kNodes, kNodeList);
  ApiConfig config = api.config();
  config.ca_pem = FakeKubeApi::ReadTlsFile("other-ca.pem");
  config.insecure_skip_tls_verify = true;
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, kNodeList);
}

TEST(K8sClientTls, ClientCertificateAuthentication) {
  FakeKubeApi::Options options;
  options.require_client_cert = true;
  FakeKubeApi api(options);
  api.SetBody(kNodes, kNodeList);
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, kNodeList);

  ApiConfig without = api.config();
  without.client_cert_pem.clear();
  without.client_key_pem.clear();
  client = MakeClient(without);
  ASSERT_NE(client, nullptr);
  body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), util::StatusCode::kUnavailable);
}

TEST(K8sClientCreate, ChecksTheServerAndThePems) {
  const std::string ca = FakeKubeApi::ReadTlsFile("ca.pem");
  const auto error = [&](const std::string& server, const std::string& ca_pem,
                         const std::string& cert = "", const std::string& key = "") {
    ApiConfig c = ServerConfig(server);
    c.ca_pem = ca_pem;
    c.client_cert_pem = cert;
    c.client_key_pem = key;
    auto client = ApiClient::Create(std::move(c));
    return client.ok() ? std::string("(created)") : client.status().message();
  };
  EXPECT_EQ(error("10.0.0.1:6443", ca),
            "test: server '10.0.0.1:6443': not an https:// URL (expected https://HOST[:PORT], "
            "like https://10.0.0.1:6443)");
  EXPECT_THAT(error("https://10.0.0.1:99999", ca),
              HasSubstr("port '99999' is not a number from 1 to 65535"));
  EXPECT_THAT(error("https://fe80::1:6443", ca), HasSubstr("IPv6 address needs brackets"));
  EXPECT_EQ(error("https://[::1]:6443/prefix/", ca), "(created)");
  EXPECT_EQ(error("https://10.0.0.1", "not a certificate"),
            "test: CA certificate: no certificate in it (expected PEM: -----BEGIN "
            "CERTIFICATE-----)");
  std::string broken = ca;
  broken.replace(broken.find('\n') + 5, 4, "!!!!");
  EXPECT_THAT(error("https://10.0.0.1", broken),
              HasSubstr("test: CA certificate: certificate 1 does not parse"));
  const std::string cert = FakeKubeApi::ReadTlsFile("client.pem");
  EXPECT_EQ(error("https://10.0.0.1", ca, cert, FakeKubeApi::ReadTlsFile("client-key.pem")),
            "(created)");
  EXPECT_EQ(error("https://10.0.0.1", ca, cert, FakeKubeApi::ReadTlsFile("server-key.pem")),
            "test: the client key is not the client certificate's key");
  EXPECT_EQ(error("https://10.0.0.1", ca, cert),
            "test: a client certificate needs both its certificate and its key");
  EXPECT_THAT(error("https://10.0.0.1", ca, cert, "-----BEGIN PRIVATE KEY-----\nAAAA\n"),
              HasSubstr("test: client key: does not parse"));
}

// ---- Tokens -----------------------------------------------------------------------------------

TEST(K8sClientAuth, SendsTheBearerToken) {
  FakeKubeApi api;
  api.RequireToken("token-0123456789");
  api.SetBody(kNodes, kNodeList);
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(api.requests().at(0).Header("Authorization"), "Bearer token-0123456789");

  ApiConfig wrong = api.config();
  wrong.token = "another-token";
  client = MakeClient(wrong);
  ASSERT_NE(client, nullptr);
  body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), util::StatusCode::kInvalidArgument);
  EXPECT_EQ(body.status().message(),
            fmt::format("401 Unauthorized from GET {}/api/v1/nodes (fake API server): "
                        "Unauthorized (the credentials were refused)",
                        api.url()));
}

TEST(K8sClientAuth, ReadsTheTokenFileAgainOnEveryRequest) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  FakeKubeApi api;
  api.SetBody(kNodes, kNodeList);
  ApiConfig config = api.config();
  config.token = "ignored-when-there-is-a-file";
  config.token_file = dir.File("token");
  ASSERT_TRUE(util::WriteFile(config.token_file, "first-token\n").ok());
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Get(kNodes).ok());
  ASSERT_TRUE(util::WriteFile(config.token_file, "second-token").ok());
  ASSERT_TRUE(client->Get(kNodes).ok());
  const auto requests = api.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].Header("Authorization"), "Bearer first-token");
  EXPECT_EQ(requests[1].Header("Authorization"), "Bearer second-token");

  ASSERT_TRUE(util::WriteFile(config.token_file, "two\nlines\n").ok());
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(), HasSubstr("has several lines"));
  std::filesystem::remove(config.token_file);
  body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(),
              HasSubstr("fake API server: token file: " + config.token_file));
  EXPECT_EQ(api.requests().size(), 2u);
}

// ---- Errors -----------------------------------------------------------------------------------

TEST(K8sClientErrors, NamesTheStatusAndTheApisMessage) {
  FakeKubeApi api;
  api.SetStatus("/api/v1/nodes/gpu-1", 404, "NotFound", R"(nodes "gpu-1" not found)");
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto body = client->Get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), util::StatusCode::kNotFound);
  EXPECT_EQ(body.status().message(),
            fmt::format(R"(404 Not Found from GET {}/api/v1/nodes/gpu-1 (fake API server): )"
                        R"(nodes "gpu-1" not found)",
                        api.url()));
  EXPECT_FALSE(IsGone(body.status()));

  api.SetReply("GET", "/api/v1/pods", 502, "<html>bad gateway</html>\n");
  body = client->Get("/api/v1/pods");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), util::StatusCode::kUnavailable);
  EXPECT_THAT(body.status().message(), HasSubstr("502 Bad Gateway from GET"));
  EXPECT_THAT(body.status().message(), HasSubstr(": <html>bad gateway</html>"));
  EXPECT_FALSE(IsGone(body.status()));
}

TEST(K8sClientErrors, IsGoneOnlyFor410) {
  FakeKubeApi api;
  api.SetStatus(kNodes, 410, "Expired", "too old resource version: 5 (900)", "resourceVersion=5");
  api.SetStatus(kNodes, 500, "InternalError", "etcd is down", "resourceVersion=6");
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);

  Watched gone = WatchAll(*client, "/api/v1/nodes?watch=1&resourceVersion=5");
  EXPECT_TRUE(gone.lines.empty());
  ASSERT_FALSE(gone.status.ok());
  EXPECT_TRUE(IsGone(gone.status)) << gone.status.ToString();
  EXPECT_THAT(gone.status.message(), HasSubstr("too old resource version: 5 (900)"));
  auto listed = client->Get("/api/v1/nodes?resourceVersion=5");
  ASSERT_FALSE(listed.ok());
  EXPECT_TRUE(IsGone(listed.status()));

  Watched failed = WatchAll(*client, "/api/v1/nodes?watch=1&resourceVersion=6");
  ASSERT_FALSE(failed.status.ok());
  EXPECT_EQ(failed.status.code(), util::StatusCode::kUnavailable);
  EXPECT_THAT(failed.status.message(), HasSubstr("500 Internal Server Error from GET"));
  EXPECT_FALSE(IsGone(failed.status));
  EXPECT_FALSE(IsGone(util::Status::NotFound("410 files")));  // not the API's
  EXPECT_FALSE(IsGone(util::Status::Ok()));
}

TEST(K8sClientErrors, NoServerListening) {
  int port = 0;
  {
    FakeKubeApi gone;
    port = gone.port();
  }
  auto client = MakeClient(ServerConfig(fmt::format("http://127.0.0.1:{}", port)));
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), util::StatusCode::kUnavailable);
  EXPECT_EQ(body.status().message(),
            fmt::format("GET http://127.0.0.1:{}/api/v1/nodes (test): cannot connect (is the API "
                        "server up, and is this its address?)",
                        port));
}

// ---- Get and Post -----------------------------------------------------------------------------

TEST(K8sClientGet, LargeListsComeGzipped) {
  FakeKubeApi api;
  std::string list = R"({"kind":"NodeList","items":[)";
  for (int i = 0; i < 2000; ++i) {
    list += fmt::format(R"({}{{"metadata":{{"name":"node-{}","labels":{{"pad":"{}"}}}}}})",
                        i == 0 ? "" : ",", i, std::string(1000, 'x'));
  }
  list += "]}";
  api.SetBody(kNodes, list);
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, list);
  EXPECT_EQ(api.requests().at(0).Header("Accept-Encoding"), "gzip");
}

TEST(K8sClientGet, ServerUrlWithAPathPrefix) {
  FakeKubeApi api;
  api.SetBody("/k8s/clusters/c-1/api/v1/nodes", kNodeList);
  ApiConfig config = api.config();
  config.server += "/k8s/clusters/c-1/";
  auto client = MakeClient(config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, kNodeList);
}

TEST(K8sClientPost, SendsTheBodyAndReturnsTheAnswer) {
  FakeKubeApi api;
  const std::string path = "/api/v1/namespaces/default/pods/train-0/binding";
  const std::string binding =
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"train-0"},)"
      R"("target":{"apiVersion":"v1","kind":"Node","name":"gpu-1"}})";
  api.SetReply("POST", path, 201, R"({"kind":"Status","status":"Success"})");
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  auto answer = client->Post(path, binding);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(*answer, R"({"kind":"Status","status":"Success"})");
  const auto requests = api.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].body, binding);
  EXPECT_EQ(requests[0].Header("Content-Type"), "application/json");

  api.SetStatus(path, 409, "Conflict", "pod train-0 is already assigned to node \"gpu-2\"", "",
                "POST");
  answer = client->Post(path, binding);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), util::StatusCode::kAlreadyExists);
  EXPECT_THAT(answer.status().message(), HasSubstr("409 Conflict from POST"));
  EXPECT_THAT(answer.status().message(), HasSubstr("already assigned to node \"gpu-2\""));
}

// ---- Watch ------------------------------------------------------------------------------------

TEST(K8sClientWatch, DeliversLinesInOrderAsTheyArrive) {
  FakeKubeApi api;
  const std::string big =
      R"({"type":"ADDED","object":{"pad":")" + std::string(1 << 20, 'n') + R"("}})";
  api.SetWatch(kNodes, {{R"({"type":"ADDED","n":1})"
                         "\n"},
                        {R"({"type":"MODIFIED",)", 0.05},  // a line split over two chunks
                        {R"("n":2})"
                         "\n",
                         0.05},
                        {big + "\n"},
                        {"\n"},  // blank lines are skipped
                        {R"({"n":4})"
                         "\r\n"
                         R"({"n":5})"}});  // the last line has no line end
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  Watched w = WatchAll(*client, "/api/v1/nodes?watch=1&resourceVersion=7&timeoutSeconds=30");
  ASSERT_TRUE(w.status.ok()) << w.status.ToString();
  ASSERT_EQ(w.lines.size(), 5u);
  EXPECT_EQ(w.lines[0], R"({"type":"ADDED","n":1})");
  EXPECT_EQ(w.lines[1], R"({"type":"MODIFIED","n":2})");
  EXPECT_EQ(w.lines[2].size(), big.size());
  EXPECT_TRUE(w.lines[2] == big);
  EXPECT_EQ(w.lines[3], R"({"n":4})");
  EXPECT_EQ(w.lines[4], R"({"n":5})");
  const auto requests = api.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].query, "watch=1&resourceVersion=7&timeoutSeconds=30");
}

TEST(K8sClientWatch, OnLineReturningFalseEndsIt) {
  FakeKubeApi api;
  // Were the watch to go on, the third line would come after 3 s.
  api.SetWatch(kNodes, {{"{\"n\":1}\n"}, {"{\"n\":2}\n"}, {"{\"n\":3}\n", 3}});
  auto client = MakeClient(api.config());
  ASSERT_NE(client, nullptr);
  const auto start = std::chrono::steady_clock::now();
  Watched w = WatchAll(*client, "/api/v1/nodes?watch=1", /*stop_after=*/2);
  EXPECT_TRUE(w.status.ok()) << w.status.ToString();
  EXPECT_THAT(w.lines, ElementsAre("{\"n\":1}", "{\"n\":2}"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(K8sClientWatch, StopEndsAnOpenStreamPromptly) {
  auto api = std::make_unique<FakeKubeApi>();
  api->SetWatch(kNodes, {{"{\"n\":1}\n"}}, /*stay_open=*/true);
  auto client = MakeClient(api->config());
  ASSERT_NE(client, nullptr);
  std::atomic<int> seen{0};
  std::atomic<bool> returned{false};
  util::Status status = util::Status::Internal("not returned");
  std::thread watcher([&] {
    status = client->Watch("/api/v1/nodes?watch=1", [&](std::string_view) {
      ++seen;
      return true;
    });
    returned = true;
  });
  const bool got_line = hetsched::testing::WaitUntil([&] { return seen > 0; }, 10);
  const auto stop_at = std::chrono::steady_clock::now();
  client->Stop();
  const bool ended = hetsched::testing::WaitUntil([&] { return returned.load(); }, 5);
  const auto took = std::chrono::steady_clock::now() - stop_at;
  if (!ended) api.reset();  // ends the stream from the server's side, so the test can end
  watcher.join();
  ASSERT_TRUE(got_line);
  ASSERT_TRUE(ended) << "Stop() did not end the watch";
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_EQ(seen, 1);

  auto after = client->Get(kNodes);  // later calls fail fast
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), util::StatusCode::kUnavailable);
  EXPECT_EQ(after.status().message(), "fake API server: the API client was stopped");
  EXPECT_FALSE(WatchAll(*client, "/api/v1/nodes?watch=1").status.ok());
  EXPECT_EQ(api->requests().size(), 1u);
}

TEST(K8sClientWatch, NoServerIsAnError) {
  int port = 0;
  {
    FakeKubeApi gone;
    port = gone.port();
  }
  auto client = MakeClient(ServerConfig(fmt::format("http://127.0.0.1:{}", port)));
  ASSERT_NE(client, nullptr);
  Watched w = WatchAll(*client, "/api/v1/nodes?watch=1");
  ASSERT_FALSE(w.status.ok());
  EXPECT_EQ(w.status.code(), util::StatusCode::kUnavailable);
  EXPECT_THAT(w.status.message(), HasSubstr("cannot connect"));
}

// ---- Kubeconfig -------------------------------------------------------------------------------

// Lines are numbered for the error positions the tests expect.
constexpr char kKubeconfig[] = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: CA_DATA
- name: prod-cluster
  cluster:
    server: https://prod.example:443/k8s
    certificate-authority: tls/ca.pem
users:
- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    client-certificate-data: CERT_DATA
    client-key-data: KEY_DATA
- name: file-user
  user:
    tokenFile: token
    client-certificate: tls/client.pem
    client-key: tls/client-key.pem
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: default
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
- name: files
  context:
    cluster: prod-cluster
    user: file-user
)";

class K8sClientKubeconfig : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ca_ = FakeKubeApi::ReadTlsFile("ca.pem");
    cert_ = FakeKubeApi::ReadTlsFile("client.pem");
    key_ = FakeKubeApi::ReadTlsFile("client-key.pem");
    ASSERT_TRUE(util::WriteFile(dir_.File("tls/ca.pem"), ca_).ok());
    ASSERT_TRUE(util::WriteFile(dir_.File("tls/client.pem"), cert_).ok());
    ASSERT_TRUE(util::WriteFile(dir_.File("tls/client-key.pem"), key_).ok());
    ASSERT_TRUE(util::WriteFile(dir_.File("token"), "file-token\n").ok());
  }

  // kKubeconfig with `from` replaced by `to` (once each), written to the test's folder.
  std::string Write(std::vector<std::pair<std::string, std::string>> edits = {}) {
    std::string text = kKubeconfig;
    for (const auto& [from, to] : edits) {
      const size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    // The placeholders the edits left.
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"CA_DATA", Base64(ca_)},
                                   {"CERT_DATA", Base64(cert_)},
                                   {"KEY_DATA", Base64(key_)}}) {
      if (const size_t at = text.find(from); at != std::string::npos) {
        text.replace(at, from.size(), to);
      }
    }
    const std::string path = dir_.File("kubeconfig");
    EXPECT_TRUE(util::WriteFile(path, text).ok());
    return path;
  }

  std::string Error(const std::vector<std::pair<std::string, std::string>>& edits,
                    const std::string& context = "") {
    auto c = LoadKubeconfig(Write(edits), context);
    if (c.ok()) return "(loaded)";
    EXPECT_EQ(c.status().code(), util::StatusCode::kInvalidArgument);
    return c.status().message();
  }

  TempDir dir_;
  std::string ca_, cert_, key_;
};

TEST_F(K8sClientKubeconfig, ReadsTheCurrentContext) {
  const std::string path = Write();
  auto c = LoadKubeconfig(path, "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, ca_);
  EXPECT_EQ(c->token, "dev-token");
  EXPECT_EQ(c->token_file, "");
  EXPECT_EQ(c->client_cert_pem, "");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->source, "kubeconfig " + path + ", context dev");
}

TEST_F(K8sClientKubeconfig, ReadsAChosenContext) {
  const std::string path = Write();
  auto prod = LoadKubeconfig(path, "prod");
  ASSERT_TRUE(prod.ok()) << prod.status().ToString();
  EXPECT_EQ(prod->server, "https://prod.example:443/k8s");
  EXPECT_EQ(prod->ca_pem, ca_);  // certificate-authority, relative to the kubeconfig
  EXPECT_EQ(prod->token, "");
  EXPECT_EQ(prod->client_cert_pem, cert_);
  EXPECT_EQ(prod->client_key_pem, key_);
  EXPECT_TRUE(ApiClient::Create(*prod).ok());

  auto files = LoadKubeconfig(path, "files");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->token_file, dir_.File("token"));
  EXPECT_EQ(files->client_cert_pem, cert_);
  EXPECT_EQ(files->client_key_pem, key_);
}

TEST_F(K8sClientKubeconfig, InsecureSkipTlsVerify) {
  auto c = LoadKubeconfig(
      Write({{"    certificate-authority-data: CA_DATA", "    insecure-skip-tls-verify: true"}}),
      "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->ca_pem, "");
  EXPECT_THAT(Error({{"    server: https://127.0.0.1:6443",
                      "    server: https://127.0.0.1:6443\n    insecure-skip-tls-verify: yes"}}),
              HasSubstr("insecure-skip-tls-verify: 'yes' is not a boolean (expected true or "
                        "false)"));
  // YAML 1.2's other spellings, as every hetsched document reads them.
  c = LoadKubeconfig(
      Write({{"    certificate-authority-data: CA_DATA", "    insecure-skip-tls-verify: True"}}),
      "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->insecure_skip_tls_verify);
}

TEST_F(K8sClientKubeconfig, RefusesAKeyGivenTwice) {
  const std::string p = dir_.File("kubeconfig");
  // Which of the two would win is not for hetsched to guess.
  EXPECT_EQ(Error({{"current-context: dev", "current-context: dev\ncurrent-context: prod"}}),
            p + ":4:1: current-context: appears twice (first at line 3) (expected each key "
                "once)");
  EXPECT_EQ(Error({{"    token: dev-token", "    token: dev-token\n    token: other-token"}}),
            p + ":17:5: users[0].user.token: appears twice (first at line 16) (expected each "
                "key once)");
}

TEST_F(K8sClientKubeconfig, WorksAgainstTheFakeServer) {
  FakeKubeApi api;
  api.RequireToken("kube-token-0123");
  api.SetBody(kNodes, kNodeList);
  const std::string path = dir_.File("fake.kubeconfig");
  ASSERT_TRUE(api.WriteKubeconfig(path, "fake-context"));
  auto config = LoadKubeconfig(path, "");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto client = MakeClient(*config);
  ASSERT_NE(client, nullptr);
  auto body = client->Get(kNodes);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, kNodeList);
}

TEST_F(K8sClientKubeconfig, BadInputsSayWhereAndWhat) {
  const std::string p = dir_.File("kubeconfig");
  EXPECT_EQ(Error({{"kind: Config", "kind: [Config"}}),
            p + ":3:16: not valid YAML: end of sequence flow not found");
  EXPECT_EQ(Error({{"current-context: dev\n", ""}}),
            p + ":1:1: current-context: is missing or empty (expected the name of a context, or "
                "a context chosen explicitly)");
  EXPECT_EQ(Error({{"current-context: dev", "current-context: nope"}}),
            p + ":3:18: current-context: no context named 'nope' (expected one of: dev, prod, "
                "files)");
  EXPECT_EQ(Error({}, "nope"),
            p + ":27:1: contexts: no context named 'nope' (expected one of: dev, prod, files)");
  EXPECT_EQ(Error({{"cluster: dev-cluster", "cluster: gone"}}),
            p + ":29:14: contexts[0].context.cluster: no cluster named 'gone' (expected one of: "
                "dev-cluster, prod-cluster)");
  EXPECT_EQ(Error({{"user: dev-user", "user: ghost"}}),
            p + ":30:11: contexts[0].context.user: no user named 'ghost' (expected one of: "
                "dev-user, prod-user, file-user)");
  EXPECT_EQ(Error({{"CA_DATA", "LS0t*LS1"}}),
            p + ":8:33: clusters[0].cluster.certificate-authority-data: character '*' at offset "
                "4 is not base64 (expected base64 of PEM text)");
  EXPECT_EQ(Error({{"CA_DATA", Base64("hello")}}),
            p + ":8:33: clusters[0].cluster.certificate-authority-data: holds no PEM "
                "certificate (expected -----BEGIN CERTIFICATE-----)");
  EXPECT_EQ(Error({{"    token: dev-token",
                    "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                    "      command: gke-gcloud-auth-plugin"}}),
            p + ":16:5: users[0].user.exec: user 'dev-user' gets its credentials from an exec "
                "plugin, which hetsched does not run (expected a token, tokenFile or "
                "client-certificate and client-key in the kubeconfig, or in a pod its service "
                "account)");
  EXPECT_THAT(Error({{"    token: dev-token", "    auth-provider: {name: oidc}"}}),
              HasSubstr(":16:5: users[0].user.auth-provider: user 'dev-user' uses an "
                        "auth-provider plugin"));
  EXPECT_THAT(Error({{"    token: dev-token", "    username: admin\n    password: secret"}}),
              HasSubstr(":16:5: users[0].user.username: user 'dev-user' logs in with a username "
                        "and password"));
  EXPECT_EQ(Error({{"tls/ca.pem", "tls/missing.pem"}}, "prod"),
            p + ":12:28: clusters[1].cluster.certificate-authority: " +
                dir_.File("tls/missing.pem") + ": no such file");
  EXPECT_THAT(Error({{"    client-key-data: KEY_DATA\n", ""}}, "prod"),
              HasSubstr(":19:5: users[1].user: has a client certificate but no client key"));
  EXPECT_THAT(Error({{"    server: https://127.0.0.1:6443\n", ""}}),
              HasSubstr(":7:5: clusters[0].cluster.server: is missing or empty"));
  EXPECT_THAT(Error({{"    server: https://127.0.0.1:6443",
                      "    server: https://127.0.0.1:6443\n    proxy-url: http://proxy:3128"}}),
              HasSubstr(":8:5: clusters[0].cluster.proxy-url: is not supported by hetsched"));
  EXPECT_THAT(Error({{"tokenFile: token", "tokenFile: no-such-token"}}, "files"),
              HasSubstr(":23:16: users[2].user.tokenFile: cannot read '" +
                        dir_.File("no-such-token") + "'"));
  EXPECT_EQ(Error({{"apiVersion: v1\n", "- just a list\n"}}),
            p + ":1:1: is not a mapping (expected a kubeconfig: clusters, users, contexts and "
                "current-context)");

  auto missing = LoadKubeconfig(dir_.File("nothing-here"), "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), util::StatusCode::kNotFound);
}

// ---- In-cluster -------------------------------------------------------------------------------

class K8sClientInCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(util::WriteFile(dir_.File("token"), "pod-token\n").ok());
    ASSERT_TRUE(util::WriteFile(dir_.File("ca.crt"), FakeKubeApi::ReadTlsFile("ca.pem")).ok());
  }
  TempDir dir_;
};

TEST_F(K8sClientInCluster, ReadsTheServiceAccount) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  auto c = InClusterConfig(dir_.path().string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->ca_pem, FakeKubeApi::ReadTlsFile("ca.pem"));
  EXPECT_EQ(c->token_file, dir_.File("token"));
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->source, "in-cluster");
  EXPECT_TRUE(ApiClient::Create(*c).ok());

  ScopedEnv v6("KUBERNETES_SERVICE_HOST", "fd00::1");
  c = InClusterConfig(dir_.path().string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
}

TEST_F(K8sClientInCluster, SaysWhatIsMissing) {
  const std::string d = dir_.path().string();
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto c = InClusterConfig(d);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), util::StatusCode::kNotFound);
    EXPECT_EQ(c.status().message(),
              "in-cluster config: KUBERNETES_SERVICE_HOST is not set (expected to run in a pod; "
              "outside one, use a kubeconfig)");
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  {
    ScopedEnv port("KUBERNETES_SERVICE_PORT", nullptr);
    auto c = InClusterConfig(d);
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(c.status().message(), HasSubstr("KUBERNETES_SERVICE_PORT is not set"));
  }
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  std::filesystem::remove(dir_.File("ca.crt"));
  auto c = InClusterConfig(d);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              HasSubstr("the service account's CA: " + dir_.File("ca.crt") + ": no such file"));
  std::filesystem::remove(dir_.File("token"));
  c = InClusterConfig(d);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("cannot read the service account token " +
                                              dir_.File("token") + ": No such file"));
}

}  // namespace
}  // namespace hetsched::svc::k8s
