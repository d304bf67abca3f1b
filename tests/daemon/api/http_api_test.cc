#include "daemon/api/http_api.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/virtual/virtual_backend.h"
#include "cli/serve_analysis.h"
#include "daemon/job_request.h"
#include "model/io/cluster_reader.h"
#include "testing/openapi_operations.h"
#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

using nlohmann::json;

constexpr char kReadToken[] = "read-token-5f0c2a9d41";
constexpr char kSubmitToken[] = "submit-token-8e7b13c6";
constexpr char kAdminToken[] = "admin-token-d2a64f9b0e";
// Looks like a token, is none: must be refused and, like the real ones, never logged.
constexpr char kWrongToken[] = "wrong-token-77c1e05ab3";

using hetsched::testing::OpenApiOperations;
using hetsched::testing::TempDir;
using hetsched::testing::WaitUntil;

// Every line the logger writes, debug level included.
class LogCapture {
 public:
  Logger::Sink Sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(line);
    };
  }
  std::vector<std::string> Lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

struct Reply {
  int status = 0;
  std::string body;
  httplib::Headers headers;  // case-insensitive keys

  std::string Header(const std::string& key) const {
    auto it = headers.find(key);
    return it == headers.end() ? "" : it->second;
  }
  json Json() const { return json::parse(body, nullptr, /*allow_exceptions=*/false); }
};

// `r` has status `status` and the body every error has, {"error":{"code":CODE,"message":...}},
// as application/json.
::testing::AssertionResult IsError(const Reply& r, int status, const std::string& code) {
  auto fail = [&] {
    return ::testing::AssertionFailure() << "status " << r.status << ", Content-Type '"
                                         << r.Header("Content-Type") << "', body " << r.body;
  };
  if (r.status != status) return fail() << " (expected status " << status << ")";
  if (r.Header("Content-Type").rfind("application/json", 0) != 0) {
    return fail() << " (expected application/json)";
  }
  const json j = r.Json();
  if (!j.is_object() || j.size() != 1 || !j.contains("error") || !j["error"].is_object()) {
    return fail() << " (expected {\"error\":{...}})";
  }
  const json& e = j["error"];
  if (!e.contains("code") || !e["code"].is_string() || !e.contains("message") ||
      !e["message"].is_string() || e["message"].get<std::string>().empty()) {
    return fail() << " (expected error.code and a non-empty error.message)";
  }
  if (e["code"] != code) return fail() << " (expected code " << code << ")";
  return ::testing::AssertionSuccess();
}

std::string ErrorMessage(const Reply& r) {
  const json j = r.Json();
  if (!j.is_object() || !j.contains("error") || !j["error"].contains("message")) return "";
  return j["error"]["message"].get<std::string>();
}

std::string JobBody(const std::string& name, const std::string& extra = "") {
  return fmt::format(R"({{"name":"{}","stacks":["cuda"],"work":1e8{}}})", name, extra);
}

struct BootOptions {
  bool anonymous_read = true;
  bool start_service = true;
  std::string cluster = "v100=2,k80=2";
  double history_every_s = 10;
  std::function<double()> wall_clock =
      nullptr;  // the service's (ServiceOptions::wall_clock) when set
};

// The system's unix time, except that while it is held a reader waits until it is released.
// The service reads its wall clock under its lock (at the start of its recovery and in every
// pass of its control loop), so holding the clock holds the service's lock with a reader in it.
class HoldableClock {
 public:
  double Now() {
    std::unique_lock lock(mu_);
    if (held_ && free_ != std::this_thread::get_id()) {
      ++waiting_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !held_; });
      --waiting_;
    }
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // Every reader but one on thread `free` (when given) waits.
  void Hold(std::optional<std::thread::id> free = std::nullopt) {
    std::lock_guard lock(mu_);
    held_ = true;
    free_ = free;
  }
  // Whether a reader waits on the held clock within 10 s.
  bool ReaderWaits() {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [this] { return waiting_ > 0; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    held_ = false;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool held_ = false;
  std::optional<std::thread::id> free_;
  int waiting_ = 0;
};

class HttpApiTest : public ::testing::Test {
 protected:
  // A service on a virtual backend and the API in front of it, serving before the service
  // starts (as `hetsched serve` does, so /healthz answers during recovery).
  void Boot(const BootOptions& o = {}) {
    logger_ = std::make_unique<Logger>(LogLevel::kDebug, log_.Sink());
    auto c = model::io::LoadCluster(o.cluster);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    VirtualBackendOptions vo;
    for (const model::Node& n : c->nodes) vo.nodes.push_back(n.name);
    vo.time_scale = 1000;
    auto store = Store::Open(dir_.File("h.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ServiceOptions so;
    so.policy = "fifo";
    so.time_scale = 1000;
    so.tick_s = 0.005;
    so.history_every_s = o.history_every_s;
    so.analysis = cli::ServeAnalysisHooks();
    if (o.wall_clock) so.wall_clock = o.wall_clock;
    auto s = Service::Create(std::move(c).value(), std::make_unique<VirtualBackend>(vo),
                             std::move(store).value(), so, logger_.get(), &metrics_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    service_ = std::move(s).value();

    HttpApiOptions ao;
    ao.host = "127.0.0.1";
    ao.port = 0;
    ao.anonymous_read = o.anonymous_read;
    ao.threads = 2;
    ao.tokens = {{kReadToken, Role::kRead, ""},
                 {kSubmitToken, Role::kSubmit, ""},
                 {kAdminToken, Role::kAdmin, ""}};
    auto api = HttpApi::Create(ao, service_.get(), &metrics_, logger_.get());
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
    ASSERT_GT(api_->port(), 0);
    api_->Start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
    client_->set_connection_timeout(10);
    client_->set_read_timeout(30);
    client_->set_write_timeout(30);
    if (o.start_service) {
      ASSERT_TRUE(service_->Start().ok());
    }
  }

  // Whatever a test did, no token reached the log.
  void TearDown() override {
    client_.reset();
    if (api_) api_->Stop();
    if (service_) service_->Shutdown();
    for (const std::string& line : log_.Lines()) {
      for (const char* secret : {kReadToken, kSubmitToken, kAdminToken, kWrongToken}) {
        EXPECT_EQ(line.find(secret), std::string::npos) << "a token in the log: " << line;
      }
    }
  }

  Reply Send(const std::string& method, const std::string& path, const std::string& token = "",
             const std::string& body = "", httplib::Headers headers = {}) {
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    httplib::Result r = method == "GET"    ? client_->Get(path, headers)
                        : method == "POST" ? client_->Post(path, headers, body, "application/json")
                                           : client_->Delete(path, headers);
    Reply out;
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": no response (" << httplib::to_string(r.error())
                    << ")";
      return out;
    }
    out.status = r->status;
    out.body = r->body;
    out.headers = r->headers;
    return out;
  }
  Reply Get(const std::string& path, const std::string& token = "") {
    return Send("GET", path, token);
  }
  Reply Post(const std::string& path, const std::string& body, const std::string& token,
             httplib::Headers headers = {}) {
    return Send("POST", path, token, body, std::move(headers));
  }
  Reply Delete(const std::string& path, const std::string& token) {
    return Send("DELETE", path, token);
  }

  std::string JobState(const std::string& name) {
    const Reply r = Get("/v1/jobs/" + name, kReadToken);
    const json j = r.Json();
    return r.status == 200 && j.contains("state") ? j["state"].get<std::string>() : "?";
  }

  std::vector<std::string> NodeNames() {
    const Reply r = Get("/v1/nodes", kReadToken);
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<std::string> names;
    const json j = r.Json();
    if (j.contains("nodes")) {
      for (const json& n : j["nodes"]) names.push_back(n["name"].get<std::string>());
    }
    return names;
  }

  TempDir dir_;
  LogCapture log_;
  std::unique_ptr<Logger> logger_;
  MetricsRegistry metrics_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpApiTest, HealthzIsOkOnceStarted) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const Reply r = Get("/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Json(), json({{"status", "ok"}})) << r.body;
}

TEST_F(HttpApiTest, SubmitNeedsAValidTokenWithTheSubmitRole) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  Reply r = Post("/v1/jobs", JobBody("a"), "");
  EXPECT_TRUE(IsError(r, 401, "unauthorized"));
  EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer");
  r = Post("/v1/jobs", JobBody("a"), kWrongToken);
  EXPECT_TRUE(IsError(r, 401, "unauthorized"));
  EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(r.body.find(kWrongToken), std::string::npos) << "the token is echoed: " << r.body;
  // A token under another scheme is no bearer token.
  r = Send("POST", "/v1/jobs", "", JobBody("a"),
           {{"Authorization", std::string("Basic ") + kSubmitToken}});
  EXPECT_TRUE(IsError(r, 401, "unauthorized"));
  r = Post("/v1/jobs", JobBody("a"), kReadToken);
  EXPECT_TRUE(IsError(r, 403, "forbidden"));
  EXPECT_NE(ErrorMessage(r).find("submit"), std::string::npos) << r.body;
  // None of the refusals created the job.
  EXPECT_TRUE(IsError(Get("/v1/jobs/a", kReadToken), 404, "not_found"));

  r = Post("/v1/jobs", JobBody("a"), kSubmitToken);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Header("Idempotency-Replayed"), "");
  json j = r.Json();
  EXPECT_EQ(j["name"], "a");
  EXPECT_EQ(j["state"], "queued");
  EXPECT_EQ(j["gang"], 1);
  EXPECT_EQ(j["stacks"], json({"cuda"}));
  EXPECT_EQ(j["speed_assumed"], true);
  // The admin role includes submit.
  r = Post("/v1/jobs", JobBody("b", R"(,"throughput":{"v100":2})"), kAdminToken);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Json()["speed_assumed"], false);
}

