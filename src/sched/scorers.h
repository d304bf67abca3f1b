// Type scorers: named pieces that rate a device type for a job (higher is better) when a
// heterogeneity-aware policy chooses where a job runs: speed, speed per cost, energy per work,
// and locality (room for the gang near the job's data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/device_type.h"
#include "sched/cluster_state.h"
#include "sched/job_record.h"
#include "sched/placement.h"
#include "util/status.h"

namespace hetsched::sched {

// What a scorer may read of the cluster's state besides the job: free devices and where the
// job's data lives. Absent (null) where there is no such state (the Kubernetes extender).
struct ScoreContext {
  const ClusterState* state = nullptr;
  PlacementHints hints;
};

class TypeScorer {
 public:
  virtual ~TypeScorer() = default;
  virtual std::string_view name() const = 0;
  // In [0, 1] for types the job may use; 1 for the best such type of the job.
  virtual double Score(const JobRecord& job, model::DeviceTypeId type,
                       const model::DeviceCatalog& catalog, const ScoreContext* context) const = 0;
  // True when Score reads the context's cluster state: then a job's scores change with the
  // free devices, not only with the job.
  virtual bool reads_state() const { return false; }
};

// A weighted sum of scorers.
class ScorerSet {
 public:
  void Add(std::unique_ptr<TypeScorer> scorer, double weight);
  double Score(const JobRecord& job, model::DeviceTypeId type, const model::DeviceCatalog& catalog,
               const ScoreContext* context = nullptr) const;
  bool empty() const { return scorers_.empty(); }
  // Some scorer reads the cluster state (TypeScorer::reads_state).
  bool reads_state() const;

 private:
  std::vector<std::pair<std::unique_ptr<TypeScorer>, double>> scorers_;
};

std::string ScorerNames();  // "speed, speed-per-cost, energy, locality"
// Parses "speed" or "speed:1,energy:0.5"; unknown names are InvalidArgument listing known ones.
util::Result<ScorerSet> MakeScorers(std::string_view spec);

}  // namespace hetsched::sched
