// The daemon's API with tenants (serve --config's tenants: and tokens bound to them): what a
// tenant's token may submit, see and cancel, route by route.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "backends/virtual/virtual_backend.h"
#include "daemon/api/http_api.h"
#include "daemon/api/serve_config.h"
#include "model/io/cluster_reader.h"
#include "model/io/tenants_reader.h"
#include "testing/temp_dir.h"

namespace hetsched::svc {
namespace {

using hetsched::testing::TempDir;
using hetsched::testing::WaitUntil;
using nlohmann::json;

constexpr char kVision[] = "vision-token-3c9e1f07a2";
constexpr char kLlm[] = "llm-token-b84d2e61f5c0";
constexpr char kVisionReader[] = "vision-read-5a0e7d2c91";
constexpr char kAdmin[] = "admin-token-0f6a9c3e2d";

// Two teams on 2 V100 and 2 K80, a token for each, a read token for one, and an admin token.
constexpr char kConfig[] = R"(policy: fifo
tenants:
  - {name: vision, weight: 1, quota: {v100: 1}}
  - {name: llm, weight: 2, quota: {k80: 1}}
tokens:
  - {token: vision-token-3c9e1f07a2, role: submit, tenant: vision}
  - {token: llm-token-b84d2e61f5c0, role: submit, tenant: llm}
  - {token: vision-read-5a0e7d2c91, role: read, tenant: vision}
  - {token: admin-token-0f6a9c3e2d, role: admin}
)";

// An inference service (kind service), which belongs to no tenant.
constexpr char kService[] =
    R"({"name":"chat","kind":"service","model":"llama-7b","stacks":["cuda"],)"
    R"("slo":{"ttft":"2s","tpot":"100ms"},"rate":[[0,1]],)"
    R"("tokens":{"input":8,"output":8},"command":["srv","{port}"]})";

struct Answer {
  int status = 0;
  json body;
  std::string Message() const {
    return body.contains("error") ? body["error"]["message"].get<std::string>() : "";
  }
};

class TenantApiTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(Boot()); }

  // The daemon on the database in dir_, as `hetsched serve --config` starts it.
  void Boot() {
    auto config = ParseServeConfig(kConfig, "serve.yaml", dir_.path().string());
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    auto cluster = model::io::LoadCluster("v100=2,k80=2");
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    ASSERT_TRUE(model::io::ResolveTenants(*cluster, &config->tenants).ok());
    VirtualBackendOptions vo;
    for (const model::Node& n : cluster->nodes) vo.nodes.push_back(n.name);
    vo.time_scale = 1000;
    auto store = Store::Open(dir_.File("h.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ServiceOptions so;
    so.policy = config->policy;
    so.scheduler.tenants = std::make_shared<const model::Tenants>(config->tenants);
    so.time_scale = 1000;
    so.tick_s = 0.005;
    metrics_ = std::make_unique<MetricsRegistry>();
    auto service = Service::Create(std::move(cluster).value(), std::make_unique<VirtualBackend>(vo),
                                   std::move(store).value(), so, &logger_, metrics_.get());
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(service).value();
    HttpApiOptions ao;
    ao.port = 0;
    ao.threads = 2;
    ao.tokens = config->tokens;
    serving_ = std::make_unique<ServingLoop>(service_.get(), LiveServingOptions{}, &logger_);
    auto api =
        HttpApi::Create(ao, service_.get(), metrics_.get(), &logger_, nullptr, serving_.get());
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
    api_->Start();
    ASSERT_TRUE(service_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", api_->port());
    client_->set_read_timeout(30);
  }

  void TearDown() override {
    client_.reset();
    if (api_) api_->Stop();
    if (serving_) serving_->Stop();
    if (service_) service_->Shutdown();
  }

  // Stops the daemon as `hetsched serve` stops on SIGTERM, and starts it again.
  void Restart() {
    TearDown();
    api_.reset();
    serving_.reset();
    service_.reset();
    ASSERT_NO_FATAL_FAILURE(Boot());
  }

  Answer Send(const std::string& method, const std::string& path, const std::string& token,
              const std::string& body = "") {
    const httplib::Headers headers = {{"Authorization", std::string("Bearer ") + token}};
    httplib::Result r = method == "GET"    ? client_->Get(path, headers)
                        : method == "POST" ? client_->Post(path, headers, body, "application/json")
                                           : client_->Delete(path, headers);
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": no response";
      return {};
    }
    return {r->status, json::parse(r->body, nullptr, /*allow_exceptions=*/false)};
  }
  Answer Submit(const std::string& token, const std::string& name, const std::string& extra = "") {
    return Send("POST", "/v1/jobs", token,
                fmt::format(R"({{"name":"{}","stacks":["cuda"],"work":1e8{}}})", name, extra));
  }
  // The names GET /v1/jobs shows `token`, page by page (`limit` a page).
  std::set<std::string> Listed(const std::string& token, const std::string& query = "",
                               int limit = 1000) {
    std::set<std::string> names;
    std::string path = fmt::format("/v1/jobs?limit={}{}", limit, query);
    for (int pages = 0; pages < 100; ++pages) {
      const Answer a = Send("GET", path, token);
      EXPECT_EQ(a.status, 200) << a.body.dump();
      if (a.status != 200) break;
      for (const json& j : a.body["jobs"]) names.insert(j["name"].get<std::string>());
      if (a.body["next_cursor"].is_null()) break;
      path = fmt::format("/v1/jobs?limit={}{}&cursor={}", limit, query,
                         a.body["next_cursor"].get<std::string>());
    }
    return names;
  }
  std::string StateOf(const std::string& name) {
    const Answer a = Send("GET", "/v1/jobs/" + name, kAdmin);
    return a.status == 200 ? a.body["state"].get<std::string>() : "?";
  }
  // GET /v1/tenants as `token` sees it, by tenant name.
  std::map<std::string, json> TenantsSeen(const std::string& token) {
    std::map<std::string, json> out;
    const Answer a = Send("GET", "/v1/tenants", token);
    EXPECT_EQ(a.status, 200) << a.body.dump();
    for (const json& t : a.body["tenants"]) out[t["name"].get<std::string>()] = t;
    return out;
  }
  // Job names on the busy devices of every node as `token` sees them ("" where hidden).
  std::multiset<std::string> BusyJobs(const std::string& token) {
    std::multiset<std::string> jobs;
    const Answer a = Send("GET", "/v1/nodes", token);
    for (const json& n : a.body["nodes"]) {
      for (const json& d : n["devices"]) {
        if (d["state"] == "busy") jobs.insert(d["job"].get<std::string>());
      }
    }
    return jobs;
  }

  TempDir dir_;
  Logger logger_{LogLevel::kError};
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<ServingLoop> serving_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(TenantApiTest, AJobWithoutTenantTakesTheTokensTenant) {
  const Answer a = Submit(kVision, "a1");
  ASSERT_EQ(a.status, 201) << a.body.dump();
  EXPECT_EQ(a.body["tenant"], "vision");
  EXPECT_EQ(Send("GET", "/v1/jobs/a1", kAdmin).body["tenant"], "vision");
  // Naming its own tenant is the same.
  EXPECT_EQ(Submit(kVision, "a2", R"(,"tenant":"vision")").status, 201);
}

TEST_F(TenantApiTest, AJobOfAnotherTenantIsForbiddenAndNotCreated) {
  const Answer a = Submit(kVision, "b1", R"(,"tenant":"llm")");
  EXPECT_EQ(a.status, 403) << a.body.dump();
  EXPECT_EQ(a.Message(),
            "request body: tenant: 'llm' is not this token's tenant (expected 'vision' or no "
            "tenant)");
  EXPECT_EQ(Send("GET", "/v1/jobs/b1", kAdmin).status, 404);
  // A service belongs to no tenant.
  const Answer s = Send("POST", "/v1/jobs", kLlm, kService);
  EXPECT_EQ(s.status, 403) << s.body.dump();
}

TEST_F(TenantApiTest, AnUnknownOrMissingTenantIsRefusedWithTheKnownNames) {
  const Answer unknown = Submit(kAdmin, "x1", R"(,"tenant":"nobody")");
  EXPECT_EQ(unknown.status, 400) << unknown.body.dump();
  EXPECT_NE(
      unknown.Message().find("tenant: 'nobody' is not a tenant (expected one of vision, llm)"),
      std::string::npos)
      << unknown.Message();
  const Answer none = Submit(kAdmin, "x2");
  EXPECT_EQ(none.status, 400) << none.body.dump();
  EXPECT_NE(none.Message().find("tenant: job x2 names no tenant (expected one of vision, llm)"),
            std::string::npos)
      << none.Message();
  EXPECT_EQ(Listed(kAdmin), std::set<std::string>{});
  EXPECT_EQ(Submit(kAdmin, "x3", R"(,"tenant":"llm")").status, 201);
}

TEST_F(TenantApiTest, ListingsShowATenantItsOwnJobsLiveAndEnded) {
  for (const char* name : {"a1", "a2", "a3"}) ASSERT_EQ(Submit(kVision, name).status, 201);
  for (const char* name : {"b1", "b2"}) ASSERT_EQ(Submit(kLlm, name).status, 201);
  // Ended jobs are read from the database.
  ASSERT_EQ(Send("DELETE", "/v1/jobs/a2", kVision).status, 202);
  ASSERT_EQ(Send("DELETE", "/v1/jobs/b2", kAdmin).status, 202);
  ASSERT_TRUE(
      WaitUntil([&] { return StateOf("a2") == "cancelled" && StateOf("b2") == "cancelled"; }));

  const std::set<std::string> vision = {"a1", "a2", "a3"};
  EXPECT_EQ(Listed(kVision), vision);
  EXPECT_EQ(Listed(kVisionReader), vision);
  EXPECT_EQ(Listed(kVision, "", /*limit=*/1), vision);  // pages of one
  EXPECT_EQ(Listed(kLlm), (std::set<std::string>{"b1", "b2"}));
  EXPECT_EQ(Listed(kAdmin), (std::set<std::string>{"a1", "a2", "a3", "b1", "b2"}));
  EXPECT_EQ(Listed(kLlm, "&state=cancelled"), std::set<std::string>{"b2"});
  EXPECT_EQ(Listed(kVision, "&state=cancelled", 1), std::set<std::string>{"a2"});
}

TEST_F(TenantApiTest, AnotherTenantsJobIsNotFoundOnEveryJobRoute) {
  ASSERT_EQ(Submit(kVision, "a1").status, 201);
  ASSERT_EQ(Submit(kVision, "a2").status, 201);
  ASSERT_EQ(Send("DELETE", "/v1/jobs/a2", kVision).status, 202);
  ASSERT_TRUE(WaitUntil([&] { return StateOf("a2") == "cancelled"; }));
  for (const char* name : {"a1", "a2"}) {  // live, and ended (in the database)
    const std::string job = std::string("/v1/jobs/") + name;
    for (const auto& [method, path] : {std::pair<std::string, std::string>{"GET", job},
                                       {"GET", job + "/why"},
                                       {"DELETE", job}}) {
      const Answer a = Send(method, path, kLlm);
      EXPECT_EQ(a.status, 404) << method << " " << path << ": " << a.body.dump();
      // The same answer as for a job that does not exist: ids do not leak.
      EXPECT_EQ(a.Message(), fmt::format("no job '{}'", name)) << method << " " << path;
      EXPECT_EQ(Send(method, path, kVision).status, method == "DELETE" ? 202 : 200) << path;
    }
  }
}

TEST_F(TenantApiTest, ADeleteByAnotherTenantCancelsNothing) {
  ASSERT_EQ(Submit(kVision, "a1").status, 201);
  ASSERT_TRUE(WaitUntil([&] { return StateOf("a1") == "running"; }));
  EXPECT_EQ(Send("DELETE", "/v1/jobs/a1", kLlm).status, 404);
  EXPECT_EQ(StateOf("a1"), "running");
}

TEST_F(TenantApiTest, NodesShowOnlyTheTenantsOwnJobNames) {
  ASSERT_EQ(Submit(kVision, "a1").status, 201);
  ASSERT_EQ(Submit(kLlm, "b1").status, 201);
  ASSERT_TRUE(WaitUntil([&] { return StateOf("a1") == "running" && StateOf("b1") == "running"; }));
  EXPECT_EQ(BusyJobs(kAdmin), (std::multiset<std::string>{"a1", "b1"}));
  EXPECT_EQ(BusyJobs(kVision), (std::multiset<std::string>{"", "a1"}));
  EXPECT_EQ(BusyJobs(kLlm), (std::multiset<std::string>{"", "b1"}));
  const Answer job = Send("GET", "/v1/jobs/b1", kLlm);
  const std::string node = job.body["devices"][0].get<std::string>();
  const Answer detail = Send("GET", "/v1/nodes/" + node.substr(0, node.find('/')), kVision);
  ASSERT_EQ(detail.status, 200) << detail.body.dump();
  for (const json& d : detail.body["devices"]) EXPECT_NE(d["job"], "b1") << detail.body.dump();
}

// Services run on the local and Slurm backends only (tests/cli/serve_services_test.cc); here
// the routes are served and a tenant's token is answered as for a service that does not exist.
TEST_F(TenantApiTest, ServicesAreUnknownToATenantsToken) {
  for (const char* method : {"GET", "DELETE"}) {
    const Answer a = Send(method, "/v1/services/chat", kVision);
    EXPECT_EQ(a.status, 404) << a.body.dump();
    EXPECT_EQ(a.Message(), "service 'chat': no such service");
  }
  const Answer push = Send("POST", "/v1/services/chat/load", kVision, R"({"requests_per_s": 5})");
  EXPECT_EQ(push.status, 404) << push.body.dump();
  EXPECT_EQ(push.Message(), "service 'chat': no such service");
  const Answer list = Send("GET", "/v1/services", kVision);
  ASSERT_EQ(list.status, 200) << list.body.dump();
  EXPECT_EQ(list.body["services"], json::array());
}

// The serving loop starts once the daemon has recovered, and reads its services back: until
// then the routes of services answer 503 (not an empty list, not "no such service"), and a
// service added then would have been stored over the ones kept.
TEST_F(TenantApiTest, ServicesAnswer503UntilTheServingLoopReadThemBack) {
  const Answer list = Send("GET", "/v1/services", kAdmin);
  EXPECT_EQ(list.status, 503) << list.body.dump();
  EXPECT_EQ(list.Message(), "the daemon is recovering its services; try again");
  EXPECT_EQ(Send("GET", "/v1/services/chat", kAdmin).status, 503);
  EXPECT_EQ(Send("DELETE", "/v1/services/chat", kAdmin).status, 503);
  EXPECT_EQ(Send("POST", "/v1/services/chat/load", kAdmin, R"({"requests_per_s": 5})").status, 503);
  serving_->Start();
  const Answer after = Send("GET", "/v1/services", kAdmin);
  EXPECT_EQ(after.status, 200) << after.body.dump();
  EXPECT_EQ(after.body["services"], json::array());
  EXPECT_EQ(Send("GET", "/v1/services/chat", kAdmin).status, 404);
}

// Vision runs four jobs on the four devices while llm has none: it holds its guarantee (one
// V100) and borrows three; one of them is llm's idle K80 (the other two no tenant is
// guaranteed).
TEST_F(TenantApiTest, TenantsShowQuotaHeldBorrowedLentAndShare) {
  for (const char* name : {"a1", "a2", "a3", "a4"}) ASSERT_EQ(Submit(kVision, name).status, 201);
  ASSERT_TRUE(WaitUntil([&] { return BusyJobs(kAdmin).size() == 4; }));
  std::map<std::string, json> seen = TenantsSeen(kAdmin);
  ASSERT_EQ(seen.size(), 2u);
  const json& vision = seen["vision"];
  EXPECT_EQ(vision["quota"], json({{"v100-32g", 1}}));  // the catalog's name
  EXPECT_EQ(vision["unit"], "devices");
  EXPECT_EQ(vision["guarantee"], 1);
  EXPECT_EQ(vision["held"], 4);
  EXPECT_EQ(vision["borrowed"], 3);
  EXPECT_EQ(vision["lent"], 0);
  EXPECT_EQ(vision["share"], 1);
  EXPECT_EQ(vision["devices"], json({{"k80", 2}, {"v100-32g", 2}}));
  // Its 3 borrowed of 4 held, spread over the types it holds.
  EXPECT_EQ(vision["borrowed_devices"], json({{"k80", 1.5}, {"v100-32g", 1.5}}));
  EXPECT_EQ(vision["lent_devices"], json::object());
  // Jobs without a measured speed run at 1 step/s everywhere: a device is a reference device.
  EXPECT_EQ(vision["normalized_devices"], 4);
  EXPECT_GT(vision["usage"].get<double>(), 0);
  const json& llm = seen["llm"];
  EXPECT_EQ(llm["weight"], 2);
  EXPECT_EQ(llm["held"], 0);
  EXPECT_EQ(llm["lent"], 1);
  EXPECT_EQ(llm["lent_devices"], json({{"k80", 0.5}, {"v100-32g", 0.5}}));
  EXPECT_EQ(llm["borrowed_devices"], json::object());
  EXPECT_EQ(llm["share"], 0);
  EXPECT_EQ(llm["usage"], 0);
  // A tenant's token sees its own entry.
  EXPECT_EQ(TenantsSeen(kLlm).size(), 1u);
  EXPECT_EQ(TenantsSeen(kLlm).count("llm"), 1u);
  EXPECT_EQ(TenantsSeen(kVisionReader).count("vision"), 1u);

  const auto metrics =
      client_->Get("/metrics", {{"Authorization", std::string("Bearer ") + kAdmin}});
  ASSERT_TRUE(metrics && metrics->status == 200);
  const std::string& text = metrics->body;
  for (const char* line :
       {"hetsched_tenant_borrowed{tenant=\"vision\"} 3\n",
        "hetsched_tenant_lent{tenant=\"llm\"} 1\n", "hetsched_tenant_share{tenant=\"vision\"} 1\n",
        "hetsched_tenant_devices{tenant=\"vision\",device_type=\"k80\"} 2\n",
        "hetsched_tenant_devices{tenant=\"llm\",device_type=\"v100-32g\"} 0\n",
        "hetsched_tenant_normalized_devices{tenant=\"vision\"} 4\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " not in\n" << text;
  }
}

// What fair share remembers is stored: after a restart a tenant's usage is what it was (less
// the decay of the seconds in between), not none.
TEST_F(TenantApiTest, UsageSurvivesARestart) {
  ASSERT_EQ(Submit(kVision, "a1").status, 201);
  ASSERT_TRUE(WaitUntil([&] { return TenantsSeen(kAdmin)["vision"]["usage"] > 200; }));
  ASSERT_EQ(Send("DELETE", "/v1/jobs/a1", kVision).status, 202);
  ASSERT_TRUE(WaitUntil([&] { return StateOf("a1") == "cancelled"; }));
  const double before = TenantsSeen(kAdmin)["vision"]["usage"].get<double>();
  ASSERT_NO_FATAL_FAILURE(Restart());
  const double after = TenantsSeen(kAdmin)["vision"]["usage"].get<double>();
  EXPECT_LE(after, before);
  // A day's half-life: seconds of modeled time (1000 per wall second here) forget little.
  EXPECT_GT(after, 0.95 * before);
  EXPECT_EQ(TenantsSeen(kAdmin)["llm"]["usage"], 0);
}

}  // namespace
}  // namespace hetsched::svc
