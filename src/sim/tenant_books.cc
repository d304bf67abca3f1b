#include "sim/tenant_books.h"

#include <algorithm>
#include <map>

#include "sched/job_record.h"

namespace hetsched::sim {

using model::DeviceTypeId;

TenantBooks::TenantBooks(const model::Tenants& tenants, const model::Cluster& cluster,
                         const model::Workload& workload, const model::ThroughputProfile* profile)
    : tenants_(tenants),
      cluster_(cluster),
      workload_(workload),
      profile_(profile),
      reference_(cluster.catalog.FindId(tenants.fair_share.reference_type).value()) {
  for (size_t i = 0; i < tenants.list.size(); ++i) guarantee_.push_back(tenants.Guarantee(i));
}

double TenantBooks::Worth(const model::Job& job, DeviceTypeId type) const {
  const auto speed = [&](DeviceTypeId t) {
    return sched::GangSpeed(job, cluster_.catalog.Get(t), profile_).value_or(0);
  };
  double base = speed(reference_);
  if (!(base > 0)) {  // it cannot run on the reference type: its fastest type is the unit
    for (const auto& [t, count] : cluster_.DeviceTypeCounts()) base = std::max(base, speed(t));
  }
  return base > 0 ? speed(type) / base : 0;
}

double TenantBooks::AloneS(const model::Job& job, int32_t tenants) const {
  double best = 0, usable = 0;
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) {
    const double speed = sched::GangSpeed(job, cluster_.catalog.Get(type), profile_).value_or(0);
    if (!(speed > 0)) continue;
    best = std::max(best, speed);
    usable += count;
  }
  if (!(best > 0)) return 0;
  const double slice = usable / std::max(1, tenants);
  return job.work / best * std::max(1.0, std::max(1, job.gang_size) / slice);
}

void TenantBooks::Run(int32_t job, DeviceTypeId type, int32_t devices, double from_s, double to_s,
                      bool preempted) {
  const model::Job& j = workload_.jobs[job];
  const int t = tenants_.Find(j.tenant);
  if (t < 0 || !(to_s > from_s) || devices <= 0) return;
  spans_.push_back({job, preempted, t, type, devices, devices * Worth(j, type), from_s, to_s});
}

std::vector<char> TenantBooks::Active(const std::vector<TenantJobEnd>& measured) const {
  std::vector<char> active(tenants_.list.size(), 0);
  for (const TenantJobEnd& e : measured) {
    const int t = tenants_.Find(workload_.jobs[e.id].tenant);
    if (t >= 0) active[t] = 1;
  }
  return active;
}

void TenantBooks::ReclaimWaits(const std::vector<TenantJobEnd>& measured,
                               std::pair<double, double> window,
                               std::vector<TenantResult>& out) const {
  // By time: changes of what a tenant holds (held) and of its waiting jobs' gangs (gang).
  struct Change {
    double time_s;
    int tenant;
    double held;
    int32_t gang;  // > 0: a job of this gang starts waiting; < 0: stops
  };
  std::vector<Change> changes;
  std::vector<std::vector<const Span*>> runs(workload_.jobs.size());
  for (const Span& s : spans_) {
    const bool by_worth = tenants_.list[s.tenant].normalized.has_value();
    const double held = by_worth ? s.normalized : s.devices;
    changes.push_back({s.from_s, s.tenant, held, 0});
    changes.push_back({s.to_s, s.tenant, -held, 0});
    runs[s.job].push_back(&s);
  }
  for (const TenantJobEnd& e : measured) {
    const int t = tenants_.Find(workload_.jobs[e.id].tenant);
    if (t < 0 || guarantee_[t] <= 0) continue;
    const int32_t gang = std::max(1, workload_.jobs[e.id].gang_size);
    std::vector<const Span*>& own = runs[e.id];
    std::sort(own.begin(), own.end(), [](auto* a, auto* b) { return a->from_s < b->from_s; });
    double waiting_from = e.arrival_s;  // between runs, and after the last while not completed
    for (const Span* s : own) {
      if (s->from_s > waiting_from) {
        changes.push_back({waiting_from, t, 0, gang});
        changes.push_back({s->from_s, t, 0, -gang});
      }
      waiting_from = s->to_s;
    }
    const double end = e.completion_s >= 0 ? e.completion_s : window.second;
    if (end > waiting_from) {
      changes.push_back({waiting_from, t, 0, gang});
      changes.push_back({end, t, 0, -gang});
    }
  }
  std::sort(changes.begin(), changes.end(),
            [](const Change& a, const Change& b) { return a.time_s < b.time_s; });
  const size_t n = tenants_.list.size();
  std::vector<double> held(n, 0), owed_since(n, -1);
  std::vector<std::map<int32_t, int>> waiting(n);  // gang -> jobs waiting
  for (size_t c = 0; c < changes.size(); ++c) {
    const Change& ch = changes[c];
    held[ch.tenant] += ch.held;
    if (ch.gang > 0) ++waiting[ch.tenant][ch.gang];
    if (ch.gang < 0 && --waiting[ch.tenant][-ch.gang] == 0) waiting[ch.tenant].erase(-ch.gang);
    if (c + 1 < changes.size() && changes[c + 1].time_s == ch.time_s) continue;
    for (size_t t = 0; t < n; ++t) {  // the state after every change at this time
      const bool owed =
          !waiting[t].empty() && held[t] + waiting[t].begin()->first <= guarantee_[t] + 1e-9;
      const double now = std::clamp(ch.time_s, window.first, window.second);
      if (owed && owed_since[t] < 0) owed_since[t] = now;
      if (owed || owed_since[t] < 0) continue;
      out[t].reclaim_wait_s = std::max(out[t].reclaim_wait_s, now - owed_since[t]);
      owed_since[t] = -1;
    }
  }
  for (size_t t = 0; t < n; ++t) {  // still owed when the window closes
    if (owed_since[t] >= 0) {
      out[t].reclaim_wait_s = std::max(out[t].reclaim_wait_s, window.second - owed_since[t]);
    }
  }
}

