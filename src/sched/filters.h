// Filters: named, side-effect-free checks of whether a device type may host a job (software
// stack compatibility, device memory). Node power state and reservations are enforced by the
// free-device index itself (ClusterState never offers an off node or a reserved device).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/device_type.h"
#include "model/job.h"
#include "util/status.h"

namespace hetsched::sched {

class Filter {
 public:
  virtual ~Filter() = default;
  virtual std::string_view name() const = 0;
  // nullopt when `type` may host `job`; otherwise why not ("needs cuda>=12, has rocm 6.0").
  virtual std::optional<std::string> Reject(const model::Job& job,
                                            const model::DeviceType& type) const = 0;
};

// "compat": the device runs one of the stacks the job lists (a job listing none runs anywhere).
std::unique_ptr<Filter> MakeCompatFilter();
// "memory": the device has at least the job's memory per worker.
std::unique_ptr<Filter> MakeMemoryFilter();

// Known filter names, comma-separated, for messages.
std::string FilterNames();
// Builds filters by name; an unknown name is InvalidArgument listing the known ones.
util::Result<std::vector<std::unique_ptr<Filter>>> MakeFilters(
    const std::vector<std::string>& names);

}  // namespace hetsched::sched
