// Job requests: the body of POST /v1/jobs (one job as a JSON object with the fields of the
// workload format, docs/workload-format.md, plus `command`) turned into a model::Job.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "model/catalog.h"
#include "model/job.h"
#include "model/tenant.h"
#include "util/status.h"

namespace hetsched::svc {

// Largest request body the API reads (bytes); larger bodies are refused with 413.
inline constexpr size_t kMaxJobRequestBytes = 64 * 1024;

// A job's name is its id in URLs, logs and file names: 1 to 128 of [A-Za-z0-9._-], starting
// with a letter or digit.
bool ValidJobName(std::string_view name);

// A request body that must be one JSON object of at most kMaxJobRequestBytes, nesting at most
// 64 deep; errors say where JSON breaks and end "(expected <expected>)".
util::Result<nlohmann::json> ParseBodyObject(std::string_view body, std::string_view expected);

struct JobRequest {
  model::Job job;
  // The request as stored: compact JSON, one line, `arrival` left out (the daemon sets it).
  std::string spec_json;
  // No throughput, job_type or ops was given, so the job is assumed to run at 1 step/s per
  // worker on every device type it may use (its work, if any, is then in seconds): the API's
  // report of job.unit_speed_assumed.
  bool speed_assumed = false;
};

// Parses and checks one job. Errors are kInvalidArgument naming the field, e.g.
// "request body:1: gang_size: ..." (the workload reader's messages, model::io::ParseWorkloadJob,
// with the JSON types kept: "2" is no number).
// A job without throughput, job_type or ops is assumed to run 1 step/s on every type of
// `catalog` that runs it (model::Job::unit_speed_assumed, JobRequest::speed_assumed), so that an
// unmeasured command can be scheduled.
// A service (kind service) needs a `command` with {port} in some argument, and no `requests`
// trace (the daemon measures its load).
util::Result<JobRequest> ParseJobRequest(std::string_view body,
                                         const model::DeviceCatalog& catalog);

// A request the daemon stored (JobRequest::spec_json of a job it accepted) read back: the job
// ParseJobRequest made of it, checked against `catalog` as it is now, with its errors. It
// skips the checks of the text that a stored request passed when it was accepted (its size,
// nesting, keys given twice: the daemon wrote it with each key once) and leaves spec_json
// empty. A restart reads every live job's request this way, and views of ended jobs theirs.
util::Result<JobRequest> ParseStoredJobRequest(std::string_view spec_json,
                                               const model::DeviceCatalog& catalog);

// With `tenants` configured, `job` (but a service, which belongs to no tenant) must name one
// without children: kInvalidArgument "request body: tenant: ..." listing the known names, as
// simulate checks a workload's jobs (model::io::CheckJobTenants).
util::Status CheckJobTenant(const model::Tenants& tenants, const model::Job& job);

}  // namespace hetsched::svc
