#include "model/compatibility.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/units.h"

namespace hetsched::model {

int32_t WorkersNeeded(const Job& job) {
  int32_t needed = std::max(job.gang_size, 1);
  if (job.max_workers > job.min_workers && job.min_workers >= 1) {
    needed = std::min(needed, job.min_workers);
  }
  return needed;
}

namespace {

bool StackRuns(const DeviceType& type, const Job& job) {
  return job.stacks.empty() || AnySatisfied(type.stacks, job.stacks);
}

std::string JoinRequirements(const std::vector<StackRequirement>& needs) {
  std::string out;
  for (const StackRequirement& n : needs) out += (out.empty() ? "" : " or ") + ToString(n);
  return out;
}

}  // namespace

bool TypeRunsJob(const DeviceType& type, const Job& job) {
  return StackRuns(type, job) && type.memory_bytes >= job.memory_per_worker;
}

std::vector<DeviceTypeId> CompatibleTypes(const Cluster& cluster, const Job& job) {
  std::vector<DeviceTypeId> out;
  const int32_t needed = WorkersNeeded(job);
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
    if (count >= needed && TypeRunsJob(cluster.catalog.Get(id), job)) out.push_back(id);
  }
  return out;
}

std::string WhyNoDeviceFits(const Cluster& cluster, const Job& job) {
  const auto counts = cluster.DeviceTypeCounts();
  // 1. Software stack.
  std::vector<std::pair<DeviceTypeId, int32_t>> stack_ok;
  for (const auto& entry : counts) {
    if (StackRuns(cluster.catalog.Get(entry.first), job)) stack_ok.push_back(entry);
  }
  if (stack_ok.empty()) {
    // For each stack the job accepts, what the cluster offers under that name.
    std::string offers;
    for (const StackRequirement& need : job.stacks) {
      std::string best_version;
      std::string best_type;
      bool found = false;
      for (const auto& [id, count] : counts) {
        const DeviceType& type = cluster.catalog.Get(id);
        for (const SoftwareStack& have : type.stacks) {
          if (have.name != need.name) continue;
          if (!found || CompareVersions(have.version, best_version) > 0) {
            best_version = have.version;
            best_type = type.name;
          }
          found = true;
        }
      }
      if (!offers.empty()) offers += "; ";
      if (found) {
        offers +=
            fmt::format("the cluster has {} only up to {} ({})", need.name,
                        best_version.empty() ? "an unversioned build" : best_version, best_type);
      } else {
        offers += fmt::format("no device in the cluster runs {}", need.name);
      }
    }
    return fmt::format("needs {}; {}", JoinRequirements(job.stacks), offers);
  }
  // 2. Memory per worker.
  std::vector<std::pair<DeviceTypeId, int32_t>> memory_ok;
  const DeviceType* largest = nullptr;
  for (const auto& entry : stack_ok) {
    const DeviceType& type = cluster.catalog.Get(entry.first);
    if (!largest || type.memory_bytes > largest->memory_bytes) largest = &type;
    if (type.memory_bytes >= job.memory_per_worker) memory_ok.push_back(entry);
  }
  if (memory_ok.empty()) {
    return fmt::format("needs {} per worker; the largest compatible device has {} ({})",
                       util::FormatBytes(job.memory_per_worker),
                       util::FormatBytes(largest->memory_bytes), largest->name);
  }
  // 3. Gang size.
  const int32_t needed = WorkersNeeded(job);
  const std::pair<DeviceTypeId, int32_t>* most = nullptr;
  for (const auto& entry : memory_ok) {
    if (entry.second >= needed) return "";
    if (!most || entry.second > most->second) most = &entry;
  }
  return fmt::format(
      "needs {} devices of one type at once; the cluster has at most {} compatible devices of a "
      "type ({})",
      needed, most->second, cluster.catalog.Get(most->first).name);
}

}  // namespace hetsched::model
