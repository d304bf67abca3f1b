#include "daemon/api/serve_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hetsched::svc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

util::Result<ServeConfig> Parse(const std::string& text, const std::string& base_dir = "") {
  return ParseServeConfig(text, "cfg.yaml", base_dir);
}

std::string ErrorOf(const std::string& text) {
  auto c = Parse(text);
  if (c.ok()) return "(parsed)";
  EXPECT_EQ(c.status().code(), util::StatusCode::kInvalidArgument);
  return c.status().message();
}

TEST(ServeConfig, ReadsTheServingPeriods) {
  auto c = Parse(
      "serving:\n  scrape_every: 200ms\n  replan_every: 2s\n  window: 30s\n"
      "  ready_timeout: 1m\n  burst_window: 2s\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->serving.scrape_every_s, 0.2);
  EXPECT_DOUBLE_EQ(c->serving.replan_every_s, 2);
  EXPECT_DOUBLE_EQ(c->serving.window_s, 30);
  EXPECT_DOUBLE_EQ(c->serving.ready_timeout_s, 60);
  EXPECT_DOUBLE_EQ(c->serving.burst_window_s, 2);
  EXPECT_DOUBLE_EQ(Parse("policy: fifo\n")->serving.burst_window_s, 10);  // the simulator's
  EXPECT_DOUBLE_EQ(Parse("policy: fifo\n")->serving.scrape_every_s, 5);   // the default
  // A relative endpoints file is the config file's directory's.
  EXPECT_EQ(Parse("serving:\n  endpoints_file: up.conf\n", "/etc/hetsched")->serving.endpoints_file,
            "/etc/hetsched/up.conf");
  EXPECT_EQ(Parse("serving:\n  endpoints_file: /run/up.conf\n", "/etc")->serving.endpoints_file,
            "/run/up.conf");
  // The ports replicas listen on, on any node (none: a port free on this machine).
  EXPECT_EQ(Parse("policy: fifo\n")->serving.port_first, 0);
  c = Parse("serving:\n  ports: 20000-20999\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->serving.port_first, 20000);
  EXPECT_EQ(c->serving.port_last, 20999);
  // A replica that took devices back from training is held 10 minutes, unless said otherwise.
  EXPECT_DOUBLE_EQ(c->serving.hold_taken_back_s, 600);
  EXPECT_DOUBLE_EQ(Parse("serving:\n  hold_taken_back: 0s\n")->serving.hold_taken_back_s, 0);
}

TEST(ServeConfig, ReadsAFullConfig) {
  const std::string text = R"(# every field
cluster: clusters/lab.yaml
backend: local
policy: fifo
listen: 0.0.0.0:9090
database: state/hetsched.db
time_scale: 60
log_level: debug
tokens:
  - token: read-token-0123456789
    role: read
  - {token: submit-token-0123456789, role: submit}
  - role: admin
    token: admin-token-0123456789
anonymous_read: false
stop_grace: 2m
preemption_cost: 5m
synchronous: full
local_state_dir: /var/lib/hetsched
keep_ended: 30d
history_every: 1s
power:
  policy: consolidate
  suspend_time: 5m
  suspend_timeout: 30s
  resume_timeout: 10m
  suspend_rate: 10
  resume_rate: 0
  exclude_nodes: [login-1]
  headroom: 4
)";
  auto c = Parse(text, "/etc/hetsched");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cluster, "/etc/hetsched/clusters/lab.yaml");
  EXPECT_EQ(c->backend, "local");
  EXPECT_EQ(c->policy, "fifo");
  EXPECT_EQ(c->host, "0.0.0.0");
  EXPECT_EQ(c->port, 9090);
  EXPECT_EQ(c->database, "/etc/hetsched/state/hetsched.db");
  EXPECT_EQ(c->time_scale, 60);
  EXPECT_EQ(c->log_level, LogLevel::kDebug);
  ASSERT_EQ(c->tokens.size(), 3u);
  EXPECT_EQ(c->tokens[0].token, "read-token-0123456789");
  EXPECT_EQ(c->tokens[0].role, Role::kRead);
  EXPECT_EQ(c->tokens[1].token, "submit-token-0123456789");
  EXPECT_EQ(c->tokens[1].role, Role::kSubmit);
  EXPECT_EQ(c->tokens[2].token, "admin-token-0123456789");
  EXPECT_EQ(c->tokens[2].role, Role::kAdmin);
  EXPECT_FALSE(c->anonymous_read);
  EXPECT_EQ(c->stop_grace_s, 120);
  EXPECT_EQ(c->preemption_cost_s, 300);
  EXPECT_TRUE(c->synchronous_full);
  EXPECT_EQ(c->local_state_dir, "/var/lib/hetsched");
  EXPECT_EQ(c->keep_ended_s, 30 * 86400);
  EXPECT_EQ(c->history_every_s, 1);
  EXPECT_EQ(c->power.policy, "consolidate");
  EXPECT_EQ(c->power.suspend_time_s, 300);
  EXPECT_EQ(c->power.suspend_timeout_s, 30);
  EXPECT_EQ(c->power.resume_timeout_s, 600);
  EXPECT_EQ(c->power.suspend_rate, 10);
  EXPECT_EQ(c->power.resume_rate, 0);
  EXPECT_EQ(c->power.exclude_nodes, std::vector<std::string>{"login-1"});
  EXPECT_EQ(c->power.headroom, 4);
}

