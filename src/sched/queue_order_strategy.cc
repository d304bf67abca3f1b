#include "sched/queue_order_strategy.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <optional>
#include <vector>

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

double QueueOrderStrategy::BackfillRemainingWork(const JobRecord& r, double now_s) const {
  // With no estimate and no learned sizes the belief's guess (as long again as it has run) is
  // 0 for a job that just started: EASY would take it for one that ends at once.
  if (r.estimated_work <= 0 && !core_.belief().sizes_known()) return kInf;
  return core_.RemainingWork(r, now_s);
}

std::pair<double, int32_t> QueueOrderStrategy::ShadowTime(DeviceTypeId type, int32_t gang,
                                                          double now_s) const {
  int32_t free = core_.state().FreeOfType(type);
  if (free >= gang) return {now_s, free - gang};
  std::vector<std::pair<double, int32_t>> ends;
  for (int32_t id : core_.running()) {
    const JobRecord& r = core_.record(id);
    if (r.type != type || !SchedulerCore::HoldsDevices(r)) continue;
    const double left = BackfillRemainingWork(r, now_s);
    const double end = r.rate > 0 ? std::max(now_s, r.progress_since_s) + left / r.rate : kInf;
    ends.push_back({end, static_cast<int32_t>(r.devices.size())});
  }
  std::sort(ends.begin(), ends.end());
  for (const auto& [end, n] : ends) {
    free += n;
    if (free >= gang) return {end, free - gang};
  }
  return {kInf, 0};
}

std::optional<std::pair<DeviceTypeId, std::vector<DeviceId>>> QueueOrderStrategy::Choose(
    int32_t id, const JobRecord& r, TypeChoice choice, const FillTypes* types,
    const std::vector<int32_t>& free_now, std::vector<int32_t>& free) const {
  const ClusterState& state = core_.state();
  // A restricted job sees no room on the types it may not fill (a pinned one has its own; a
  // pinned job's devices are reserved, so without reserved devices no job is pinned).
  const bool pinned = state.reserved_devices() > 0 && core_.pinned(id);
  const char* allowed = types != nullptr && !pinned ? (*types)(id, r) : nullptr;
  if (allowed != nullptr) {
    bool room = false;
    for (int32_t t = 0; t < state.type_count(); ++t) {
      free[t] = allowed[t] != 0 ? free_now[t] : 0;
      room = room || free[t] >= r.gang;
    }
    // Most jobs a restricted walk passes over find no room: skip the scoring of their types.
    if (!room) return std::nullopt;
  } else {
    std::copy(free_now.begin(), free_now.end(), free.begin());
  }
  // The preferred type first, without building the list (most jobs start there).
  const int32_t best = core_.BestType(r, choice, free);
  if (best < 0) return std::nullopt;
  if (auto devs = core_.PlaceOn(r, DeviceTypeId(best))) {
    return std::make_pair(DeviceTypeId(best), std::move(*devs));
  }
  const std::vector<DeviceTypeId> preference = core_.TypePreference(r, choice, free);
  assert(!preference.empty() && preference[0].value() == best);
  for (size_t i = 1; i < preference.size(); ++i) {
    if (auto devs = core_.PlaceOn(r, preference[i])) {
      return std::make_pair(preference[i], std::move(*devs));
    }
  }
  return std::nullopt;
}

void QueueOrderStrategy::ReadFree(std::vector<int32_t>& free) const {
  const ClusterState& state = core_.state();
  for (int32_t t = 0; t < state.type_count(); ++t) free[t] = state.FreeOfType(DeviceTypeId(t));
}

void QueueOrderStrategy::StartInOrder(double now_s, bool fill, Decision& out,
                                      const FillTypes* types) {
  Walk(now_s, fill, out, fill ? types : nullptr);
  // What no job took on the types it allows goes to the order: a device left free waits
  // until a full decision, and where jobs hold the types a plan meant for the queued ones
  // (inside their quantum, for up to an hour) every full decision until then plans the same.
  if (fill && types != nullptr && core_.TotalFree() > 0) Walk(now_s, fill, out, nullptr);
}

