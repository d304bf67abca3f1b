#include "sched/reservations.h"

#include <optional>
#include <utility>

#include "sched/scheduler_core.h"

namespace hetsched::sched {

void Reservations::Replan(const SchedulerCore& core) {
  size_t kept = 0;
  for (const Entry& e : entries_) {
    const JobRecord& r = core.record(e.job);
    if (r.seq == e.seq && r.phase == JobPhase::kStopping) entries_[kept++] = e;
  }
  entries_.resize(kept);
}

void Reservations::StartFree(SchedulerCore& core, double now_s, Decision& out) {
  size_t kept = 0;
  for (const Entry& e : entries_) {
    const JobRecord& r = core.record(e.job);
    if (r.seq != e.seq) continue;          // it ended; its slot names another job now
    if (r.phase == JobPhase::kStopping) {  // still writing its checkpoint
      entries_[kept++] = e;
      continue;
    }
    if (r.phase != JobPhase::kQueued) continue;  // started elsewhere, or gone
    const model::DeviceTypeId type(e.type);
    std::optional<std::vector<model::DeviceId>> devs = core.PlaceOn(r, type);
    if (!devs) {  // the jobs it displaced are still writing theirs
      entries_[kept++] = e;
      continue;
    }
    out.placed.push_back(core.Start(e.job, type, std::move(*devs), now_s, /*migrated=*/false));
  }
  entries_.resize(kept);
}

}  // namespace hetsched::sched
