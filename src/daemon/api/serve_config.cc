#include "daemon/api/serve_config.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "model/io/document.h"
#include "model/io/tenants_reader.h"
#include "model/software_stack.h"
#include "sched/scorers.h"
#include "util/file.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::svc {

namespace {

const std::set<std::string, std::less<>> kFields = {
    "cluster",         "backend",       "policy",      "scorers",         "placement",
    "listen",          "database",      "time_scale",  "log_level",       "tokens",
    "anonymous_read",  "stop_grace",    "synchronous", "local_state_dir", "keep_ended",
    "power",           "slurm",         "kubernetes",  "classes",         "elastic",
    "preemption_cost", "history_every", "serving",     "tenants",         "fair_share"};
// The fields ParseServerField reads; the other scalar fields are ParseSchedulingField's.
const std::set<std::string, std::less<>> kServerFields = {
    "listen",         "database",    "local_state_dir", "time_scale",   "log_level",
    "anonymous_read", "synchronous", "keep_ended",      "history_every"};

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

using Reader = model::io::DocReader;
using model::io::DocValue;

constexpr double kForever = std::numeric_limits<double>::infinity();

}  // namespace

util::Status ParseListen(std::string_view text, ServeConfig* config) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] {
    return util::Status::InvalidArgument(
        fmt::format("listen '{}': expected HOST:PORT with PORT from 0 to 65535 (0: any free "
                    "port), e.g. 127.0.0.1:8080",
                    text));
  };
  if (colon == std::string_view::npos || colon == 0) return bad();
  const std::string_view port_text = text.substr(colon + 1);
  int port = -1;
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      port < 0 || port > 65535) {
    return bad();
  }
  std::string host(text.substr(0, colon));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  config->host = host;
  config->port = port;
  return util::Status::Ok();
}

