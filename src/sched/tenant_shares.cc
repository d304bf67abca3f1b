#include "sched/tenant_shares.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

namespace hetsched::sched {

using model::DeviceTypeId;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1e-9;

// The type `r` runs fastest on; -1 when none.
int32_t FastestType(const JobRecord& r) {
  int32_t best = -1;
  for (size_t t = 0; t < r.speed.size(); ++t) {
    if (r.speed[t] > 0 && (best < 0 || r.speed[t] > r.speed[best])) best = static_cast<int32_t>(t);
  }
  return best;
}

int32_t Gang(const JobRecord& r) {
  return r.phase == JobPhase::kQueued ? std::max(1, r.job->gang_size)
                                      : static_cast<int32_t>(r.devices.size());
}

// Where `r` is counted: the type it holds, or its fastest while it waits.
DeviceTypeId CountedType(const JobRecord& r) {
  return r.phase == JobPhase::kQueued ? DeviceTypeId(FastestType(r)) : r.type;
}

// Where an owner's queued job `r` (of `gang` devices) is owed its devices: the fastest type it
// may use whose `free` devices hold its gang (nothing to reclaim), else the fastest whose free
// devices and those borrowers hold there (`lendable`) together do (`reclaims`: the decision gives
// an owner's job its fastest type with room, free or held by jobs it may stop); -1 when no type
// holds it even with every borrower stopped (stopping them would not start it).
int32_t OwedType(const JobRecord& r, int32_t gang, const std::vector<int32_t>& free,
                 const std::vector<int32_t>& lendable, bool& reclaims) {
  int32_t from_free = -1, from_both = -1;
  for (size_t t = 0; t < free.size(); ++t) {
    if (!r.allowed[t]) continue;
    const auto faster = [&](int32_t than) { return than < 0 || r.speed[t] > r.speed[than]; };
    if (free[t] >= gang && faster(from_free)) from_free = static_cast<int32_t>(t);
    if (free[t] + lendable[t] >= gang && faster(from_both)) from_both = static_cast<int32_t>(t);
  }
  reclaims = from_free < 0;
  return reclaims ? from_both : from_free;
}

}  // namespace

double NormalizedRate(const JobRecord& r, DeviceTypeId type, int32_t devices,
                      DeviceTypeId reference) {
  if (type.value() < 0 || static_cast<size_t>(type.value()) >= r.speed.size()) return 0;
  const double on_reference = r.speed[reference.value()];
  const double base = on_reference > 0 ? on_reference : r.best_speed;
  if (!(base > 0)) return 0;
  return devices * r.speed[type.value()] / base;
}

TenantShares::TenantShares(const model::Tenants& tenants, const model::Cluster& cluster,
                           double grant_s)
    : tenants_(tenants),
      horizon_s_(std::max(60.0, grant_s)),
      usage_(tenants.list.size(), 0),
      pending_(tenants.list.size(), 0),
      reference_(cluster.catalog.FindId(tenants.fair_share.reference_type).value()) {
  if (!tenants.fair_share.billing.empty()) {
    billing_.assign(cluster.catalog.size(), 1);
    for (const auto& [name, weight] : tenants.fair_share.billing) {
      billing_[cluster.catalog.FindId(name)->value()] = weight;
    }
  }
  for (const auto& [type, count] : cluster.DeviceTypeCounts()) devices_ += count;
  for (size_t i = 0; i < tenants_.list.size(); ++i) {
    const model::Tenant& t = tenants_.list[i];
    index_[t.name] = static_cast<int>(i);
    guarantee_.push_back(tenants_.Guarantee(i));
    quota_.emplace_back(cluster.catalog.size(), 0);
    if (guarantee_.back() <= 0) continue;
    for (const auto& [type, n] : t.per_type) {
      quota_.back()[cluster.catalog.FindId(type)->value()] = n;
    }
  }
}

int TenantShares::TenantOf(const model::Job& job) const {
  auto it = index_.find(job.tenant);
  return it == index_.end() ? -1 : it->second;
}

double TenantShares::GuaranteeFor(int tenant, const JobRecord& r) const {
  if (tenants_.list[tenant].normalized) return guarantee_[tenant];
  double g = 0;
  for (size_t t = 0; t < quota_[tenant].size(); ++t) g += r.allowed[t] ? quota_[tenant][t] : 0;
  return g;
}

