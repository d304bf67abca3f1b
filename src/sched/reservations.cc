#include "sched/reservations.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sched/placement.h"
#include "sched/scheduler_core.h"

namespace hetsched::sched {

void Reservations::Hold(SchedulerCore& core, Entry& e) {
  const JobRecord& r = core.record(e.job);
  if (core.pinned(e.job)) return;  // its pinned devices are kept for it already
  const model::DeviceTypeId type(e.type);
  ClusterState& state = core.state();
  const int32_t want = std::max(1, r.job->gang_size) - static_cast<int32_t>(e.held.size());
  const int32_t count = std::min(want, state.FreeOfType(type));
  if (count <= 0) return;
  // Best fit, without the job's host request: the start places the gang over again.
  std::optional<std::vector<model::DeviceId>> devs = PlaceGang(state, type, count);
  if (!devs) return;
  for (model::DeviceId d : *devs) {
    state.Reserve(d);
    e.held.push_back(d);
  }
}

void Reservations::Release(SchedulerCore& core, Entry& e) {
  for (model::DeviceId d : e.held) core.state().Unreserve(d);
  e.held.clear();
  JobRecord& r = core.record(e.job);
  if (r.seq == e.seq) r.reserved = false;
}

void Reservations::Keep(Entry& e, size_t& kept) {
  // A vector moved onto itself may come out empty.
  if (&entries_[kept] != &e) entries_[kept] = std::move(e);
  ++kept;
}

void Reservations::Add(SchedulerCore& core, int32_t id, model::DeviceTypeId type) {
  JobRecord& r = core.record(id);
  r.reserved = true;
  entries_.push_back({id, r.seq, type.value(), {}});
  Hold(core, entries_.back());
}

void Reservations::Replan(SchedulerCore& core) {
  size_t kept = 0;
  for (Entry& e : entries_) {
    const JobRecord& r = core.record(e.job);
    if (r.seq == e.seq && r.phase == JobPhase::kStopping) {
      Keep(e, kept);
    } else {
      Release(core, e);
    }
  }
  entries_.resize(kept);
}

void Reservations::StartFree(SchedulerCore& core, double now_s, Decision& out) {
  size_t kept = 0;
  for (Entry& e : entries_) {
    const JobRecord& r = core.record(e.job);
    // Ended (its slot may name another job now), or started elsewhere.
    const bool waits =
        r.seq == e.seq && (r.phase == JobPhase::kStopping || r.phase == JobPhase::kQueued);
    // What it holds is free for its own placement.
    for (model::DeviceId d : e.held) core.state().Unreserve(d);
    e.held.clear();
    if (!waits) {
      Release(core, e);
      continue;
    }
    const model::DeviceTypeId type(e.type);
    std::optional<std::vector<model::DeviceId>> devs;
    // A job still writing its checkpoint, or one whose devices the jobs it displaced still
    // hold while they write theirs, keeps waiting with what is free of its type.
    if (r.phase == JobPhase::kQueued) devs = core.PlaceOn(r, type);
    if (!devs) {
      Hold(core, e);
      Keep(e, kept);
      continue;
    }
    Release(core, e);
    out.placed.push_back(core.Start(e.job, type, std::move(*devs), now_s, /*migrated=*/false));
  }
  entries_.resize(kept);
}

}  // namespace hetsched::sched
