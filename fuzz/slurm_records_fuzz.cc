// libFuzzer target for what Slurm prints (`sinfo --json`, `squeue --json`): any bytes give
// records or an error with a message; never a crash, a hang or a leak. Every record read is
// then described (node devices, job request) the way the Slurm backend does, and a described
// job's request must parse as a daemon job.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "backends/slurm/slurm_records.h"
#include "daemon/job_request.h"
#include "model/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace slurm = hetsched::svc::slurm;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto& catalog = hetsched::model::DeviceCatalog::BuiltIn();
  slurm::Mapping mapping;
  mapping.cpu_type = "xeon-8380";
  auto nodes = slurm::ParseSinfoJson(text);
  if (!nodes.ok() && nodes.status().message().empty()) std::abort();
  if (nodes.ok()) {
    for (const slurm::Node& n : *nodes) {
      const auto b = slurm::DescribeNode(n, mapping, catalog);
      if (b.problem.empty() == b.devices.empty()) std::abort();
    }
  }
  auto jobs = slurm::ParseSqueueJson(text);
  if (!jobs.ok() && jobs.status().message().empty()) std::abort();
  if (jobs.ok()) {
    for (const slurm::Job& j : *jobs) {
      auto spec = slurm::JobRequestOf(j, "slurm-" + std::to_string(j.id), mapping, catalog);
      if (!spec.ok()) {
        if (spec.status().message().empty()) std::abort();
        continue;
      }
      // A request the daemon refuses is fine (e.g. a stack that does not parse); it must say so.
      auto req = hetsched::svc::ParseJobRequest(*spec, catalog);
      if (!req.ok() && req.status().message().empty()) std::abort();
    }
  }
  return 0;
}