TEST_F(HttpApiTest, ASecondSubmitOfANameConflictsUnlessItRetriesTheSameKey) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const httplib::Headers key1 = {{"Idempotency-Key", "key-1"}};
  Reply r = Post("/v1/jobs", JobBody("once"), kSubmitToken, key1);
  ASSERT_EQ(r.status, 201) << r.body;
  r = Post("/v1/jobs", JobBody("once"), kSubmitToken);
  EXPECT_TRUE(IsError(r, 409, "conflict"));
  EXPECT_NE(ErrorMessage(r).find("once"), std::string::npos) << r.body;
  r = Post("/v1/jobs", JobBody("once"), kSubmitToken, {{"Idempotency-Key", "key-2"}});
  EXPECT_TRUE(IsError(r, 409, "conflict"));
  r = Post("/v1/jobs", JobBody("once"), kSubmitToken, key1);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Idempotency-Replayed"), "true");
  EXPECT_EQ(r.Json()["name"], "once");
  r = Post("/v1/jobs", JobBody("long-key"), kSubmitToken,
           {{"Idempotency-Key", std::string(257, 'k')}});
  EXPECT_TRUE(IsError(r, 400, "invalid_argument"));
  EXPECT_NE(ErrorMessage(r).find("Idempotency-Key"), std::string::npos) << r.body;
  const json list = Get("/v1/jobs", kReadToken).Json();
  ASSERT_TRUE(list.contains("jobs"));
  EXPECT_EQ(list["jobs"].size(), 1u) << list;
}

TEST_F(HttpApiTest, AKeyRetriedWithAnotherBodyIs422AndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const httplib::Headers key = {{"Idempotency-Key", "key-1"}};
  Reply r = Post("/v1/jobs", JobBody("once"), kSubmitToken, key);
  ASSERT_EQ(r.status, 201) << r.body;
  r = Post("/v1/jobs", JobBody("once", R"(,"gang_size":2)"), kSubmitToken, key);
  EXPECT_TRUE(IsError(r, 422, "idempotency_mismatch"));
  EXPECT_NE(ErrorMessage(r).find("Idempotency-Key 'key-1' was first sent with another body for "
                                 "job 'once'"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(r.Header("Idempotency-Replayed"), "");
  // The same job written with other spacing and key order is the same request.
  r = Post("/v1/jobs", R"({ "work": 1e8, "stacks": ["cuda"], "name": "once" })", kSubmitToken, key);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Idempotency-Replayed"), "true");
  EXPECT_EQ(Get("/v1/jobs/once", kReadToken).Json()["gang"], 1);
}

TEST_F(HttpApiTest, ABadBodyIs400SayingWhatIsWrong) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  struct Case {
    std::string body;
    std::string in_message;  // what the message must name
  };
  const std::vector<Case> cases = {
      {R"({"name":"g","stacks":["cuda"],"work":10,"gang_size":"two"})", "gang_size"},
      {"this is not JSON", "not JSON"},
      {"", "not JSON"},
      {R"([{"name":"arr","stacks":["cuda"],"work":10}])", "array"},
      {R"({"name":"cut","stacks":["cuda"],"wo)", "not JSON"},
      {R"({"name":"u","stacks":["cuda"],"work":10,"colour":"red"})", "colour"},
      {R"({"name":"t","stacks":["cuda"],"work":10,"arrival":5})", "arrival"},
      {R"({"name":"r","stacks":["cuda"],"work":10,"repeat":3})", "repeat"},
      {R"({"name":"-dash","stacks":["cuda"],"work":10})", "name"},
      // Regression (fuzz/job_request_fuzz): a number was taken as its text, "-1" or "1e+300"
      // not being job ids.
      {R"({"name":-1,"stacks":["cuda"],"work":10})", "name: is -1 (expected a non-empty string)"},
      {R"({"name":1e300,"stacks":["cuda"],"work":10})", "name: is 1e+300 (expected a non-empty"},
      {R"({"name":null,"stacks":["cuda"],"work":10})", "name"},
      {R"({"name":"p","stacks":["cuda"],"work":-1})", "work"},
  };
  for (const Case& c : cases) {
    const Reply r = Post("/v1/jobs", c.body, kSubmitToken);
    EXPECT_TRUE(IsError(r, 400, "invalid_argument")) << "body: " << c.body;
    EXPECT_NE(ErrorMessage(r).find(c.in_message), std::string::npos)
        << "body: " << c.body << "\nreply: " << r.body;
  }
  // An unknown field is named as unknown.
  EXPECT_NE(ErrorMessage(Post("/v1/jobs", cases[5].body, kSubmitToken)).find("unknown field"),
            std::string::npos);
  // A job no device of the cluster can run: the reason is given.
  const Reply r = Post("/v1/jobs", R"({"name":"amd","stacks":["rocm"],"work":10})", kSubmitToken);
  EXPECT_TRUE(IsError(r, 400, "invalid_argument"));
  EXPECT_NE(ErrorMessage(r).find("runs cuda"), std::string::npos) << r.body;
  // Nothing was admitted.
  const json list = Get("/v1/jobs", kReadToken).Json();
  ASSERT_TRUE(list.contains("jobs")) << list;
  EXPECT_TRUE(list["jobs"].empty()) << list;
}

// Regression (fuzz/job_request_fuzz): a number beyond a double's range made the JSON parser
// throw an exception ParseJobRequest did not catch; the API answered 500 instead of 400.
TEST_F(HttpApiTest, ANumberTooLargeIs400) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  for (const char* body : {R"({"name":"big","stacks":["cuda"],"work":1e400})", "-1e400"}) {
    const Reply r = Post("/v1/jobs", body, kSubmitToken);
    EXPECT_TRUE(IsError(r, 400, "invalid_argument")) << body;
    EXPECT_NE(ErrorMessage(r).find("1e400"), std::string::npos) << r.body;
  }
}

