#include "daemon/job_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/compatibility.h"
#include "model/io/workload_reader.h"

namespace hetsched::svc {

namespace {

// Deepest a request may nest arrays and objects, as deep as the workload reader reads.
constexpr int kMaxNesting = 64;

// How deep arrays and objects nest in `json`, which is valid JSON. Counted on the text, without
// recursion: a body of 64 KiB can nest tens of thousands deep.
int NestingDepth(std::string_view json) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

bool ValidJobName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

util::Result<nlohmann::json> ParseBodyObject(std::string_view body, std::string_view expected) {
  if (body.size() > kMaxJobRequestBytes) {
    return util::Status::InvalidArgument(fmt::format("request body: {} bytes (expected at most {})",
                                                     body.size(), kMaxJobRequestBytes));
  }
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Parse again for the position of the syntax error.
    try {
      const nlohmann::json again = nlohmann::json::parse(body);
      (void)again;
    } catch (const nlohmann::json::parse_error& e) {
      return util::Status::InvalidArgument(
          fmt::format("request body: byte {}: not JSON (expected {})", e.byte, expected));
    } catch (const nlohmann::json::exception& e) {
      // A number beyond a double's range is out_of_range, not parse_error.
      std::string what = e.what();
      if (size_t at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
      return util::Status::InvalidArgument(
          fmt::format("request body: {} (expected {})", what, expected));
    }
    return util::Status::InvalidArgument(
        fmt::format("request body: not JSON (expected {})", expected));
  }
  if (!doc.is_object()) {
    return util::Status::InvalidArgument(
        fmt::format("request body: a JSON {} (expected {})", doc.type_name(), expected));
  }
  // Writing the document back recurses once per level.
  if (NestingDepth(body) > kMaxNesting) {
    return util::Status::InvalidArgument(
        fmt::format("request body: nesting deeper than {} (expected {})", kMaxNesting, expected));
  }
  return doc;
}

util::Result<JobRequest> ParseJobRequest(std::string_view body,
                                         const model::DeviceCatalog& catalog) {
  ASSIGN_OR_RETURN(nlohmann::json doc, ParseBodyObject(body, "one job object"));
  if (doc.contains("arrival")) {
    return util::Status::InvalidArgument(
        "request body: arrival: is set by the daemon (expected no arrival)");
  }
  if (doc.contains("repeat") || doc.contains("every")) {
    return util::Status::InvalidArgument(
        "request body: repeat/every: one request submits one job (expected neither)");
  }
  // The reader would take any scalar as a name, a number's text too ("-1", "1e+300").
  if (auto name = doc.find("name"); name != doc.end() && !name->is_string()) {
    return util::Status::InvalidArgument(
        fmt::format("request body: name: a JSON {} (expected a string job id)", name->type_name()));
  }
  if (auto name = doc.find("name");
      name != doc.end() && !ValidJobName(name->get_ref<const std::string&>())) {
    return util::Status::InvalidArgument(fmt::format(
        "request body: name: '{}' is not a job id (expected 1 to 128 of A-Z a-z 0-9 . _ -, "
        "starting with a letter or digit)",
        name->get_ref<const std::string&>()));
  }
  // The workload reader checks every field; it reads JSON Lines, so hand it one line.
  const std::string line =
      doc.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  auto workload = model::io::ParseWorkloadJsonl(line, "request body", catalog);
  if (!workload.ok()) {
    // The reader names fields as entries of a workload file; a request is one job.
    std::string message = workload.status().message();
    for (size_t at; (at = message.find("jobs[0].")) != std::string::npos;) message.erase(at, 8);
    return util::Status::InvalidArgument(message);
  }
  if (workload->jobs.size() != 1) {
    return util::Status::InvalidArgument("request body: expected exactly one job object");
  }
  if (workload->jobs[0].kind == model::JobKind::kService) {
    // Not silently run as a one-device job: the daemon has no request router or autoscaler.
    return util::Status::InvalidArgument(
        "request body: kind: 'service' runs in `hetsched simulate` only (the daemon does not "
        "serve inference yet; submit the model server as a realtime job with pinned devices)");
  }
  JobRequest out;
  out.job = std::move(workload->jobs[0]);
  out.spec_json = line;
  model::Job& job = out.job;
  if (job.throughput.empty() && job.job_type.empty() && !job.ops) {
    for (const model::DeviceType& type : catalog.types()) {
      if (model::TypeRunsJob(type, job)) job.throughput[type.name] = 1;
    }
    out.speed_assumed = true;
  }
  return out;
}

}  // namespace hetsched::svc