TenantFairness TenantBooks::Fairness(const std::map<std::string, TenantResult>& books,
                                     const std::vector<TenantJobEnd>& measured) const {
  const std::vector<char> active = Active(measured);
  const std::vector<double> target = tenants_.Shares(active);
  TenantFairness f;
  double sum = 0, squares = 0;
  int leaves = 0;
  for (size_t t = 0; t < tenants_.list.size(); ++t) {
    const TenantResult& r = books.at(tenants_.list[t].name);
    f.worst_rho = std::max(f.worst_rho, r.rho);
    if (!active[t] || !(target[t] > 0)) continue;
    const double x = r.normalized_share / target[t];
    sum += x;
    squares += x * x;
    ++leaves;
  }
  if (squares > 0) f.jain_index = sum * sum / (leaves * squares);
  return f;
}

void TenantBooks::Lending(std::pair<double, double> window, std::vector<TenantResult>& out) const {
  const size_t n = tenants_.list.size();
  struct Change {
    double time_s;
    int tenant;
    double devices, normalized;
    int32_t type;
  };
  std::vector<Change> changes;
  for (const Span& s : spans_) {
    const double from = std::max(s.from_s, window.first), to = std::min(s.to_s, window.second);
    if (!(to > from)) continue;
    changes.push_back({from, s.tenant, 1.0 * s.devices, s.normalized, s.type.value()});
    changes.push_back({to, s.tenant, -1.0 * s.devices, -s.normalized, s.type.value()});
  }
  std::sort(changes.begin(), changes.end(),
            [](const Change& a, const Change& b) { return a.time_s < b.time_s; });
  double unguaranteed = 0;
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) unguaranteed += count;
  for (double g : guarantee_) unguaranteed -= g;
  std::vector<double> devices(n, 0), normalized(n, 0), idle(n, 0);
  const size_t types = cluster_.catalog.size();
  std::vector<std::vector<double>> by_type(n, std::vector<double>(types, 0));  // devices held
  std::vector<double> beyond_devices(n, 0), beyond_by_type(types, 0);
  for (size_t c = 0; c < changes.size(); ++c) {
    devices[changes[c].tenant] += changes[c].devices;
    normalized[changes[c].tenant] += changes[c].normalized;
    by_type[changes[c].tenant][changes[c].type] += changes[c].devices;
    const double dt_h =
        c + 1 < changes.size() ? (changes[c + 1].time_s - changes[c].time_s) / 3600 : 0;
    if (dt_h <= 0) continue;
    double borrowed = 0, idle_total = 0;
    for (size_t t = 0; t < n; ++t) {
      const bool by_worth = tenants_.list[t].normalized.has_value();
      const double held = by_worth ? normalized[t] : devices[t];
      const double beyond = std::max(0.0, held - guarantee_[t]);
      beyond_devices[t] = by_worth && held > 0 ? devices[t] * beyond / held : beyond;
      out[t].borrowed_device_hours += beyond_devices[t] * dt_h;
      borrowed += beyond_devices[t];
      idle[t] = std::max(0.0, guarantee_[t] - held);
      idle_total += idle[t];
    }
    const double lent = std::min(idle_total, std::max(0.0, borrowed - std::max(0.0, unguaranteed)));
    if (lent <= 0) continue;
    for (size_t t = 0; t < n; ++t) out[t].lent_device_hours += lent * idle[t] / idle_total * dt_h;
    // By type: as the devices borrowers hold beyond their guarantees are spread over the types.
    std::fill(beyond_by_type.begin(), beyond_by_type.end(), 0.0);
    for (size_t t = 0; t < n; ++t) {
      if (!(beyond_devices[t] > 0)) continue;
      for (size_t x = 0; x < types; ++x) {
        beyond_by_type[x] += beyond_devices[t] * by_type[t][x] / devices[t];
      }
    }
    for (size_t x = 0; x < types; ++x) {
      if (!(beyond_by_type[x] > 0)) continue;
      const std::string& name = cluster_.catalog.Get(model::DeviceTypeId(int32_t(x))).name;
      for (size_t t = 0; t < n; ++t) {
        if (!(idle[t] > 0)) continue;
        out[t].lent_device_hours_by_type[name] +=
            lent * idle[t] / idle_total * beyond_by_type[x] / borrowed * dt_h;
      }
    }
  }
}

