#include "sched/allocation_strategy.h"

#include <fmt/format.h>

#include <algorithm>

#include "sched/allocation.h"

namespace hetsched::sched {

using model::DeviceId;
using model::DeviceTypeId;
using model::JobId;

AllocationStrategy::AllocationStrategy(SchedulerCore& core, const AllocationPolicy& policy)
    : core_(core),
      policy_(policy),
      solver_(core.options().lp_solver ? core.options().lp_solver : MakeClpSolver()),
      fill_(core),
      clock_(core.options().preempt_interval_s) {}

void AllocationStrategy::Decide(double now_s, Decision& out) {
  // Like the preemptive policies: shares are re-realized (which preempts) at most every
  // preempt interval; in between, queued jobs only fill free devices.
  if (clock_.FullDue(now_s)) {
    Allocate(now_s, out);
  } else {
    reservations_.StartFree(core_, now_s, out);
    fill_.StartInOrder(now_s, true, out);
  }
}

void AllocationStrategy::Upgrade(double now_s, Decision& out) {
  if (clock_.UpgradeDue(now_s)) Allocate(now_s, out);
}

std::optional<std::string> AllocationStrategy::RejectAtSubmit(const JobRecord& r,
                                                              double now_s) const {
  // Only the job's own estimate can say it cannot make its deadline.
  const double expected = r.estimated_work > 0 ? core_.RemainingWork(r, now_s) : 0;
  return policy_.RejectAtSubmit(r, now_s, expected);
}

void AllocationStrategy::OnSlotReused(int32_t /*id*/) { slot_reused_ = true; }

void AllocationStrategy::OnJobLeft(int32_t id) {
  // The slot may be reused by another job (JobSlots): nothing of this one may carry over.
  if (static_cast<size_t>(id) >= present_.size()) return;
  const size_t types = core_.state().type_count();
  present_[id] = 0;
  std::fill_n(share_.begin() + id * types, types, 0.0);
  std::fill_n(received_.begin() + id * types, types, 0.0);
}

double AllocationStrategy::TargetShare(JobId job, DeviceTypeId type) const {
  const size_t i = static_cast<size_t>(job.value()) * core_.state().type_count() + type.value();
  return i < share_.size() ? share_[i] : 0;
}

void AllocationStrategy::Log(std::string line) {
  if (log_.size() >= kLogLines) log_.erase(log_.begin());
  log_.push_back(std::move(line));
}

void AllocationStrategy::ExportHistory(int32_t id, double now_s, JobHistory& out) const {
  const int32_t types = core_.state().type_count();
  const JobRecord& r = core_.record(id);
  for (int32_t t = 0; t < types; ++t) {
    double seconds = static_cast<size_t>(id) < present_.size()
                         ? received_[static_cast<size_t>(id) * types + t]
                         : 0;
    // Booked up to the last allocation decision; a running job has run on since then.
    if (r.phase == JobPhase::kRunning && r.type.value() == t && last_s_ >= 0) {
      seconds += std::max(0.0, now_s - std::max(last_s_, r.service_since_s));
    }
    if (seconds > 0)
      out.received_s.push_back({core_.cluster().catalog.Get(DeviceTypeId(t)).name, seconds});
  }
}

void AllocationStrategy::ImportHistory(int32_t id, const JobHistory& history) {
  const int32_t types = core_.state().type_count();
  const size_t n_rec = core_.slots();
  if (present_.size() < n_rec) {
    present_.resize(n_rec, 0);
    received_.resize(n_rec * types, 0);
    share_.resize(n_rec * types, 0);
  }
  // Presence needs no restoring: it is counted from the job's arrival, which is kept.
  for (const auto& [name, seconds] : history.received_s) {
    const auto type = core_.cluster().catalog.FindId(name);
    if (!type || type->value() >= types) continue;
    received_[static_cast<size_t>(id) * types + type->value()] = seconds;
  }
}

// Gavel's round-based mechanism (Narayanan et al., OSDI 2020, Section 5): the LP gives target
// shares X[j][t]; each decision ranks (job, type) pairs by X[j][t] / (the share of its active
// time job j has received on t) and grants gangs in that order, whole gangs only, each job on
// one type. Devices the ranking leaves idle go to the remaining jobs on their fastest type with
// room (work conservation, which Gavel's mechanism lacks). Placement is the usual topology-aware
// gang placement (PlaceOn). The LP is solved again only when the set of jobs or devices changed.
void AllocationStrategy::Allocate(double now_s, Decision& out) {
  // What earlier allocations held for their reserved jobs counts as free again.
  reservations_.Replan(core_);
  const Pool pool = GatherPool();
  BookTime(now_s, pool);
  if (pool.active != jobs_ || pool.capacity != capacity_ || slot_reused_) Resolve(now_s, pool);
  Realize(now_s, pool.active, ChooseTypes(now_s, pool.active), out);
}

AllocationStrategy::Pool AllocationStrategy::GatherPool() const {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  Pool pool;
  pool.capacity.resize(types);
  for (int32_t t = 0; t < types; ++t) pool.capacity[t] = state.UpOfType(DeviceTypeId(t));
  for (int32_t id : core_.running()) {
    const JobRecord& r = core_.record(id);
    if (!SchedulerCore::HoldsDevices(r)) {  // not part of the allocation while it shares
      pool.guests.push_back(id);
    } else if (r.job->preemptible) {
      pool.active.push_back(id);
    } else {
      pool.capacity[r.type.value()] -= static_cast<double>(r.devices.size());
    }
  }
  pool.active.insert(pool.active.end(), core_.queue().begin(), core_.queue().end());
  // In submission order: ids are slots a later job may reuse.
  std::sort(pool.active.begin(), pool.active.end(),
            [&](int32_t a, int32_t b) { return core_.record(a).seq < core_.record(b).seq; });
  return pool;
}

void AllocationStrategy::BookTime(double now_s, const Pool& pool) {
  const int32_t types = core_.state().type_count();
  const size_t n_rec = core_.slots();
  if (present_.size() < n_rec) {
    present_.resize(n_rec, 0);
    received_.resize(n_rec * types, 0);
    share_.resize(n_rec * types, 0);
  }
  // A running job has run on its type since the last allocation decision, or since it started
  // (fill decisions start jobs in between).
  if (last_s_ >= 0 && now_s > last_s_) {
    for (int32_t id : core_.running()) {
      const JobRecord& r = core_.record(id);
      received_[static_cast<size_t>(id) * types + r.type.value()] +=
          now_s - std::max(last_s_, r.service_since_s);
    }
  }
  for (const std::vector<int32_t>* ids : {&pool.active, &pool.guests}) {
    for (int32_t id : *ids) {
      const double arrival = core_.record(id).job->arrival_s;
      const double since = last_s_ >= 0 ? std::max(last_s_, arrival) : arrival;
      present_[id] += std::max(0.0, now_s - since);
    }
  }
  last_s_ = now_s;
}

AllocationProblem AllocationStrategy::ProblemOf(double now_s, const Pool& pool,
                                                std::vector<int32_t>& in_lp) const {
  const int32_t types = core_.state().type_count();
  AllocationProblem problem;
  problem.capacity = pool.capacity;
  for (int32_t t = 0; t < types; ++t) {
    problem.price_per_hour.push_back(core_.cluster().catalog.Get(DeviceTypeId(t)).price_per_hour);
  }
  for (int32_t id : pool.active) {
    const JobRecord& r = core_.record(id);
    AllocJob j;
    j.speed.assign(types, 0);
    bool any = false;
    for (int32_t t = 0; t < types; ++t) {
      if (r.allowed[t] && !r.incompatible[t] && r.speed[t] > 0) {
        j.speed[t] =
            (policy_.agnostic() ? 1.0 : r.speed[t]) * core_.NewWorkShare(r, DeviceTypeId(t));
      }
      any = any || j.speed[t] > 0;
    }
    if (!any) continue;  // runs nowhere it can progress: left to the fill pass
    j.name = r.job->name;
    j.gang = std::max(1, r.job->gang_size);
    j.weight = r.job->priority_weight > 0 ? r.job->priority_weight : 1;
    // Nothing known yet (no estimate, nothing run): at least a second on its best type, so
    // the LPs that divide by remaining work stay finite.
    j.remaining = std::max(core_.RemainingWork(r, now_s), r.ref_speed);
    j.work = r.DoneAt(now_s) + j.remaining;
    j.elapsed_s = std::max(0.0, now_s - r.job->arrival_s);
    j.slo_rate = policy_.SloRate(r, now_s, j.remaining);
    problem.jobs.push_back(std::move(j));
    in_lp.push_back(id);
  }
  return problem;
}

void AllocationStrategy::Resolve(double now_s, const Pool& pool) {
  const int32_t types = core_.state().type_count();
  slot_reused_ = false;
  std::vector<int32_t> in_lp;  // ids of problem.jobs
  const AllocationProblem problem = ProblemOf(now_s, pool, in_lp);
  auto solved =
      ComputeAllocation(problem, policy_.objective(), *solver_, core_.options().allocation);
  if (!solved.ok()) {
    ++failures_;
    Log(fmt::format(
        "t={:.0f} s: {} allocation for {} job(s) failed ({}); keeping the last good allocation",
        now_s, policy_.name(), problem.jobs.size(), solved.status().message()));
    return;
  }
  solves_ += solved->lps_solved;
  for (int32_t id : jobs_) {
    std::fill_n(share_.begin() + static_cast<size_t>(id) * types, types, 0.0);
  }
  for (size_t i = 0; i < in_lp.size(); ++i) {
    for (int32_t t = 0; t < types; ++t) {
      share_[static_cast<size_t>(in_lp[i]) * types + t] = solved->At(i, t);
    }
  }
  for (int32_t i : solved->slo_missed) {
    Log(fmt::format(
        "t={:.0f} s: min-cost: job '{}' cannot meet its SLO ({:.4g} steps/s needed from now on)",
        now_s, problem.jobs[i].name, problem.jobs[i].slo_rate));
  }
  jobs_ = pool.active;
  capacity_ = pool.capacity;
}

std::vector<int32_t> AllocationStrategy::ChooseTypes(double now_s,
                                                     const std::vector<int32_t>& active) const {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  // What the active jobs may be granted: free devices and those they hold.
  std::vector<int32_t> room(types);
  for (int32_t t = 0; t < types; ++t) room[t] = state.FreeOfType(DeviceTypeId(t));
  for (int32_t id : core_.running()) {
    const JobRecord& r = core_.record(id);
    if (r.job->preemptible && SchedulerCore::HoldsDevices(r)) {
      room[r.type.value()] += static_cast<int32_t>(r.devices.size());
    }
  }
  std::vector<int32_t> choice(core_.slots(), -1);
  // A job inside its quantum keeps its devices (PreemptionPrice): when preemption costs
  // something, the shares are realized over quanta rather than over every allocation.
  for (int32_t id : active) {
    const JobRecord& r = core_.record(id);
    if (r.phase != JobPhase::kRunning || core_.QuantumOver(r, now_s)) continue;
    choice[id] = r.type.value();
    room[r.type.value()] -= static_cast<int32_t>(r.devices.size());
  }
  GrantByPriority(active, choice, room);
  ConserveWork(active, choice, room);
  return choice;
}

void AllocationStrategy::GrantByPriority(const std::vector<int32_t>& active,
                                         std::vector<int32_t>& choice,
                                         std::vector<int32_t>& room) const {
  const int32_t types = core_.state().type_count();
  struct Candidate {
    double priority;
    bool running_there;
    int32_t id;
    int32_t type;
  };
  std::vector<Candidate> cands;
  for (int32_t id : active) {
    const JobRecord& r = core_.record(id);
    const double present = present_[id];
    for (int32_t t = 0; t < types; ++t) {
      const double share = share_[static_cast<size_t>(id) * types + t];
      // Shares solved before the job made progress may point at another vendor's devices.
      if (share < 1e-6 || !r.allowed[t] || core_.NewWorkShare(r, DeviceTypeId(t)) <= 0) continue;
      const double received = received_[static_cast<size_t>(id) * types + t];
      // Never served there yet: ahead of everyone served, by share.
      const double priority =
          received > 1e-9 && present > 0 ? share * present / received : 1e12 * share;
      cands.push_back({priority, r.phase == JobPhase::kRunning && r.type.value() == t, id, t});
    }
  }
  std::sort(cands.begin(), cands.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.running_there != b.running_there) return a.running_there;
    return core_.record(a.id).seq < core_.record(b.id).seq;
  });
  for (const Candidate& c : cands) {
    const int32_t gang = std::max(1, core_.record(c.id).job->gang_size);
    if (choice[c.id] >= 0 || room[c.type] < gang) continue;
    choice[c.id] = c.type;
    room[c.type] -= gang;
  }
}

