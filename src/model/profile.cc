#include "model/profile.h"

#include <set>

namespace hetsched::model {

std::optional<double> ThroughputProfile::Isolated(const std::string& job_type, int scale,
                                                  const std::string& device_type) const {
  auto it = isolated_.find({job_type, scale, device_type});
  if (it == isolated_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::pair<double, double>> ThroughputProfile::Colocated(
    const std::string& job_a, int scale_a, const std::string& job_b, int scale_b,
    const std::string& device_type) const {
  auto it = colocated_.find({job_a, scale_a, job_b, scale_b, device_type});
  if (it == colocated_.end()) return std::nullopt;
  return it->second;
}

void ThroughputProfile::SetIsolated(const std::string& job_type, int scale,
                                    const std::string& device_type, double steps_per_s) {
  isolated_[{job_type, scale, device_type}] = steps_per_s;
}

void ThroughputProfile::SetColocated(const std::string& job_a, int scale_a,
                                     const std::string& job_b, int scale_b,
                                     const std::string& device_type, double a_steps_per_s,
                                     double b_steps_per_s) {
  colocated_[{job_a, scale_a, job_b, scale_b, device_type}] = {a_steps_per_s, b_steps_per_s};
}

std::vector<std::string> ThroughputProfile::JobTypes() const {
  std::set<std::string> names;
  for (const auto& [key, value] : isolated_) names.insert(std::get<0>(key));
  return {names.begin(), names.end()};
}

std::vector<std::string> ThroughputProfile::DeviceTypes() const {
  std::set<std::string> names;
  for (const auto& [key, value] : isolated_) names.insert(std::get<2>(key));
  return {names.begin(), names.end()};
}

}  // namespace hetsched::model
