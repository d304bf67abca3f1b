// ThroughputProfile: measured steps/s of job types per device type, alone and co-located in
// pairs (Gavel's simulation_throughputs.json is one). Device types are catalog names.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace hetsched::model {

class ThroughputProfile {
 public:
  // Steps/s of the whole gang of `job_type` at `scale` workers on `device_type`.
  std::optional<double> Isolated(const std::string& job_type, int scale,
                                 const std::string& device_type) const;
  // Steps/s of (a, b) when a and b share one device (space sharing).
  std::optional<std::pair<double, double>> Colocated(const std::string& job_a, int scale_a,
                                                     const std::string& job_b, int scale_b,
                                                     const std::string& device_type) const;

  void SetIsolated(const std::string& job_type, int scale, const std::string& device_type,
                   double steps_per_s);
  void SetColocated(const std::string& job_a, int scale_a, const std::string& job_b, int scale_b,
                    const std::string& device_type, double a_steps_per_s, double b_steps_per_s);

  std::vector<std::string> JobTypes() const;     // distinct, sorted
  std::vector<std::string> DeviceTypes() const;  // distinct, sorted
  bool empty() const { return isolated_.empty(); }

 private:
  using Key = std::tuple<std::string, int, std::string>;  // job type, scale, device type
  std::map<Key, double> isolated_;
  std::map<std::tuple<std::string, int, std::string, int, std::string>, std::pair<double, double>>
      colocated_;
};

}  // namespace hetsched::model