// Regression (fuzz/job_request_fuzz): a body nested thousands deep (it fits in the size limit)
// overflowed the stack when ParseJobRequest wrote it back as one line.
TEST_F(HttpApiTest, ABodyNestedTooDeepIs400) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const int levels = (kMaxJobRequestBytes - 64) / 2;
  const std::string body = R"({"name":"deep","stacks":["cuda"],"work":1,"x":)" +
                           std::string(levels, '[') + std::string(levels, ']') + "}";
  ASSERT_LE(body.size(), kMaxJobRequestBytes);
  Reply r = Post("/v1/jobs", body, kSubmitToken);
  EXPECT_TRUE(IsError(r, 400, "invalid_argument"));
  EXPECT_NE(ErrorMessage(r).find("nesting"), std::string::npos) << r.body;
  // Brackets inside strings are no nesting.
  r = Post("/v1/jobs",
           R"({"name":"brackets","stacks":["cuda"],"work":1,"command":["echo",")" +
               std::string(1000, '[') + R"(\"{"]})",
           kSubmitToken);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(HttpApiTest, ABodyOverTheLimitIs413AndOneAtTheLimitIsRead) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  // A valid job padded with blanks to exactly the limit is read.
  std::string at_limit = JobBody("edge");
  at_limit.resize(kMaxJobRequestBytes, ' ');
  Reply r = Post("/v1/jobs", at_limit, kSubmitToken);
  EXPECT_EQ(r.status, 201) << r.body;
  // One byte more is refused before it is parsed.
  std::string over = JobBody("over");
  over.resize(kMaxJobRequestBytes + 1, ' ');
  r = Post("/v1/jobs", over, kSubmitToken);
  EXPECT_TRUE(IsError(r, 413, "too_large"));
  EXPECT_NE(ErrorMessage(r).find(std::to_string(kMaxJobRequestBytes)), std::string::npos) << r.body;
  EXPECT_TRUE(IsError(Get("/v1/jobs/over", kReadToken), 404, "not_found"));
}

// Regression: httplib 0.11 inflated a compressed body without a bound before any handler, the
// token check included, ran (a 64 KiB gzip body can inflate to 64 MiB, brotli to far more).
TEST_F(HttpApiTest, ACompressedBodyIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  // 256 KiB of blanks gzip to a few hundred bytes; they were inflated past the limit.
  client_->set_compress(true);
  std::string padded = JobBody("gz");
  padded.resize(4 * kMaxJobRequestBytes, ' ');
  for (const char* token : {"", kSubmitToken}) {
    const Reply r = Post("/v1/jobs", padded, token);
    EXPECT_TRUE(IsError(r, 415, "bad_request")) << "token '" << token << "'";
    EXPECT_NE(ErrorMessage(r).find("Content-Encoding"), std::string::npos) << r.body;
  }
  client_->set_compress(false);
  EXPECT_TRUE(Get("/v1/jobs", kReadToken).Json()["jobs"].empty());
  // The same job sent plainly is taken.
  EXPECT_EQ(Post("/v1/jobs", JobBody("gz"), kSubmitToken).status, 201);
  EXPECT_EQ(Send("POST", "/v1/jobs", kSubmitToken, JobBody("identity"),
                 {{"Content-Encoding", "identity"}})
                .status,
            201);
}

