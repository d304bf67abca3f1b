// libFuzzer target for POST /v1/jobs bodies: any bytes, read as a job request against the
// built-in device catalog, must give a job or an InvalidArgument with a message. Never a crash,
// a hang, or a leak. An accepted request keeps the promises the daemon relies on: its name is a
// valid job id, and its stored form (spec_json, read again when the daemon restarts) is one line
// that parses to the same job; its tenant is refused, if at all, naming the field.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "daemon/job_request.h"
#include "model/catalog.h"

namespace {

using hetsched::util::StatusCode;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const hetsched::model::DeviceCatalog& catalog = hetsched::model::DeviceCatalog::BuiltIn();
  auto request = hetsched::svc::ParseJobRequest(body, catalog);
  if (!request.ok()) {
    if (request.status().code() != StatusCode::kInvalidArgument) std::abort();
    if (request.status().message().empty()) std::abort();
    return 0;
  }
  const hetsched::model::Job& job = request->job;
  if (!hetsched::svc::ValidJobName(job.name)) std::abort();
  if (job.gang_size < 1) std::abort();
  const std::string& spec = request->spec_json;
  if (spec.empty() || spec.find('\n') != std::string::npos) std::abort();
  if (spec.size() > hetsched::svc::kMaxJobRequestBytes) std::abort();
  // What the store keeps must read back as the same job after a restart.
  auto again = hetsched::svc::ParseJobRequest(spec, catalog);
  if (!again.ok()) std::abort();
  if (again->spec_json != spec || again->job.name != job.name ||
      again->job.gang_size != job.gang_size || again->job.stacks.size() != job.stacks.size() ||
      again->job.throughput != job.throughput || again->speed_assumed != request->speed_assumed) {
    std::abort();
  }
  // A tenant is checked against the config's with the field named, never otherwise refused.
  static const hetsched::model::Tenants tenants = [] {
    hetsched::model::Tenants t;
    for (const char* name : {"vision", "llm"}) {
      t.list.emplace_back();
      t.list.back().name = name;
    }
    return t;
  }();
  const hetsched::util::Status tenant = hetsched::svc::CheckJobTenant(tenants, job);
  if (!tenant.ok() && (tenant.code() != StatusCode::kInvalidArgument ||
                       tenant.message().find("tenant: ") == std::string::npos)) {
    std::abort();
  }
  return 0;
}