TEST(ServeConfig, AnEmptyDocumentKeepsTheDefaults) {
  const ServeConfig defaults;
  for (const char* text : {"", "# nothing\n", "~\n"}) {
    auto c = Parse(text, "/etc/hetsched");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->cluster, defaults.cluster);
    EXPECT_EQ(c->backend, "virtual");
    EXPECT_EQ(c->host, "127.0.0.1");
    EXPECT_EQ(c->port, 8080);
    EXPECT_EQ(c->database, defaults.database);
    EXPECT_TRUE(c->tokens.empty());
    EXPECT_TRUE(c->anonymous_read);
    EXPECT_FALSE(c->synchronous_full);
    EXPECT_EQ(c->stop_grace_s, 30);
    EXPECT_EQ(c->preemption_cost_s, 90);
  }
}

TEST(ServeConfig, OtherGoodValues) {
  auto c = Parse(
      "backend: virtual\nsynchronous: normal\nanonymous_read: true\nstop_grace: 0s\n"
      "time_scale: 1e6\nlog_level: error\ntokens: []\nlisten: '[::1]:0'\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backend, "virtual");
  EXPECT_FALSE(c->synchronous_full);
  EXPECT_TRUE(c->anonymous_read);
  EXPECT_EQ(c->stop_grace_s, 0);
  EXPECT_EQ(c->time_scale, 1e6);
  EXPECT_EQ(c->log_level, LogLevel::kError);
  EXPECT_TRUE(c->tokens.empty());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 0);
  c = Parse(
      "backend: slurm\nslurm:\n  conf: etc/slurm.conf\n  partitions: [het, gpu]\n"
      "  device_types: {a100: a100-80g, mi250x: mi250x}\n  cpu_type: xeon-8380\n"
      "  default_stacks: [rocm]\n  output_dir: /shared/out\n  poll_interval: 2s\n"
      "  start_timeout: 5m\n",
      "/cfg");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backend, "slurm");
  EXPECT_EQ(c->slurm.conf, "/cfg/etc/slurm.conf");
  EXPECT_THAT(c->slurm.partitions, ::testing::ElementsAre("het", "gpu"));
  EXPECT_EQ(c->slurm.mapping.device_types.at("a100"), "a100-80g");
  EXPECT_EQ(c->slurm.mapping.cpu_type, "xeon-8380");
  EXPECT_THAT(c->slurm.mapping.default_stacks, ::testing::ElementsAre("rocm"));
  EXPECT_EQ(c->slurm.output_dir, "/shared/out");
  EXPECT_EQ(c->slurm.poll_interval_s, 2);
  EXPECT_EQ(c->slurm.start_timeout_s, 300);
  c = Parse(
      "backend: kubernetes\nkubernetes:\n  prefix: /ext/hetsched\n  api: kubeconfig\n"
      "  kubeconfig: kube/config\n  context: prod\n  node_cache: true\n"
      "  device_types: {NVIDIA-B200: h100-80g}\n  cpu_type: epyc-7763\n  rack_label: rack\n"
      "  scorers: speed:1,energy:0.5\n  packing: 2\n  locality: 0\n  group_timeout: 2m\n",
      "/cfg");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->backend, "kubernetes");
  EXPECT_EQ(c->kubernetes.prefix, "/ext/hetsched");
  EXPECT_EQ(c->kubernetes.api, "kubeconfig");
  EXPECT_EQ(c->kubernetes.kubeconfig, "/cfg/kube/config");
  EXPECT_EQ(c->kubernetes.context, "prod");
  EXPECT_TRUE(c->kubernetes.node_cache);
  EXPECT_EQ(c->kubernetes.mapping.device_types.at("NVIDIA-B200"), "h100-80g");
  EXPECT_EQ(c->kubernetes.mapping.cpu_type, "epyc-7763");
  EXPECT_EQ(c->kubernetes.mapping.rack_label, "rack");
  EXPECT_EQ(c->kubernetes.scorers, "speed:1,energy:0.5");
  EXPECT_EQ(c->kubernetes.packing, 2);
  EXPECT_EQ(c->kubernetes.locality, 0);
  EXPECT_EQ(c->kubernetes.group_timeout_s, 120);
  c = Parse("scorers: speed:1,locality:0.3\nplacement: agnostic\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->scorers, "speed:1,locality:0.3");
  EXPECT_EQ(c->placement, sched::PlacementMode::kAgnostic);
  // A grace period of exactly one day is the longest.
  c = Parse("stop_grace: 1d\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->stop_grace_s, 86400);
}

// Each bad value is reported at its own line and column, naming the field.
TEST(ServeConfig, ClassesWeighJobKinds) {
  auto c = Parse("classes:\n  batch: {priority: -1, weight: 0.5}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->classes.size(), 1u);
  EXPECT_EQ(c->classes.at(model::JobKind::kBatch).priority, -1);
  EXPECT_DOUBLE_EQ(c->classes.at(model::JobKind::kBatch).weight, 0.5);
  EXPECT_THAT(ErrorOf("classes:\n  batch: {weight: 0}\n"),
              StartsWith("cfg.yaml:2:19: classes.batch.weight: is '0' (expected a number above 0"));
  EXPECT_THAT(ErrorOf("classes:\n  service: {priority: 1}\n"),
              StartsWith("cfg.yaml:2:3: classes.service: is not a job kind of training work"));
}

TEST(ServeConfig, EachBadValueNamesTheFieldAtItsLineAndColumn) {
  struct Case {
    std::string text;
    std::string prefix;  // "file:line:column: field: "
    std::string then;    // and what the message says after it
  };
  const std::vector<Case> cases = {
      {"policy: fifo\nbackend: cloud\n", "cfg.yaml:2:10: backend: ",
       "'cloud' is unknown (expected virtual, local, slurm or kubernetes)"},
      {"policy: fifo\nkubernetes: on\n", "cfg.yaml:2:13: kubernetes: ", "is not a mapping"},
      {"policy: fifo\nkubernetes:\n  api: cloud\n", "cfg.yaml:3:8: kubernetes.api: ",
       "'cloud' is unknown (expected none, in-cluster or kubeconfig)"},
      {"policy: fifo\nkubernetes:\n  prefix: k8s/\n",
       "cfg.yaml:3:11: kubernetes.prefix: ", "'k8s/' is not a route prefix"},
      {"policy: fifo\nkubernetes:\n  packing: -1\n",
       "cfg.yaml:3:12: kubernetes.packing: ", "'-1' is not a weight"},
      {"policy: fifo\nkubernetes:\n  group_timeout: 0s\n",
       "cfg.yaml:3:18: kubernetes.group_timeout: ", "'0s' is not a timeout"},
      {"policy: fifo\nkubernetes:\n  node_cache: true\n",
       "cfg.yaml:3:3: kubernetes.node_cache: ", "needs the Kubernetes API"},
      {"policy: fifo\nkubernetes:\n  nodecache: true\n",
       "cfg.yaml:3:3: kubernetes.nodecache: ", "unknown field"},
      {"policy: fifo\nkubernetes:\n  device_types: [a]\n",
       "cfg.yaml:3:17: kubernetes.device_types: ", "is not a mapping"},
      {"policy: fifo\nscorers: speed:1,nearby:2\n",
       "cfg.yaml:2:10: scorers: ", "unknown scorer 'nearby'"},
      {"policy: fifo\nplacement: random\n",
       "cfg.yaml:2:12: placement: ", "'random' is unknown (expected topology or agnostic)"},
      {"policy: fifo\nlisten: nowhere\n", "cfg.yaml:2:9: listen: ", "HOST:PORT"},
      {"policy: fifo\nlisten: localhost:70000\n", "cfg.yaml:2:9: listen: ", "0 to 65535"},
      {"policy: fifo\ndatabase: ''\n", "cfg.yaml:2:11: database: ", "is empty"},
      {"policy: fifo\ntime_scale: fast\n",
       "cfg.yaml:2:13: time_scale: ", "'fast' is not a time scale"},
      {"policy: fifo\ntime_scale: 0\n", "cfg.yaml:2:13: time_scale: ", "'0' is not a time scale"},
      {"policy: fifo\ntime_scale: 2e6\n",
       "cfg.yaml:2:13: time_scale: ", "'2e6' is not a time scale"},
      {"policy: fifo\ntime_scale: nan\n",
       "cfg.yaml:2:13: time_scale: ", "'nan' is not a time scale"},
      {"policy: fifo\nlog_level: loud\n",
       "cfg.yaml:2:12: log_level: ", "debug, info, warn or error"},
      {"policy: fifo\nanonymous_read: yes\n",
       "cfg.yaml:2:17: anonymous_read: ", "is not a boolean (expected true or false)"},
      {"policy: fifo\nsynchronous: sometimes\n",
       "cfg.yaml:2:14: synchronous: ", "'sometimes' is unknown"},
      {"policy: fifo\nstop_grace: forever\n",
       "cfg.yaml:2:13: stop_grace: ", "'forever' is not a grace period"},
      {"policy: fifo\nstop_grace: 2d\n",
       "cfg.yaml:2:13: stop_grace: ", "'2d' is not a grace period"},
      {"policy: fifo\nstop_grace: -5s\n",
       "cfg.yaml:2:13: stop_grace: ", "'-5s' is not a grace period"},
      {"policy: fifo\npower: idle\n", "cfg.yaml:2:8: power: ", "is not a mapping"},
      {"policy: fifo\npower:\n  policy: sometimes\n",
       "cfg.yaml:3:11: power.policy: ", "'sometimes' is unknown"},
      {"policy: fifo\npower:\n  suspend_tme: 5m\n",
       "cfg.yaml:3:3: power.suspend_tme: ", "unknown field"},
      {"policy: fifo\npower:\n  suspend_time: soon\n",
       "cfg.yaml:3:17: power.suspend_time: ", "'soon' is not a duration"},
      {"policy: fifo\npower:\n  headroom: -1\n",
       "cfg.yaml:3:13: power.headroom: ", "'-1' is not a count"},
      {"policy: fifo\npower:\n  exclude_nodes: a\n",
       "cfg.yaml:3:18: power.exclude_nodes: ", "is not a list"},
      {"policy: fifo\nkeep_ended: -1d\n", "cfg.yaml:2:13: keep_ended: ", "'-1d' is not a duration"},
      {"policy: fifo\nhistory_every: 2h\n", "cfg.yaml:2:16: history_every: ", "is not an interval"},
      {"policy: fifo\nserving: 5s\n", "cfg.yaml:2:10: serving: ", "is not a mapping"},
      {"policy: fifo\nserving:\n  scrape: 1s\n", "cfg.yaml:3:3: serving.scrape: ",
       "unknown field (expected one of: burst_window, endpoints_file, hold_taken_back, ports, "
       "ready_timeout, replan_every, scrape_every, window)"},
      {"policy: fifo\nserving:\n  burst_window: 50ms\n", "cfg.yaml:3:17: serving.burst_window: ",
       "'50ms' is not a duration (expected a duration from 100ms to 1d, like 5s)"},
      {"policy: fifo\nserving:\n  hold_taken_back: -1s\n",
       "cfg.yaml:3:20: serving.hold_taken_back: ",
       "'-1s' is not a duration (expected a duration from 0 to 1d, like 10m)"},
      {"policy: fifo\nserving:\n  ports: 2000\n", "cfg.yaml:3:10: serving.ports: ",
       "is '2000' (expected a port range like 20000-20999 (FIRST-LAST, from 1 to 65535))"},
      {"policy: fifo\nserving:\n  ports: 2000-70000\n",
       "cfg.yaml:3:10: serving.ports: ", "is '2000-70000' (expected a port range"},
      {"policy: fifo\nserving:\n  ports: 3000-2000\n", "cfg.yaml:3:10: serving.ports: ",
       "is '3000-2000': 3000 is above 2000 (expected a port range"},
      {"policy: fifo\nserving:\n  endpoints_file: \"\"\n",
       "cfg.yaml:3:19: serving.endpoints_file: ", "empty"},
      {"policy: fifo\nserving:\n  window: 10ms\n", "cfg.yaml:3:11: serving.window: ",
       "'10ms' is not a duration (expected a duration from 100ms to 1d"},
      {"policy: fifo\npreemption_cost: -90s\n",
       "cfg.yaml:2:18: preemption_cost: ", "'-90s' is not a preemption cost"},
      {"policy: fifo\npreemption_cost: nan\n",
       "cfg.yaml:2:18: preemption_cost: ", "'nan' is not a preemption cost"},
      {"policy: fifo\ntokens: abc\n", "cfg.yaml:2:9: tokens: ", "is not a list"},
      {"policy: fifo\ncluster: [a, b]\n", "cfg.yaml:2:10: cluster: ", "is not a string"},
      {"policy: fifo\nlocal_state_dir: ''\n", "cfg.yaml:2:18: local_state_dir: ", "is empty"},
      {"policy: fifo\nslurm: yes\n", "cfg.yaml:2:8: slurm: ", "is not a mapping"},
      {"policy: fifo\nslurm:\n  partition: [a]\n", "cfg.yaml:3:3: slurm.partition: ",
       "unknown field (expected one of: accounts, bin_dir, conf, cpu_type"},
      {"policy: fifo\nslurm:\n  partitions: het\n",
       "cfg.yaml:3:15: slurm.partitions: ", "is not a list"},
      {"policy: fifo\nslurm:\n  default_stacks: [cuda>=x]\n",
       "cfg.yaml:3:20: slurm.default_stacks[0]: ", ""},
      {"policy: fifo\nslurm:\n  poll_interval: 10ms\n", "cfg.yaml:3:18: slurm.poll_interval: ",
       "'10ms' is not a poll interval (expected a duration from 100ms to 10m"},
      {"policy: fifo\nslurm:\n  device_types: [a100]\n",
       "cfg.yaml:3:17: slurm.device_types: ", "is not a mapping"},
      {"policy: fifo\nslurm:\n  conf: ''\n", "cfg.yaml:3:9: slurm.conf: ", "is empty"},
      {"policy: [fifo]\n", "cfg.yaml:1:9: policy: ", "is not a string"},
      {"policy: fifo\nbackend:\n  kind: local\n", "cfg.yaml:3:3: backend: ", "is not a string"},
      // Token entries.
      {"tokens:\n  - token: 0123456789abcdef\n    role: king\n",
       "cfg.yaml:3:11: tokens[0].role: ", "'king' is unknown (expected read, submit or admin)"},
      {"tokens:\n  - {token: 0123456789abcdef, role: read}\n"
       "  - {token: 0123456789abcdeX, role: boss}\n",
       "cfg.yaml:3:37: tokens[1].role: ", "'boss' is unknown"},
      {"tokens:\n  - token: 0123456789abcdef\n",
       "cfg.yaml:2:5: tokens[0].role: ", "is missing (expected read, submit or admin)"},
      {"tokens:\n  - role: read\n", "cfg.yaml:2:5: tokens[0].token: ", "is missing"},
      {"tokens:\n  - token: 0123456789abcdef\n    role: read\n    scope: all\n",
       "cfg.yaml:4:5: tokens[0].scope: ", "unknown field (expected token, role or tenant)"},
      {"tokens:\n  - just-a-string\n", "cfg.yaml:2:5: tokens[0]: ", "is not a mapping"},
      {"tokens:\n  - token: [0123456789abcdef]\n    role: read\n",
       "cfg.yaml:2:12: tokens[0].token: ", "is not a string"},
  };
  for (const Case& c : cases) {
    const std::string message = ErrorOf(c.text);
    EXPECT_THAT(message, StartsWith(c.prefix)) << c.text;
    EXPECT_THAT(message.substr(std::min(message.size(), c.prefix.size())), HasSubstr(c.then))
        << c.text;
  }
}

TEST(ServeConfig, ReadsTenantsAndTokensBoundToThem) {
  auto c = ParseServeConfig(
      "tokens:\n"
      "  - {token: vision-token-0123456789, role: submit, tenant: vision}\n"
      "  - {token: admin-token-0123456789, role: admin}\n"
      "tenants:\n"
      "  - {name: vision, weight: 2, quota: {v100: 1}, borrow_limit: 3}\n"
      "  - {name: llm, quota: {normalized: 1.5}}\n"
      "fair_share: {half_life: 1h}\n",
      "cfg.yaml", "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->tenants.list.size(), 2u);
  EXPECT_EQ(c->tenants.list[0].name, "vision");
  EXPECT_EQ(c->tenants.list[0].weight, 2);
  EXPECT_EQ(c->tenants.list[0].per_type.at("v100"), 1);
  EXPECT_EQ(c->tenants.list[0].borrow_limit, 3);
  EXPECT_EQ(c->tenants.list[1].normalized, 1.5);
  EXPECT_EQ(c->tenants.fair_share.half_life_s, 3600);
  ASSERT_EQ(c->tokens.size(), 2u);
  EXPECT_EQ(c->tokens[0].tenant, "vision");
  EXPECT_EQ(c->tokens[1].tenant, "");
}

TEST(ServeConfig, SlurmAccountsNameTenants) {
  const std::string tenants = "tenants:\n  - {name: vision}\n  - {name: llm}\n";
  auto c = ParseServeConfig(tenants + "slurm:\n  accounts: {cv-lab: vision}\n", "cfg.yaml", "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->slurm.mapping.tenants);
  EXPECT_EQ(c->slurm.mapping.account_tenants.at("cv-lab"), "vision");
  EXPECT_EQ(ErrorOf(tenants + "slurm:\n  accounts: {cv-lab: cv}\n"),
            "cfg.yaml:5:22: slurm.accounts.cv-lab: 'cv' is not a tenant (expected one of vision, "
            "llm)");
  auto none = ParseServeConfig("slurm:\n  partitions: [gpu]\n", "cfg.yaml", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->slurm.mapping.tenants);
}

TEST(ServeConfig, KubernetesNamespacesOrALabelNameTenants) {
  const std::string tenants = "tenants:\n  - {name: vision}\n  - {name: llm}\n";
  auto by_namespace =
      ParseServeConfig(tenants + "kubernetes:\n  tenant_map: {cv: vision}\n", "cfg.yaml", "");
  ASSERT_TRUE(by_namespace.ok()) << by_namespace.status().ToString();
  EXPECT_EQ(by_namespace->kubernetes.mapping.tenant_label, "");
  EXPECT_EQ(by_namespace->kubernetes.mapping.tenant_map.at("cv"), "vision");
  auto by_label = ParseServeConfig(tenants + "kubernetes:\n  tenant_from: label:example.com/team\n",
                                   "cfg.yaml", "");
  ASSERT_TRUE(by_label.ok()) << by_label.status().ToString();
  EXPECT_EQ(by_label->kubernetes.mapping.tenant_label, "example.com/team");
  EXPECT_EQ(ErrorOf(tenants + "kubernetes:\n  tenant_map: {cv: cv-lab}\n"),
            "cfg.yaml:5:20: kubernetes.tenant_map.cv: 'cv-lab' is not a tenant (expected one of "
            "vision, llm)");
  EXPECT_EQ(ErrorOf(tenants + "kubernetes:\n  tenant_from: owner\n"),
            "cfg.yaml:5:16: kubernetes.tenant_from: 'owner' is unknown (expected namespace, or "
            "label:KEY such as label:hetsched.io/tenant)");
}

TEST(ServeConfig, ATokenOfAnUnknownTenantOrABadTenantListIsLocated) {
  const std::string tenants = "tenants:\n  - {name: vision}\n  - {name: llm}\n";
  EXPECT_EQ(ErrorOf(tenants + "tokens:\n  - {token: t-0123456789abcdef, role: read, tenant: cv}\n"),
            "cfg.yaml:5:53: tokens[0].tenant: 'cv' is not a tenant (expected one of vision, llm)");
  EXPECT_EQ(ErrorOf("tokens:\n  - {token: t-0123456789abcdef, role: read, tenant: cv}\n"),
            "cfg.yaml:2:53: tokens[0].tenant: 'cv' is not a tenant (expected a tenants: list "
            "that names it)");
  EXPECT_THAT(
      ErrorOf(tenants + "tokens:\n  - {token: t-0123456789abcdef, role: admin, tenant: llm}\n"),
      StartsWith("cfg.yaml:5:54: tokens[0].tenant: an admin token acts for every tenant"));
  EXPECT_THAT(ErrorOf("fair_share: {half_life: 1h}\n"),
              StartsWith("cfg.yaml:1:13: fair_share: is given without tenants"));
  // The simulator's reader and its checks: a cycle, a weight that is not positive.
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: a, parent: b}\n  - {name: b, parent: a}\n"),
              StartsWith("cfg.yaml:"));
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: a, weight: -1}\n"), HasSubstr("tenants[0].weight"));
}

TEST(ServeConfig, NotAMappingOrNotYamlIsAnError) {
  EXPECT_THAT(ErrorOf("- a\n- b\n"), StartsWith("cfg.yaml:1:1: is not a mapping"));
  EXPECT_THAT(ErrorOf("just words\n"), StartsWith("cfg.yaml:1:1: is not a mapping"));
  const std::string message = ErrorOf("policy: fifo\nbackend: [virtual\n");
  EXPECT_THAT(message, StartsWith("cfg.yaml:"));
  EXPECT_THAT(message, HasSubstr("not valid YAML"));
}

TEST(ServeConfig, AnUnknownFieldListsTheKnownOnes) {
  const std::string message = ErrorOf("policy: fifo\ncolour: red\n");
  EXPECT_THAT(message, StartsWith("cfg.yaml:2:1: colour: unknown field (expected one of: "));
  for (const char* field :
       {"cluster", "backend", "policy", "scorers", "placement", "listen", "database", "time_scale",
        "log_level", "tokens", "anonymous_read", "stop_grace", "synchronous", "local_state_dir"}) {
    EXPECT_THAT(message, HasSubstr(field));
  }
  // The struct's names are not the file's.
  EXPECT_THAT(ErrorOf("port: 80\n"), StartsWith("cfg.yaml:1:1: port: unknown field"));
}

TEST(ServeConfig, AShortOrBlankTokenIsRefusedWithoutEchoingIt) {
  struct Case {
    std::string yaml;    // as written in the file
    std::string secret;  // as read
  };
  for (const Case& t : std::vector<Case>{{"s3cr3t-v4lue", "s3cr3t-v4lue"},
                                         {"fifteen-chars-x", "fifteen-chars-x"},
                                         {"'my secret value x'", "my secret value x"},
                                         {R"("tab\tinside-the-token")", "tab\tinside-the-token"}}) {
    const std::string message = ErrorOf("tokens:\n  - token: " + t.yaml + "\n    role: admin\n");
    EXPECT_THAT(message, StartsWith("cfg.yaml:2:12: tokens[0].token: ")) << t.yaml;
    EXPECT_THAT(message, HasSubstr("at least 16 characters")) << t.yaml;
    EXPECT_THAT(message, Not(HasSubstr(t.secret))) << t.yaml;
    EXPECT_THAT(message, Not(HasSubstr(t.secret.substr(0, 8)))) << t.yaml;
  }
  // Sixteen characters are enough.
  auto c = Parse("tokens:\n  - token: sixteen-chars-xy\n    role: read\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->tokens.size(), 1u);
  EXPECT_EQ(c->tokens[0].token, "sixteen-chars-xy");
}

TEST(ServeConfig, RelativePathsAreResolvedAgainstTheConfigFolder) {
  auto c = Parse("cluster: lab.yaml\ndatabase: db/h.db\nlocal_state_dir: ../run\n", "/srv/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cluster, "/srv/h/lab.yaml");
  EXPECT_EQ(c->database, "/srv/h/db/h.db");
  EXPECT_EQ(c->local_state_dir, "/srv/h/../run");
  // Absolute paths stay.
  c = Parse("cluster: /c/lab.yaml\ndatabase: /d/h.db\nlocal_state_dir: /l\n", "/srv/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cluster, "/c/lab.yaml");
  EXPECT_EQ(c->database, "/d/h.db");
  EXPECT_EQ(c->local_state_dir, "/l");
  EXPECT_EQ(LocalStateDir(*c), "/l");
  // Without local_state_dir the local backend's files go beside the database, wherever the
  // daemon's working directory is.
  c = Parse("database: /d/h.db\n", "/srv/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(LocalStateDir(*c), "/d/hetsched-local");
  EXPECT_EQ(LocalStateDir(ServeConfig{}), "hetsched-local");
  // A cluster shorthand is not a path.
  c = Parse("cluster: v100=4,k80=4\n", "/srv/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cluster, "v100=4,k80=4");
  // Without a base folder paths stay as written.
  c = Parse("database: db/h.db\n", "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->database, "db/h.db");
}

TEST(ServeConfig, LoadReadsAFileAndResolvesAgainstItsFolder) {
  std::string pattern = ::testing::TempDir() + "hetsched-cfg-XXXXXX";
  const std::string dir = mkdtemp(pattern.data());
  const std::string path = dir + "/serve.yaml";
  {
    std::ofstream out(path);
    out << "database: h.db\nbackend: virtual\n";
  }
  auto c = LoadServeConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->database, dir + "/h.db");
  {
    std::ofstream out(path);
    out << "backend: virtual\nbackend2: x\n";
  }
  c = LoadServeConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), StartsWith(path + ":2:1: backend2: unknown field"));
  EXPECT_FALSE(LoadServeConfig(dir + "/missing.yaml").ok());
  std::filesystem::remove_all(dir);
}

TEST(ServeConfig, ParseListen) {
  ServeConfig c;
  ASSERT_TRUE(ParseListen("127.0.0.1:0", &c).ok());
  EXPECT_EQ(c.host, "127.0.0.1");
  EXPECT_EQ(c.port, 0);
  ASSERT_TRUE(ParseListen("[::1]:8080", &c).ok());
  EXPECT_EQ(c.host, "::1");
  EXPECT_EQ(c.port, 8080);
  ASSERT_TRUE(ParseListen("localhost:65535", &c).ok());
  EXPECT_EQ(c.host, "localhost");
  EXPECT_EQ(c.port, 65535);

  for (const char* bad : {"host", "h:99999", "h:65536", ":80", "h:", "h:-1", "h:+80", "h:80x",
                          "h: 80", "[::1]", "", ":"}) {
    ServeConfig unchanged;
    const util::Status st = ParseListen(bad, &unchanged);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), util::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(st.message(), HasSubstr("HOST:PORT")) << bad;
    EXPECT_EQ(unchanged.host, "127.0.0.1") << bad;
    EXPECT_EQ(unchanged.port, 8080) << bad;
  }
}

}  // namespace
}  // namespace hetsched::svc