TEST_F(HttpApiTest, ListFiltersByStateAndLimit) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  // Nothing starts on drained nodes: every job stays queued.
  for (const std::string& node : NodeNames()) {
    ASSERT_EQ(Post("/v1/nodes/" + node + "/drain", "", kAdminToken).status, 200);
  }
  for (const char* name : {"q1", "q2", "q3"}) {
    ASSERT_EQ(Post("/v1/jobs", JobBody(name), kSubmitToken).status, 201);
  }
  Reply r = Get("/v1/jobs");  // anonymous reads are allowed by default
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["jobs"].size(), 3u) << r.body;
  r = Get("/v1/jobs?state=queued", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  std::set<std::string> names;
  const json queued = r.Json();
  for (const json& j : queued["jobs"]) {
    EXPECT_EQ(j["state"], "queued");
    names.insert(j["name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"q1", "q2", "q3"})) << r.body;
  r = Get("/v1/jobs?state=running", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.Json()["jobs"].empty()) << r.body;
  r = Get("/v1/jobs?limit=2", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["jobs"].size(), 2u) << r.body;
  r = Get("/v1/jobs?state=queued&limit=100000", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["jobs"].size(), 3u) << r.body;

  r = Get("/v1/jobs?state=bogus", kReadToken);
  EXPECT_TRUE(IsError(r, 400, "invalid_argument"));
  EXPECT_NE(ErrorMessage(r).find("state"), std::string::npos) << r.body;
  for (const char* limit : {"0", "abc", "-1", "2x", "", "100001", "99999999999999999999"}) {
    r = Get(std::string("/v1/jobs?limit=") + limit, kReadToken);
    EXPECT_TRUE(IsError(r, 400, "invalid_argument")) << "limit=" << limit;
    EXPECT_NE(ErrorMessage(r).find("limit"), std::string::npos) << r.body;
  }
}

// What a client that follows next_cursor to the last page saw: the names, page by page.
struct Pages {
  std::vector<std::string> names;
  std::vector<size_t> sizes;
};

TEST_F(HttpApiTest, ListsPagePastTheDefaultLimitWithACursor) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  for (const std::string& node : NodeNames()) {
    ASSERT_EQ(Post("/v1/nodes/" + node + "/drain", "", kAdminToken).status, 200);
  }
  // 1,050 queued jobs, submitted by 6 threads at once so that they commit in batches.
  constexpr int kJobs = 1050;
  std::vector<std::thread> submitters;
  for (int t = 0; t < 6; ++t) {
    submitters.emplace_back([this, t] {
      for (int i = t; i < kJobs; i += 6) {
        auto req = ParseJobRequest(JobBody(fmt::format("j{:04}", i)), service_->cluster().catalog);
        if (!req.ok() || !service_->Submit(std::move(req->job), req->spec_json, "").ok()) {
          ADD_FAILURE() << "submitting j" << i;
        }
      }
    });
  }
  for (std::thread& t : submitters) t.join();

  // Follows the Link header from `first` (a list route and its query) to the last page.
  const auto read_all = [&](const std::string& first) {
    Pages pages;
    std::string url = first;
    while (!url.empty()) {
      const Reply r = Get(url, kReadToken);
      EXPECT_EQ(r.status, 200) << url << ": " << r.body;
      const json j = r.Json();
      if (r.status != 200 || !j.contains("next_cursor")) break;
      for (const json& job : j["jobs"]) pages.names.push_back(job["name"].get<std::string>());
      pages.sizes.push_back(j["jobs"].size());
      url.clear();
      if (j["next_cursor"].is_string()) {
        // The Link header names the next page: the same query, and the cursor.
        const std::string link = r.Header("Link");
        const size_t open = link.find('<'), close = link.find('>');
        EXPECT_EQ(link.substr(close), ">; rel=\"next\"") << link;
        url = link.substr(open + 1, close - open - 1);
        EXPECT_NE(url.find("cursor=" + j["next_cursor"].get<std::string>()), std::string::npos)
            << link;
      } else {
        EXPECT_TRUE(j["next_cursor"].is_null()) << r.body;
        EXPECT_EQ(r.Header("Link"), "");
      }
    }
    return pages;
  };
  std::vector<std::string> all;
  for (int i = 0; i < kJobs; ++i) all.push_back(fmt::format("j{:04}", i));
  const auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };

  // The default limit, 1,000: the first page says that more remain.
  Pages by_default = read_all("/v1/jobs");
  EXPECT_EQ(by_default.sizes, (std::vector<size_t>{1000, 50}));
  EXPECT_EQ(sorted(by_default.names), all);

  // Pages of 200 while jobs end between them: one already shown, one not yet shown.
  Reply r = Get("/v1/jobs?state=queued&limit=200", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json page = r.Json();
  ASSERT_EQ(page["jobs"].size(), 200u);
  const std::string shown = page["jobs"][7]["name"], ahead = "j1049";
  ASSERT_EQ(service_->Cancel(shown)->state, JobState::kCancelled);
  ASSERT_EQ(service_->Cancel(ahead)->state, JobState::kCancelled);
  const std::string cursor = page["next_cursor"].get<std::string>();
  Pages rest = read_all("/v1/jobs?state=queued&limit=200&cursor=" + cursor);
  EXPECT_EQ(rest.sizes, (std::vector<size_t>{200, 200, 200, 200, 49}));
  std::vector<std::string> names = rest.names;
  for (const json& j : page["jobs"]) names.push_back(j["name"].get<std::string>());
  std::vector<std::string> queued = all;
  queued.erase(std::find(queued.begin(), queued.end(), ahead));
  EXPECT_EQ(sorted(names), queued) << "each job still queued once, " << shown << " once";

  // Every job, in pages of 200: the two cancelled ones come last.
  Pages every = read_all("/v1/jobs?limit=200");
  EXPECT_EQ(every.sizes, (std::vector<size_t>{200, 200, 200, 200, 200, 50}));
  EXPECT_EQ(sorted(every.names), all);
  EXPECT_EQ(std::vector<std::string>(every.names.end() - 2, every.names.end()),
            sorted({shown, ahead}));
}

TEST_F(HttpApiTest, NodesPageInClusterOrder) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const std::vector<std::string> nodes = NodeNames();
  ASSERT_EQ(nodes.size(), 4u);  // one device each
  std::vector<std::string> paged;
  std::string url = "/v1/nodes?limit=2";
  while (true) {
    const Reply r = Get(url, kReadToken);
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = r.Json();
    ASSERT_LE(j["nodes"].size(), 2u);
    for (const json& n : j["nodes"]) paged.push_back(n["name"].get<std::string>());
    if (j["next_cursor"].is_null()) break;
    url = "/v1/nodes?limit=2&cursor=" + j["next_cursor"].get<std::string>();
  }
  EXPECT_EQ(paged, nodes);
  EXPECT_TRUE(Get("/v1/nodes").Json()["next_cursor"].is_null());
}

TEST_F(HttpApiTest, ABadCursorIs400NamingIt) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  // Drained nodes keep the jobs queued, so that the queued list has more than one page.
  for (const std::string& node : NodeNames()) {
    ASSERT_EQ(Post("/v1/nodes/" + node + "/drain", "", kAdminToken).status, 200);
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Post("/v1/jobs", JobBody(fmt::format("c{}", i)), kSubmitToken).status, 201);
  }
  const std::string jobs_cursor =
      Get("/v1/jobs?limit=1", kReadToken).Json()["next_cursor"].get<std::string>();
  const std::string queued_cursor =
      Get("/v1/jobs?state=queued&limit=1", kReadToken).Json()["next_cursor"].get<std::string>();
  const json nodes = Get("/v1/nodes?limit=1", kReadToken).Json();
  ASSERT_TRUE(nodes["next_cursor"].is_string()) << nodes.dump();
  const std::string nodes_cursor = nodes["next_cursor"];
  // What a cursor of another list looks like: base64url of JSON naming that list.
  const std::string forged = "eyJsaXN0IjoiL3YxL2pvYnMifQ";  // {"list":"/v1/jobs"}
  for (const std::string& url : std::vector<std::string>{
           "/v1/jobs?cursor=", "/v1/jobs?cursor=not%20base64", "/v1/jobs?cursor=YWJj",
           "/v1/jobs?cursor=" + jobs_cursor.substr(0, jobs_cursor.size() - 5),
           "/v1/jobs?cursor=" + forged, "/v1/jobs?cursor=" + nodes_cursor,
           "/v1/nodes?cursor=" + jobs_cursor, "/v1/nodes?cursor=x",
           "/v1/jobs?state=running&cursor=" + queued_cursor, "/v1/jobs?cursor=" + queued_cursor}) {
    const Reply r = Get(url, kReadToken);
    EXPECT_TRUE(IsError(r, 400, "invalid_argument")) << url;
    EXPECT_EQ(ErrorMessage(r).rfind("cursor: ", 0), 0u) << url << ": " << r.body;
  }
  EXPECT_NE(ErrorMessage(Get("/v1/jobs?cursor=" + queued_cursor, kReadToken)).find("state"),
            std::string::npos);
  // The same cursors where they belong.
  EXPECT_EQ(Get("/v1/jobs?cursor=" + jobs_cursor, kReadToken).status, 200);
  EXPECT_EQ(Get("/v1/jobs?state=queued&cursor=" + queued_cursor, kReadToken).status, 200);
  EXPECT_EQ(Get("/v1/nodes?cursor=" + nodes_cursor, kReadToken).status, 200);
  EXPECT_TRUE(IsError(Get("/v1/nodes?limit=0", kReadToken), 400, "invalid_argument"));
}

TEST_F(HttpApiTest, HistoryPagesTheSamplesSinceATime) {
  ASSERT_NO_FATAL_FAILURE(Boot({.history_every_s = 0.01}));
  ASSERT_TRUE(WaitUntil([&] { return Get("/v1/history").Json()["samples"].size() >= 6; }));
  // The first page of 2 and the pages after it, by the Link header's cursor.
  Reply r = Get("/v1/history?limit=2");
  ASSERT_EQ(r.status, 200) << r.body;
  json page = r.Json();
  EXPECT_EQ(page["every_s"], 0.01);
  EXPECT_EQ(page["kept"], 8640);
  ASSERT_EQ(page["samples"].size(), 2u);
  const json first = page["samples"][0];
  EXPECT_EQ(first["jobs"], json({{"queued", 0}, {"running", 0}}));
  EXPECT_GT(first["power_w"].get<double>(), 0);
  EXPECT_EQ(first["types"],
            json::parse(R"([{"offered":2,"type":"k80","used":0,"utilization":0.0},)"
                        R"({"offered":2,"type":"v100-32g","used":0,"utilization":0.0}])"));
  const std::string link = r.Header("Link");
  const std::string cursor = page["next_cursor"].get<std::string>();
  EXPECT_EQ(link, "</v1/history?limit=2&cursor=" + cursor + ">; rel=\"next\"");
  std::vector<double> times;
  for (const json& s : page["samples"]) times.push_back(s["at"].get<double>());
  r = Get("/v1/history?limit=3&cursor=" + cursor);
  ASSERT_EQ(r.status, 200) << r.body;
  page = r.Json();
  for (const json& s : page["samples"]) times.push_back(s["at"].get<double>());
  ASSERT_EQ(times.size(), 5u);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_TRUE(std::adjacent_find(times.begin(), times.end()) == times.end());

  // since: unix seconds, or a duration before now.
  const std::string third = fmt::format("{:.6f}", times[2] - 1e-6);
  json since = Get("/v1/history?since=" + third).Json();
  ASSERT_FALSE(since["samples"].empty()) << since.dump();
  EXPECT_EQ(since["samples"][0]["at"], times[2]);
  EXPECT_EQ(Get("/v1/history?since=1h").Json()["samples"][0]["at"], times[0]);
  EXPECT_EQ(Get("/v1/history?since=0").Json()["samples"][0]["at"], times[0]);
  EXPECT_TRUE(Get("/v1/history?since=9999999999").Json()["samples"].empty());
  // A cursor keeps the first page's since.
  page = Get("/v1/history?limit=1&since=" + third).Json();
  ASSERT_TRUE(page["next_cursor"].is_string()) << page.dump();
  r = Get("/v1/history?limit=1&cursor=" + page["next_cursor"].get<std::string>());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["samples"][0]["at"], times[3]);

  for (const std::string bad : {"abc", "-5", "", "nan", "inf", "1e400", "5x", "-2h"}) {
    r = Get("/v1/history?since=" + bad);
    EXPECT_TRUE(IsError(r, 400, "invalid_argument")) << bad;
    EXPECT_EQ(ErrorMessage(r).rfind("since: ", 0), 0u) << bad << ": " << r.body;
  }
  r = Get("/v1/history?since=1h&cursor=" + cursor);
  EXPECT_TRUE(IsError(r, 400, "invalid_argument"));
  EXPECT_EQ(ErrorMessage(r).rfind("since: ", 0), 0u) << r.body;
  const std::string nodes_cursor = Get("/v1/nodes?limit=1").Json()["next_cursor"];
  for (const std::string& other : {nodes_cursor, std::string("x")}) {
    r = Get("/v1/history?cursor=" + other);
    EXPECT_TRUE(IsError(r, 400, "invalid_argument")) << other;
    EXPECT_EQ(ErrorMessage(r).rfind("cursor: ", 0), 0u) << r.body;
  }
  EXPECT_TRUE(IsError(Get("/v1/history?limit=0"), 400, "invalid_argument"));
}