void AllocationStrategy::ConserveWork(const std::vector<int32_t>& active,
                                      std::vector<int32_t>& choice,
                                      std::vector<int32_t>& room) const {
  const int32_t types = core_.state().type_count();
  // Running jobs first (no needless preemption), then by arrival.
  std::vector<int32_t> rest;
  for (int32_t id : active) {
    if (choice[id] < 0) rest.push_back(id);
  }
  std::stable_sort(rest.begin(), rest.end(), [&](int32_t a, int32_t b) {
    const bool ra = core_.record(a).phase == JobPhase::kRunning;
    const bool rb = core_.record(b).phase == JobPhase::kRunning;
    if (ra != rb) return ra;
    return core_.record(a).job->arrival_s < core_.record(b).job->arrival_s;
  });
  for (int32_t id : rest) {
    const JobRecord& r = core_.record(id);
    const int32_t gang = std::max(1, r.job->gang_size);
    int32_t best = -1;
    if (r.phase == JobPhase::kRunning && room[r.type.value()] >= gang) {
      best = r.type.value();  // stays where it is
    } else {
      for (int32_t t = 0; t < types; ++t) {
        const double useful = r.speed[t] * core_.NewWorkShare(r, DeviceTypeId(t));
        if (r.allowed[t] && room[t] >= gang && useful > 0 &&
            (best < 0 || useful > r.speed[best] * core_.NewWorkShare(r, DeviceTypeId(best)))) {
          best = t;
        }
      }
    }
    if (best < 0) continue;
    choice[id] = best;
    room[best] -= gang;
  }
}

