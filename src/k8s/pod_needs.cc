// What a pod needs (NeedsOf): its accelerator request and its hetsched.io/ annotations.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "k8s/objects.h"
#include "k8s/objects_internal.h"

namespace hetsched::svc::k8s {

namespace {

// A pod's annotations, read with errors that name the pod and the annotation.
class Annotations {
 public:
  explicit Annotations(const Pod& pod) : pod_(pod) {}
  const std::string* Find(const std::string& key) const {
    auto it = pod_.annotations.find(key);
    return it == pod_.annotations.end() ? nullptr : &it->second;
  }
  util::Status Bad(std::string_view key, const std::string& value,
                   std::string_view expected) const {
    return util::Status::InvalidArgument(
        fmt::format("pod {}: annotation {}: '{}' (expected {})", pod_.Key(), key, value, expected));
  }

 private:
  const Pod& pod_;
};

// The one kind of accelerator the pod requests, and how many.
util::Status ReadAccelerator(const Pod& pod, PodNeeds* needs) {
  for (const auto& [resource, count] : pod.requests) {
    if (!StackOfResource(resource) || count <= 0) continue;
    if (!needs->resource.empty()) {
      return util::Status::InvalidArgument(
          fmt::format("pod {}: requests both {} and {} (one kind of accelerator per pod)",
                      needs->key, needs->resource, resource));
    }
    if (count != std::floor(count) || count > 4096) {
      return util::Status::InvalidArgument(fmt::format(
          "pod {}: {}: {} (expected a whole number of devices)", needs->key, resource, count));
    }
    needs->resource = resource;
    needs->count = static_cast<int32_t>(count);
  }
  return util::Status::Ok();
}

// hetsched.io/throughput: TYPE=STEPS_PER_S pairs of catalog types.
util::Status ReadThroughput(const Annotations& annotations, const std::string& table,
                            const model::DeviceCatalog& catalog, model::Job* job) {
  for (const std::string& item : CommaList(table)) {
    const size_t eq = item.find('=');
    const model::DeviceType* t =
        eq == std::string::npos ? nullptr : catalog.Find(Lower(item.substr(0, eq)));
    double v = -1;
    if (t) {
      const std::string number = item.substr(eq + 1);
      auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
      if (ec != std::errc() || p != number.data() + number.size()) v = -1;
    }
    if (!t || !(v >= 0) || !std::isfinite(v)) {
      return annotations.Bad("hetsched.io/throughput", table,
                             "TYPE=STEPS_PER_S pairs of catalog types, e.g. a100-80g=12.5,t4=3");
    }
    job->throughput[t->name] = v;
  }
  return util::Status::Ok();
}

// The pod's group ("namespace/group") and the members it needs at once.
util::Status ReadGroup(const Pod& pod, const Annotations& annotations, PodNeeds* needs) {
  if (const std::string* group = annotations.Find("hetsched.io/pod-group")) {
    needs->group = *group;
  } else if (const std::string* volcano = annotations.Find("scheduling.k8s.io/group-name")) {
    needs->group = *volcano;
  } else {
    for (const char* label :
         {"scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io"}) {
      if (auto it = pod.labels.find(label); it != pod.labels.end() && !it->second.empty()) {
        needs->group = it->second;
        break;
      }
    }
  }
  if (needs->group.empty()) return util::Status::Ok();
  const std::string* size = annotations.Find("hetsched.io/pod-group-size");
  auto n = size ? ParseInt(*size) : std::nullopt;
  if (!n || *n < 1 || *n > 100000) {
    return util::Status::InvalidArgument(fmt::format(
        "pod {}: pod group '{}': annotation hetsched.io/pod-group-size: {} (expected the "
        "number of pods the group needs at once, its minMember; hetsched does not read "
        "PodGroup objects)",
        needs->key, needs->group, size ? "'" + *size + "'" : "missing"));
  }
  needs->group_size = static_cast<int32_t>(*n);
  needs->group = pod.namespace_name + "/" + needs->group;
  return util::Status::Ok();
}

}  // namespace

util::Result<PodNeeds> NeedsOf(const Pod& pod, const model::DeviceCatalog& catalog) {
  PodNeeds needs;
  needs.key = pod.Key();
  needs.uid = pod.uid;
  model::Job& job = needs.job;
  job.name = needs.key;
  const Annotations annotations(pod);
  RETURN_IF_ERROR(ReadAccelerator(pod, &needs));
  job.gang_size = job.min_workers = job.max_workers = std::max(1, needs.count);

  if (const std::string* stacks = annotations.Find("hetsched.io/stacks")) {
    for (const std::string& item : CommaList(*stacks)) {
      auto r = model::ParseStackRequirement(item);
      if (!r.ok()) {
        return annotations.Bad("hetsched.io/stacks", *stacks, "e.g. cuda>=12.2,rocm>=6.0");
      }
      job.stacks.push_back(*r);
    }
    if (job.stacks.empty()) {
      return annotations.Bad("hetsched.io/stacks", *stacks, "e.g. cuda>=12.2,rocm>=6.0");
    }
  } else if (auto stack = StackOfResource(needs.resource)) {
    job.stacks.push_back({*stack, ""});
  }

  if (const std::string* memory = annotations.Find("hetsched.io/memory-per-device")) {
    auto q = ParseQuantity(*memory);
    if (!q.ok() || *q <= 0) {
      return annotations.Bad("hetsched.io/memory-per-device", *memory, "e.g. 40Gi");
    }
    job.memory_per_worker = static_cast<uint64_t>(*q);
  } else if (auto it = pod.requests.find("nvidia.com/gpumem"); it != pod.requests.end()) {
    job.memory_per_worker = static_cast<uint64_t>(it->second) << 20;  // HAMi: MiB per GPU
  }

  if (const std::string* type = annotations.Find("hetsched.io/job-type")) job.job_type = *type;
  if (const std::string* table = annotations.Find("hetsched.io/throughput")) {
    RETURN_IF_ERROR(ReadThroughput(annotations, *table, catalog, &job));
  }
  if (job.job_type.empty() && job.throughput.empty()) {
    needs.speed_assumed = true;
    for (const model::DeviceType& t : catalog.types()) job.throughput[t.name] = 1;
  }
  RETURN_IF_ERROR(ReadGroup(pod, annotations, &needs));
  if (const std::string* location = annotations.Find("hetsched.io/data-location")) {
    needs.data_location = *location;
  }
  return needs;
}

}  // namespace hetsched::svc::k8s
