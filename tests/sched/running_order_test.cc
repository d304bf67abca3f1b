// RunningOrder's tables as jobs come and go, and the floor srpt-het-fair files jobs under.
#include "sched/running_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "sched/job_record.h"
#include "sched/policy.h"
#include "sched/size_belief.h"

namespace hetsched::sched {
namespace {

struct Filed {
  int32_t cls, type, devices;
  double floor;
  double done = 0;  // its key inputs' done_work: which filing of the job is visited
};

// Key inputs that tell filings apart by `done`.
RunningKeyInputs Inputs(double done) {
  RunningKeyInputs job;
  job.done_work = done;
  job.id = -7;  // Add files the job's own id
  return job;
}

// Random files, refiles and removals against a plain map: counts, held devices, and each
// class's jobs by floor, visited in full and stopped early, each with the key inputs of its
// last filing.
TEST(RunningOrder, KeepsClassesInFloorOrderAsJobsComeAndGo) {
  std::mt19937 rng(3);
  RunningOrder order(3);
  std::map<int32_t, Filed> truth;
  for (int step = 0; step < 20000; ++step) {
    const int32_t id = static_cast<int32_t>(rng() % 400);
    if (rng() % 3 == 0) {
      order.Remove(id);
      truth.erase(id);
    } else {
      // Few distinct floors: ties go by id.
      const Filed f{static_cast<int32_t>(rng() % 6) - 1, static_cast<int32_t>(rng() % 3),
                    1 + static_cast<int32_t>(rng() % 4), static_cast<double>(rng() % 50),
                    static_cast<double>(step)};
      order.Add(id, f.cls, f.type, f.devices, f.floor, -1, Inputs(f.done));
      truth[id] = f;
    }
    if (step % 500 == 0 && step > 0 && rng() % 4 == 0) {
      order.Clear();
      truth.clear();
    }
    if (step % 97 != 0) continue;
    for (int32_t t = 0; t < 3; ++t) {
      int32_t held = 0;
      for (const auto& [job, f] : truth) held += f.type == t ? f.devices : 0;
      ASSERT_EQ(order.held(t), held) << "step " << step;
    }
    for (int32_t cls = 0; cls < order.classes(); ++cls) {
      std::vector<std::tuple<double, int32_t, double>> expected;
      for (const auto& [job, f] : truth) {
        if (f.cls == cls) expected.emplace_back(f.floor, job, f.done);
      }
      std::sort(expected.begin(), expected.end());
      std::vector<std::tuple<double, int32_t, double>> visited;
      order.VisitByFloor(cls, [&](double floor, const RunningKeyInputs& job) {
        visited.emplace_back(floor, job.id, job.done_work);
        return true;
      });
      ASSERT_EQ(visited, expected) << "step " << step << " class " << cls;
      std::vector<std::tuple<double, int32_t, double>> first3;
      order.VisitByFloor(cls, [&](double floor, const RunningKeyInputs& job) {
        first3.emplace_back(floor, job.id, job.done_work);
        return first3.size() < 3;
      });
      const std::vector<std::tuple<double, int32_t, double>> all = visited;
      expected.resize(std::min<size_t>(expected.size(), 3));
      ASSERT_EQ(first3, expected);
      std::vector<std::tuple<double, int32_t, double>> unordered;
      order.VisitAll(cls, [&](double floor, const RunningKeyInputs& job) {
        unordered.emplace_back(floor, job.id, job.done_work);
      });
      std::sort(unordered.begin(), unordered.end());
      ASSERT_EQ(unordered, all) << "step " << step << " class " << cls;
      int32_t by_type = 0;
      for (int32_t t = 0; t < 3; ++t) by_type += order.count(cls, t);
      ASSERT_EQ(by_type, static_cast<int32_t>(all.size()));
    }
  }
}

// Run starts filed out of order, refiled and removed at random against a plain map: after each
// ForgetPastQuantum the in_quantum_ tables count exactly the live jobs started within the
// quantum (by class and type, their devices, by type all and those planned nowhere), and a
// start once past the quantum is not counted again, even when its job is removed later.
TEST(RunningOrder, CountsTheJobsInsideTheirQuantum) {
  std::mt19937 rng(5);
  const int32_t types = 2;
  RunningOrder order(types);
  std::map<int32_t, std::pair<Filed, double>> started;  // live jobs filed with a run start
  const double quantum = 100;
  double now = 0;
  int64_t counted = 0, unplanned = 0;
  for (int step = 0; step < 4000; ++step) {
    now += static_cast<double>(rng() % 3);
    const int32_t id = static_cast<int32_t>(rng() % 300);
    const uint32_t what = rng() % 10;
    if (what < 6) {
      // Mostly started now; some filed afresh with an older start (as a refile does).
      const double start = what < 4 ? now : std::max(0.0, now - static_cast<double>(rng() % 150));
      const Filed f{static_cast<int32_t>(rng() % 4) - 1, static_cast<int32_t>(rng() % types),
                    1 + static_cast<int32_t>(rng() % 4), 0};
      order.Add(id, f.cls, f.type, f.devices, f.floor, start, Inputs(0));
      started[id] = {f, start};
    } else if (what < 8) {
      order.Remove(id);
      started.erase(id);
    } else {
      order.Add(id, 0, 1, 1, 0, -1, Inputs(0));  // past its quantum when filed
      started.erase(id);
    }
    if (step % 7 != 0) continue;
    order.ForgetPastQuantum([&](double start) { return now - start < quantum; });
    std::vector<int32_t> count(static_cast<size_t>(order.classes()) * types, 0);
    std::vector<int32_t> devices(count.size(), 0), held(types, 0), nowhere(types, 0);
    for (const auto& [job, filed] : started) {
      const auto& [f, start] = filed;
      if (now - start >= quantum) continue;
      held[f.type] += f.devices;
      if (f.cls < 0) {
        nowhere[f.type] += f.devices;
        ++unplanned;
        continue;
      }
      ++count[static_cast<size_t>(f.cls) * types + f.type];
      devices[static_cast<size_t>(f.cls) * types + f.type] += f.devices;
      ++counted;
    }
    for (int32_t t = 0; t < types; ++t) {
      ASSERT_EQ(order.in_quantum_held(t), held[t]) << "step " << step << " type " << t;
      ASSERT_EQ(order.in_quantum_unplanned_held(t), nowhere[t]) << "step " << step;
      for (int32_t cls = 0; cls < order.classes(); ++cls) {
        const size_t at = static_cast<size_t>(cls) * types + t;
        ASSERT_EQ(order.in_quantum_count(cls, t), count[at]) << "step " << step << " class " << cls;
        ASSERT_EQ(order.in_quantum_devices(cls, t), devices[at]) << "step " << step;
      }
    }
    // Those past the quantum are forgotten for good.
    for (auto it = started.begin(); it != started.end();) {
      it = now - it->second.second < quantum ? std::next(it) : started.erase(it);
    }
    if (step % 500 == 0 && step > 0 && rng() % 4 == 0) {
      order.Clear();
      started.clear();
    }
  }
  // Jobs of classes and planned nowhere were counted.
  EXPECT_GT(counted, 1000);
  EXPECT_GT(unplanned, 100);
}

// A running job that arrived in [0, 1e5) s, has done [0, 5,000) of work and runs at a rate in
// [0, max_rate), of reference speed `ref_speed`.
JobRecord RandomRunning(std::mt19937& rng, double ref_speed, double max_rate) {
  std::uniform_real_distribution<double> unit(0, 1);
  JobRecord r;
  r.job = std::make_unique<model::Job>();
  r.phase = JobPhase::kRunning;
  r.ref_speed = r.best_speed = ref_speed;
  r.arrival_s = 1e5 * unit(rng);
  r.done_work = 5000 * unit(rng);
  r.rate = max_rate * unit(rng);
  return r;
}

// srpt-het-fair's floor is under its key at any time, with and without estimates, before and
// after the belief learned sizes (Gittins ranks from tables), and close to it for a job that has
// just started with a short estimate (not a floor far below every key).
TEST(RunningOrder, FairPolicyKeysStayAboveTheirFloor) {
  auto policy = MakePolicy("srpt-het-fair");
  ASSERT_TRUE(policy.ok());
  const Policy& p = **policy;
  ASSERT_TRUE(p.has_key_floor());
  SizeBelief belief;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3000; ++i) {
      JobRecord r = RandomRunning(rng, 1, 1);
      r.progress_since_s = r.arrival_s;
      if (i % 2 == 0) {
        r.estimated_work = 10 + 4000 * unit(rng);
        r.estimate_source = EstimateSource::kUser;
      }
      const double t = r.arrival_s + 1e5 * unit(rng);
      const double floor = p.KeyFloor(r) - p.KeyDrift() * t;
      const double key = p.Key(r, t, belief);
      ASSERT_GE(key, floor - 1e-6) << "job " << i << " round " << round;
      if (round == 0) {
        r.done_work = r.DoneAt(t);
        belief.Observe(r);  // its size, as if it ended at t
      }
    }
    belief.Refresh();
  }
  JobRecord fresh;
  fresh.job = std::make_unique<model::Job>();
  fresh.ref_speed = fresh.best_speed = 1;
  fresh.arrival_s = 100;
  fresh.estimated_work = 1;
  fresh.estimate_source = EstimateSource::kUser;
  EXPECT_NEAR(p.Key(fresh, 100, belief), p.KeyFloor(fresh) - p.KeyDrift() * 100, 5);
}

