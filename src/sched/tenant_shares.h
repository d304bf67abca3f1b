// TenantShares: fair share between tenants (model/tenant.h) for the preemptive and queue-order
// policies. It books each tenant's usage in reference-device-seconds (or, as the Slurm-style
// baseline, in static billing weights per device type), forgotten with a half-life (Slurm Fair
// Tree's decayed usage); as the Kueue-style baseline (model::FairShareOptions::kueue) it ranks
// tenants by the devices they hold beyond their quota instead. It turns the policy's order of
// jobs into one in which tenants take turns: guaranteed quota first, then by standing against
// weight, within the limits on borrowing and lending. The policy still orders the jobs of one
// tenant. Internal to sched/: SchedulerCore owns one when SchedulerOptions::tenants is set;
// Scheduler hands out its TenantStanding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster.h"
#include "model/tenant.h"
#include "sched/job_record.h"

namespace hetsched::sched {

// Reference-device-seconds per second that `r` delivers on `type` with `devices` devices:
// devices x its speed there / its speed on `reference` (a catalog type id), or / its best speed
// when it cannot run on the reference type. 0 where it cannot run.
double NormalizedRate(const JobRecord& r, model::DeviceTypeId type, int32_t devices,
                      model::DeviceTypeId reference);

// One tenant's standing at a moment (TenantShares::Standing), for the daemon's GET /v1/tenants.
struct TenantStanding {
  // Decayed usage up to the moment: reference-device-seconds (billing units under
  // FairShareOptions::billing), what fair share orders tenants by against their weights.
  double usage = 0;
  // Its share of what tenants with jobs get (its weight against its siblings' with jobs, times
  // its parent's share); 0 while it has no jobs.
  double share = 0;
  // What its running jobs hold, in its quota's unit (devices, or reference devices under a
  // normalized quota), and its guarantee in that unit (0 for a parent).
  double held = 0;
  double guarantee = 0;
  // Held beyond its guarantee; and of its idle guarantee, what others borrow beyond the devices
  // no tenant is guaranteed, split between the tenants with idle guarantee in proportion to it
  // (as sim::TenantBooks counts lending).
  double borrowed = 0;
  double lent = 0;
  std::vector<int32_t> devices;  // held, by catalog type id
  double normalized = 0;         // reference devices its running jobs are worth
  // `borrowed` and `lent` in devices by catalog type id: what it borrows spread over the types
  // it holds; what it lends spread over the types borrowers hold beyond their guarantees (as
  // sim::TenantBooks splits lent device-hours by type).
  std::vector<double> borrowed_devices;
  std::vector<double> lent_devices;
};

class TenantShares {
 public:
  using Key = std::tuple<double, double, int64_t, int32_t>;  // SchedulerCore::QueueKey

  // What a decision gives a tenant counts for under a policy that never stops a job: its grants
  // last until the jobs end, which it does not know; the default preempt interval, so that at
  // default settings both kinds of policy weigh a grant alike.
  static constexpr double kGrantWithoutPreemptionS = 300;

  // `tenants` resolved against `cluster` (model::io::ResolveTenants); what a decision gives a
  // tenant counts for `grant_s` (at least 60 s) of usage against what it used: the preempt
  // interval under a preemptive policy, else kGrantWithoutPreemptionS.
  TenantShares(const model::Tenants& tenants, const model::Cluster& cluster, double grant_s);

  // Running `r` leaves its devices at `now_s`: its usage since the last booking is booked.
  void OnLeave(const JobRecord& r, double now_s);
  // Reorders `keys` (the policy's order, by SchedulerCore::KeyOf) for one decision at `now_s`.
  // Drops the jobs that would take a tenant past its borrowing limit and, past the capacity
  // others may borrow, the running ones (they lose their place: the turns re-deal the devices);
  // queued ones past it stay, after (within_capacity), for devices the walk finds left, unless
  // an owner keeps idle guarantee beyond its lend limit. A tenant's jobs that fit in its
  // guarantee take their turns first, in policy order, ahead of its jobs that do not. `records`
  // by job id; the jobs of `running` that are not in `keys` keep what they hold and count first.
  // Assumes each job the new order puts ahead runs (the walk that follows may skip some that do
  // not fit). O((keys + running) log tenants + records).
  void Order(const std::vector<JobRecord>& records, const std::vector<int32_t>& running,
             double now_s, std::vector<Key>& keys);
  // Tenant position of a job (-1: it names none or an unknown one).
  int TenantOf(const model::Job& job) const;
  size_t size() const { return tenants_.list.size(); }

  // Every tenant's standing at `now_s` (by position in the tenants' list), from the same
  // records as Order; books nothing. `records` may hold ended jobs (kDone: not counted).
  std::vector<TenantStanding> Standing(const std::vector<JobRecord>& records,
                                       const std::vector<int32_t>& running, double now_s) const;
  // Decayed usage by tenant name as Standing gave it at `at_s` (a restarted daemon's saved
  // usage); names of no tenant are ignored. Call before anything is booked.
  void RestoreUsage(const std::map<std::string, double>& usage, double at_s);

