// Elastic training: a job with `elastic: {min, max}` runs at any of a few gang sizes in that
// range, and the scheduler picks which (SchedulerOptions::elastic). Pollux (Qiao et al., OSDI
// 2021) and Sia (Jayaram Subramanya et al., SOSP 2023) are the anchors: goodput per device
// type, jobs grown into idle devices and shrunk when others wait. Here:
//   - sizes: min, max, the declared gang size and the powers of two between; the job's speed
//     at each from its profile where the profile measured that size (only there), else its
//     speed at its gang size scaled by size / gang (a fixed global batch split evenly; the
//     driver adds the gradient all-reduce of the gang it places);
//   - a queued job starts at the fastest size within its cap that fits the free devices left
//     by the jobs ahead of it in policy order, a larger size only when it is 10 % faster
//     (SizeQueued, before every decision);
//   - at most once per preempt interval (Resize, after the strategy): running jobs shrink so
//     that the first job that waits can start, when what they lose in normalized speed (and
//     the restart) is less than what the waiting job gains; and running jobs grow into devices
//     of a type no queued job may use, when the larger size is at least 10 % faster and the
//     time it saves repays several restarts.
// A resize stops the job like a preemption (its checkpoint is written, and read back when it
// restarts at the new size): the driver charges both. Internal to sched/.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/device_type.h"
#include "model/job.h"
#include "model/profile.h"
#include "sched/decision.h"
#include "sched/strategy.h"

namespace hetsched::sched {

class SchedulerCore;

// Gang sizes an elastic job may take, ascending: min, max, gang_size and the powers of two
// between min and max. Just {gang_size} for a rigid job.
std::vector<int32_t> CandidateSizes(const model::Job& job);

// Steps/s of the whole gang of `job` at `workers` workers of `type`: when its speed at its
// own gang size comes from `profile`, the profile's entry at `workers` (nullopt where there is
// none); otherwise that speed scaled by workers / gang_size. nullopt where the job makes no
// progress on `type`.
std::optional<double> SpeedAtSize(const model::Job& job, int32_t workers,
                                  const model::DeviceType& type,
                                  const model::ThroughputProfile* profile);

// Gives `r` its size option `option` (an index into r.sizes): its job copy's gang size, and
// the speeds and allowed types at that size.
void ApplySize(JobRecord& r, size_t option);

class ElasticResizer {
 public:
  explicit ElasticResizer(SchedulerCore& core);

  // Live elastic jobs (r.sizes non-empty) entering and leaving the scheduler.
  void OnAdmitted() { ++live_; }
  void OnLeft() { --live_; }
  // Sizes every queued elastic job the walk reaches, in policy order: the fastest (size, type)
  // within its cap that fits the free devices the jobs ahead of it leave (rigid jobs take
  // their fastest type with room). The walk ends when nothing is free.
  void SizeQueued();
  // Once per preempt interval: shrinks running jobs for the first waiting job and grows them
  // into devices nobody waits for (see the file comment). Appends the jobs it stops to
  // `out.preempted`.
  void Resize(double now_s, Decision& out);
  // Elastic jobs are live and devices are free: a decision could grow one.
  bool MayGrow() const;

 private:
  void ShrinkForHead(double now_s, Decision& out);
  // A running job shrinking to r.sizes[option].
  struct Cut {
    int32_t id;
    size_t option;
  };
  // Running jobs of type `t` shrunk so that `shortfall` more of its devices come free, and what
  // that costs in normalized speed, their restarts included.
  struct Shrink {
    std::vector<Cut> cuts;
    double loss;
  };
  // The cheapest way to free `shortfall` devices of type `t` by shrinking running jobs a step at
  // a time (the cheapest step per freed device first); nullopt when they cannot free that many.
  std::optional<Shrink> CheapestShrink(int32_t t, int32_t shortfall, double now_s) const;
  void GrowIntoIdle(double now_s, Decision& out);
  // Running, holding its devices alone, preemptible, elastic, not resized within the gap.
  bool Resizable(const JobRecord& r, double now_s) const;
  // The growth of running `r` on its type into at most `room` more devices: its largest size
  // that fits and pays (10 % faster, the saved time worth kRepayRestarts restarts), with the
  // normalized speed it gains per added device. nullopt: none.
  struct Growth {
    double gain;
    size_t option;
    int32_t extra;
  };
  std::optional<Growth> BestGrowth(const JobRecord& r, int32_t room, double now_s) const;
  // Index of r's current size in r.sizes.
  static size_t CurrentOption(const JobRecord& r);
  // Records the new cap and stops the job; it restarts at that size (SizeQueued).
  void Stop(int32_t id, int32_t workers, double now_s, Decision& out);

  SchedulerCore& core_;
  ReallocationClock clock_;
  double gap_s_;  // least time between two resizes of one job
  int32_t live_ = 0;
};

}  // namespace hetsched::sched
