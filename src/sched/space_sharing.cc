#include "sched/space_sharing.h"

#include <algorithm>

namespace hetsched::sched {

using model::DeviceTypeId;
using model::JobId;

namespace {
// Bounds that keep a decision cheap at 100,000 queued jobs: guests and queued jobs considered
// per decision, and hosts of one kind checked for memory.
constexpr int32_t kPairScan = 256;
constexpr int32_t kHostScan = 16;
}  // namespace

SpaceSharing::SpaceSharing(SchedulerCore& core, double min_gain)
    : core_(core), min_gain_(min_gain) {}

void SpaceSharing::OnSubmit(int32_t id, const model::Job& job) {
  if (job_type_of_.size() <= static_cast<size_t>(id)) job_type_of_.resize(id + 1, -1);
  job_type_of_[id] = -1;
  if (!job.job_type.empty()) {
    job_type_of_[id] =
        job_type_index_.emplace(job.job_type, static_cast<int32_t>(job_type_index_.size()))
            .first->second;
  }
}

void SpaceSharing::OnStarted(int32_t id) {
  const JobRecord& r = core_.record(id);
  if (CanShare(r) && !r.incompatible[r.type.value()]) IndexSolo(id);
}

void SpaceSharing::OnLeftRunning(int32_t id) { UnindexSolo(id); }

std::vector<JobId> SpaceSharing::TakeSpeedChanges() {
  std::vector<JobId> out;
  out.swap(speed_changes_);
  return out;
}

bool SpaceSharing::CanShare(const JobRecord& r) const {
  // Pinned jobs keep their fixed devices to themselves; a non-preemptible job's speed is a
  // promise a partner would break.
  const int32_t id = r.job->id.value();
  return r.job->preemptible && !core_.pinned(id) && static_cast<size_t>(id) < job_type_of_.size() &&
         job_type_of_[id] >= 0;
}

std::tuple<int32_t, int32_t, int32_t> SpaceSharing::SoloKey(int32_t id) const {
  const JobRecord& r = core_.record(id);
  return {r.type.value(), std::max(1, r.job->gang_size), job_type_of_[id]};
}

void SpaceSharing::IndexSolo(int32_t id) { solo_[SoloKey(id)].insert(id); }

void SpaceSharing::UnindexSolo(int32_t id) {
  const JobRecord& r = core_.record(id);
  if (r.partner >= 0 || !CanShare(r)) return;  // never indexed
  auto it = solo_.find(SoloKey(id));
  if (it == solo_.end()) return;
  it->second.erase(id);
  if (it->second.empty()) solo_.erase(it);
}

std::optional<std::pair<double, double>> SpaceSharing::PairFactors(int32_t a, int32_t b,
                                                                   DeviceTypeId type) {
  const model::Job& ja = *core_.record(a).job;
  const model::Job& jb = *core_.record(b).job;
  const int32_t gang = std::max(1, ja.gang_size);
  const auto key = std::make_tuple(job_type_of_[a], job_type_of_[b], gang, type.value());
  if (auto it = pair_cache_.find(key); it != pair_cache_.end()) return it->second;
  std::optional<std::pair<double, double>> out;
  const model::ThroughputProfile& profile = *core_.profile();
  const model::DeviceType& dt = core_.cluster().catalog.Get(type);
  std::vector<std::string> names = {dt.name};
  names.insert(names.end(), dt.aliases.begin(), dt.aliases.end());
  for (const std::string& name : names) {
    auto pair = profile.Colocated(ja.job_type, gang, jb.job_type, gang, name);
    if (!pair) {
      if ((pair = profile.Colocated(jb.job_type, gang, ja.job_type, gang, name))) {
        std::swap(pair->first, pair->second);
      }
    }
    const auto alone_a = profile.Isolated(ja.job_type, gang, name);
    const auto alone_b = profile.Isolated(jb.job_type, gang, name);
    if (!pair || !alone_a || !alone_b) continue;
    // Both must progress: Gavel's file marks pairs that do not fit together with zeros.
    if (*alone_a > 0 && *alone_b > 0 && pair->first > 0 && pair->second > 0) {
      out.emplace(pair->first / *alone_a, pair->second / *alone_b);
    }
    break;
  }
  pair_cache_.emplace(key, out);
  return out;
}

void SpaceSharing::Rebase(int32_t id, double now_s) {
  JobRecord& r = core_.record(id);
  r.done_work = r.DoneAt(now_s);
  r.progress_since_s = std::max(now_s, r.progress_since_s);
  r.attained_s = r.AttainedAt(now_s);
  r.attained_norm_s = r.AttainedNormAt(now_s);
  r.service_since_s = now_s;
}

bool SpaceSharing::LeavePair(int32_t id, double now_s) {
  JobRecord& r = core_.record(id);
  const int32_t p = r.partner;
  if (p < 0) return false;
  JobRecord& o = core_.record(p);
  Rebase(p, now_s);
  o.partner = -1;
  o.pair_speed = 0;
  o.rate = o.speed[o.type.value()];  // until the driver sets the real rate
  if (r.guest) {
    guests_.erase(id);
  } else {  // the guest stays and now holds the devices
    core_.SetOwner(r.devices, p);
    o.guest = false;
    guests_.erase(p);
  }
  r.partner = -1;
  r.guest = false;
  r.pair_speed = 0;
  if (CanShare(o)) IndexSolo(p);
  speed_changes_.push_back(JobId(p));
  return true;
}

void SpaceSharing::BeforePreempt(int32_t id, double now_s, Decision& out) {
  const JobRecord& r = core_.record(id);
  if (r.guest || r.partner < 0) return;
  core_.Preempt(r.partner, now_s, out);  // the guest's own BeforePreempt does nothing
}

Placement SpaceSharing::Join(int32_t id, int32_t host, double own_factor, double host_factor,
                             double now_s) {
  JobRecord& h = core_.record(host);
  const DeviceTypeId type = h.type;
  UnindexSolo(host);
  Rebase(host, now_s);
  h.partner = id;
  h.pair_speed = h.speed[type.value()] * host_factor;
  h.rate = h.pair_speed;  // until the driver sets the real rate
  speed_changes_.push_back(JobId(host));

  JobRecord& r = core_.record(id);
  r.partner = host;
  r.guest = true;
  r.pair_speed = r.speed[type.value()] * own_factor;
  const bool resumed = core_.MarkRunning(id, type, h.devices, r.pair_speed, now_s);
  core_.TakeHost(id, r.devices);  // its workers take their own host cores and memory
  guests_.insert(id);
  return Placement{JobId(id), type, r.devices, resumed, false, JobId(host)};
}

void SpaceSharing::Decide(double now_s, Decision& out) {
  if (!guests_.empty() && core_.TotalFree() > 0) MoveGuestsAlone(now_s, out);
  PairQueued(now_s, out);
}

void SpaceSharing::MoveGuestsAlone(double now_s, Decision& out) {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  std::vector<int32_t> candidates;
  for (int32_t id : guests_) {
    if (static_cast<int32_t>(candidates.size()) == kPairScan) break;
    candidates.push_back(id);
  }
  for (int32_t id : candidates) {
    const JobRecord& r = core_.record(id);
    const int32_t gang = std::max(1, r.job->gang_size);
    int32_t best = -1;
    for (int32_t t = 0; t < types; ++t) {
      if (!r.allowed[t] || r.incompatible[t] || state.FreeOfType(DeviceTypeId(t)) < gang) {
        continue;
      }
      const double useful = r.speed[t] * core_.NewWorkShare(r, DeviceTypeId(t));
      if (useful > r.pair_speed &&
          (best < 0 || useful > r.speed[best] * core_.NewWorkShare(r, DeviceTypeId(best)))) {
        best = t;
      }
    }
    if (best < 0) continue;
    auto devs = core_.PlaceOn(r, DeviceTypeId(best));
    if (!devs) continue;
    core_.Preempt(id, now_s, out);
    out.placed.push_back(core_.Start(id, DeviceTypeId(best), std::move(*devs), now_s, true));
  }
}

void SpaceSharing::PairQueued(double now_s, Decision& out) {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  int32_t scanned = 0;
  const auto& sorted_queue = core_.sorted_queue();
  auto next = sorted_queue.begin();
  while (next != sorted_queue.end() && scanned < kPairScan && !solo_.empty()) {
    const int32_t id = std::get<3>(*next);
    ++next;
    ++scanned;
    const JobRecord& r = core_.record(id);
    if (!CanShare(r)) continue;
    const int32_t gang = std::max(1, r.job->gang_size);
    const uint64_t mem = r.job->memory_per_worker;
    const HostRequest host_request = HostRequestOf(*r.job);
    double best_score = 1 + min_gain_;
    int32_t best_host = -1;
    std::pair<double, double> best_factors;
    for (int32_t t = 0; t < types; ++t) {
      if (!r.allowed[t] || r.incompatible[t] || !(r.speed[t] > 0)) continue;
      const uint64_t device_mem = core_.cluster().catalog.Get(DeviceTypeId(t)).memory_bytes;
      for (auto it = solo_.lower_bound({t, gang, -1});
           it != solo_.end() && std::get<0>(it->first) == t && std::get<1>(it->first) == gang;
           ++it) {
        const auto factors = PairFactors(id, *it->second.begin(), DeviceTypeId(t));
        if (!factors || factors->first + factors->second <= best_score) continue;
        // Both workers' memory must fit on the device (unknown memory fits, as in the filter),
        // and the guest's workers need their own host cores and memory on the host's nodes.
        int32_t host = -1, checked = 0;
        for (int32_t h : it->second) {
          if (++checked > kHostScan) break;
          const uint64_t other = core_.record(h).job->memory_per_worker;
          if ((mem == 0 || other == 0 || device_mem == 0 || mem + other <= device_mem) &&
              state.HostHolds(core_.record(h).devices, host_request)) {
            host = h;
            break;
          }
        }
        if (host < 0) continue;
        best_score = factors->first + factors->second;
        best_host = host;
        best_factors = *factors;
      }
    }
    if (best_host >= 0) {
      out.placed.push_back(Join(id, best_host, best_factors.first, best_factors.second, now_s));
    }
  }
}

}  // namespace hetsched::sched