std::map<std::string, TenantResult> TenantBooks::Summarize(
    const std::vector<TenantJobEnd>& measured, std::pair<double, double> window) const {
  const size_t n = tenants_.list.size();
  std::vector<TenantResult> out(n);
  std::vector<double> jct_sum(n, 0);
  double all_normalized = 0;
  for (const Span& s : spans_) {
    const double from = std::max(s.from_s, window.first), to = std::min(s.to_s, window.second);
    if (!(to > from)) continue;
    const double hours = (to - from) / 3600;
    out[s.tenant].device_hours[cluster_.catalog.Get(s.type).name] += s.devices * hours;
    out[s.tenant].normalized_device_hours += s.normalized * hours;
    all_normalized += s.normalized * hours;
  }
  Lending(window, out);
  ReclaimWaits(measured, window, out);
  for (const Span& s : spans_) out[s.tenant].preempted_runs += s.preempted ? 1 : 0;
  const std::vector<char> active = Active(measured);
  const auto sharing = static_cast<int32_t>(std::count(active.begin(), active.end(), 1));
  std::vector<double> rho_sum(n, 0);
  for (const TenantJobEnd& e : measured) {
    const model::Job& job = workload_.jobs[e.id];
    const int t = tenants_.Find(job.tenant);
    if (t < 0 || e.completion_s < 0) continue;
    jct_sum[t] += e.completion_s - e.arrival_s;
    const double alone = AloneS(job, sharing);
    if (alone > 0) rho_sum[t] += (e.completion_s - e.arrival_s) / alone;
    out[t].jobs_completed++;
  }
  // A parent's books are the sums of its children's (children come after their parents).
  for (size_t i = n; i-- > 0;) {
    const int p = tenants_.Find(tenants_.list[i].parent);
    if (p < 0) continue;
    for (const auto& [type, h] : out[i].device_hours) out[p].device_hours[type] += h;
    out[p].normalized_device_hours += out[i].normalized_device_hours;
    out[p].borrowed_device_hours += out[i].borrowed_device_hours;
    out[p].lent_device_hours += out[i].lent_device_hours;
    for (const auto& [type, h] : out[i].lent_device_hours_by_type) {
      out[p].lent_device_hours_by_type[type] += h;
    }
    out[p].jobs_completed += out[i].jobs_completed;
    out[p].preempted_runs += out[i].preempted_runs;
    out[p].reclaim_wait_s = std::max(out[p].reclaim_wait_s, out[i].reclaim_wait_s);
    jct_sum[p] += jct_sum[i];
    rho_sum[p] += rho_sum[i];
  }
  std::map<std::string, TenantResult> by_name;
  for (size_t t = 0; t < n; ++t) {
    TenantResult& r = out[t];
    if (all_normalized > 0) r.normalized_share = r.normalized_device_hours / all_normalized;
    if (r.jobs_completed > 0) r.avg_jct_s = jct_sum[t] / r.jobs_completed;
    if (r.jobs_completed > 0) r.rho = rho_sum[t] / r.jobs_completed;
    by_name[tenants_.list[t].name] = std::move(r);
  }
  return by_name;
}

}  // namespace hetsched::sim