double TenantShares::Units(int tenant, const JobRecord& r) const {
  if (!tenants_.list[tenant].normalized) return Gang(r);
  return NormalizedRate(r, CountedType(r), Gang(r), reference_);
}

double TenantShares::UsageRate(const JobRecord& r, DeviceTypeId type) const {
  if (billing_.empty()) return NormalizedRate(r, type, Gang(r), reference_);
  return type.value() < 0 ? 0 : Gang(r) * billing_[type.value()];
}

void TenantShares::OnLeave(const JobRecord& r, double now_s) {
  const int t = TenantOf(*r.job);
  if (t < 0) return;
  const double from = std::max(r.run_start_s, booked_s_);
  pending_[t] += UsageRate(r, r.type) * std::max(0.0, now_s - from);
}

void TenantShares::Book(const std::vector<JobRecord>& records, const std::vector<int32_t>& running,
                        double now_s) {
  const double dt = std::max(0.0, now_s - booked_s_);
  const double decay = std::exp2(-dt / tenants_.fair_share.half_life_s);
  for (size_t i = 0; i < usage_.size(); ++i) {
    usage_[i] = usage_[i] * decay + pending_[i];
    pending_[i] = 0;
  }
  for (int32_t id : running) {
    const JobRecord& r = records[id];
    const int t = TenantOf(*r.job);
    if (t < 0 || r.phase != JobPhase::kRunning) continue;
    const double from = std::max(r.run_start_s, booked_s_);
    usage_[t] += UsageRate(r, r.type) * std::max(0.0, now_s - from);
  }
  booked_s_ = std::max(booked_s_, now_s);
}

void TenantShares::Reclaimable(const std::vector<JobRecord>& records,
                               const std::vector<int32_t>& queue,
                               const std::vector<int32_t>& running,
                               const std::vector<int32_t>& free, std::vector<char>& out) const {
  out.assign(records.size(), 0);
  const size_t n = tenants_.list.size();
  std::vector<double> held(n, 0);
  for (int32_t id : running) {
    const int t = TenantOf(*records[id].job);
    if (t >= 0 && !records[id].guest) held[t] += Units(t, records[id]);  // a guest holds none
  }
  // Borrowers' running jobs, and the devices they hold by type: what a reclaim may stop.
  std::vector<int32_t> borrowed;
  std::vector<int32_t> lendable(free.size(), 0);
  for (int32_t id : running) {
    const JobRecord& r = records[id];
    const int t = TenantOf(*r.job);
    if (t >= 0 && r.phase == JobPhase::kRunning && r.job->preemptible && !r.guest &&
        held[t] > guarantee_[t]) {
      borrowed.push_back(id);
      lendable[r.type.value()] += Gang(r);
    }
  }
  // What owners are owed, by type (OwedType): a gang runs on one type, so each owed job is
  // counted on one, and only the borrowers there are stopped for it.
  std::vector<int32_t> left = free;
  std::vector<int32_t> owed(free.size(), 0);
  std::vector<double> wanted(n, 0);
  bool any = false;
  for (int32_t id : queue) {
    const JobRecord& r = records[id];
    const int t = TenantOf(*r.job);
    if (t < 0) continue;
    const double units = Units(t, r);
    if (held[t] + wanted[t] + units > GuaranteeFor(t, r) + kSlack) continue;
    wanted[t] += units;
    const int32_t gang = Gang(r);
    bool reclaims = false;
    const int32_t type = OwedType(r, gang, left, lendable, reclaims);
    if (type < 0) continue;
    if (!reclaims) {
      left[type] -= gang;
      continue;
    }
    const int32_t owe = gang - left[type];
    owed[type] += owe;
    lendable[type] -= owe;
    left[type] = 0;
    any = true;
  }
  if (any) MarkStops(records, std::move(borrowed), owed, held, out);
}

