#include "daemon/plan_request.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "daemon/job_request.h"

namespace hetsched::svc {

namespace {

using nlohmann::json;

util::Status FieldError(std::string_view field, const json& value, std::string_view expected) {
  return util::Status::InvalidArgument(fmt::format(
      "request body: {}: {} (expected {})", field,
      value.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 80), expected));
}

util::Result<std::string> String(const json& v, std::string_view field) {
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
    return FieldError(field, v, "a non-empty string");
  }
  return v.get<std::string>();
}

util::Result<int64_t> Count(const json& v, std::string_view field, int64_t max) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max) {
    return FieldError(field, v, fmt::format("a whole number from 1 to {}", max));
  }
  return v.get<int64_t>();
}

}  // namespace

util::Result<PlanRequest> ParsePlanRequest(std::string_view body) {
  ASSIGN_OR_RETURN(json doc, ParseBodyObject(body, "one plan request object"));
  PlanRequest r;
  for (const auto& [key, v] : doc.items()) {
    if (key == "model") {
      ASSIGN_OR_RETURN(r.model, String(v, key));
    } else if (key == "dag") {
      if (!v.is_object()) return FieldError(key, v, "a DAG object (docs/dag-format.md)");
      r.dag_json = v.dump(-1, ' ', false, json::error_handler_t::replace);
    } else if (key == "nodes") {
      ASSIGN_OR_RETURN(r.nodes, String(v, key));
      if (r.nodes != "idle" && r.nodes != "all") return FieldError(key, v, "idle or all");
    } else if (key == "batch") {
      ASSIGN_OR_RETURN(r.preset.global_batch, Count(v, key, int64_t{1} << 30));
    } else if (key == "micro_batch") {
      ASSIGN_OR_RETURN(r.preset.micro_batch, Count(v, key, int64_t{1} << 30));
    } else if (key == "seq_len") {
      ASSIGN_OR_RETURN(r.preset.seq_len, Count(v, key, int64_t{1} << 24));
    } else if (key == "max_stages") {
      ASSIGN_OR_RETURN(int64_t n, Count(v, key, 1024));
      r.partition.max_stages = static_cast<int32_t>(n);
    } else if (key == "precision") {
      ASSIGN_OR_RETURN(r.preset.precision, String(v, key));
    } else if (key == "optimizer") {
      ASSIGN_OR_RETURN(r.preset.optimizer, String(v, key));
    } else if (key == "only_type") {
      ASSIGN_OR_RETURN(r.partition.only_type, String(v, key));
    } else if (key == "memory_reserve") {
      if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 0.95) {
        return FieldError(key, v, "a fraction from 0 to 0.95");
      }
      r.partition.memory_reserve = v.get<double>();
    } else if (key == "offload") {
      if (!v.is_boolean()) return FieldError(key, v, "true or false");
      r.partition.allow_offload = v.get<bool>();
    } else if (key == "algo") {
      ASSIGN_OR_RETURN(r.algo, String(v, key));
      if (r.algo != "heft" && r.algo != "cpop" && r.algo != "peft") {
        return FieldError(key, v, "heft, cpop or peft");
      }
    } else {
      return util::Status::InvalidArgument(fmt::format(
          "request body: {}: unknown field (expected one of: model, dag, nodes, batch, "
          "micro_batch, seq_len, precision, optimizer, max_stages, memory_reserve, offload, "
          "only_type, algo)",
          key));
    }
  }
  if (r.model.empty() == r.dag_json.empty()) {
    return util::Status::InvalidArgument(
        "request body: give either model (a preset name) or dag (a DAG object), not both "
        "and not neither");
  }
  if (!r.dag_json.empty()) {
    for (const char* field : {"batch", "micro_batch", "seq_len", "max_stages", "precision",
                              "optimizer", "only_type", "memory_reserve", "offload"}) {
      if (doc.contains(field)) {
        return util::Status::InvalidArgument(
            fmt::format("request body: {}: applies to a model, not a DAG", field));
      }
    }
  } else if (doc.contains("algo")) {
    return util::Status::InvalidArgument("request body: algo: applies to a DAG, not a model");
  }
  return r;
}

}  // namespace hetsched::svc