  // How many of the last Order's keys come before the first it kept past the capacity others
  // may borrow (a queued job, for devices the walk finds left): the jobs the turns grant.
  size_t within_capacity() const { return within_capacity_; }
  // Whether the last Order put job `id` in its tenant's guarantee (it goes first, whatever a
  // throughput plan would give its class).
  bool Guaranteed(int32_t id) const {
    return static_cast<size_t>(id) < guaranteed_.size() && guaranteed_[id] != 0;
  }
  // Reclaim: the running jobs of borrowers that owners' queued jobs take back at this decision,
  // even inside their quantum, marked in `out` (by job id; sized to `records`). Owed: the
  // devices the owners' queued jobs (`queue`, in policy order: the order in which Order gives
  // them their turns) are guaranteed beyond what their tenants hold, counted per type, as a
  // gang runs on one: each such job on the fastest type it may use whose free devices (`free`,
  // by type id) hold it (owing nothing), else on the fastest whose free and borrowed devices
  // together do, owing what the free ones lack. On each type, that many devices of borrowers'
  // jobs are marked, youngest run first (Kueue's order among preemption candidates: the most
  // recently admitted first; each stop costs one PreemptionPrice::cost_s() per device
  // whichever job it is), first those whose stop leaves their tenant at least its own
  // guarantee, then, where an owner is still owed devices, runs of borrowers still beyond their
  // guarantees even where the stop takes them below (gangs are indivisible: the owner's
  // guarantee wins). O(queue x types + running log running).
  void Reclaimable(const std::vector<JobRecord>& records, const std::vector<int32_t>& queue,
                   const std::vector<int32_t>& running, const std::vector<int32_t>& free,
                   std::vector<char>& out) const;

 private:
  // What `r` takes while it runs: devices, or reference devices under a normalized quota;
  // running jobs count what they hold, queued ones their gang on their fastest type.
  double Units(int tenant, const JobRecord& r) const;
  // What `tenant` is guaranteed toward running `r`: a normalized quota, or its per-type quotas
  // on the types `r` may use (AMD devices in a CUDA team's quota guarantee its jobs nothing).
  double GuaranteeFor(int tenant, const JobRecord& r) const;
  // Usage per second of `r` on `type`: reference devices, or billing units per device-second
  // under FairShareOptions::billing.
  double UsageRate(const JobRecord& r, model::DeviceTypeId type) const;
  // Capacity others may borrow: the cluster less what each tenant keeps of its guarantee (all
  // but what it lends of it idle, by `demand`), less what its running jobs that stay (`held`)
  // already borrow. A reference device counts as one device here.
  double Borrowable(const std::vector<double>& held, const std::vector<double>& demand) const;
  // Order's rule for one turn: whether job `r` of `tenant` (holding `held`, with `borrowable`
  // left) stays in the order: not past its borrowing limit, nor (a running job, or any job
  // unless `queued_past_capacity`) past the capacity others may borrow; and the devices of that
  // capacity it takes.
  struct Grant {
    bool kept = false;
    bool past_capacity = false;
    double borrowed = 0;
  };
  Grant GrantOf(int tenant, const JobRecord& r, double held, double borrowable,
                bool queued_past_capacity) const;
  // Whether some tenant keeps part of its idle guarantee (below its `demand`) from borrowers:
  // more of it idle than its lend limit.
  bool KeepsIdleGuarantee(const std::vector<double>& demand) const;
  // Reclaimable's stops: marks in `out` runs of `borrowed` (youngest first) on each type until
  // `owed` there (devices, by type id) is covered, updating `held` (by tenant).
  void MarkStops(const std::vector<JobRecord>& records, std::vector<int32_t> borrowed,
                 std::vector<int32_t>& owed, std::vector<double>& held,
                 std::vector<char>& out) const;
  // Fills each standing's borrowed_devices and lent_devices from its borrowed, lent and devices.
  void SpreadOverTypes(std::vector<TenantStanding>& out) const;
  // Books usage of the `running` jobs up to `now_s`, decaying what was booked before.
  void Book(const std::vector<JobRecord>& records, const std::vector<int32_t>& running,
            double now_s);

  model::Tenants tenants_;
  double horizon_s_;    // usage a decision's grant counts for, per unit of rate
  double devices_ = 0;  // the cluster's
  std::map<std::string, int, std::less<>> index_;
  std::vector<double> guarantee_;  // devices, or reference devices under a normalized quota
  std::vector<std::vector<double>> quota_;  // by tenant, catalog type id: per-type quotas
  std::vector<double> usage_;               // decayed reference-device-seconds
  std::vector<double> pending_;  // booked by OnLeave since the last Book, not yet decayed
  model::DeviceTypeId reference_;
  std::vector<double> billing_;   // by catalog type id; empty: usage in reference devices
  double booked_s_ = 0;           // usage_ holds usage up to this time
  std::vector<char> guaranteed_;  // by job id: in its tenant's guarantee at the last Order
  size_t within_capacity_ = 0;    // the last Order's keys before the first past capacity
};

// The tenants' turns as a planned walk takes them (PreemptiveStrategy::SelectInOrder): a
// tenant whose job the throughput plan gives no type keeps its turn for its next job, instead
// of handing it to whichever tenant's job comes next in Order's keys (which would go to the
// tenants whose jobs happen to suit the plan, and off their shares). By position in the keys;
// O(keys) to build, each tenant's positions visited once over the walk.
class TenantTurnsKept {
 public:
  TenantTurnsKept(const TenantShares& shares, const std::vector<JobRecord>& records,
                  const std::vector<TenantShares::Key>& keys);
  bool Taken(size_t at) const { return taken_[at] != 0; }
  void Take(size_t at) { taken_[at] = 1; }
  // The first position after `at` of the same tenant's jobs not yet taken; keys.size() when
  // none, or when the job at `at` has no tenant. Call with `at` no earlier than the walk's.
  size_t NextOfTenant(size_t at);

 private:
  std::vector<int> tenant_;                     // by position; -1: none
  std::vector<size_t> rank_;                    // by position: its index in its tenant's list
  std::vector<std::vector<size_t>> positions_;  // by tenant, ascending
  std::vector<size_t> cursor_;                  // by tenant: into positions_, where to look
  std::vector<char> taken_;                     // by position
};

}  // namespace hetsched::sched