TEST_F(HttpApiTest, OneJobAndWhyItWaits) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  for (const std::string& node : NodeNames()) {
    ASSERT_EQ(Post("/v1/nodes/" + node + "/drain", "", kAdminToken).status, 200);
  }
  ASSERT_EQ(Post("/v1/jobs", JobBody("w"), kSubmitToken).status, 201);
  Reply r = Get("/v1/jobs/w", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  EXPECT_EQ(j["name"], "w");
  EXPECT_EQ(j["state"], "queued");
  EXPECT_TRUE(j["started"].is_null()) << r.body;
  EXPECT_TRUE(j["devices"].empty()) << r.body;
  EXPECT_TRUE(IsError(Get("/v1/jobs/nobody", kReadToken), 404, "not_found"));

  r = Get("/v1/jobs/w/why", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  j = r.Json();
  EXPECT_EQ(j["name"], "w");
  ASSERT_TRUE(j["why"].is_string()) << r.body;
  EXPECT_FALSE(j["why"].get<std::string>().empty());
  EXPECT_TRUE(IsError(Get("/v1/jobs/nobody/why", kReadToken), 404, "not_found"));
}

TEST_F(HttpApiTest, DeleteCancelsAJob) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  ASSERT_EQ(Post("/v1/jobs", JobBody("c"), kSubmitToken).status, 201);
  ASSERT_TRUE(WaitUntil([&] { return JobState("c") == "running"; })) << JobState("c");
  EXPECT_TRUE(IsError(Delete("/v1/jobs/c", ""), 401, "unauthorized"));
  EXPECT_TRUE(IsError(Delete("/v1/jobs/c", kReadToken), 403, "forbidden"));
  EXPECT_EQ(JobState("c"), "running");
  const Reply r = Delete("/v1/jobs/c", kSubmitToken);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.Json()["name"], "c");
  EXPECT_TRUE(WaitUntil([&] { return JobState("c") == "cancelled"; })) << JobState("c");
  EXPECT_TRUE(IsError(Delete("/v1/jobs/nobody", kSubmitToken), 404, "not_found"));
}

TEST_F(HttpApiTest, NodesAreDrainedAndUndrainedByAnAdmin) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  Reply r = Get("/v1/nodes", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  ASSERT_TRUE(j["nodes"].is_array()) << r.body;
  ASSERT_FALSE(j["nodes"].empty());
  size_t devices = 0;
  for (const json& n : j["nodes"]) {
    EXPECT_EQ(n["drained"], false);
    EXPECT_EQ(n["power_state"], "on");
    devices += n["devices"].size();
  }
  EXPECT_EQ(devices, 4u) << r.body;
  const std::string node = j["nodes"][0]["name"];
  const std::string drain = "/v1/nodes/" + node + "/drain";
  const std::string undrain = "/v1/nodes/" + node + "/undrain";

  EXPECT_TRUE(IsError(Post(drain, "", ""), 401, "unauthorized"));
  EXPECT_TRUE(IsError(Post(drain, "", kReadToken), 403, "forbidden"));
  r = Post(drain, "", kSubmitToken);
  EXPECT_TRUE(IsError(r, 403, "forbidden"));
  EXPECT_NE(ErrorMessage(r).find("admin"), std::string::npos) << r.body;
  EXPECT_EQ(Get("/v1/nodes").Json()["nodes"][0]["drained"], false);

  r = Post(drain, "", kAdminToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["name"], node);
  EXPECT_EQ(r.Json()["drained"], true);
  EXPECT_EQ(Get("/v1/nodes").Json()["nodes"][0]["drained"], true);
  EXPECT_TRUE(IsError(Post(undrain, "", kSubmitToken), 403, "forbidden"));
  r = Post(undrain, "", kAdminToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["drained"], false);
  EXPECT_EQ(Get("/v1/nodes").Json()["nodes"][0]["drained"], false);

  // The history shows the newest 100 events and says when older ones remain.
  r = Get("/v1/nodes/" + node, kReadToken);
  EXPECT_EQ(r.Json()["older_history"], false) << r.body;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(service_->SetDrained(node, true).ok());
    ASSERT_TRUE(service_->SetDrained(node, false).ok());
  }
  r = Get("/v1/nodes/" + node, kReadToken);
  EXPECT_EQ(r.Json()["history"].size(), 100u) << r.body;
  EXPECT_EQ(r.Json()["older_history"], true) << r.body;

  EXPECT_TRUE(IsError(Post("/v1/nodes/no-such-node/drain", "", kAdminToken), 404, "not_found"));
  EXPECT_TRUE(IsError(Post("/v1/nodes/no-such-node/undrain", "", kAdminToken), 404, "not_found"));
}

TEST_F(HttpApiTest, ClusterSummarizesTypesAndJobs) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  ASSERT_EQ(Post("/v1/jobs", JobBody("s"), kSubmitToken).status, 201);
  ASSERT_TRUE(WaitUntil([&] { return JobState("s") == "running"; }));
  const Reply r = Get("/v1/cluster", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.Json();
  EXPECT_EQ(j["policy"], "fifo");
  EXPECT_TRUE(j["backend"].is_string()) << r.body;
  EXPECT_TRUE(j["now_s"].is_number()) << r.body;
  EXPECT_EQ(j["jobs"]["running"], 1) << r.body;
  EXPECT_EQ(j["jobs"]["queued"], 0) << r.body;
  int capacity = 0, used = 0;
  for (const json& t : j["types"]) {
    capacity += t["capacity"].get<int>();
    used += t["used"].get<int>();
  }
  EXPECT_EQ(capacity, 4) << r.body;
  EXPECT_EQ(used, 1) << r.body;
}

// A DAG of three tasks with costs by device type: `b` runs only on V100s.
constexpr const char* kPlanDag =
    R"({"dag":{"tasks":[{"id":"a","cost":{"v100-32g":2,"k80":4}},{"id":"b","cost":{"v100-32g":3}},)"
    R"({"id":"c","cost":{"v100-32g":2,"k80":1}}],"edges":[{"from":"a","to":"b","data":1},)"
    R"({"from":"a","to":"c","data":1}]}})";

