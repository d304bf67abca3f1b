// QueueOrderStrategy: the non-preemptive policies (fifo, easy-backfill): queued jobs start in
// policy order on free devices, under the policy's blocking rule (strict head-of-line, or EASY
// backfill). The other families use its fill pass between their reallocations.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "model/cluster.h"
#include "sched/scheduler_core.h"
#include "sched/strategy.h"

namespace hetsched::sched {

// Keeps a reference to `core`; no state of its own.
class QueueOrderStrategy final : public DecisionStrategy {
 public:
  explicit QueueOrderStrategy(SchedulerCore& core) : core_(core) {}

  void Decide(double now_s, Decision& out) override { StartInOrder(now_s, false, out); }

  // The types a queued job may fill (for `slot`, its record): null when nothing restricts it,
  // else one entry per device type (1: allowed), valid until the walk starts a job.
  using FillTypes = std::function<const char*(int32_t slot, const JobRecord& r)>;

  // Starts queued jobs in policy order on free devices. `fill`: skip jobs that do not fit
  // (at most 256 in a row) instead of the policy's blocking rule. `types` (fill only; may be
  // null): a first walk starts each job only on the types it allows (passing over at most 32
  // in a row); a second then gives what is still free to the policy's order as without it.
  void StartInOrder(double now_s, bool fill, Decision& out, const FillTypes* types = nullptr);

 private:
  // Earliest time `gang` devices of `type` are free if running jobs end as estimated, and how
  // many of that type are free then beyond the gang (EASY's shadow time and extra devices).
  std::pair<double, int32_t> ShadowTime(model::DeviceTypeId type, int32_t gang, double now_s) const;
  // EASY's view of a job's remaining work: infinite while nothing at all is known about it.
  double BackfillRemainingWork(const JobRecord& r, double now_s) const;
  // The free devices of each type, into `free` (one entry per type).
  void ReadFree(std::vector<int32_t>& free) const;
  // One walk of StartInOrder over the queue; `types` as there (null: no restriction).
  void Walk(double now_s, bool fill, Decision& out, const FillTypes* types);
  // Where queued job `id` (record `r`) would start now: the first type in `choice`'s
  // preference, among those `types` allows, with room for its gang, and the devices there;
  // nullopt where none has room. `free_now`: the free devices per type; `free`: scratch.
  std::optional<std::pair<model::DeviceTypeId, std::vector<model::DeviceId>>> Choose(
      int32_t id, const JobRecord& r, TypeChoice choice, const FillTypes* types,
      const std::vector<int32_t>& free_now, std::vector<int32_t>& free) const;

  SchedulerCore& core_;
};

}  // namespace hetsched::sched
