#include "sched/elastic.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <tuple>

#include "cost/job_speed.h"
#include "sched/scheduler_core.h"

namespace hetsched::sched {

using model::DeviceTypeId;

namespace {
// A job grows only when the larger size is at least this much faster: a resize restarts it.
constexpr double kMinGrowthGain = 0.1;
// ... and when the time it saves at the larger size repays this many restarts (the expected
// remaining time is a belief, often off by a factor of two).
constexpr double kRepayRestarts = 3;
// SizeQueued gives up after this many queued jobs in a row that fit nowhere.
constexpr int32_t kSizeScan = 256;
// Least time between two resizes of one job, whatever the preempt interval.
constexpr double kMinResizeGapS = 300;
}  // namespace

std::vector<int32_t> CandidateSizes(const model::Job& job) {
  const int32_t gang = std::max(1, job.gang_size);
  const int32_t lo = std::max(1, std::min(job.min_workers, gang));
  const int32_t hi = std::max(job.max_workers, gang);
  std::set<int32_t> sizes = {lo, hi, gang};
  for (int64_t p = 1; p < hi; p *= 2) {
    if (p > lo) sizes.insert(static_cast<int32_t>(p));
  }
  return {sizes.begin(), sizes.end()};
}

std::optional<double> SpeedAtSize(const model::Job& job, int32_t workers,
                                  const model::DeviceType& type,
                                  const model::ThroughputProfile* profile) {
  const auto declared = cost::EstimateStepTime(job, type, profile);
  const auto speed_of = [](const cost::StepTime& t) -> std::optional<double> {
    if (!(t.seconds > 0) || std::isinf(t.seconds)) return std::nullopt;
    return 1.0 / t.seconds;
  };
  const int32_t gang = std::max(1, job.gang_size);
  if (declared && declared->source != cost::SpeedSource::kProfile) {
    auto speed = speed_of(*declared);
    if (speed) *speed *= static_cast<double>(workers) / gang;
    return speed;
  }
  // Measured per size: only measured sizes count (a roofline guess next to measurements would
  // mix two scales). The declared size may itself be missing on this type.
  if (workers == gang) return declared ? speed_of(*declared) : std::nullopt;
  model::Job sized = job;
  sized.gang_size = workers;
  const auto at_size = cost::EstimateStepTime(sized, type, profile);
  if (!at_size || at_size->source != cost::SpeedSource::kProfile) return std::nullopt;
  return speed_of(*at_size);
}

void ApplySize(JobRecord& r, size_t option) {
  JobRecord::SizeOption& o = r.sizes[option];
  if (o.job == nullptr) {
    // The job at its current size is kept too, so that a resize back to it makes no copy.
    // Nothing but the gang size differs between the sizes' jobs (nothing else changes a job).
    for (JobRecord::SizeOption& current : r.sizes) {
      if (current.workers == r.job->gang_size && current.job == nullptr) current.job = r.job;
    }
    auto copy = std::make_shared<model::Job>(*r.job);
    copy->gang_size = o.workers;
    o.job = std::move(copy);
  }
  r.job = o.job;
  r.gang = o.workers;
  r.speed = o.speed;
  r.allowed = o.allowed;
}

ElasticResizer::ElasticResizer(SchedulerCore& core)
    : core_(core),
      clock_(core.options().preempt_interval_s),
      gap_s_(std::max(core.options().preempt_interval_s, kMinResizeGapS)) {}

bool ElasticResizer::MayGrow() const { return live_ > 0 && core_.TotalFree() > 0; }

size_t ElasticResizer::CurrentOption(const JobRecord& r) {
  for (size_t i = 0; i < r.sizes.size(); ++i) {
    if (r.sizes[i].workers == r.job->gang_size) return i;
  }
  return 0;  // unreachable: the size is always one of the options
}

void ElasticResizer::SizeQueued() {
  if (live_ == 0) return;
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  std::vector<int32_t> free(types);
  int32_t total = 0;
  for (int32_t t = 0; t < types; ++t) {
    free[t] = state.FreeOfType(DeviceTypeId(t));
    total += free[t];
  }
  int32_t misses = 0;
  for (const auto& key : core_.sorted_queue()) {
    if (total <= 0 || misses >= kSizeScan) break;
    JobRecord& r = core_.record(std::get<3>(key));
    if (r.sizes.empty()) {
      // A rigid job takes its gang on its fastest type with room, as the strategies would.
      const int32_t t = core_.BestType(r, TypeChoice::kFastest, free);
      if (t < 0) {
        ++misses;
        continue;
      }
      const int32_t gang = std::max(1, r.job->gang_size);
      free[t] -= gang;
      total -= gang;
      continue;
    }
    // The fastest (size, type) that fits; a larger size only when it is kMinGrowthGain faster
    // than the best smaller one (more devices for little gain would keep others waiting).
    int32_t chosen = -1;
    int32_t chosen_type = -1;
    double chosen_speed = 0;
    for (int32_t i = 0; i < static_cast<int32_t>(r.sizes.size()); ++i) {
      const JobRecord::SizeOption& o = r.sizes[i];
      if (o.workers > r.size_cap) break;
      for (int32_t t = 0; t < types; ++t) {
        if (!o.allowed[t] || free[t] < o.workers || o.speed[t] <= 0) continue;
        const bool larger = chosen >= 0 && o.workers > r.sizes[chosen].workers;
        if (o.speed[t] > chosen_speed * (larger ? 1 + kMinGrowthGain : 1)) {
          chosen = i;
          chosen_type = t;
          chosen_speed = o.speed[t];
        }
      }
    }
    if (chosen < 0) {
      ++misses;
      continue;
    }
    misses = 0;
    if (r.sizes[chosen].workers != r.job->gang_size) {
      ApplySize(r, chosen);
      // Its plan class is keyed by its gang: an index of the queue by class files it anew.
      core_.NoteQueueChanged(r.id);
    }
    free[chosen_type] -= r.sizes[chosen].workers;
    total -= r.sizes[chosen].workers;
  }
}

void ElasticResizer::Resize(double now_s, Decision& out) {
  if (live_ == 0 || !clock_.FullDue(now_s)) return;
  ShrinkForHead(now_s, out);
  GrowIntoIdle(now_s, out);
}

bool ElasticResizer::Resizable(const JobRecord& r, double now_s) const {
  // Not one that started in this very decision: the driver has not launched it yet.
  return !r.sizes.empty() && r.phase == JobPhase::kRunning && SchedulerCore::HoldsDevices(r) &&
         r.partner < 0 && r.job->preemptible && r.service_since_s < now_s &&
         now_s - r.resized_s >= gap_s_;
}

void ElasticResizer::Stop(int32_t id, int32_t workers, double now_s, Decision& out) {
  JobRecord& r = core_.record(id);
  r.size_cap = workers;
  r.resized_s = now_s;
  core_.Preempt(id, now_s, out);
}

void ElasticResizer::ShrinkForHead(double now_s, Decision& out) {
  if (core_.sorted_queue().empty()) return;
  const int32_t head = std::get<3>(*core_.sorted_queue().begin());
  const JobRecord& h = core_.record(head);
  if (core_.pinned(head) || h.best_speed <= 0) return;
  // The head at its smallest size.
  const int32_t need = h.sizes.empty() ? std::max(1, h.job->gang_size) : h.sizes.front().workers;
  const std::vector<char>& allowed = h.sizes.empty() ? h.allowed : h.sizes.front().allowed;
  const std::vector<double>& speed = h.sizes.empty() ? h.speed : h.sizes.front().speed;
  const ClusterState& state = core_.state();
  std::vector<Cut> best_plan;
  double best_net = 0;
  for (int32_t t = 0; t < state.type_count(); ++t) {
    if (!allowed[t] || h.incompatible[t] || speed[t] <= 0) continue;
    const int32_t shortfall = need - state.FreeOfType(DeviceTypeId(t));
    // Enough free devices by count: what keeps it waiting is not the elastic jobs' size.
    if (shortfall <= 0) continue;
    std::optional<Shrink> shrink = CheapestShrink(t, shortfall, now_s);
    if (!shrink) continue;
    const double net = speed[t] / h.best_speed - shrink->loss;
    if (net <= best_net) continue;
    best_net = net;
    best_plan = std::move(shrink->cuts);
  }
  for (const Cut& c : best_plan) {
    Stop(c.id, core_.record(c.id).sizes[c.option].workers, now_s, out);
  }
}

std::optional<ElasticResizer::Shrink> ElasticResizer::CheapestShrink(int32_t t, int32_t shortfall,
                                                                     double now_s) const {
  // Candidates shrink one size step at a time, the cheapest step per freed device first.
  std::vector<Cut> plan;
  for (int32_t id : core_.running()) {
    const JobRecord& r = core_.record(id);
    if (r.type.value() != t || !Resizable(r, now_s)) continue;
    plan.push_back({id, CurrentOption(r)});
  }
  const auto step_of = [&](const Cut& c) -> std::optional<size_t> {
    const JobRecord& r = core_.record(c.id);
    for (size_t i = c.option; i-- > 0;) {
      if (r.sizes[i].allowed[t] && r.sizes[i].speed[t] > 0) return i;
    }
    return std::nullopt;
  };
  int32_t freed = 0;
  double loss = 0;
  std::vector<char> touched(plan.size(), 0);
  while (freed < shortfall) {
    int32_t pick = -1;
    size_t pick_to = 0;
    double pick_cost = 0;
    for (size_t c = 0; c < plan.size(); ++c) {
      const auto to = step_of(plan[c]);
      if (!to) continue;
      const JobRecord& r = core_.record(plan[c].id);
      const JobRecord::SizeOption& from = r.sizes[plan[c].option];
      const double drop = (from.speed[t] - r.sizes[*to].speed[t]) / r.best_speed;
      const double cost = drop / (from.workers - r.sizes[*to].workers);
      if (pick < 0 || cost < pick_cost) {
        pick = static_cast<int32_t>(c);
        pick_to = *to;
        pick_cost = cost;
      }
    }
    if (pick < 0) break;
    const JobRecord& r = core_.record(plan[pick].id);
    const JobRecord::SizeOption& from = r.sizes[plan[pick].option];
    freed += from.workers - r.sizes[pick_to].workers;
    loss += (from.speed[t] - r.sizes[pick_to].speed[t]) / r.best_speed;
    if (!touched[pick]) {
      // Its restart: the normalized speed it has now, lost for one resize, over an interval.
      touched[pick] = 1;
      const double original = r.sizes[CurrentOption(r)].speed[t] / r.best_speed;
      loss += original * core_.options().preemption_cost_s / gap_s_;
    }
    plan[pick].option = pick_to;
  }
  if (freed < shortfall) return std::nullopt;
  Shrink shrink{{}, loss};
  for (size_t c = 0; c < plan.size(); ++c) {
    if (touched[c]) shrink.cuts.push_back(plan[c]);
  }
  return shrink;
}

std::optional<ElasticResizer::Growth> ElasticResizer::BestGrowth(const JobRecord& r, int32_t room,
                                                                 double now_s) const {
  const int32_t t = r.type.value();
  const size_t c = CurrentOption(r);
  const double now_speed = r.sizes[c].speed[t];
  if (now_speed <= 0) return std::nullopt;
  const double remaining_s = core_.RemainingWork(r, now_s) / now_speed;
  for (size_t i = r.sizes.size(); i-- > c + 1;) {
    const JobRecord::SizeOption& o = r.sizes[i];
    const int32_t extra = o.workers - r.sizes[c].workers;
    if (!o.allowed[t] || extra > room || o.speed[t] < now_speed * (1 + kMinGrowthGain)) continue;
    const double saved_s = remaining_s * (1 - now_speed / o.speed[t]);
    if (saved_s < kRepayRestarts * core_.options().preemption_cost_s) continue;
    return Growth{(o.speed[t] - now_speed) / r.best_speed / extra, i, extra};
  }
  return std::nullopt;
}

void ElasticResizer::GrowIntoIdle(double now_s, Decision& out) {
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  std::vector<int32_t> free(types);
  bool any_free = false;
  for (int32_t t = 0; t < types; ++t) {
    free[t] = state.FreeOfType(DeviceTypeId(t));
    any_free = any_free || free[t] > 0;
  }
  if (!any_free) return;
  // Devices of a type some queued job may use are not idle: it may start there next.
  std::vector<char> wanted(types, 0);
  for (int32_t id : core_.queue()) {
    const JobRecord& r = core_.record(id);
    for (int32_t t = 0; t < types; ++t) wanted[t] = wanted[t] || r.allowed[t];
  }
  // Per type, the jobs that could grow there, most normalized speed per added device first;
  // each is checked again against what the ones before it left.
  std::vector<std::vector<std::pair<double, int32_t>>> candidates(types);
  for (int32_t id : core_.running()) {
    const JobRecord& r = core_.record(id);
    const int32_t t = r.type.value();
    if (free[t] <= 0 || wanted[t] || !Resizable(r, now_s)) continue;
    if (const auto g = BestGrowth(r, free[t], now_s)) candidates[t].push_back({-g->gain, id});
  }
  for (int32_t t = 0; t < types; ++t) {
    std::sort(candidates[t].begin(), candidates[t].end());
    for (const auto& [minus_gain, id] : candidates[t]) {
      if (free[t] <= 0) break;
      const JobRecord& r = core_.record(id);
      const auto g = BestGrowth(r, free[t], now_s);
      if (!g) continue;
      free[t] -= g->extra;
      Stop(id, r.sizes[g->option].workers, now_s, out);
    }
  }
}

}  // namespace hetsched::sched
