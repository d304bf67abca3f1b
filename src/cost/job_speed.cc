#include "cost/job_speed.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cost/roofline.h"
#include "model/compatibility.h"

namespace hetsched::cost {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The type's name first, then its aliases: the keys measurements may be filed under.
std::vector<std::string_view> Keys(const model::DeviceType& type) {
  std::vector<std::string_view> keys{type.name};
  for (const std::string& alias : type.aliases) keys.push_back(alias);
  return keys;
}

// Steps/s to seconds per step; nullopt for a value no reader should have let through.
std::optional<double> FromThroughput(double steps_per_s) {
  if (!std::isfinite(steps_per_s) || steps_per_s < 0) return std::nullopt;
  if (steps_per_s == 0) return std::numeric_limits<double>::infinity();
  return 1.0 / steps_per_s;
}

}  // namespace

std::string_view SpeedSourceName(SpeedSource source) {
  switch (source) {
    case SpeedSource::kJobThroughput:
      return "job";
    case SpeedSource::kProfile:
      return "profile";
    case SpeedSource::kRoofline:
      return "roofline";
  }
  return "unknown";
}

std::optional<StepTime> EstimateStepTime(const model::Job& job, const model::DeviceType& type,
                                         const model::ThroughputProfile* profile) {
  const std::vector<std::string_view> keys = Keys(type);
  for (std::string_view key : keys) {
    for (const auto& [name, steps_per_s] : job.throughput) {
      if (!EqualsIgnoreCase(name, key)) continue;
      if (std::optional<double> s = FromThroughput(steps_per_s)) {
        return StepTime{*s, SpeedSource::kJobThroughput};
      }
    }
  }
  // The table an unmeasured job is assumed to have: 1 step/s on each type that runs it.
  if (job.unit_speed_assumed && model::TypeRunsJob(type, job)) {
    return StepTime{1, SpeedSource::kJobThroughput};
  }
  if (profile != nullptr && !job.job_type.empty()) {
    for (std::string_view key : keys) {
      std::optional<double> steps_per_s =
          profile->Isolated(job.job_type, job.gang_size, std::string(key));
      if (!steps_per_s) continue;
      if (std::optional<double> s = FromThroughput(*steps_per_s)) {
        return StepTime{*s, SpeedSource::kProfile};
      }
    }
  }
  if (job.ops) {
    OpLoad load{job.ops->flops_per_step, job.ops->bytes_per_step,
                job.ops->low_precision ? model::Precision::kFp16 : model::Precision::kFp32};
    return StepTime{RooflineSeconds(load, type), SpeedSource::kRoofline};
  }
  return std::nullopt;
}

std::optional<double> StepSeconds(const model::Job& job, const model::DeviceType& type,
                                  const model::ThroughputProfile* profile) {
  std::optional<StepTime> t = EstimateStepTime(job, type, profile);
  if (!t) return std::nullopt;
  return t->seconds;
}

}  // namespace hetsched::cost
