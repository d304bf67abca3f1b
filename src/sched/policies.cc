#include <fmt/format.h>

#include <array>

#include "sched/allocation_policy.h"
#include "sched/policy.h"

namespace hetsched::sched {
namespace {

// Arrival order. `reassign` (fifo-het, Gavel's fifo_perf): every full decision rebuilds the
// assignment in arrival order, each job taking the fastest type with room, so running jobs move
// up to faster devices as they free; a job never displaces an earlier one, and nobody starts
// ahead of an earlier job that does not fit.
class Fifo final : public Policy {
 public:
  Fifo(bool aware, Blocking blocking, std::string_view name, bool reassign = false)
      : aware_(aware), blocking_(blocking), name_(name), reassign_(reassign) {}
  std::string_view name() const override { return name_; }
  bool preemptive() const override { return reassign_; }
  bool in_order_only() const override { return reassign_; }
  TypeChoice type_choice() const override {
    return aware_ ? TypeChoice::kFastest : TypeChoice::kAgnostic;
  }
  Blocking blocking() const override { return blocking_; }
  double Key(const JobRecord& job, double, const SizeBelief&) const override {
    return job.job->arrival_s;
  }
  bool queued_keys_fixed() const override { return true; }

 private:
  bool aware_;
  Blocking blocking_;
  std::string_view name_;
  bool reassign_;
};

// Larger Job::priority first, preempting lower-priority preemptible jobs.
class Priority final : public Policy {
 public:
  std::string_view name() const override { return "priority"; }
  bool preemptive() const override { return true; }
  TypeChoice type_choice() const override { return TypeChoice::kFastest; }
  double Key(const JobRecord& job, double, const SizeBelief&) const override {
    return -job.job->priority;
  }
  bool queued_keys_fixed() const override { return true; }
};

// Least attained service; `aware` normalizes service by the job's speed on the type it got.
class Las final : public Policy {
 public:
  explicit Las(bool aware) : aware_(aware) {}
  std::string_view name() const override { return aware_ ? "las-het" : "las"; }
  bool preemptive() const override { return true; }
  bool time_slices() const override { return true; }
  TypeChoice type_choice() const override {
    return aware_ ? TypeChoice::kMaxThroughput : TypeChoice::kAgnostic;
  }
  double Key(const JobRecord& job, double now_s, const SizeBelief&) const override {
    const double w = job.job->priority_weight > 0 ? job.job->priority_weight : 1;
    return (aware_ ? job.AttainedNormAt(now_s) : job.AttainedAt(now_s)) / w;
  }
  // A job attains service only while it runs.
  bool queued_keys_fixed() const override { return true; }

 private:
  bool aware_;
};

// Shortest expected remaining time on the job's best type, as the scheduler believes it: the
// Gittins rank of SizeBelief (the remaining time itself when sizes are known exactly, least
// attained service when nothing is known). `fair` ages jobs (the key drops by `aging` seconds
// per second since arrival) and takes types from the max-throughput plan
// (sched/throughput_plan.h): the order says who runs, the plan on which type.
class Srpt final : public Policy {
 public:
  Srpt(bool fair, double aging) : fair_(fair), aging_(aging) {}
  std::string_view name() const override { return fair_ ? "srpt-het-fair" : "srpt-het"; }
  bool key_uses_belief() const override { return true; }
  bool preemptive() const override { return true; }
  bool time_slices() const override { return true; }
  TypeChoice type_choice() const override {
    return fair_ ? TypeChoice::kPlanned : TypeChoice::kFastest;
  }
  double Key(const JobRecord& job, double now_s, const SizeBelief& belief) const override {
    return KeyFromRank(belief.Rank(job, now_s), job.arrival_s, now_s);
  }
  // With negative aging a later arrival would key lower at one rank.
  bool keys_by_rank() const override { return !fair_ || aging_ >= 0; }
  double KeyFromRank(double remaining, double arrival_s, double now_s) const override {
    if (!fair_) return remaining;
    return remaining - aging_ * (now_s - arrival_s);
  }
  // Ranks are never negative: Key + aging * t = rank + aging * arrival >= aging * arrival.
  double KeyFloor(const JobRecord& job) const override {
    return fair_ ? aging_ * job.arrival_s : 0;
  }
  bool has_key_floor() const override { return true; }
  double KeyDrift() const override { return fair_ ? aging_ : 0; }

 private:
  bool fair_;
  double aging_;
};

struct Known {
  std::string_view name;
  std::string_view help;
};
constexpr std::array<Known, 15> kKnown = {{
    {"default", "the recommended policy: srpt-het-fair"},
    {"fifo", "arrival order, any free device type, head-of-line blocking (agnostic)"},
    {"fifo-het", "arrival order, each job's fastest type with room, re-decided (Gavel fifo_perf)"},
    {"priority", "larger job priority first; preempts lower-priority preemptible jobs"},
    {"easy-backfill", "arrival order with EASY backfilling by expected run times (estimates)"},
    {"las", "least attained service (device-seconds), type-agnostic, discrete (Tiresias LAS)"},
    {"las-het", "least attained service normalized by speed; types where they gain most"},
    {"srpt-het", "smallest expected remaining time (Gittins rank over learned sizes)"},
    {"srpt-het-fair", "srpt-het with aging of waiting jobs and types by max-throughput plan"},
    {"maxmin", "LP: equal time shares, types agnostic (Gavel max_min_fairness)"},
    {"maxmin-het", "LP: max the min normalized throughput (Gavel's heterogeneity-aware LAS)"},
    {"max-throughput", "LP: max the summed throughput, each job's normalized by its best"},
    {"min-makespan", "LP: min the time the last active job finishes"},
    {"min-cost", "LP: most steps per dollar, meeting job SLOs (deadline or slo_factor)"},
    {"ftf-het", "LP: finish-time fairness (Themis): min the max shared/isolated time"},
}};

}  // namespace

std::string PolicyNames() {
  std::string out;
  for (const auto& k : kKnown) {
    if (!out.empty()) out += ", ";
    out += k.name;
  }
  return out;
}

std::string PolicyHelp() {
  std::string out;
  for (const auto& k : kKnown) out += fmt::format("  {:<14} {}\n", k.name, k.help);
  return out;
}

util::Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name,
                                                 const PolicyTuning& tuning) {
  if (name == "default") name = kDefaultPolicy;
  if (name == "fifo") return std::unique_ptr<Policy>(new Fifo(false, Blocking::kStrict, "fifo"));
  if (name == "fifo-het") {
    return std::unique_ptr<Policy>(new Fifo(true, Blocking::kStrict, "fifo-het", true));
  }
  if (name == "easy-backfill") {
    return std::unique_ptr<Policy>(new Fifo(true, Blocking::kBackfill, "easy-backfill"));
  }
  if (name == "priority") return std::unique_ptr<Policy>(new Priority());
  if (name == "las") return std::unique_ptr<Policy>(new Las(false));
  if (name == "las-het") return std::unique_ptr<Policy>(new Las(true));
  if (name == "srpt-het") return std::unique_ptr<Policy>(new Srpt(false, tuning.aging));
  if (name == "srpt-het-fair") return std::unique_ptr<Policy>(new Srpt(true, tuning.aging));
  if (auto lp = MakeAllocationPolicy(name)) return lp;
  return util::Status::InvalidArgument(
      fmt::format("unknown policy '{}' (known: {})", name, PolicyNames()));
}

}  // namespace hetsched::sched
