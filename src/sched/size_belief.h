// SizeBelief: what the scheduler believes about job sizes, learned online from the jobs that
// completed. A real scheduler never knows a job's true size; it knows at most an estimate (a
// user's estimate or time limit, a prediction), how long the job has run, and how earlier jobs
// turned out. This class turns those into a queue rank and an expected remaining time.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/job_record.h"
#include "util/status.h"

namespace hetsched::sched {

// Learned distributions and the ranks derived from them. Sizes are in seconds of running on
// the job's fastest allowed type (JobRecord::ref_speed), so jobs with different step rates
// compare. Three distributions are learned from completed jobs:
//  - sizes of jobs that came without an estimate;
//  - per estimate source, the ratio true size / estimate (how far estimates proved right);
//  - per (job type, gang size), the mean size (the `history` predictor).
// Ranks are Gittins indices (Gittins 1989; for scheduling, Aalto, Ayesta and Righter 2009;
// Tiresias, Gu et al. NSDI 2019, uses the same idea over attained service): for a job that has
// run `a` seconds, rank(a) = min over D of E[min(S - a, D) | S > a] / P(S - a <= D | S > a),
// the expected service spent per completion when the job is served for at most D more; smaller
// runs first. With an exact size it is the remaining time (SRPT); with no information and a
// heavy-tailed distribution it tends to least attained service.
// Not thread-safe, reads included: a table's ranks and mean residuals are computed at their
// first read after a refresh. Costs: Refresh O(samples) per changed table; the first Rank or
// ExpectedRemaining after it O(G x samples) for that table (G grid points), then O(log G).
class SizeBelief {
 public:
  // A completed job: learns its size (its done work), and its estimate's ratio.
  void Observe(const JobRecord& r);
  // Rebuilds the rank tables from the samples seen so far, when enough are new (at least 5 %
  // of the table, or the table is still small). True when any table changed: ranks of queued
  // jobs moved, and the caller must re-sort its queue.
  bool Refresh();
  // Gittins rank (seconds) of `r` at `now_s`: smaller is more urgent.
  double Rank(const JobRecord& r, double now_s) const {
    return RankOf(r.DoneSecondsAt(now_s), r.estimated_work, r.ref_speed, r.estimate_source);
  }
  // The same of the running job `job` was copied from, bit for bit.
  double Rank(const RunningKeyInputs& job, double now_s) const {
    return RankOf(job.DoneSecondsAt(now_s), job.estimated_work, job.ref_speed, job.estimate_source);
  }
  // True when `r` is not running and has neither an estimate nor work done: its rank is then
  // NewJobRank() at any time, bit for bit, whatever else it is (most queued jobs never ran).
  static bool RanksAsNew(const JobRecord& r) {
    return r.phase != JobPhase::kRunning && !(r.estimated_work > 0) && r.done_work == 0 &&
           !std::signbit(r.done_work);
  }
  // Rank of a job that RanksAsNew.
  double NewJobRank() const { return RankWithoutEstimate(0.0); }
  // Expected seconds left on the job's fastest type at `now_s`. With an estimate E and done
  // work d: E - d while d < E; a job that outran its estimate is believed to need as long
  // again as it has run (the estimate becomes 2d: documented in docs/simulator.md, Estimates).
  // Without an estimate: the mean residual size of completed jobs longer than d, or d when
  // none is known yet.
  double ExpectedRemaining(const JobRecord& r, double now_s) const;
  // The history predictor: mean size (seconds) of completed jobs with this job type and gang
  // size; nullopt before the first one completed.
  std::optional<double> HistoryMean(const std::string& job_type, int32_t gang) const;
  // The learned samples as JSON text, and back (a daemon keeps them across restarts). Restore
  // replaces what was learned; rank tables are rebuilt at the next Refresh. kInvalidArgument
  // for text Save did not write.
  std::string Save() const;
  util::Status Restore(std::string_view saved);
  // True once enough jobs without an estimate completed to rank by their sizes.
  bool sizes_known() const { return sizes_.ready(); }

  // Samples kept per distribution (the most recent ones: the workload may drift).
  static constexpr size_t kMaxSamples = 2000;
  // Below this many samples a distribution is not used (cold start: estimates are trusted as
  // exact, jobs without one are ranked by attained service).
  static constexpr size_t kMinSamples = 8;

 private:
  struct Table {
    std::vector<double> recent;  // ring buffer of samples
    size_t next = 0;             // ring position
    size_t new_since_build = 0;
    // The samples at the last build, ascending; the samples that came and that the ring
    // dropped since, from which the next build merges them (sorting all again costs as much as
    // the rest of a build); `resort` when those were not kept.
    std::vector<double> sorted, added, dropped;
    bool resort = false;
    // Built: points a (ascending) and the largest sample (beyond it the distribution says
    // nothing); the Gittins rank and the mean residual at the points, computed from `sorted`
    // at their first read (empty until then): most decisions after a build read neither, and
    // some policies read only the residuals.
    std::vector<double> grid;
    mutable std::vector<double> rank, residual;
    double max_sample = 0;
    bool ready() const { return !grid.empty(); }
    void Add(double sample);
    bool Rebuild();
    // Interpolated rank / residual at `a`; beyond the largest sample both are `a`.
    double RankAt(double a) const;
    double ResidualAt(double a) const;

   private:
    void SortSamples();
    void ComputeRanks() const;
    void ComputeResiduals() const;
  };
  const Table* RatioTable(EstimateSource source) const;
  // Rank of a job that has done `done_s` seconds of work, with its estimate fields.
  double RankOf(double done_s, double estimated_work, double ref_speed,
                EstimateSource source) const;
  // Rank of a job without an estimate that has done `done_s` seconds of work.
  double RankWithoutEstimate(double done_s) const;

  Table sizes_;
  Table ratios_[kEstimateSources];
  // (job type, gang size) looked up by a view of the type: a key built for each lookup would
  // copy the type name (a malloc per completed job for names past the short-string buffer).
  using HistoryKey = std::pair<std::string, int32_t>;
  using HistoryView = std::pair<std::string_view, int32_t>;
  struct HistoryLess {
    using is_transparent = void;
    static HistoryView View(const HistoryKey& k) { return {k.first, k.second}; }
    static HistoryView View(const HistoryView& k) { return k; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) < View(b);
    }
  };
  std::map<HistoryKey, std::pair<double, int64_t>, HistoryLess> history_;
};

}  // namespace hetsched::sched