void TenantShares::MarkStops(const std::vector<JobRecord>& records, std::vector<int32_t> borrowed,
                             std::vector<int32_t>& owed, std::vector<double>& held,
                             std::vector<char>& out) const {
  std::sort(borrowed.begin(), borrowed.end(), [&](int32_t a, int32_t b) {
    return std::tie(records[b].run_start_s, records[a].seq) <
           std::tie(records[a].run_start_s, records[b].seq);
  });
  // First the stops that leave each borrower at least its own guarantee. Then, where an owner
  // is still owed devices, runs of tenants still beyond their guarantees whatever their stop
  // leaves them: gangs are indivisible, so both guarantees cannot always hold, and the owner's,
  // whose jobs ask for what it was promised, wins (a borrower 4 devices over its guarantee
  // that runs only 8-device gangs would otherwise give nothing back until a run ends).
  for (const bool below_guarantee : {false, true}) {
    for (int32_t id : borrowed) {
      const JobRecord& r = records[id];
      int32_t& owe = owed[r.type.value()];
      if (owe <= 0 || out[id]) continue;
      const int t = TenantOf(*r.job);
      const double units = Units(t, r);
      if (!(held[t] > guarantee_[t] + kSlack)) continue;  // no longer borrows
      if (!below_guarantee && held[t] - units < guarantee_[t] - kSlack) continue;
      held[t] -= units;
      owe -= Gang(r);
      out[id] = 1;
    }
  }
}

double TenantShares::Borrowable(const std::vector<double>& held,
                                const std::vector<double>& demand) const {
  return tenants_.Borrowable(devices_, held, demand);
}

TenantShares::Grant TenantShares::GrantOf(int tenant, const JobRecord& r, double held,
                                          double borrowable, bool queued_past_capacity) const {
  const double units = Units(tenant, r);
  const double guarantee = GuaranteeFor(tenant, r);
  const double beyond = std::max(0.0, held + units - std::max(held, guarantee));
  const double over = held + units - guarantee;
  Grant g;
  g.past_capacity = beyond > 0 && Gang(r) > borrowable + kSlack;
  const bool past_limit = over > tenants_.list[tenant].borrow_limit.value_or(kInf) + kSlack;
  const bool stays_past_capacity = queued_past_capacity && r.phase == JobPhase::kQueued;
  g.kept = !past_limit && (!g.past_capacity || stays_past_capacity);
  g.borrowed = beyond > 0 && !g.past_capacity ? Gang(r) : 0;
  return g;
}

bool TenantShares::KeepsIdleGuarantee(const std::vector<double>& demand) const {
  for (size_t t = 0; t < guarantee_.size(); ++t) {
    const double idle = std::max(0.0, guarantee_[t] - demand[t]);
    if (idle > tenants_.list[t].lend_limit.value_or(kInf) + kSlack) return true;
  }
  return false;
}

namespace {

// One tenant's jobs in policy order during TenantShares::Order, and which of them takes its
// next turn: the first not yet taken that fits in its guarantee, else the first not yet taken.
// A gang the guarantee no longer holds does not keep a smaller job of the same tenant that it
// holds waiting behind the borrowers (Reclaimable counts that job as owed and marks borrowers'
// runs for it). Both cursors only move forward: what a tenant holds only grows in Order, so a
// job found beyond its guarantee stays beyond. O(jobs) over a whole Order.
struct TenantTurns {
  std::vector<TenantShares::Key> jobs;
  std::vector<char> taken;  // by position in jobs
  size_t first = 0, first_within = 0;
  size_t chosen = 0;  // the next turn's job; jobs.size() when none is left

  // Picks the next turn's job; true when it fits in the guarantee (`fits`, by key).
  template <typename Fits>
  bool Next(const Fits& fits) {
    taken.resize(jobs.size(), 0);
    while (first < jobs.size() && taken[first]) ++first;
    while (first_within < jobs.size() && (taken[first_within] || !fits(jobs[first_within]))) {
      ++first_within;
    }
    chosen = first_within < jobs.size() ? first_within : first;
    return first_within < jobs.size();
  }
  bool Done() const { return chosen >= jobs.size(); }
  // The chosen job, now taken.
  const TenantShares::Key& Take() {
    taken[chosen] = 1;
    return jobs[chosen];
  }
};

}  // namespace

