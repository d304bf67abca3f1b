#include "daemon/plan_request.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "daemon/job_request.h"
#include "model/io/document.h"

namespace hetsched::svc {

namespace {

using model::io::DocValue;

// One of `choices`; otherwise "is ..." and `expected`.
util::Result<std::string> Choice(const model::io::DocReader& r, const DocValue& v,
                                 const std::string& field,
                                 std::initializer_list<std::string_view> choices,
                                 const std::string& expected) {
  ASSIGN_OR_RETURN(std::string s, r.NonEmptyString(v, field));
  if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
    return r.Error(v, field, "is " + model::io::Describe(v), expected);
  }
  return s;
}

}  // namespace

util::Result<PlanRequest> ParsePlanRequest(std::string_view body) {
  ASSIGN_OR_RETURN(nlohmann::json json, ParseBodyObject(body, "one plan request object"));
  DocValue doc;
  RETURN_IF_ERROR(model::io::FromJson(json, {"request body", 0, 0}, &doc, /*typed=*/true));
  const model::io::DocReader r("request body");
  RETURN_IF_ERROR(
      r.OnlyKnown(doc, "",
                  {"model", "dag", "nodes", "batch", "micro_batch", "seq_len", "precision",
                   "optimizer", "max_stages", "memory_reserve", "offload", "only_type", "algo"}));
  PlanRequest p;
  for (const DocValue::Field& f : doc.fields) {
    const std::string& key = f.key;
    const DocValue& v = f.value;
    if (key == "model") {
      ASSIGN_OR_RETURN(p.model, r.NonEmptyString(v, key));
    } else if (key == "dag") {
      RETURN_IF_ERROR(r.Expect(v, DocValue::Kind::kMap, key, "a DAG object (docs/dag-format.md)"));
      p.dag_json = json[key].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else if (key == "nodes") {
      ASSIGN_OR_RETURN(p.nodes, Choice(r, v, key, {"idle", "all"}, "idle or all"));
    } else if (key == "batch") {
      ASSIGN_OR_RETURN(p.preset.global_batch, r.Count(v, key, int64_t{1} << 30));
    } else if (key == "micro_batch") {
      ASSIGN_OR_RETURN(p.preset.micro_batch, r.Count(v, key, int64_t{1} << 30));
    } else if (key == "seq_len") {
      ASSIGN_OR_RETURN(p.preset.seq_len, r.Count(v, key, int64_t{1} << 24));
    } else if (key == "max_stages") {
      ASSIGN_OR_RETURN(int64_t n, r.Count(v, key, 1024));
      p.partition.max_stages = static_cast<int32_t>(n);
    } else if (key == "precision") {
      ASSIGN_OR_RETURN(p.preset.precision, r.NonEmptyString(v, key));
    } else if (key == "optimizer") {
      ASSIGN_OR_RETURN(p.preset.optimizer, r.NonEmptyString(v, key));
    } else if (key == "only_type") {
      ASSIGN_OR_RETURN(p.partition.only_type, r.NonEmptyString(v, key));
    } else if (key == "memory_reserve") {
      ASSIGN_OR_RETURN(p.partition.memory_reserve, r.NumberIn(v, key, 0, 0.95, /*open_least=*/false,
                                                              "a fraction from 0 to 0.95"));
    } else if (key == "offload") {
      ASSIGN_OR_RETURN(p.partition.allow_offload, r.Bool(v, key));
    } else {  // algo
      ASSIGN_OR_RETURN(p.algo, Choice(r, v, key, {"heft", "cpop", "peft"}, "heft, cpop or peft"));
    }
  }
  if (p.model.empty() == p.dag_json.empty()) {
    return util::Status::InvalidArgument(
        "request body: give either model (a preset name) or dag (a DAG object), not both "
        "and not neither");
  }
  if (!p.dag_json.empty()) {
    for (const char* field : {"batch", "micro_batch", "seq_len", "max_stages", "precision",
                              "optimizer", "only_type", "memory_reserve", "offload"}) {
      if (doc.Has(field)) {
        return util::Status::InvalidArgument(
            fmt::format("request body: {}: applies to a model, not a DAG", field));
      }
    }
  } else if (doc.Has("algo")) {
    return util::Status::InvalidArgument("request body: algo: applies to a DAG, not a model");
  }
  return p;
}

}  // namespace hetsched::svc