namespace {

// "FIRST-LAST", two ports from 1 to 65535, FIRST <= LAST.
util::Result<std::pair<int, int>> PortRange(const Reader& r, const DocValue& v,
                                            const std::string& at) {
  const std::string expected = "a port range like 20000-20999 (FIRST-LAST, from 1 to 65535)";
  ASSIGN_OR_RETURN(const std::string text, r.Scalar(v, at, expected));
  const size_t dash = text.find('-');
  int first = 0, last = 0;
  const auto whole = [](std::string_view s, int& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && out >= 1 && out <= 65535;
  };
  if (dash == std::string::npos || !whole(std::string_view(text).substr(0, dash), first) ||
      !whole(std::string_view(text).substr(dash + 1), last)) {
    return r.Error(v, at, fmt::format("is '{}'", text), expected);
  }
  if (first > last) {
    return r.Error(v, at, fmt::format("is '{}': {} is above {}", text, first, last), expected);
  }
  return std::pair{first, last};
}

// serving: how the daemon runs inference services (daemon/serving_loop.h).
util::Status ParseServing(const Reader& r, const DocValue& node, const std::string& base_dir,
                          LiveServingOptions& out) {
  RETURN_IF_ERROR(r.Mapping(node, "serving", "fields like scrape_every: 5s"));
  static const std::set<std::string, std::less<>> kServingFields = {
      "scrape_every",   "replan_every", "window",          "ready_timeout",
      "endpoints_file", "ports",        "hold_taken_back", "burst_window"};
  for (const DocValue::Field& kv : node.fields) {
    const std::string at = "serving." + kv.key;
    RETURN_IF_ERROR(r.KnownField(kv, at, kServingFields));
    if (kv.key == "ports") {
      ASSIGN_OR_RETURN(const auto range, PortRange(r, kv.value, at));
      std::tie(out.port_first, out.port_last) = range;
      continue;
    }
    if (kv.key == "hold_taken_back") {
      ASSIGN_OR_RETURN(out.hold_taken_back_s, r.Duration(kv.value, at, 0, 86400, "a duration",
                                                         "a duration from 0 to 1d, like 10m"));
      continue;
    }
    if (kv.key == "endpoints_file") {
      ASSIGN_OR_RETURN(const std::string path, r.NonEmptyString(kv.value, at));
      out.endpoints_file = Resolve(base_dir, path);
      continue;
    }
    ASSIGN_OR_RETURN(const double d, r.Duration(kv.value, at, 0.1, 86400, "a duration",
                                                "a duration from 100ms to 1d, like 5s"));
    (kv.key == "scrape_every"   ? out.scrape_every_s
     : kv.key == "replan_every" ? out.replan_every_s
     : kv.key == "window"       ? out.window_s
     : kv.key == "burst_window" ? out.burst_window_s
                                : out.ready_timeout_s) = d;
  }
  return util::Status::Ok();
}

// The `power:` mapping into `out` (Slurm's names for the timeouts and rates).
util::Status ParsePower(const Reader& r, const DocValue& node, power::PowerOptions& out) {
  RETURN_IF_ERROR(r.Mapping(node, "power", "fields like policy: idle-timeout"));
  static const std::set<std::string, std::less<>> kPowerFields = {
      "policy",       "suspend_time", "suspend_timeout", "resume_timeout",
      "suspend_rate", "resume_rate",  "exclude_nodes",   "headroom"};
  for (const DocValue::Field& kv : node.fields) {
    const std::string key = kv.key;
    const std::string at = "power." + key;
    const DocValue& v = kv.value;
    RETURN_IF_ERROR(r.KnownField(kv, at, kPowerFields));
    if (key == "policy") {
      ASSIGN_OR_RETURN(out.policy, r.String(v, at));
      if (!power::ParsePowerPolicy(out.policy).ok()) {
        return r.Error(v, at, fmt::format("'{}' is unknown", out.policy),
                       "always-on, idle-timeout or consolidate");
      }
    } else if (key == "suspend_time" || key == "suspend_timeout" || key == "resume_timeout") {
      ASSIGN_OR_RETURN(const double d,
                       r.Duration(v, at, 0, kForever, "a duration", "a duration like 10m"));
      (key == "suspend_time"      ? out.suspend_time_s
       : key == "suspend_timeout" ? out.suspend_timeout_s
                                  : out.resume_timeout_s) = d;
    } else if (key == "suspend_rate" || key == "resume_rate" || key == "headroom") {
      ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      int32_t n = -1;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (ec != std::errc() || ptr != s.data() + s.size() || n < 0) {
        return r.Error(v, at, fmt::format("'{}' is not a count", s),
                       key == "headroom" ? "a whole number >= 0 of free devices per type"
                                         : "nodes per minute, a whole number >= 0 (0: no limit)");
      }
      (key == "suspend_rate"  ? out.suspend_rate
       : key == "resume_rate" ? out.resume_rate
                              : out.headroom) = n;
    } else {  // exclude_nodes
      if (!v.IsList()) return r.Error(v, at, "is not a list", "node names");
      for (size_t i = 0; i < v.size(); ++i) {
        ASSIGN_OR_RETURN(std::string name, r.String(v[i], fmt::format("{}[{}]", at, i)));
        out.exclude_nodes.push_back(name);
      }
    }
  }
  return util::Status::Ok();
}

util::Result<std::vector<std::string>> StringList(const Reader& r, const DocValue& v,
                                                  const std::string& at) {
  if (!v.IsList()) return r.Error(v, at, "is not a list", "a list of names");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    ASSIGN_OR_RETURN(std::string s, r.String(v[i], fmt::format("{}[{}]", at, i)));
    if (s.empty()) return r.Error(v[i], fmt::format("{}[{}]", at, i), "is empty", "a name");
    out.push_back(s);
  }
  return out;
}

// A string at `v` that names one of `tenants`.
util::Result<std::string> TenantName(const Reader& r, const DocValue& v, const std::string& at,
                                     const model::Tenants& tenants) {
  ASSIGN_OR_RETURN(std::string tenant, r.String(v, at));
  if (tenants.Find(tenant) < 0) {
    return r.Error(v, at, fmt::format("'{}' is not a tenant", tenant),
                   tenants.empty() ? "a tenants: list that names it" : "one of " + tenants.Names());
  }
  return tenant;
}

