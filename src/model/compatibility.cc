#include "model/compatibility.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/units.h"

namespace hetsched::model {

int32_t WorkersNeeded(const Job& job) {
  const bool elastic = job.min_workers < job.max_workers;
  return std::max(elastic ? std::min(job.min_workers, job.gang_size) : job.gang_size, 1);
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

bool AsksForHost(const Job& job) {
  return job.cores_per_worker > 0 || job.host_memory_per_worker > 0;
}

int32_t HostWorkersFit(const Node& node, int32_t free_cores, uint64_t free_memory, int32_t cores,
                       uint64_t memory) {
  int32_t fit = kAnyWorkers;
  if (cores > 0 && node.cores > 0) fit = std::min(fit, std::max(free_cores, 0) / cores);
  if (memory > 0 && node.host_memory_bytes > 0) {
    fit = static_cast<int32_t>(std::min<uint64_t>(fit, free_memory / memory));
  }
  return fit;
}

int32_t HostWorkersFit(const Node& node, const Job& job) {
  return HostWorkersFit(node, node.cores, node.host_memory_bytes, job.cores_per_worker,
                        job.host_memory_per_worker);
}

std::vector<int32_t> HostedWorkersByType(const Cluster& cluster, const Job& job,
                                         const std::vector<char>& left_out) {
  std::vector<int32_t> out(cluster.catalog.size(), 0);
  std::vector<std::pair<int32_t, int32_t>> here;  // (type, devices) of one node
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    if (n < left_out.size() && left_out[n]) continue;
    const Node& node = cluster.nodes[n];
    const int32_t fit = HostWorkersFit(node, job);
    if (fit == 0) continue;
    here.clear();
    for (int32_t i = 0; i < node.device_count; ++i) {
      const int32_t type = cluster.devices[node.first_device.value() + i].type.value();
      auto it =
          std::find_if(here.begin(), here.end(), [&](const auto& e) { return e.first == type; });
      if (it == here.end()) {
        here.emplace_back(type, 1);
      } else {
        ++it->second;
      }
    }
    for (const auto& [type, devices] : here) out[type] += std::min(devices, fit);
  }
  return out;
}

std::string DescribeHostRequest(const Job& job) {
  std::string out;
  if (job.cores_per_worker > 0) {
    out = fmt::format("{} core{}", job.cores_per_worker, job.cores_per_worker == 1 ? "" : "s");
  }
  if (job.host_memory_per_worker > 0) {
    out += fmt::format("{}{} of host memory", out.empty() ? "" : " and ",
                       util::FormatBytes(job.host_memory_per_worker));
  }
  return out;
}

std::vector<DeviceTypeId> CompatibleTypes(const Cluster& cluster, const Job& job) {
  std::vector<DeviceTypeId> out;
  const int32_t needed = WorkersNeeded(job);
  std::vector<int32_t> hosted;
  if (AsksForHost(job)) hosted = HostedWorkersByType(cluster, job);
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
    const int32_t workers = hosted.empty() ? count : hosted[id.value()];
    if (workers >= needed && TypeRunsJob(cluster.catalog.Get(id), job)) out.push_back(id);
  }
  return out;
}

namespace {

// For each stack `job` accepts, what `cluster` offers under that name: its newest version (and
// a type that has it), or that no device runs it.
std::string StackOffers(const Cluster& cluster, const Job& job) {
  std::string offers;
  for (const StackRequirement& need : job.stacks) {
    std::string best_version;
    std::string best_type;
    bool found = false;
    for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
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
  return offers;
}

// Why the nodes of the types in `gang_ok` (by type index) cannot host `needed` workers with
// the host cores and memory `job` asks for each; "" when they can.
std::string WhyHostsFallShort(const Cluster& cluster, const Job& job,
                              const std::vector<char>& gang_ok, int32_t needed) {
  const std::vector<int32_t> hosted = HostedWorkersByType(cluster, job);
  int32_t best_type = -1;
  for (size_t t = 0; t < gang_ok.size(); ++t) {
    if (gang_ok[t] && (best_type < 0 || hosted[t] > hosted[best_type])) {
      best_type = static_cast<int32_t>(t);
    }
  }
  if (hosted[best_type] >= needed) return "";
  // One resource no node with a compatible device has enough of for one worker names itself.
  const Node* most_cores = nullptr;
  const Node* most_memory = nullptr;
  bool cores_unlimited = false, memory_unlimited = false;
  for (const Node& node : cluster.nodes) {
    bool has_type = false;
    for (int32_t i = 0; i < node.device_count && !has_type; ++i) {
      has_type = gang_ok[cluster.devices[node.first_device.value() + i].type.value()] != 0;
    }
    if (!has_type) continue;
    cores_unlimited = cores_unlimited || node.cores == 0;
    memory_unlimited = memory_unlimited || node.host_memory_bytes == 0;
    if (!most_cores || node.cores > most_cores->cores) most_cores = &node;
    if (!most_memory || node.host_memory_bytes > most_memory->host_memory_bytes) {
      most_memory = &node;
    }
  }
  if (job.cores_per_worker > 0 && !cores_unlimited && most_cores->cores < job.cores_per_worker) {
    return fmt::format(
        "needs {} cores per worker; a node with a compatible device has at most {} "
        "({})",
        job.cores_per_worker, most_cores->cores, most_cores->name);
  }
  if (job.host_memory_per_worker > 0 && !memory_unlimited &&
      most_memory->host_memory_bytes < job.host_memory_per_worker) {
    return fmt::format(
        "needs {} of host memory per worker; a node with a compatible device has at most {} "
        "({})",
        util::FormatBytes(job.host_memory_per_worker),
        util::FormatBytes(most_memory->host_memory_bytes), most_memory->name);
  }
  return fmt::format(
      "needs {} worker{} at once with {} each; the nodes with compatible devices hold at most {} "
      "such worker{} ({})",
      needed, needed == 1 ? "" : "s", DescribeHostRequest(job), hosted[best_type],
      hosted[best_type] == 1 ? "" : "s", cluster.catalog.Get(DeviceTypeId(best_type)).name);
}

}  // namespace

std::string WhyNoDeviceFits(const Cluster& cluster, const Job& job) {
  // 1. Software stack.
  std::vector<std::pair<DeviceTypeId, int32_t>> stack_ok;
  for (const auto& entry : cluster.DeviceTypeCounts()) {
    if (StackRuns(cluster.catalog.Get(entry.first), job)) stack_ok.push_back(entry);
  }
  if (stack_ok.empty()) {
    return fmt::format("needs {}; {}", JoinRequirements(job.stacks), StackOffers(cluster, job));
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
  std::vector<char> gang_ok(cluster.catalog.size(), 0);
  bool any_gang_ok = false;
  for (const auto& entry : memory_ok) {
    if (entry.second >= needed) {
      gang_ok[entry.first.value()] = 1;
      any_gang_ok = true;
    }
    if (!most || entry.second > most->second) most = &entry;
  }
  if (!any_gang_ok) {
    return fmt::format(
        "needs {} devices of one type at once; the cluster has at most {} compatible devices of "
        "a type ({})",
        needed, most->second, cluster.catalog.Get(most->first).name);
  }
  if (!AsksForHost(job)) return "";
  // 4. Host cores and memory on the nodes of those devices.
  return WhyHostsFallShort(cluster, job, gang_ok, needed);
}

}  // namespace hetsched::model