TEST_F(HttpApiTest, PlanSplitsADagOverTheIdleNodes) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  EXPECT_EQ(Post("/v1/plan", kPlanDag, "").status, 401);
  EXPECT_EQ(Post("/v1/plan", kPlanDag, kReadToken).status, 403);
  Reply r = Post("/v1/plan", kPlanDag, kSubmitToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  EXPECT_TRUE(j["feasible"].get<bool>()) << r.body;
  EXPECT_EQ(j["nodes"]["mode"], "idle");
  EXPECT_EQ(j["nodes"]["of"], j["nodes"]["used"]) << r.body;
  EXPECT_EQ(j["plan"]["algo"], "heft");
  ASSERT_EQ(j["plan"]["schedule"].size(), 3u) << r.body;
  for (const json& row : j["plan"]["schedule"]) {
    // Devices are named node/index, and b sits on a V100 node.
    EXPECT_NE(row["processor"].get<std::string>().find('/'), std::string::npos) << r.body;
  }
  // With every V100 busy, no idle node can run b: infeasible, with the reason (a value, not an
  // error); on all nodes it plans.
  ASSERT_EQ(Post("/v1/jobs",
                 R"({"name":"busy","stacks":["cuda"],"gang_size":2,"work":1e8,)"
                 R"("throughput":{"v100":1}})",
                 kSubmitToken)
                .status,
            201);
  ASSERT_TRUE(WaitUntil([&] { return JobState("busy") == "running"; }));
  r = Post("/v1/plan", kPlanDag, kSubmitToken);
  ASSERT_EQ(r.status, 200) << r.body;
  j = r.Json();
  EXPECT_FALSE(j["feasible"].get<bool>()) << r.body;
  EXPECT_NE(j["reason"].get<std::string>().find("task b can run on none"), std::string::npos)
      << r.body;
  std::string all = kPlanDag;
  all.insert(1, R"("nodes":"all",)");
  r = Post("/v1/plan", all, kSubmitToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.Json()["feasible"].get<bool>()) << r.body;
}

TEST_F(HttpApiTest, PlanAModelPresetOrSayWhyNot) {
  ASSERT_NO_FATAL_FAILURE(Boot({.cluster = "a100-80g=8:per_node=8"}));
  Reply r = Post("/v1/plan", R"({"model":"llama-7b","batch":16})", kSubmitToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  ASSERT_TRUE(j["feasible"].get<bool>()) << r.body;
  EXPECT_EQ(j["plan"]["model"], "llama-7b");
  EXPECT_GT(j["plan"]["step_s"].get<double>(), 0);
  EXPECT_FALSE(j["plan"]["stages"].empty());
  r = Post("/v1/plan", R"({"model":"gpt3-175b","offload":false})", kSubmitToken);
  ASSERT_EQ(r.status, 200) << r.body;
  j = r.Json();
  EXPECT_FALSE(j["feasible"].get<bool>()) << r.body;
  EXPECT_FALSE(j["reason"].get<std::string>().empty());
  // Unknown presets and malformed bodies are 400s naming what is wrong.
  r = Post("/v1/plan", R"({"model":"llama-9000"})", kSubmitToken);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("llama-9000"), std::string::npos) << r.body;
  r = Post("/v1/plan", R"({"model":"llama-7b","batch":-1})", kSubmitToken);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("batch"), std::string::npos) << r.body;
  r = Post("/v1/plan", R"({"dag":{"tasks":[{"id":"a","cost":{"h100":1}}]}})", kSubmitToken);
  EXPECT_EQ(r.status, 400) << r.body;
}

TEST_F(HttpApiTest, MetricsCountRequestsAndSubmissions) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  ASSERT_EQ(Post("/v1/jobs", JobBody("m"), kSubmitToken).status, 201);
  const Reply r = Get("/metrics", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type").rfind("text/plain", 0), 0u) << r.Header("Content-Type");
  EXPECT_NE(r.body.find("hetsched_api_request_seconds"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"(hetsched_api_request_seconds_count{route="/v1/jobs"} 1)"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("\nhetsched_jobs_submitted_total 1\n"), std::string::npos) << r.body;
}

TEST_F(HttpApiTest, AMethodARouteDoesNotServeIs405NamingTheAllowedOnes) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const std::string node = NodeNames().at(0);
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kAdminToken}};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/v1/jobs", "GET, HEAD, POST"},
      {"/v1/jobs/some-job", "DELETE, GET, HEAD"},
      {"/v1/nodes/" + node + "/drain", "POST"},
  };
  for (const auto& [path, allowed] : cases) {
    for (const std::string method : {"PUT", "PATCH"}) {
      auto r = method == "PUT" ? client_->Put(path, auth, "{}", "application/json")
                               : client_->Patch(path, auth, "{}", "application/json");
      ASSERT_TRUE(r) << method << " " << path;
      Reply reply{r->status, r->body, r->headers};
      EXPECT_TRUE(IsError(reply, 405, "method_not_allowed")) << method << " " << path;
      EXPECT_EQ(reply.Header("Allow"), allowed) << method << " " << path;
      EXPECT_NE(ErrorMessage(reply).find(method + " " + path), std::string::npos) << reply.body;
    }
  }
  // A path no route serves stays a 404, whatever the method.
  auto r = client_->Put("/v1/nothing", auth, "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_TRUE(IsError({r->status, r->body, r->headers}, 404, "not_found"));
  EXPECT_FALSE(r->has_header("Allow"));
}

TEST_F(HttpApiTest, ARouteNeedingARoleIs401WithoutATokenAnd403WithTooLowAOne) {
  ASSERT_NO_FATAL_FAILURE(Boot());  // anonymous reads allowed
  // whatif is a GET that needs the submit role: no token is 401, not 403.
  Reply r = Get("/v1/whatif?name=x");
  EXPECT_TRUE(IsError(r, 401, "unauthorized"));
  EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer");
  r = Get("/v1/whatif?name=x", kReadToken);
  EXPECT_TRUE(IsError(r, 403, "forbidden"));
  EXPECT_EQ(r.Header("WWW-Authenticate"), "");
  r = Post("/v1/jobs", JobBody("a"), "");
  EXPECT_TRUE(IsError(r, 401, "unauthorized"));
  EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer");
  r = Post("/v1/nodes/" + NodeNames().at(0) + "/drain", "", kSubmitToken);
  EXPECT_TRUE(IsError(r, 403, "forbidden"));
  EXPECT_NE(ErrorMessage(r).find("admin"), std::string::npos) << r.body;
}

// Every route the server has, as OpenAPI names it.
const std::vector<std::pair<std::string, std::string>> kRoutes = {
    {"get", "/healthz"},
    {"post", "/v1/jobs"},
    {"get", "/v1/jobs"},
    {"get", "/v1/jobs/{name}"},
    {"delete", "/v1/jobs/{name}"},
    {"get", "/v1/jobs/{name}/why"},
    {"get", "/v1/nodes"},
    {"get", "/v1/nodes/{node}"},
    {"post", "/v1/nodes/{node}/drain"},
    {"post", "/v1/nodes/{node}/undrain"},
    {"get", "/v1/cluster"},
    {"get", "/v1/history"},
    {"get", "/v1/tenants"},
    {"get", "/v1/whatif"},
    {"post", "/v1/plan"},
    {"get", "/metrics"},
    {"get", "/openapi.json"},
    {"get", "/"},
};