// Preempts what moves or stops, then starts the chosen, largest gangs first (less
// fragmentation). A job that moves while it writes its checkpoint, or whose devices the jobs it
// displaced still hold, gets them reserved (sched/reservations.h).
void AllocationStrategy::Realize(double now_s, const std::vector<int32_t>& active,
                                 const std::vector<int32_t>& choice, Decision& out) {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  std::vector<char> moved(core_.slots(), 0);
  std::vector<int32_t> releasing(types, 0);
  const std::vector<int32_t> running_now = core_.running();
  for (int32_t id : running_now) {
    JobRecord& r = core_.record(id);
    if (!r.job->preemptible || !SchedulerCore::HoldsDevices(r) || r.phase != JobPhase::kRunning ||
        choice[id] == r.type.value()) {
      continue;
    }
    const DeviceTypeId was = r.type;
    core_.Preempt(id, now_s, out);
    if (r.phase == JobPhase::kStopping) {
      releasing[was.value()] += static_cast<int32_t>(r.devices.size());
    }
    if (choice[id] >= 0) {
      moved[id] = 1;
      r.migrating = r.phase == JobPhase::kStopping;
      if (r.migrating) reservations_.Add(core_, id, DeviceTypeId(choice[id]));
    }
  }
  std::vector<int32_t> starts;
  for (int32_t id : active) {
    if (choice[id] >= 0 && core_.record(id).phase == JobPhase::kQueued) starts.push_back(id);
  }
  std::stable_sort(starts.begin(), starts.end(), [&](int32_t a, int32_t b) {
    return core_.record(a).job->gang_size > core_.record(b).job->gang_size;
  });
  std::vector<int32_t> free(types);
  for (int32_t id : starts) {
    const JobRecord& r = core_.record(id);
    DeviceTypeId type(choice[id]);
    std::optional<std::vector<DeviceId>> devs = core_.PlaceOn(r, type);
    if (!devs && releasing[type.value()] > 0) {  // they are still being checkpointed
      reservations_.Add(core_, id, type);
      continue;
    }
    if (!devs) {  // fragmentation or pinned devices: another type with room
      for (int32_t t = 0; t < types; ++t) free[t] = state.FreeOfType(DeviceTypeId(t));
      for (DeviceTypeId t : core_.TypePreference(r, TypeChoice::kMaxThroughput, free)) {
        if ((devs = core_.PlaceOn(r, t))) {
          type = t;
          break;
        }
      }
    }
    if (!devs) continue;
    out.placed.push_back(core_.Start(id, type, std::move(*devs), now_s, moved[id] != 0));
  }
}

}  // namespace hetsched::sched