// The `slurm:` mapping (docs/slurm.md); `accounts` name tenants of `tenants`.
util::Status ParseSlurm(const Reader& r, const DocValue& node, const std::string& base_dir,
                        const model::Tenants& tenants, ServeConfig::Slurm& out) {
  RETURN_IF_ERROR(r.Mapping(node, "slurm", "fields like conf: /etc/slurm/slurm.conf"));
  static const std::set<std::string, std::less<>> kSlurmFields = {
      "conf",           "bin_dir",    "partitions",    "device_types",  "cpu_type",
      "default_stacks", "output_dir", "poll_interval", "start_timeout", "accounts"};
  for (const DocValue::Field& kv : node.fields) {
    const std::string key = kv.key;
    const std::string at = "slurm." + key;
    const DocValue& v = kv.value;
    RETURN_IF_ERROR(r.KnownField(kv, at, kSlurmFields));
    if (key == "conf" || key == "bin_dir" || key == "output_dir") {
      ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      if (s.empty()) return r.Error(v, at, "is empty", "a path");
      (key == "conf"      ? out.conf
       : key == "bin_dir" ? out.bin_dir
                          : out.output_dir) = Resolve(base_dir, s);
    } else if (key == "partitions") {
      ASSIGN_OR_RETURN(out.partitions, StringList(r, v, at));
    } else if (key == "default_stacks") {
      ASSIGN_OR_RETURN(out.mapping.default_stacks, StringList(r, v, at));
      for (size_t i = 0; i < out.mapping.default_stacks.size(); ++i) {
        if (auto st = model::ParseStackRequirement(out.mapping.default_stacks[i]); !st.ok()) {
          return r.Error(v[i], fmt::format("{}[{}]", at, i), st.status().message(),
                         "a stack like cuda or cuda>=12.2");
        }
      }
    } else if (key == "cpu_type") {
      ASSIGN_OR_RETURN(out.mapping.cpu_type, r.String(v, at));
    } else if (key == "poll_interval") {
      ASSIGN_OR_RETURN(out.poll_interval_s, r.Duration(v, at, 0.1, 600, "a poll interval",
                                                       "a duration from 100ms to 10m, like 1s"));
    } else if (key == "start_timeout") {
      ASSIGN_OR_RETURN(out.start_timeout_s, r.Duration(v, at, 1, 86400, "a start timeout",
                                                       "a duration from 1s to 1d, like 2m"));
    } else if (key == "accounts") {
      RETURN_IF_ERROR(r.Mapping(v, at, "Slurm account: tenant"));
      for (const DocValue::Field& m : v.fields) {
        ASSIGN_OR_RETURN(out.mapping.account_tenants[m.key],
                         TenantName(r, m.value, at + "." + m.key, tenants));
      }
    } else {  // device_types
      RETURN_IF_ERROR(r.Mapping(v, at, "GRES type or feature: catalog type"));
      for (const DocValue::Field& m : v.fields) {
        ASSIGN_OR_RETURN(std::string type, r.String(m.value, at + "." + m.key));
        out.mapping.device_types[m.key] = type;
      }
    }
  }
  return util::Status::Ok();
}