void TenantShares::Order(const std::vector<JobRecord>& records, const std::vector<int32_t>& running,
                         double now_s, std::vector<Key>& keys) {
  Book(records, running, now_s);
  const size_t n = tenants_.list.size();
  std::vector<double> held(n, 0), rate(n, 0), demand(n, 0);
  std::vector<TenantTurns> jobs(n);
  std::vector<Key> out;
  out.reserve(keys.size());
  std::vector<char> listed(records.size(), 0);
  guaranteed_.assign(records.size(), 0);
  within_capacity_ = keys.size();
  for (const Key& k : keys) {
    const JobRecord& r = records[std::get<3>(k)];
    listed[std::get<3>(k)] = 1;
    const int t = TenantOf(*r.job);
    if (t < 0) {
      out.push_back(k);  // no tenant: first, in policy order
      continue;
    }
    jobs[t].jobs.push_back(k);
    demand[t] += Units(t, r);
  }
  for (int32_t id : running) {
    const JobRecord& r = records[id];
    const int t = TenantOf(*r.job);
    if (listed[id] || t < 0) continue;
    held[t] += Units(t, r);
    rate[t] += UsageRate(r, r.type);
  }
  std::vector<char> active(n, 0);
  for (size_t t = 0; t < n; ++t) {
    demand[t] += held[t];
    active[t] = demand[t] > 0;
  }
  const std::vector<double> share = tenants_.Shares(active);
  // Past the capacity others may borrow, queued jobs stay (the header says why and when).
  double borrowable = Borrowable(held, demand);
  const bool queued_past_capacity = !KeepsIdleGuarantee(demand);
  // Tenants by (over their guarantee, standing against their share): usage with what they get
  // now, or under Kueue-style accounting what they hold beyond their quota; each tenant's turn
  // for the job TenantTurns picks.
  using Turn = std::tuple<int, double, int>;
  std::priority_queue<Turn, std::vector<Turn>, std::greater<>> turns;
  const auto push = [&](int t) {
    const bool within = jobs[t].Next([&](const Key& k) {
      const JobRecord& r = records[std::get<3>(k)];
      return held[t] + Units(t, r) <= GuaranteeFor(t, r) + kSlack;
    });
    if (jobs[t].Done()) return;
    const JobRecord& r = records[std::get<3>(jobs[t].jobs[jobs[t].chosen])];
    // Kueue: devices beyond its whole quota once this job runs (the share with the preemptor
    // admitted, as its LessThanOrEqualToFinalShare compares).
    const double standing = tenants_.fair_share.kueue
                                ? std::max(0.0, held[t] + Units(t, r) - guarantee_[t])
                                : usage_[t] + rate[t] * horizon_s_;
    turns.emplace(within ? 0 : 1, standing / share[t], t);
  };
  for (size_t t = 0; t < n; ++t) push(static_cast<int>(t));
  while (!turns.empty()) {
    const int t = std::get<2>(turns.top());
    const bool within = std::get<0>(turns.top()) == 0;
    turns.pop();
    const Key& k = jobs[t].Take();
    const JobRecord& r = records[std::get<3>(k)];
    const Grant g = GrantOf(t, r, held[t], borrowable, queued_past_capacity);
    if (g.past_capacity) within_capacity_ = std::min(within_capacity_, out.size());
    if (g.kept) {
      guaranteed_[std::get<3>(k)] = within ? 1 : 0;
      out.push_back(k);
      held[t] += Units(t, r);
      rate[t] += UsageRate(r, CountedType(r));
      borrowable -= g.borrowed;
    }
    push(t);
  }
  within_capacity_ = std::min(within_capacity_, out.size());
  keys = std::move(out);
}