// A running job's key from the inputs the order files (RunningKeyInputs) is its record's, bit
// for bit: with and without estimates, of estimates of several sources, before and after the
// belief has tables, at times before and after its progress began.
TEST(RunningOrder, KeyInputsRankAsTheirRecords) {
  auto policy = MakePolicy("srpt-het-fair");
  ASSERT_TRUE(policy.ok());
  const Policy& p = **policy;
  ASSERT_TRUE(p.keys_by_rank());
  SizeBelief belief;
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> unit(0, 1);
  const EstimateSource sources[] = {EstimateSource::kNone, EstimateSource::kUser,
                                    EstimateSource::kTimeLimit};
  int64_t compared = 0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3000; ++i) {
      JobRecord r = RandomRunning(rng, 0.5 + 3 * unit(rng), 2);
      r.progress_since_s = r.arrival_s + 100 * unit(rng);
      r.run_start_s = r.arrival_s + 50 * unit(rng);
      r.seq = i;
      r.id = i;
      r.estimate_source = sources[i % 3];
      if (r.estimate_source != EstimateSource::kNone) r.estimated_work = 10 + 4000 * unit(rng);
      const RunningKeyInputs job = RunningKeyInputs::Of(r);
      for (double t : {r.arrival_s, r.progress_since_s + 1e4 * unit(rng)}) {
        const double rank = belief.Rank(r, t);
        ASSERT_EQ(belief.Rank(job, t), rank) << "job " << i << " round " << round;
        ASSERT_EQ(p.KeyFromRank(rank, job.arrival_s, t), p.Key(r, t, belief)) << "job " << i;
        ++compared;
      }
      ASSERT_EQ(job.run_start_s, r.run_start_s);
      ASSERT_EQ(job.seq, r.seq);
      ASSERT_EQ(job.id, r.id);
      if (round == 0) {
        r.done_work = r.DoneAt(r.progress_since_s + 1e4 * unit(rng));
        belief.Observe(r);
      }
    }
    ASSERT_EQ(belief.Refresh(), round == 0);  // tables for the second round
  }
  EXPECT_EQ(compared, 12000);
}

}  // namespace
}  // namespace hetsched::sched