// The `kubernetes:` mapping (docs/kubernetes.md).
util::Status ParseKubernetes(const Reader& r, const DocValue& node, const std::string& base_dir,
                             const model::Tenants& tenants, ServeConfig::Kubernetes& out) {
  RETURN_IF_ERROR(r.Mapping(node, "kubernetes", "fields like api: in-cluster"));
  static const std::set<std::string, std::less<>> kKubernetesFields = {
      "prefix",       "api",           "kubeconfig",  "context",   "node_cache",
      "device_types", "cpu_type",      "rack_label",  "scorers",   "packing",
      "locality",     "group_timeout", "tenant_from", "tenant_map"};
  for (const DocValue::Field& kv : node.fields) {
    const std::string key = kv.key;
    const std::string at = "kubernetes." + key;
    const DocValue& v = kv.value;
    RETURN_IF_ERROR(r.KnownField(kv, at, kKubernetesFields));
    if (key == "prefix") {
      ASSIGN_OR_RETURN(out.prefix, r.String(v, at));
      if (out.prefix.size() < 2 || out.prefix[0] != '/' || out.prefix.back() == '/') {
        return r.Error(v, at, fmt::format("'{}' is not a route prefix", out.prefix),
                       "a path like /k8s (a leading slash, none at the end)");
      }
    } else if (key == "api") {
      ASSIGN_OR_RETURN(out.api, r.String(v, at));
      if (out.api != "none" && out.api != "in-cluster" && out.api != "kubeconfig") {
        return r.Error(v, at, fmt::format("'{}' is unknown", out.api),
                       "none, in-cluster or kubeconfig");
      }
    } else if (key == "kubeconfig") {
      ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      if (s.empty()) return r.Error(v, at, "is empty", "a path");
      out.kubeconfig = Resolve(base_dir, s);
    } else if (key == "context" || key == "cpu_type" || key == "rack_label" || key == "scorers") {
      ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      (key == "context"      ? out.context
       : key == "cpu_type"   ? out.mapping.cpu_type
       : key == "rack_label" ? out.mapping.rack_label
                             : out.scorers) = s;
    } else if (key == "node_cache") {
      ASSIGN_OR_RETURN(out.node_cache, r.Bool(v, at));
    } else if (key == "packing" || key == "locality") {
      ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      double x = -1;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
      if (ec != std::errc() || ptr != s.data() + s.size() || !(x >= 0) || x > 1000) {
        return r.Error(v, at, fmt::format("'{}' is not a weight", s), "a number from 0 to 1000");
      }
      (key == "packing" ? out.packing : out.locality) = x;
    } else if (key == "group_timeout") {
      ASSIGN_OR_RETURN(out.group_timeout_s, r.Duration(v, at, 1, 86400, "a timeout",
                                                       "a duration from 1s to 1d, like 60s"));
    } else if (key == "tenant_from") {
      ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      constexpr std::string_view kLabel = "label:";
      if (s.rfind(kLabel, 0) == 0 && s.size() > kLabel.size()) {
        out.mapping.tenant_label = s.substr(kLabel.size());
      } else if (s != "namespace") {
        return r.Error(v, at, fmt::format("'{}' is unknown", s),
                       "namespace, or label:KEY such as label:hetsched.io/tenant");
      }
    } else if (key == "tenant_map") {
      RETURN_IF_ERROR(r.Mapping(v, at, "namespace (or label value): tenant"));
      for (const DocValue::Field& m : v.fields) {
        ASSIGN_OR_RETURN(out.mapping.tenant_map[m.key],
                         TenantName(r, m.value, at + "." + m.key, tenants));
      }
    } else {  // device_types
      RETURN_IF_ERROR(r.Mapping(v, at, "product label value: catalog type"));
      for (const DocValue::Field& m : v.fields) {
        ASSIGN_OR_RETURN(std::string type, r.String(m.value, at + "." + m.key));
        out.mapping.device_types[m.key] = type;
      }
    }
  }
  if (out.node_cache && out.api == "none") {
    return r.Error(node, "kubernetes.node_cache",
                   "needs the Kubernetes API to list and watch nodes",
                   "api: in-cluster or api: kubeconfig");
  }
  return util::Status::Ok();
}

}  // namespace