void QueueOrderStrategy::Walk(double now_s, bool fill, Decision& out, const FillTypes* types) {
  // A restricted walk passes over every job whose types have no room: it looks at fewer
  // (most of a large queue waits for the types the plan gave it, and each look costs a fill
  // decision about 50 ns); the walk after it gives the rest to the order.
  const int32_t scan = types != nullptr ? 32 : 256;
  const Policy& policy = core_.policy();
  const ClusterState& state = core_.state();
  const TypeChoice choice =
      policy.type_choice() == TypeChoice::kAgnostic ? TypeChoice::kAgnostic : TypeChoice::kFastest;
  const bool backfill = !fill && policy.blocking() == Blocking::kBackfill;
  int32_t free_total = core_.TotalFree();
  // No job can start: the index is left unread (after a belief refresh a read sorts it).
  if (free_total == 0 && state.reserved_devices() == 0 && core_.tenants() == nullptr) return;
  // The free devices per type, read again after each start; `free` is Choose's scratch.
  std::vector<int32_t> free_now(state.type_count()), free(state.type_count());
  ReadFree(free_now);
  bool head_blocked = false;
  DeviceTypeId reserved_type;
  double shadow = kInf;
  int32_t extra = 0;
  int32_t misses = 0;
  // The sorted index is walked directly; Start erases only the current element. With tenants,
  // a copy in their turns (sched/tenant_shares.h).
  const auto& sorted_queue = core_.sorted_queue();
  auto next = sorted_queue.begin();
  std::vector<SchedulerCore::QueueKey> turns;
  const bool by_tenant = core_.tenants() != nullptr;
  if (by_tenant) {
    turns.assign(sorted_queue.begin(), sorted_queue.end());
    core_.tenants()->Order(core_.records(), core_.running(), now_s, turns);
  }
  size_t turn = 0;
  const auto more = [&] { return by_tenant ? turn < turns.size() : next != sorted_queue.end(); };
  // Pinned jobs start on their reserved devices, which the free index does not count.
  while ((free_total > 0 || state.reserved_devices() > 0) && more()) {
    const int32_t id = std::get<3>(by_tenant ? turns[turn++] : *next++);
    const JobRecord& r = core_.record(id);
    // The tenants' copy of the queue still lists the jobs a first walk started.
    if (r.phase != JobPhase::kQueued) continue;
    // It waits for the devices a full decision reserved for it (sched/reservations.h): in
    // order, nobody behind it starts before it does.
    if (r.reserved) {
      if (!fill) break;
      continue;
    }
    auto chosen = Choose(id, r, choice, types, free_now, free);
    if (!chosen) {
      if (fill) {
        if (++misses >= scan) break;
        continue;
      }
      if (!backfill) break;
      if (!head_blocked) {
        head_blocked = true;
        // The head's reservation: the allowed type where it could start soonest.
        for (int32_t t = 0; t < state.type_count(); ++t) {
          if (!r.allowed[t]) continue;
          const auto [when, spare] = ShadowTime(DeviceTypeId(t), r.gang, now_s);
          if (when < shadow) {
            shadow = when;
            extra = spare;
            reserved_type = DeviceTypeId(t);
          }
        }
      }
      continue;
    }
    if (head_blocked && chosen->first == reserved_type) {
      const double speed = r.speed[reserved_type.value()];
      const double end = speed > 0 ? now_s + BackfillRemainingWork(r, now_s) / speed : kInf;
      if (end > shadow) {
        if (r.gang > extra) continue;  // would delay the head's reservation
        extra -= r.gang;
      }
    }
    out.placed.push_back(core_.Start(id, chosen->first, std::move(chosen->second), now_s, false));
    if (!core_.pinned(id)) free_total -= r.gang;
    ReadFree(free_now);
  }
}

}  // namespace hetsched::sched
