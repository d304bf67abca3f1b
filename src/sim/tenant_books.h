// TenantBooks: what each tenant (model/tenant.h) got in a simulation: device-hours by type,
// normalized throughput (reference-device-hours: a run's device-hours times the job's speed on
// its type relative to the reference type), average JCT, and device-hours borrowed beyond its
// guarantee or lent from it. The engine books every run that held devices; Summarize turns the
// runs into SimResult::tenants.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "model/profile.h"
#include "model/tenant.h"

namespace hetsched::sim {

struct TenantResult {
  // The tenant's reference-device-hours over everyone's, over the measured window.
  double normalized_share = 0;
  double normalized_device_hours = 0;          // over the measured window
  std::map<std::string, double> device_hours;  // by device type, over the measured window
  double avg_jct_s = 0;                        // its measured completed jobs; 0: none
  int64_t jobs_completed = 0;                  // of those
  // Held beyond its guarantee, and of its guarantee held by others while it did not use it,
  // integrated over the measured window (see Summarize).
  double borrowed_device_hours = 0;
  double lent_device_hours = 0;
  // lent_device_hours by device type: at each moment, what it lent split over the types as the
  // devices borrowers held beyond their guarantees were (each borrower's beyond its guarantee
  // in proportion to its devices of each type).
  std::map<std::string, double> lent_device_hours_by_type;
  // Runs of its jobs stopped by preemption over the whole run: each wrote its checkpoint and
  // resumes from it.
  int64_t preempted_runs = 0;
  // The longest stretch of the window in which one of its measured jobs waited although what the
  // tenant held plus that job's gang stayed within its guarantee (in its quota's unit; a job
  // counts its gang): how long an owner waited for what it lent to come back. 0 without one.
  double reclaim_wait_s = 0;
  // Finish-time fairness (Themis, NSDI'20): the mean, over its completed measured jobs, of
  // JCT over the job's time alone on a 1/N share of the cluster (TenantBooks::AloneS).
  // 0: none completed.
  double rho = 0;
};

// How evenly a run served its tenants (SimResult::tenant_fairness).
struct TenantFairness {
  // Jain's index over the leaf tenants with measured jobs of normalized_share / target (target:
  // model::Tenants::Shares over those tenants): 1 when every share is on its target, 1/n at
  // worst. 0 without such tenants.
  double jain_index = 0;
  double worst_rho = 0;  // the largest TenantResult::rho
};

// One job's end for the books: its id (a position in the workload), and when it arrived and
// completed (completion < 0: it did not complete).
struct TenantJobEnd {
  int32_t id = -1;
  double arrival_s = 0;
  double completion_s = -1;
};

// Not thread-safe. Keeps references to its arguments.
class TenantBooks {
 public:
  TenantBooks(const model::Tenants& tenants, const model::Cluster& cluster,
              const model::Workload& workload, const model::ThroughputProfile* profile);

  // Job `job` (a position in the workload) held `devices` devices of `type` over [from_s, to_s);
  // `preempted`: the run ended in a preemption.
  void Run(int32_t job, model::DeviceTypeId type, int32_t devices, double from_s, double to_s,
           bool preempted);

  // The books per tenant name over [window.first, window.second): the jobs of `measured` (the
  // measured ones, completed or not) for JCT. Borrowed: devices a tenant holds beyond its
  // guarantee (devices; under a normalized quota, the share of its devices beyond its
  // guarantee in reference devices). Lent: what borrowers hold beyond the devices nobody
  // guarantees, split between the tenants with idle guarantee in proportion to it.
  std::map<std::string, TenantResult> Summarize(const std::vector<TenantJobEnd>& measured,
                                                std::pair<double, double> window) const;
  // Jain's index and the worst rho of `books` (Summarize's) for `measured`.
  TenantFairness Fairness(const std::map<std::string, TenantResult>& books,
                          const std::vector<TenantJobEnd>& measured) const;

  // Themis's "alone" time of `job` when `tenants` tenants share the cluster: its work at its
  // gang on its fastest type, stretched by gang / (devices of the types it runs on / tenants)
  // when its gang is more than that 1/N share. 0 when it runs nowhere.
  double AloneS(const model::Job& job, int32_t tenants) const;

 private:
  struct Span {
    int32_t job;
    bool preempted;
    int tenant;
    model::DeviceTypeId type;
    int32_t devices;
    double normalized;  // reference devices it was worth
    double from_s, to_s;
  };
  // Reference devices one device of `type` is worth to `job`.
  double Worth(const model::Job& job, model::DeviceTypeId type) const;
  // Borrowed and lent device-hours of each tenant over `window`.
  void Lending(std::pair<double, double> window, std::vector<TenantResult>& out) const;
  // TenantResult::reclaim_wait_s of each tenant with a guarantee.
  void ReclaimWaits(const std::vector<TenantJobEnd>& measured, std::pair<double, double> window,
                    std::vector<TenantResult>& out) const;
  // Leaf tenants (by position) with measured jobs.
  std::vector<char> Active(const std::vector<TenantJobEnd>& measured) const;

  const model::Tenants& tenants_;
  const model::Cluster& cluster_;
  const model::Workload& workload_;
  const model::ThroughputProfile* profile_;
  model::DeviceTypeId reference_;
  std::vector<double> guarantee_;  // devices, or reference devices under a normalized quota
  std::vector<Span> spans_;
};

}  // namespace hetsched::sim