namespace {

// A top-level field about what the daemon schedules and how.
util::Status ParseSchedulingField(const Reader& r, const std::string& key, const DocValue& v,
                                  const std::string& base_dir, ServeConfig& c) {
  if (key == "cluster") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    // A shorthand is not a path.
    c.cluster = s.find('=') != std::string::npos && s.find('/') == std::string::npos
                    ? s
                    : Resolve(base_dir, s);
  } else if (key == "backend") {
    ASSIGN_OR_RETURN(c.backend, r.String(v, key));
    if (c.backend != "virtual" && c.backend != "local" && c.backend != "slurm" &&
        c.backend != "kubernetes") {
      return r.Error(v, key, fmt::format("'{}' is unknown", c.backend),
                     "virtual, local, slurm or kubernetes");
    }
  } else if (key == "policy") {
    ASSIGN_OR_RETURN(c.policy, r.String(v, key));
  } else if (key == "elastic") {
    ASSIGN_OR_RETURN(c.elastic, r.Bool(v, key));
  } else if (key == "classes") {
    ASSIGN_OR_RETURN(c.classes, model::io::ParseJobClasses(r, v));
  } else if (key == "scorers") {
    ASSIGN_OR_RETURN(c.scorers, r.String(v, key));
    if (auto s = sched::MakeScorers(c.scorers); !s.ok()) {
      return r.Error(v, key, s.status().message(),
                     "scorers with weights, like speed:1,locality:0.3");
    }
  } else if (key == "placement") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    auto mode = sched::ParsePlacementMode(s);
    if (!mode.ok())
      return r.Error(v, key, fmt::format("'{}' is unknown", s), "topology or agnostic");
    c.placement = *mode;
  } else if (key == "stop_grace") {
    ASSIGN_OR_RETURN(c.stop_grace_s, r.Duration(v, key, 0, 86400, "a grace period",
                                                "a duration from 0 to 1d, like 30s"));
  } else if (key == "preemption_cost") {
    ASSIGN_OR_RETURN(
        c.preemption_cost_s,
        r.Duration(v, key, 0, 86400, "a preemption cost",
                   "a duration from 0 to 1d, like 90s (checkpoint write plus restore)"));
  }
  return util::Status::Ok();
}

// A top-level field about how the daemon serves: its address, its store, its clock, its log
// and who may read.
util::Status ParseServerField(const Reader& r, const std::string& key, const DocValue& v,
                              const std::string& base_dir, ServeConfig& c) {
  if (key == "listen") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    if (auto st = ParseListen(s, &c); !st.ok()) return r.Error(v, key, st.message());
  } else if (key == "database") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    if (s.empty()) return r.Error(v, key, "is empty", "a file path");
    c.database = Resolve(base_dir, s);
  } else if (key == "local_state_dir") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    if (s.empty()) return r.Error(v, key, "is empty", "a folder path");
    c.local_state_dir = Resolve(base_dir, s);
  } else if (key == "time_scale") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    double x = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (ec != std::errc() || ptr != s.data() + s.size() || !(x > 0) || x > 1e6) {
      return r.Error(v, key, fmt::format("'{}' is not a time scale", s),
                     "a number > 0 and <= 1e6 (modeled seconds per wall second)");
    }
    c.time_scale = x;
  } else if (key == "log_level") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    auto level = ParseLogLevel(s);
    if (!level.ok()) return r.Error(v, key, level.status().message());
    c.log_level = *level;
  } else if (key == "anonymous_read") {
    ASSIGN_OR_RETURN(c.anonymous_read, r.Bool(v, key));
  } else if (key == "synchronous") {
    ASSIGN_OR_RETURN(std::string s, r.String(v, key));
    if (s != "normal" && s != "full") {
      return r.Error(v, key, fmt::format("'{}' is unknown", s),
                     "normal (survives a crash of the daemon) or full (also power loss)");
    }
    c.synchronous_full = s == "full";
  } else if (key == "keep_ended") {
    ASSIGN_OR_RETURN(c.keep_ended_s,
                     r.Duration(v, key, 0, kForever, "a duration",
                                "how long ended jobs stay in the database, like 30d (0: forever)"));
  } else if (key == "history_every") {
    ASSIGN_OR_RETURN(c.history_every_s,
                     r.Duration(v, key, 0, 3600, "an interval",
                                "a duration from 0 (no samples) to 1h, like 10s"));
  }
  return util::Status::Ok();
}