TEST_F(HttpApiTest, OpenApiDocumentsEveryRouteServedAndNoOther) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  const Reply r = Get("/openapi.json");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type").rfind("application/json", 0), 0u);
  const json doc = r.Json();
  ASSERT_TRUE(doc.is_object()) << "not JSON";
  EXPECT_EQ(doc["openapi"].get<std::string>().rfind("3.", 0), 0u);
  ASSERT_TRUE(doc["paths"].is_object());
  std::set<std::pair<std::string, std::string>> served;
  for (const auto& [method, path] : kRoutes) {
    std::string upper = method;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    served.insert({upper, path});
  }
  // The kube-scheduler extender's routes (served by `serve --backend kubernetes` only,
  // tests/k8s/extender_test.cc) are left out of this mode's document.
  const auto listed = OpenApiOperations(doc);
  EXPECT_EQ(listed, served);
  // Each listed operation is served, and each of the full document's others is not.
  ASSERT_EQ(Post("/v1/jobs", JobBody("doc"), kSubmitToken).status, 201);
  const std::string node = NodeNames().at(0);
  for (const auto& [method, path] : OpenApiOperations(json::parse(OpenApiDocument()))) {
    std::string url = path;
    if (size_t at = url.find("{name}"); at != std::string::npos) url.replace(at, 6, "doc");
    if (size_t at = url.find("{node}"); at != std::string::npos) url.replace(at, 6, node);
    const Reply got = Send(method, url, kAdminToken, "{}");
    if (listed.count({method, path})) {
      EXPECT_NE(got.status, 404) << method << " " << url << ": " << got.body;
    } else {
      EXPECT_TRUE(got.status == 404 || got.status == 405)
          << method << " " << url << " is served but not listed: " << got.status;
    }
  }
}

TEST_F(HttpApiTest, TheDashboardIsHtml) {
  ASSERT_NO_FATAL_FAILURE(Boot({.anonymous_read = false}));
  const Reply r = Get("/");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type").rfind("text/html", 0), 0u) << r.Header("Content-Type");
  EXPECT_NE(r.body.find("<html"), std::string::npos);
  EXPECT_NE(r.body.find("</html>"), std::string::npos);
}

TEST_F(HttpApiTest, AnUnknownRouteIsA404InJson) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  EXPECT_TRUE(IsError(Get("/v2/jobs", kReadToken), 404, "not_found"));
  EXPECT_TRUE(IsError(Get("/v1/jobs/a/b/c", kReadToken), 404, "not_found"));
  EXPECT_TRUE(IsError(Get("/nope"), 404, "not_found"));
  // A route served for other methods is a 405, not a 404.
  const Reply post = Post("/v1/cluster", "", kAdminToken);
  EXPECT_TRUE(IsError(post, 405, "method_not_allowed"));
  EXPECT_EQ(post.Header("Allow"), "GET, HEAD");
  EXPECT_TRUE(IsError(Delete("/v1/nodes", kAdminToken), 405, "method_not_allowed"));
}

TEST_F(HttpApiTest, WithoutAnonymousReadsEveryReadNeedsAToken) {
  ASSERT_NO_FATAL_FAILURE(Boot({.anonymous_read = false}));
  for (const char* path :
       {"/v1/jobs", "/v1/jobs/x", "/v1/jobs/x/why", "/v1/nodes", "/v1/cluster", "/metrics"}) {
    Reply r = Get(path);
    EXPECT_TRUE(IsError(r, 401, "unauthorized")) << path;
    EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer") << path;
    EXPECT_TRUE(IsError(Get(path, kWrongToken), 401, "unauthorized")) << path;
  }
  EXPECT_EQ(Get("/v1/jobs", kReadToken).status, 200);
  EXPECT_EQ(Get("/v1/cluster", kSubmitToken).status, 200);
  EXPECT_EQ(Get("/metrics", kAdminToken).status, 200);
  // Liveness, the API document and the dashboard stay open.
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/openapi.json").status, 200);
  EXPECT_EQ(Get("/").status, 200);
}

TEST_F(HttpApiTest, UntilTheServiceStartsItAnswers503) {
  ASSERT_NO_FATAL_FAILURE(Boot({.start_service = false}));
  EXPECT_EQ(Get("/healthz").status, 503);
  for (const char* path :
       {"/v1/jobs", "/v1/jobs/x", "/v1/jobs/x/why", "/v1/nodes", "/v1/cluster"}) {
    const Reply r = Get(path, kReadToken);
    EXPECT_TRUE(IsError(r, 503, "unavailable")) << path;
    EXPECT_EQ(r.Header("Retry-After"), "1") << path;
  }
  EXPECT_TRUE(IsError(Post("/v1/jobs", JobBody("early"), kSubmitToken), 503, "unavailable"));
  EXPECT_TRUE(IsError(Delete("/v1/jobs/early", kSubmitToken), 503, "unavailable"));
  EXPECT_TRUE(IsError(Post("/v1/nodes/n/drain", "", kAdminToken), 503, "unavailable"));
  // Authorization is still checked first.
  EXPECT_TRUE(IsError(Post("/v1/jobs", JobBody("early"), ""), 401, "unauthorized"));

  ASSERT_TRUE(service_->Start().ok());
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/v1/jobs", kReadToken).status, 200);
  EXPECT_EQ(Post("/v1/jobs", JobBody("early"), kSubmitToken).status, 201);
}

// GET /healthz from another thread, at most `wait` for its answer; nullopt when none came by
// then (the request may still be waiting).
std::optional<std::pair<int, json>> HealthzWithin(int port, std::chrono::seconds wait) {
  auto reply = std::async(std::launch::async, [port]() -> std::optional<std::pair<int, json>> {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60);
    auto r = client.Get("/healthz");
    if (!r) return std::nullopt;
    return std::make_pair(r->status, json::parse(r->body, nullptr, false));
  });
  if (reply.wait_for(wait) != std::future_status::ready) {
    // The future's destructor would wait for the request: the thread is left to finish it.
    std::thread([r = std::move(reply)]() mutable { r.wait(); }).detach();
    return std::nullopt;
  }
  return reply.get();
}

// Readiness does not wait for the service's lock: a scheduling pass holds it (the first after
// a restart re-places every job that had run, seconds at 10,000 nodes), and /healthz answers
// meanwhile from what it reads without the lock.
TEST_F(HttpApiTest, HealthzAnswersWhileAPassHoldsTheServiceLock) {
  auto clock = std::make_shared<HoldableClock>();
  ASSERT_NO_FATAL_FAILURE(Boot({.wall_clock = [clock] { return clock->Now(); }}));
  clock->Hold();
  ASSERT_TRUE(clock->ReaderWaits());  // the control loop, inside a pass
  // The lock is held: a call that takes it waits.
  auto held = std::async(std::launch::async, [this] { return service_->jobs_held(); });
  EXPECT_EQ(held.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  const auto health = HealthzWithin(api_->port(), std::chrono::seconds(5));
  clock->Release();
  EXPECT_EQ(held.get(), 0U);
  ASSERT_TRUE(health.has_value()) << "/healthz waited for the pass";
  EXPECT_EQ(health->first, 200);
  EXPECT_EQ(health->second, json({{"status", "ok"}}));
}

// While the service recovers (holding its lock) /healthz says so at once, 503 with the reason,
// and 200 once recovery is done.
TEST_F(HttpApiTest, HealthzAnswers503AtOnceWhileTheServiceRecovers) {
  auto clock = std::make_shared<HoldableClock>();
  ASSERT_NO_FATAL_FAILURE(
      Boot({.start_service = false, .wall_clock = [clock] { return clock->Now(); }}));
  clock->Hold();
  auto started = std::async(std::launch::async, [this] { return service_->Start(); });
  ASSERT_TRUE(clock->ReaderWaits());  // Start, recovering
  const auto health = HealthzWithin(api_->port(), std::chrono::seconds(5));
  clock->Release();
  const util::Status st = started.get();
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(health.has_value()) << "/healthz waited for the recovery";
  EXPECT_EQ(health->first, 503);
  EXPECT_EQ(health->second, json({{"status", "unavailable"},
                                  {"message", "the daemon is recovering its state; try again"}}));
  EXPECT_EQ(Get("/healthz").status, 200);
}

// `method` `path` from another thread, at most 5 s for the answer; nullopt when none came by
// then (the request may still be waiting).
std::optional<Reply> AnsweredWithin5s(int port, const std::string& method, const std::string& path,
                                      const std::string& token, const std::string& body = "") {
  auto reply = std::async(std::launch::async, [=]() -> std::optional<Reply> {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60);
    const httplib::Headers headers = {{"Authorization", "Bearer " + token}};
    httplib::Result r = method == "GET"    ? client.Get(path, headers)
                        : method == "POST" ? client.Post(path, headers, body, "application/json")
                                           : client.Delete(path, headers);
    if (!r) return std::nullopt;
    return Reply{r->status, r->body, r->headers};
  });
  if (reply.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    std::thread([r = std::move(reply)]() mutable { r.wait(); }).detach();
    return std::nullopt;
  }
  return reply.get();
}

