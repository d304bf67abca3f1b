// libFuzzer target for POST /v1/jobs bodies: any bytes, read as a job request against the
// built-in device catalog, must give a job or an InvalidArgument with a message. Never a crash,
// a hang, or a leak. An accepted request keeps the promises the daemon relies on: its name is a
// valid job id, and its stored form (spec_json, read again when the daemon restarts) is one line
// that parses to the same job.
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
  return 0;
}