// The `tokens` list: each entry {token, role, tenant}, token and role required; a tenant names
// one of `tenants`.
util::Result<std::vector<ApiToken>> ParseTokens(const Reader& r, const DocValue& v,
                                                const std::string& key,
                                                const model::Tenants& tenants) {
  std::vector<ApiToken> tokens;
  if (!v.IsList()) return r.Error(v, key, "is not a list", "entries {token, role}");
  for (size_t i = 0; i < v.size(); ++i) {
    const DocValue& t = v[i];
    const std::string at = fmt::format("tokens[{}]", i);
    RETURN_IF_ERROR(r.Mapping(t, at, "{token: SECRET, role: ROLE}"));
    ApiToken token;
    for (const DocValue::Field& f : t.fields) {
      const std::string fk = f.key;
      if (fk == "token") {
        ASSIGN_OR_RETURN(token.token, r.String(f.value, at + ".token"));
        if (token.token.size() < 16 || token.token.find_first_of(" \t\r\n") != std::string::npos) {
          // The message must not echo the secret.
          return r.Error(f.value, at + ".token", "is too short or has blanks",
                         "at least 16 characters without spaces");
        }
      } else if (fk == "role") {
        ASSIGN_OR_RETURN(std::string role, r.String(f.value, at + ".role"));
        auto parsed = ParseRole(role);
        if (!parsed.ok()) return r.Error(f.value, at + ".role", parsed.status().message());
        token.role = *parsed;
      } else if (fk == "tenant") {
        ASSIGN_OR_RETURN(token.tenant, TenantName(r, f.value, at + ".tenant", tenants));
      } else {
        return r.Error(f, at + "." + fk, "unknown field", "token, role or tenant");
      }
    }
    if (token.token.empty()) return r.Error(t, at + ".token", "is missing", "a secret");
    if (!t.Has("role")) return r.Error(t, at + ".role", "is missing", "read, submit or admin");
    if (!token.tenant.empty() && token.role == Role::kAdmin) {
      return r.Error(t["tenant"], at + ".tenant",
                     "an admin token acts for every tenant, so it names none",
                     "role read or submit with a tenant, or admin without one");
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace

util::Result<ServeConfig> ParseServeConfig(std::string_view text, const std::string& file_name,
                                           const std::string& base_dir) {
  ASSIGN_OR_RETURN(const DocValue root, model::io::ParseYamlDocument(text, file_name));
  ServeConfig c;
  const Reader r(file_name);
  if (root.IsNull()) return c;
  RETURN_IF_ERROR(r.Mapping(root, "", "fields like backend: virtual"));
  // Before the tokens, which name tenants.
  if (root.Has("tenants")) {
    ASSIGN_OR_RETURN(c.tenants.list, model::io::ParseTenants(r, root["tenants"]));
  }
  if (root.Has("fair_share")) {
    if (c.tenants.empty()) {
      return r.Error(root["fair_share"], "fair_share", "is given without tenants",
                     "a tenants: list beside it");
    }
    ASSIGN_OR_RETURN(c.tenants.fair_share, model::io::ParseFairShare(r, root["fair_share"]));
  }
  for (const DocValue::Field& kv : root.fields) {
    const std::string key = kv.key;
    RETURN_IF_ERROR(r.KnownField(kv, key, kFields));
    const DocValue& v = kv.value;
    if (key == "power") {
      RETURN_IF_ERROR(ParsePower(r, v, c.power));
    } else if (key == "serving") {
      RETURN_IF_ERROR(ParseServing(r, v, base_dir, c.serving));
    } else if (key == "slurm") {
      RETURN_IF_ERROR(ParseSlurm(r, v, base_dir, c.tenants, c.slurm));
    } else if (key == "kubernetes") {
      RETURN_IF_ERROR(ParseKubernetes(r, v, base_dir, c.tenants, c.kubernetes));
    } else if (key == "tenants" || key == "fair_share") {
      continue;  // read above
    } else if (key == "tokens") {
      ASSIGN_OR_RETURN(c.tokens, ParseTokens(r, v, key, c.tenants));
    } else if (kServerFields.count(key) != 0) {
      RETURN_IF_ERROR(ParseServerField(r, key, v, base_dir, c));
    } else {
      RETURN_IF_ERROR(ParseSchedulingField(r, key, v, base_dir, c));
    }
  }
  c.slurm.mapping.tenants = !c.tenants.empty();
  return c;
}

util::Result<ServeConfig> LoadServeConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseServeConfig(text, path, std::filesystem::path(path).parent_path().string());
}

std::string LocalStateDir(const ServeConfig& config) {
  if (!config.local_state_dir.empty()) return config.local_state_dir;
  return (std::filesystem::path(config.database).parent_path() / "hetsched-local").string();
}

}  // namespace hetsched::svc