// While the service recovers (holding its lock, seconds at scale) every route that needs the
// recovered state answers 503 at once, not once recovery is done; /metrics answers 200 at once
// with what it has (no gauge set yet) and says why its gauges are not refreshed.
TEST_F(HttpApiTest, EveryRouteOfTheStateAnswers503AtOnceWhileTheServiceRecovers) {
  auto clock = std::make_shared<HoldableClock>();
  ASSERT_NO_FATAL_FAILURE(
      Boot({.start_service = false, .wall_clock = [clock] { return clock->Now(); }}));
  const std::string node = "v100-1";
  clock->Hold();
  auto started = std::async(std::launch::async, [this] { return service_->Start(); });
  ASSERT_TRUE(clock->ReaderWaits());  // Start, recovering
  const std::vector<std::tuple<std::string, std::string, std::string>> requests = {
      {"POST", "/v1/jobs", JobBody("during")},
      {"GET", "/v1/jobs", ""},
      {"GET", "/v1/jobs/x", ""},
      {"DELETE", "/v1/jobs/x", ""},
      {"GET", "/v1/jobs/x/why", ""},
      {"GET", "/v1/nodes", ""},
      {"GET", "/v1/nodes/" + node, ""},
      {"POST", "/v1/nodes/" + node + "/drain", ""},
      {"POST", "/v1/nodes/" + node + "/undrain", ""},
      {"GET", "/v1/cluster", ""},
      {"GET", "/v1/history", ""},
      {"GET", "/v1/tenants", ""},
      {"GET", "/v1/whatif?policy=fifo", ""},
      {"POST", "/v1/plan", R"({"model":"llama-7b"})"},
  };
  std::vector<std::pair<std::string, std::optional<Reply>>> answers;
  for (const auto& [method, path, body] : requests) {
    answers.emplace_back(method + " " + path,
                         AnsweredWithin5s(api_->port(), method, path, kAdminToken, body));
    if (!answers.back().second) break;  // the API's two threads may both be waiting now
  }
  const std::optional<Reply> metrics =
      answers.back().second ? AnsweredWithin5s(api_->port(), "GET", "/metrics", kAdminToken)
                            : std::nullopt;
  clock->Release();
  const util::Status st = started.get();
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(answers.size(), requests.size()) << answers.back().first << " waited for recovery";
  for (const auto& [request, reply] : answers) {
    EXPECT_TRUE(IsError(*reply, 503, "unavailable")) << request;
    EXPECT_EQ(ErrorMessage(*reply), "the daemon is recovering its state; try again") << request;
    EXPECT_EQ(reply->Header("Retry-After"), "1") << request;
  }
  ASSERT_TRUE(metrics.has_value()) << "/metrics waited for recovery";
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->Header("Warning"),
            "199 - \"gauges not refreshed: the daemon is recovering its state; try again\"");
  EXPECT_EQ(metrics->body.find("hetsched_devices_offered{"), std::string::npos) << metrics->body;
  // Once recovered, the same routes answer, and /metrics with fresh gauges once the first
  // pass after recovery let go of the state (on a busy machine it may still hold it here).
  EXPECT_EQ(Get("/v1/jobs", kReadToken).status, 200);
  EXPECT_EQ(Get("/v1/nodes/" + node, kReadToken).status, 200);
  std::string warning;
  EXPECT_TRUE(WaitUntil([&] {
    warning = Get("/metrics", kReadToken).Header("Warning");
    return warning.empty();
  })) << warning;
}

// The first scheduling pass after a restart re-places every job that ran (seconds at 10,000
// nodes): /metrics answers meanwhile with the gauges as recovered, and says so; the job routes
// wait for the pass (they need the state it changes).
TEST_F(HttpApiTest, MetricsAnswerDuringTheFirstPassWithTheGaugesAsRecovered) {
  auto clock = std::make_shared<HoldableClock>();
  ASSERT_NO_FATAL_FAILURE(
      Boot({.start_service = false, .wall_clock = [clock] { return clock->Now(); }}));
  clock->Hold(std::this_thread::get_id());  // Start recovers; its control loop's pass waits
  ASSERT_TRUE(service_->Start().ok());
  ASSERT_TRUE(clock->ReaderWaits());  // the first pass
  EXPECT_EQ(Get("/healthz").status, 200);
  const std::optional<Reply> metrics =
      AnsweredWithin5s(api_->port(), "GET", "/metrics", kReadToken);
  const std::optional<Reply> jobs = AnsweredWithin5s(api_->port(), "GET", "/v1/jobs", kReadToken);
  clock->Release();
  ASSERT_TRUE(metrics.has_value()) << "/metrics waited for the first pass";
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->Header("Warning"),
            "199 - \"gauges not refreshed: the first scheduling pass after recovery holds the "
            "state: gauges as recovered\"");
  EXPECT_NE(metrics->body.find("hetsched_devices_offered{device_type=\"v100-32g\"} 2\n"),
            std::string::npos)
      << metrics->body;
  EXPECT_FALSE(jobs.has_value()) << "GET /v1/jobs did not wait for the pass";
  // Later passes are waited for: the gauges are fresh.
  ASSERT_TRUE(WaitUntil([&] { return Get("/metrics", kReadToken).Header("Warning").empty(); }));
}

// TearDown checks every test's log; this one makes sure the log has lines to check, written
// while every token (and a wrong one) was sent.
TEST_F(HttpApiTest, TokensNeverReachTheLog) {
  ASSERT_NO_FATAL_FAILURE(Boot());
  int i = 0;
  for (const char* token : {kReadToken, kSubmitToken, kAdminToken, kWrongToken}) {
    (void)Post("/v1/jobs", JobBody(fmt::format("log-{}", i++)), token);
    (void)Post("/v1/jobs", R"({"name":"bad","gang_size":"two"})", token);
    (void)Get("/v1/jobs", token);
    (void)Delete("/v1/jobs/nobody", token);
    (void)Post("/v1/nodes/no-such-node/drain", "", token);
  }
  // The submit token's job runs: the service logged its submission and start.
  ASSERT_TRUE(WaitUntil([&] { return JobState("log-1") == "running"; }));
  bool submitted_logged = false;
  for (const std::string& line : log_.Lines()) {
    submitted_logged |= line.find("\"log-1\"") != std::string::npos;
  }
  EXPECT_TRUE(submitted_logged) << "the capture misses the service's lines";
}

}  // namespace
}  // namespace hetsched::svc