std::vector<TenantStanding> TenantShares::Standing(const std::vector<JobRecord>& records,
                                                   const std::vector<int32_t>& running,
                                                   double now_s) const {
  const size_t n = tenants_.list.size();
  std::vector<TenantStanding> out(n);
  const double decay =
      std::exp2(-std::max(0.0, now_s - booked_s_) / tenants_.fair_share.half_life_s);
  std::vector<char> active(n, 0);
  for (size_t t = 0; t < n; ++t) {
    out[t].usage = usage_[t] * decay + pending_[t];
    out[t].guarantee = guarantee_[t];
    out[t].devices.assign(quota_[t].size(), 0);
  }
  for (const JobRecord& r : records) {
    if (r.job == nullptr || r.phase == JobPhase::kDone) continue;
    if (const int t = TenantOf(*r.job); t >= 0) active[t] = 1;
  }
  for (int32_t id : running) {
    const JobRecord& r = records[id];
    const int t = TenantOf(*r.job);
    if (t < 0) continue;
    if (r.phase == JobPhase::kRunning) {
      out[t].usage +=
          UsageRate(r, r.type) * std::max(0.0, now_s - std::max(r.run_start_s, booked_s_));
    }
    out[t].held += Units(t, r);
    out[t].normalized += NormalizedRate(r, r.type, Gang(r), reference_);
    if (r.type.value() >= 0) out[t].devices[r.type.value()] += Gang(r);
  }
  const std::vector<double> share = tenants_.Shares(active);
  double unguaranteed = devices_, borrowed = 0, idle_total = 0;
  std::vector<double> idle(n, 0);
  for (size_t t = 0; t < n; ++t) {
    out[t].share = share[t];
    out[t].borrowed = std::max(0.0, out[t].held - guarantee_[t]);
    unguaranteed -= guarantee_[t];
    borrowed += out[t].borrowed;
    idle[t] = std::max(0.0, guarantee_[t] - out[t].held);
    idle_total += idle[t];
  }
  const double lent = std::min(idle_total, std::max(0.0, borrowed - std::max(0.0, unguaranteed)));
  for (size_t t = 0; t < n && lent > 0; ++t) out[t].lent = lent * idle[t] / idle_total;
  SpreadOverTypes(out);
  return out;
}

void TenantShares::SpreadOverTypes(std::vector<TenantStanding>& out) const {
  const size_t types = quota_.empty() ? 0 : quota_[0].size();
  std::vector<double> beyond_by_type(types, 0);  // devices borrowers hold beyond guarantees
  double beyond_total = 0;
  for (TenantStanding& s : out) {
    s.borrowed_devices.assign(types, 0);
    s.lent_devices.assign(types, 0);
    int32_t held_devices = 0;
    for (int32_t d : s.devices) held_devices += d;
    if (!(s.borrowed > 0) || held_devices == 0) continue;
    // Under a normalized quota `borrowed` is in reference devices: the same fraction of its
    // devices.
    const double fraction = s.held > 0 ? std::min(1.0, s.borrowed / s.held) : 0;
    for (size_t x = 0; x < types; ++x) {
      s.borrowed_devices[x] = fraction * s.devices[x];
      beyond_by_type[x] += s.borrowed_devices[x];
      beyond_total += s.borrowed_devices[x];
    }
  }
  if (!(beyond_total > 0)) return;
  for (TenantStanding& s : out) {
    if (!(s.lent > 0)) continue;
    for (size_t x = 0; x < types; ++x)
      s.lent_devices[x] = s.lent * beyond_by_type[x] / beyond_total;
  }
}

void TenantShares::RestoreUsage(const std::map<std::string, double>& usage, double at_s) {
  for (const auto& [name, value] : usage) {
    if (auto it = index_.find(name); it != index_.end()) usage_[it->second] = value;
  }
  booked_s_ = at_s;
}

TenantTurnsKept::TenantTurnsKept(const TenantShares& shares, const std::vector<JobRecord>& records,
                                 const std::vector<TenantShares::Key>& keys)
    : tenant_(keys.size(), -1),
      rank_(keys.size(), 0),
      positions_(shares.size()),
      cursor_(shares.size(), 0),
      taken_(keys.size(), 0) {
  for (size_t at = 0; at < keys.size(); ++at) {
    const int t = shares.TenantOf(*records[std::get<3>(keys[at])].job);
    tenant_[at] = t;
    if (t < 0) continue;
    rank_[at] = positions_[t].size();
    positions_[t].push_back(at);
  }
}

size_t TenantTurnsKept::NextOfTenant(size_t at) {
  const int t = tenant_[at];
  if (t < 0) return taken_.size();
  size_t& i = cursor_[t];
  i = std::max(i, rank_[at] + 1);
  while (i < positions_[t].size() && taken_[positions_[t][i]]) ++i;
  return i < positions_[t].size() ? positions_[t][i] : taken_.size();
}

}  // namespace hetsched::sched
