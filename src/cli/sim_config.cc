#include "cli/sim_config.h"

#include <fmt/format.h>

#include <set>

#include "model/io/document.h"
#include "model/io/job_classes.h"
#include "model/io/tenants_reader.h"
#include "sched/policy.h"
#include "sched/scorers.h"
#include "sim/serving.h"
#include "util/file.h"
#include "util/units.h"

namespace hetsched::cli {

namespace {

using model::io::DocValue;
using Fields = std::set<std::string, std::less<>>;
const Fields kSections = {"training", "services", "classes", "tenants", "fair_share"};
const Fields kTraining = {"policy", "scorers", "preempt_interval", "elastic"};
const Fields kServices = {"placement", "interval", "training_value"};

util::Result<double> Duration(const model::io::DocReader& r, const DocValue& v,
                              const std::string& field, double least, double most) {
  return r.Duration(v, field, least, most, "a duration",
                    fmt::format("a duration from {} s to {} s, in seconds or with a unit (90s, "
                                "6m, 12h)",
                                least, most));
}

// "speed:1,energy:0.5" as a string, or the same as a map {speed: 1, energy: 0.5}.
util::Result<std::string> Scorers(const model::io::DocReader& r, const DocValue& v,
                                  const std::string& field) {
  std::string spec;
  if (v.IsScalar()) {
    spec = v.text;
  } else if (v.IsMap()) {
    for (const DocValue::Field& kv : v.fields) {
      if (!kv.value.IsScalar()) {
        return r.Error(kv.value, field + "." + kv.key, "is not a number", "a weight");
      }
      spec += fmt::format("{}{}:{}", spec.empty() ? "" : ",", kv.key, kv.value.text);
    }
  } else {
    return r.Error(v, field, "is not a list of scorers", "speed:1,energy:0.5 or {speed: 1}");
  }
  if (auto s = sched::MakeScorers(spec); !s.ok()) {
    return r.Error(v, field, s.status().message(),
                   "scorers with weights (" + sched::ScorerNames() + ")");
  }
  return spec;
}

util::Status ParseTraining(const model::io::DocReader& r, const DocValue& node, SimConfig& c) {
  RETURN_IF_ERROR(r.Mapping(node, "training", "fields like policy"));
  for (const DocValue::Field& kv : node.fields) {
    const std::string key = kv.key;
    const std::string field = "training." + key;
    RETURN_IF_ERROR(r.KnownField(kv, field, kTraining));
    const DocValue& v = kv.value;
    if (key == "policy") {
      ASSIGN_OR_RETURN(std::string name, r.String(v, field));
      if (auto p = sched::MakePolicy(name); !p.ok()) {
        return r.Error(v, field, fmt::format("'{}' is unknown", name), sched::PolicyNames());
      }
      c.policy = name;
    } else if (key == "scorers") {
      ASSIGN_OR_RETURN(c.scorers, Scorers(r, v, field));
    } else if (key == "preempt_interval") {
      ASSIGN_OR_RETURN(c.preempt_interval_s, Duration(r, v, field, 0, 1e9));
    } else {
      ASSIGN_OR_RETURN(c.elastic, r.Bool(v, field));
    }
  }
  return util::Status::Ok();
}

util::Status ParseServices(const model::io::DocReader& r, const DocValue& node, SimConfig& c) {
  RETURN_IF_ERROR(r.Mapping(node, "services", "fields like placement"));
  for (const DocValue::Field& kv : node.fields) {
    const std::string key = kv.key;
    const std::string field = "services." + key;
    RETURN_IF_ERROR(r.KnownField(kv, field, kServices));
    const DocValue& v = kv.value;
    if (key == "placement") {
      ASSIGN_OR_RETURN(std::string name, r.String(v, field));
      if (!sim::ParseServingMode(name).ok()) {
        return r.Error(v, field, fmt::format("'{}' is unknown", name),
                       "hetsched, strongest, static-peak or single:TYPE");
      }
      c.serving = name;
    } else if (key == "interval") {
      ASSIGN_OR_RETURN(c.serving_interval_s, Duration(r, v, field, 10, 86400));
    } else {
      RETURN_IF_ERROR(r.Mapping(v, field, "{a100-80g: 1}"));
      for (const DocValue::Field& tv : v.fields) {
        const std::string name = tv.key;
        ASSIGN_OR_RETURN(
            const double x,
            r.NumberIn(tv.value, field + "." + name, 0, 1000, /*open_least=*/false,
                       "a number from 0 to 1000: a device-hour's worth to training, as "
                       "a multiple of its price"));
        c.training_value[name] = {x, r.At(tv)};
      }
    }
  }
  return util::Status::Ok();
}

}  // namespace

util::Result<SimConfig> ParseSimConfig(std::string_view text, const std::string& file_name) {
  ASSIGN_OR_RETURN(const DocValue root, model::io::ParseYamlDocument(text, file_name));
  SimConfig c;
  const model::io::DocReader r(file_name);
  if (root.IsNull()) return c;
  RETURN_IF_ERROR(r.Mapping(root, "", "sections training, services, classes, tenants, fair_share"));
  for (const DocValue::Field& kv : root.fields) {
    const std::string key = kv.key;
    RETURN_IF_ERROR(r.KnownField(kv, key, kSections));
    if (key == "training") {
      RETURN_IF_ERROR(ParseTraining(r, kv.value, c));
    } else if (key == "services") {
      RETURN_IF_ERROR(ParseServices(r, kv.value, c));
    } else if (key == "tenants") {
      ASSIGN_OR_RETURN(c.tenants.list, model::io::ParseTenants(r, kv.value));
    } else if (key == "fair_share") {
      ASSIGN_OR_RETURN(c.tenants.fair_share, model::io::ParseFairShare(r, kv.value));
    } else {
      ASSIGN_OR_RETURN(c.classes, model::io::ParseJobClasses(r, kv.value));
    }
  }
  if (root.Has("fair_share") && c.tenants.empty()) {
    return r.Error(root["fair_share"], "fair_share", "is given without tenants",
                   "a tenants: list beside it");
  }
  return c;
}

util::Result<SimConfig> LoadSimConfig(const std::string& path) {
  auto text = util::ReadFile(path);
  if (!text.ok()) {
    return util::Status::NotFound("--config: " + text.status().message());
  }
  return ParseSimConfig(*text, path);
}

void ApplyClasses(const SimConfig& config, model::Workload& workload) {
  for (model::Job& job : workload.jobs) model::io::ApplyJobClass(config.classes, job);
}

}  // namespace hetsched::cli
