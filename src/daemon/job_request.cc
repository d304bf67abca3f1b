#include "daemon/job_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "model/compatibility.h"
#include "model/io/tenants_reader.h"
#include "model/io/workload_reader.h"

namespace hetsched::svc {

using model::io::DocValue;

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

// The first key that appears twice in one object of `body`, or "" (nlohmann keeps the last,
// so a request could say two things and mean one). `body` is valid JSON.
std::string DuplicateKey(std::string_view body) {
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto watch = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open_objects.emplace_back();
    if (event == Event::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == Event::key && duplicate.empty() && !open_objects.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  const nlohmann::json ignored = nlohmann::json::parse(body, watch, /*allow_exceptions=*/false);
  (void)ignored;
  return duplicate;
}

// A job whose work takes more than 10 years on its fastest device type with all its workers
// is a typo (1e308 steps, "999999999999h"); the scheduler would hold it forever. Jobs sized by
// a profile (job_type) or by operators are not checked here.
util::Status CheckRunTime(const model::Job& job, const DocValue& doc,
                          const model::DeviceCatalog& catalog) {
  if (job.work <= 0) return util::Status::Ok();
  double fastest = 0;
  for (const auto& [type, steps_per_s] : job.throughput) fastest = std::max(fastest, steps_per_s);
  if (job.unit_speed_assumed &&
      std::any_of(catalog.types().begin(), catalog.types().end(),
                  [&](const model::DeviceType& type) { return model::TypeRunsJob(type, job); })) {
    fastest = 1;
  }
  if (fastest <= 0) return util::Status::Ok();
  const double seconds = job.work / (fastest * std::max(1, job.max_workers));
  if (seconds <= model::io::kMaxJobTimeS) return util::Status::Ok();
  return util::Status::InvalidArgument(fmt::format(
      "request body: {}: the job would run {:.3g} s on its fastest device type, more than 10 "
      "years (expected a job that ends within 10 years)",
      doc.Has("duration") ? "duration" : "work", seconds));
}

// A job's size, for the backends that model run times (virtual): `work` (or `duration` with
// `reference_device`), else `estimate` (the user's guess of the run time), else `time_limit`
// (an upper bound, so the job is modeled as running until its limit stops it). A job with a
// `command` may have none: its process decides when it ends. The workload reader asks for work
// or duration unless there is a command; a job sized by time alone is handed to it with this
// stand-in work, dropped after.
constexpr double kStandInWork = 1;

// Whether `doc` has the field `key` and it is the JSON string `text`.
bool IsString(const DocValue& doc, std::string_view key, std::string_view text) {
  const DocValue& v = doc[key];
  return v.IsScalar() && v.type == DocValue::Type::kString && v.text == text;
}

bool HasWork(const DocValue& doc) {
  return doc.Has("work") || doc.Has("duration") || doc.Has("command") ||
         // A service's size is its request stream (the reader refuses a kind that is no string).
         IsString(doc, "kind", "service");
}

bool HasTimeSize(const DocValue& doc) { return doc.Has("estimate") || doc.Has("time_limit"); }

// What the daemon needs of a service beyond the workload format: a command that starts one
// replica on the port hetsched picks, and its load measured rather than read from a trace.
constexpr size_t kMaxServiceName = 120;

util::Status CheckServiceRequest(const model::Job& job, const DocValue& doc) {
  if (doc.Has("requests")) {
    return util::Status::InvalidArgument(
        "request body: requests: a trace file is for `hetsched simulate` (expected `rate` and "
        "`tokens`: the daemon measures the load on the replicas and forecasts from it)");
  }
  // Replicas are jobs named NAME.rN: the name leaves room for the suffix within 128.
  if (job.name.size() > kMaxServiceName) {
    return util::Status::InvalidArgument(fmt::format(
        "request body: name: a service's name is at most {} characters, got {} (its replicas "
        "are jobs named NAME.rN, at most 128)",
        kMaxServiceName, job.name.size()));
  }
  if (job.command.empty()) {
    return util::Status::InvalidArgument(
        "request body: command: is missing (expected the argv that starts one replica, with "
        "{port} where the replica's port goes, e.g. [\"vllm\", \"serve\", \"m\", \"--port\", "
        "\"{port}\"])");
  }
  const bool has_port = std::any_of(job.command.begin(), job.command.end(), [](const auto& a) {
    return a.find("{port}") != std::string::npos;
  });
  if (!has_port) {
    return util::Status::InvalidArgument(
        "request body: command: no argument holds {port} (expected the port placeholder: "
        "hetsched picks each replica's port and reads GET /metrics there)");
  }
  return util::Status::Ok();
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
  if (std::string key = DuplicateKey(body); !key.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("request body: {}: given twice in one object (expected each key once)", key));
  }
  return doc;
}

// The reader names fields as entries of a workload file; a request is one job.
std::string WithoutEntryPrefix(std::string message) {
  for (size_t at; (at = message.find("jobs[0].")) != std::string::npos;) message.erase(at, 8);
  return message;
}

namespace {

// Where a request's values are, for the workload reader's messages: "request body:1: ...".
const util::SourceLocation kRequestBody{"request body", 1, 0};

// The file name of every request's job (model::JobOrigin), one string they all share.
const std::shared_ptr<const std::string>& RequestBodyFile() {
  static const auto file = std::make_shared<const std::string>(kRequestBody.file);
  return file;
}

// Everything ParseJobRequest does after reading the body: the fields checked and the job built
// (spec_json left empty). `doc` is the body read typed (model::io::FromJson, ParseJson).
util::Result<JobRequest> JobOfObject(DocValue doc, const model::DeviceCatalog& catalog) {
  if (doc.Has("arrival")) {
    return util::Status::InvalidArgument(
        "request body: arrival: is set by the daemon (expected no arrival)");
  }
  if (doc.Has("repeat") || doc.Has("every")) {
    return util::Status::InvalidArgument(
        "request body: repeat/every: one request submits one job (expected neither)");
  }
  if (const DocValue& name = doc["name"];
      name.IsScalar() && name.type == DocValue::Type::kString && !ValidJobName(name.text)) {
    return util::Status::InvalidArgument(fmt::format(
        "request body: name: '{}' is not a job id (expected 1 to 128 of A-Z a-z 0-9 . _ -, "
        "starting with a letter or digit)",
        name.text));
  }
  // The workload reader checks every field, with the JSON types kept: "2" is no number.
  const bool stand_in = !HasWork(doc);
  if (stand_in) {
    DocValue::Field& work = doc.fields.emplace_back();
    work.key = "work";
    work.line = kRequestBody.line;
    work.value.kind = DocValue::Kind::kScalar;
    work.value.type = DocValue::Type::kNumber;
    work.value.text = nlohmann::json(kStandInWork).dump();
    work.value.line = kRequestBody.line;
  }
  auto read = model::io::ParseWorkloadJob(doc, RequestBodyFile(), catalog);
  if (!read.ok()) return util::Status::InvalidArgument(WithoutEntryPrefix(read.status().message()));
  if (read->kind == model::JobKind::kService) RETURN_IF_ERROR(CheckServiceRequest(*read, doc));
  if (stand_in && !HasTimeSize(doc)) {
    return util::Status::InvalidArgument(
        "request body: work: is missing (expected work (steps), duration with reference_device, "
        "an estimate or a time_limit; a job with a command may leave its size out)");
  }
  JobRequest out;
  out.job = std::move(read).value();
  if (stand_in) out.job.work = 0;
  model::Job& job = out.job;
  if (job.kind != model::JobKind::kService && job.throughput.empty() && job.job_type.empty() &&
      !job.ops) {
    job.unit_speed_assumed = true;
    out.speed_assumed = true;
  }
  RETURN_IF_ERROR(CheckRunTime(job, doc, catalog));
  return out;
}

}  // namespace

util::Result<JobRequest> ParseJobRequest(std::string_view body,
                                         const model::DeviceCatalog& catalog) {
  ASSIGN_OR_RETURN(const nlohmann::json doc, ParseBodyObject(body, "one job object"));
  DocValue fields;
  RETURN_IF_ERROR(model::io::FromJson(doc, kRequestBody, &fields, /*typed=*/true));
  ASSIGN_OR_RETURN(JobRequest out, JobOfObject(std::move(fields), catalog));
  out.spec_json =
      doc.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  return out;
}

util::Result<JobRequest> ParseStoredJobRequest(std::string_view spec_json,
                                               const model::DeviceCatalog& catalog) {
  DocValue doc;
  if (!model::io::ParseJson(spec_json, kRequestBody, &doc, /*typed=*/true).ok() || !doc.IsMap()) {
    // Not what the daemon stored: the full reader says where and how it breaks.
    return ParseJobRequest(spec_json, catalog);
  }
  return JobOfObject(std::move(doc), catalog);
}

util::Status CheckJobTenant(const model::Tenants& tenants, const model::Job& job) {
  model::Workload one;
  one.jobs.push_back(job);
  one.jobs[0].origin.entry = 0;
  if (auto st = model::io::CheckJobTenants(tenants, one); !st.ok()) {
    return util::Status::InvalidArgument(WithoutEntryPrefix(st.message()));
  }
  return util::Status::Ok();
}

}  // namespace hetsched::svc
