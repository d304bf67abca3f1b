#include "sched/allocation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace hetsched::sched {
namespace {

// Weight of the secondary term that, among allocations with the best primary value (a min or
// a bound), prefers more total normalized throughput, so capacity the primary objective leaves
// free is not left idle. Small enough to move the primary value by at most about this fraction.
constexpr double kSecondary = 1e-3;
// Penalty per unit of unmet SLO fraction (kMinCost): one job's whole value is at most 1, so
// an SLO is given up only where no allocation can meet it.
constexpr double kSloPenalty = 1e4;

double Best(const AllocJob& j) {
  double best = 0;
  for (double s : j.speed) best = std::max(best, s);
  return best;
}

// One LP over `jobs` (indices into problem.jobs) with `capacity`. `guarantee` (n x T, or empty)
// adds rows sum_t guarantee[j][t] X[j][t] >= z and the variable z with objective 1; `value`
// (n x T) is each X's objective coefficient. `slo` (kMinCost): soft rows
// sum_t speed/slo_rate X + s_j >= 1. count[j]: how many identical jobs job j stands for (its
// gang counts that often in the capacity rows). Returns x for these jobs (n x T) or the
// solver's failure.
util::Result<std::vector<double>> SolveLp(
    const AllocationProblem& problem, const std::vector<int32_t>& jobs,
    const std::vector<double>& capacity, const std::vector<double>& guarantee,
    const std::vector<double>& value, bool slo, const std::vector<double>& count, LpSolver& solver,
    const LpOptions& options, double* z_out, int32_t* solved) {
  const int32_t n = static_cast<int32_t>(jobs.size());
  const int32_t types = static_cast<int32_t>(capacity.size());
  LinearProgram lp(LinearProgram::Sense::kMaximize);
  for (int32_t j = 0; j < n; ++j) lp.AddRow(-kLpInfinity, 1);
  for (int32_t t = 0; t < types; ++t) lp.AddRow(-kLpInfinity, capacity[t]);
  const bool has_z = !guarantee.empty();
  // Extra row per job (guarantee or SLO); -1 where a job has none.
  std::vector<int32_t> extra(n, -1);
  for (int32_t j = 0; j < n; ++j) {
    const AllocJob& job = problem.jobs[jobs[j]];
    if (has_z) {
      bool any = false;
      // Only over types it can use here: a job no type can host would force z to 0.
      for (int32_t t = 0; t < types; ++t) {
        any = any || (guarantee[j * types + t] > 0 && problem.capacity[t] >= job.gang);
      }
      if (any) extra[j] = lp.AddRow(0, kLpInfinity);
    } else if (slo && job.slo_rate > 0) {
      extra[j] = lp.AddRow(1, kLpInfinity);
    }
  }
  lp.Reserve(n * types + n + 1, n * types * 3 + n * 2);
  std::vector<int32_t> col_of(static_cast<size_t>(n) * types, -1);
  int32_t rows[3];
  double coefs[3];
  for (int32_t j = 0; j < n; ++j) {
    const AllocJob& job = problem.jobs[jobs[j]];
    for (int32_t t = 0; t < types; ++t) {
      // Whether a gang fits is a question for the whole cluster: a POP part's capacity is a
      // fraction of it, and a share below 1 of a large gang is realizable there.
      if (!(job.speed[t] > 0) || problem.capacity[t] < job.gang) continue;
      int32_t k = 0;
      rows[k] = j;
      coefs[k++] = 1;
      rows[k] = n + t;
      coefs[k++] = job.gang * count[j];
      if (extra[j] >= 0) {
        const double c = has_z ? guarantee[j * types + t] : job.speed[t] / job.slo_rate;
        if (c != 0) {
          rows[k] = extra[j];
          coefs[k++] = c;
        }
      }
      col_of[j * types + t] = lp.AddVariable(0, 1, value[j * types + t], rows, coefs, k);
    }
  }
  int32_t z = -1;
  if (has_z) {
    std::vector<LinearProgram::Entry> entries;
    for (int32_t j = 0; j < n; ++j) {
      if (extra[j] >= 0) entries.push_back({extra[j], -1});
    }
    // Bounded so a problem whose every job lacks a guarantee row stays bounded.
    z = lp.AddVariable(0, entries.empty() ? 0 : kLpInfinity, 1, entries);
  }
  if (slo) {
    for (int32_t j = 0; j < n; ++j) {
      if (extra[j] >= 0) lp.AddVariable(0, 1, -kSloPenalty * count[j], {{extra[j], 1}});
    }
  }
  LpSolution sol = solver.Solve(lp, options);
  ++*solved;
  if (sol.status != LpStatus::kOptimal) {
    return util::Status::Internal(
        sol.message.empty() ? fmt::format("{}: {}", solver.name(), LpStatusName(sol.status))
                            : sol.message);
  }
  std::vector<double> x(static_cast<size_t>(n) * types, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    if (col_of[i] >= 0) x[i] = std::clamp(sol.values[col_of[i]], 0.0, 1.0);
  }
  // No guarantee rows: every bound holds.
  if (z_out) *z_out = z >= 0 && lp.col_upper()[z] > 0 ? sol.values[z] : kLpInfinity;
  return x;
}

// Scales a row of X down so the job's shares sum to at most 1 and every type's capacity holds
// exactly (a solver's tolerance may overshoot by ~1e-9; the realization counts devices).
void Repair(const AllocationProblem& problem, Allocation& a) {
  const int32_t types = a.types;
  const size_t n = problem.jobs.size();
  for (size_t j = 0; j < n; ++j) {
    double sum = 0;
    for (int32_t t = 0; t < types; ++t) sum += a.x[j * types + t];
    if (sum > 1) {
      for (int32_t t = 0; t < types; ++t) a.x[j * types + t] /= sum;
    }
  }
  for (int32_t t = 0; t < types; ++t) {
    double used = 0;
    for (size_t j = 0; j < n; ++j) {
      used += a.x[j * types + t] * problem.jobs[j].gang * problem.jobs[j].count;
    }
    if (used > problem.capacity[t] && used > 0) {
      const double f = problem.capacity[t] / used;
      for (size_t j = 0; j < n; ++j) a.x[j * types + t] *= f;
    }
  }
}

double Throughput(const AllocJob& job, const Allocation& a, size_t j) {
  double thr = 0;
  for (int32_t t = 0; t < a.types; ++t) thr += job.speed[t] * a.x[j * a.types + t];
  return thr;
}

double CostValue(const AllocationProblem& p, const AllocJob& job, int32_t t) {
  if (!(job.speed[t] > 0)) return 0;
  double best = 0;
  for (size_t u = 0; u < job.speed.size(); ++u) {
    if (job.speed[u] > 0) best = std::max(best, job.speed[u] / p.price_per_hour[u]);
  }
  return job.speed[t] / p.price_per_hour[t] / best;
}

// The objective's value for the whole problem (see Allocation::objective).
double Evaluate(const AllocationProblem& p, Objective objective, const Allocation& a) {
  const size_t n = p.jobs.size();
  const std::vector<double> iso = EqualShareThroughput(p);
  double out = 0;
  switch (objective) {
    case Objective::kMaxMinFairness: {
      out = std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < n; ++j) {
        const double norm = iso[j] > 0 ? Throughput(p.jobs[j], a, j) / iso[j] : 0;
        out = std::min(out, norm / std::max(p.jobs[j].weight, 1e-12));
      }
      if (n == 0) out = 0;
      break;
    }
    case Objective::kMaxThroughput:
      for (size_t j = 0; j < n; ++j) {
        out += p.jobs[j].count * p.jobs[j].weight * Throughput(p.jobs[j], a, j) / Best(p.jobs[j]);
      }
      break;
    case Objective::kMinMakespan:
      for (size_t j = 0; j < n; ++j) {
        const double thr = Throughput(p.jobs[j], a, j);
        out = std::max(
            out, thr > 0 ? p.jobs[j].remaining / thr : std::numeric_limits<double>::infinity());
      }
      break;
    case Objective::kMinCost:
      for (size_t j = 0; j < n; ++j) {
        for (int32_t t = 0; t < a.types; ++t) {
          out += p.jobs[j].count * a.At(j, t) * CostValue(p, p.jobs[j], t);
        }
      }
      break;
    case Objective::kFinishTimeFairness:
      for (size_t j = 0; j < n; ++j) {
        const AllocJob& job = p.jobs[j];
        const double thr = Throughput(job, a, j);
        const double isolated = job.work / iso[j];
        out = std::max(out, thr > 0 ? (job.elapsed_s + job.remaining / thr) / isolated
                                    : std::numeric_limits<double>::infinity());
      }
      break;
  }
  return out;
}

// What makes two jobs interchangeable in the LP of `objective`: speeds, gang, weight and the
// fields the objective reads.
void ClassKey(const AllocJob& job, Objective objective, std::vector<double>& key) {
  key.assign(job.speed.begin(), job.speed.end());
  key.push_back(job.gang);
  key.push_back(job.weight);
  if (objective == Objective::kMinMakespan || objective == Objective::kFinishTimeFairness) {
    key.push_back(job.remaining);
    key.push_back(job.work);
    key.push_back(job.elapsed_s);
  }
  if (objective == Objective::kMinCost) key.push_back(job.slo_rate);
}

// The jobs of a part that the objective cannot tell apart (ClassKey) form one class with one
// set of shares: the LP is symmetric in them and convex, so averaging any optimum over their
// permutations gives an optimum where they are equal. Gavel's mix has at most 26 job types x
// 4 scales, so thousands of jobs collapse to about a hundred classes.
struct JobClasses {
  std::vector<int32_t> jobs;      // one representative per class
  std::vector<double> count;      // members per class
  std::vector<int32_t> class_id;  // per member
};

JobClasses GroupIdentical(const AllocationProblem& p, Objective objective,
                          const std::vector<int32_t>& members) {
  JobClasses classes;
  std::map<std::vector<double>, int32_t> class_of;
  std::vector<double> key;
  for (int32_t m : members) {
    ClassKey(p.jobs[m], objective, key);
    const auto [it, fresh] = class_of.emplace(key, static_cast<int32_t>(classes.jobs.size()));
    if (fresh) {
      classes.jobs.push_back(m);
      classes.count.push_back(0);
    }
    classes.count[it->second] += p.jobs[m].count;
    classes.class_id.push_back(it->second);
  }
  return classes;
}

// What SolveLp is given for one part besides its jobs and capacity (class x type each).
struct LpTerms {
  std::vector<double> guarantee;
  std::vector<double> value;
  bool slo = false;
};

// The secondary term in `value`: normalized throughput, averaged over the part's `total` jobs
// so that its sum stays below `scale`. Objective terms sum over jobs, so a class's terms carry
// its count.
void SetSecondary(const AllocationProblem& p, const JobClasses& classes, int32_t types,
                  double total, double scale, std::vector<double>& value) {
  for (size_t i = 0; i < classes.jobs.size(); ++i) {
    const AllocJob& job = p.jobs[classes.jobs[i]];
    const double best = Best(job);
    for (int32_t t = 0; t < types; ++t) {
      if (best > 0) value[i * types + t] = scale * classes.count[i] * job.speed[t] / best / total;
    }
  }
}

// The LP terms of `objective` for one part of `total` jobs. Under kFinishTimeFairness the
// guarantee depends on the finish-time bound tried: SolveFinishTimeFair sets it.
LpTerms TermsOf(const AllocationProblem& p, Objective objective, const JobClasses& classes,
                int32_t types, double total, const std::vector<double>& iso) {
  const size_t n = classes.jobs.size();
  LpTerms terms;
  terms.value.assign(n * types, 0);
  switch (objective) {
    case Objective::kMaxMinFairness:
      terms.guarantee.assign(n * types, 0);
      for (size_t i = 0; i < n; ++i) {
        const int32_t j = classes.jobs[i];
        const AllocJob& job = p.jobs[j];
        const double norm = (iso[j] > 0 ? iso[j] : Best(job)) * std::max(job.weight, 1e-12);
        for (int32_t t = 0; t < types; ++t) {
          if (norm > 0) terms.guarantee[i * types + t] = job.speed[t] / norm;
        }
      }
      SetSecondary(p, classes, types, total, kSecondary, terms.value);
      break;
    case Objective::kMaxThroughput:
      SetSecondary(p, classes, types, total, total, terms.value);  // undo the averaging
      for (size_t i = 0; i < n; ++i) {
        for (int32_t t = 0; t < types; ++t)
          terms.value[i * types + t] *= p.jobs[classes.jobs[i]].weight;
      }
      break;
    case Objective::kMinMakespan: {
      // throughput_j >= remaining_j * z, scaled by the longest best-case time so z ~ 1.
      double longest = 0;
      for (int32_t j : classes.jobs) {
        const double best = Best(p.jobs[j]);
        if (best > 0) longest = std::max(longest, p.jobs[j].remaining / best);
      }
      terms.guarantee.assign(n * types, 0);
      for (size_t i = 0; i < n; ++i) {
        const AllocJob& job = p.jobs[classes.jobs[i]];
        if (!(job.remaining > 0)) continue;
        for (int32_t t = 0; t < types; ++t) {
          terms.guarantee[i * types + t] = job.speed[t] * longest / job.remaining;
        }
      }
      SetSecondary(p, classes, types, total, kSecondary, terms.value);
      break;
    }
    case Objective::kMinCost:
      for (size_t i = 0; i < n; ++i) {
        for (int32_t t = 0; t < types; ++t) {
          terms.value[i * types + t] = classes.count[i] * CostValue(p, p.jobs[classes.jobs[i]], t);
        }
      }
      terms.slo = true;
      break;
    case Objective::kFinishTimeFairness:
      SetSecondary(p, classes, types, total, kSecondary, terms.value);
      break;
  }
  return terms;
}

// ftf-het: the smallest finish-time bound r (within options.ftf_tolerance) that every job of
// the part can meet, rho_j <= r  <=>  throughput_j >= remaining_j / (r * isolated_j -
// elapsed_j): from the lower bound of each job alone on its best type, doubling until one is
// feasible, then bisecting. Returns the shares at the bound found (class x type).
util::Result<std::vector<double>> SolveFinishTimeFair(
    const AllocationProblem& p, const JobClasses& classes, const std::vector<double>& capacity,
    const std::vector<double>& iso, LpTerms& terms, LpSolver& solver,
    const AllocationOptions& options, Allocation& a) {
  const int32_t types = a.types;
  const size_t n = classes.jobs.size();
  std::vector<double> isolated(n);
  double lo = 0;
  for (size_t i = 0; i < n; ++i) {
    const AllocJob& job = p.jobs[classes.jobs[i]];
    const double best = Best(job);
    const double iso_thr = iso[classes.jobs[i]] > 0 ? iso[classes.jobs[i]] : best;
    if (!(best > 0)) continue;
    isolated[i] = std::max(job.work, job.remaining) / iso_thr;
    lo = std::max(lo, (job.elapsed_s + job.remaining / best) / isolated[i]);
  }
  lo = std::max(lo, 1e-9);
  const auto feasible_at = [&](double r, std::vector<double>* out) -> util::Result<bool> {
    terms.guarantee.assign(n * types, 0);
    for (size_t i = 0; i < n; ++i) {
      const AllocJob& job = p.jobs[classes.jobs[i]];
      if (!(job.remaining > 0) || !(Best(job) > 0)) continue;
      const double need = job.remaining / (r * isolated[i] - job.elapsed_s);
      for (int32_t t = 0; t < types; ++t) terms.guarantee[i * types + t] = job.speed[t] / need;
    }
    double z = 0;
    ASSIGN_OR_RETURN(*out, SolveLp(p, classes.jobs, capacity, terms.guarantee, terms.value, false,
                                   classes.count, solver, options.lp, &z, &a.lps_solved));
    return z >= 1 - 1e-7;
  };
  std::vector<double> trial;
  ASSIGN_OR_RETURN(bool ok, feasible_at(lo, &trial));
  if (ok) return trial;
  double hi = lo;
  for (int i = 0; i < 60 && !ok; ++i) {
    lo = hi;
    hi *= 2;
    ASSIGN_OR_RETURN(ok, feasible_at(hi, &trial));
  }
  if (!ok) return util::Status::Internal("ftf-het: no finish-time bound is feasible");
  std::vector<double> x = std::move(trial);
  while (hi / lo - 1 > options.ftf_tolerance) {
    const double mid = std::sqrt(lo * hi);
    ASSIGN_OR_RETURN(bool mid_ok, feasible_at(mid, &trial));
    if (mid_ok) {
      hi = mid;
      x = std::move(trial);
    } else {
      lo = mid;
    }
  }
  return x;
}

// Solves one (sub-)problem over `jobs` with `capacity`; writes their rows of `a.x`.
util::Status SolvePart(const AllocationProblem& p, Objective objective,
                       const std::vector<int32_t>& members, const std::vector<double>& capacity,
                       const std::vector<double>& iso, LpSolver& solver,
                       const AllocationOptions& options, Allocation& a) {
  const int32_t types = a.types;
  if (members.empty()) return util::Status::Ok();
  const JobClasses classes = GroupIdentical(p, objective, members);
  double total = 0;  // jobs, counting each row's identical jobs
  for (int32_t m : members) total += p.jobs[m].count;
  LpTerms terms = TermsOf(p, objective, classes, types, total, iso);
  std::vector<double> x;
  if (objective == Objective::kFinishTimeFairness) {
    ASSIGN_OR_RETURN(x, SolveFinishTimeFair(p, classes, capacity, iso, terms, solver, options, a));
  } else {
    ASSIGN_OR_RETURN(x, SolveLp(p, classes.jobs, capacity, terms.guarantee, terms.value, terms.slo,
                                classes.count, solver, options.lp, nullptr, &a.lps_solved));
  }
  for (size_t k = 0; k < members.size(); ++k) {
    const size_t i = classes.class_id[k];
    for (int32_t t = 0; t < types; ++t) a.x[members[k] * types + t] = x[i * types + t];
  }
  return util::Status::Ok();
}

}  // namespace

std::string_view ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kMaxMinFairness:
      return "maxmin-het";
    case Objective::kMaxThroughput:
      return "max-throughput";
    case Objective::kMinMakespan:
      return "min-makespan";
    case Objective::kMinCost:
      return "min-cost";
    case Objective::kFinishTimeFairness:
      return "ftf-het";
  }
  return "?";
}

std::vector<double> EqualShareThroughput(const AllocationProblem& p) {
  double devices = 0, gangs = 0;
  for (double c : p.capacity) devices += c;
  for (const AllocJob& j : p.jobs) gangs += j.gang * j.count;
  const double share = gangs > 0 ? std::min(1.0, devices / gangs) : 0;
  std::vector<double> out(p.jobs.size(), 0);
  for (size_t j = 0; j < p.jobs.size(); ++j) {
    const AllocJob& job = p.jobs[j];
    double reach = 0, thr = 0;
    for (size_t t = 0; t < p.capacity.size(); ++t) {
      if (!(job.speed[t] > 0)) continue;
      reach += p.capacity[t];
      thr += job.speed[t] * p.capacity[t];
    }
    out[j] = reach > 0 ? share * thr / reach : 0;
  }
  return out;
}

double NormalizedThroughput(const AllocationProblem& p, const Allocation& a, size_t job) {
  const double iso = EqualShareThroughput(p)[job];
  const double thr = Throughput(p.jobs[job], a, job);
  return iso > 0 ? thr / iso : 0;
}

util::Result<Allocation> ComputeAllocation(const AllocationProblem& problem, Objective objective,
                                           LpSolver& solver, const AllocationOptions& options) {
  const int32_t types = static_cast<int32_t>(problem.capacity.size());
  for (size_t j = 0; j < problem.jobs.size(); ++j) {
    if (problem.jobs[j].speed.size() != problem.capacity.size()) {
      return util::Status::InvalidArgument(
          fmt::format("job '{}': {} speeds for {} device types", problem.jobs[j].name,
                      problem.jobs[j].speed.size(), problem.capacity.size()));
    }
  }
  if (objective == Objective::kMinCost) {
    if (problem.price_per_hour.size() != problem.capacity.size()) {
      return util::Status::InvalidArgument("min-cost: one price per device type is needed");
    }
    for (int32_t t = 0; t < types; ++t) {
      if (!(problem.price_per_hour[t] > 0) && problem.capacity[t] > 0) {
        return util::Status::InvalidArgument(
            fmt::format("min-cost: device type #{} has no price_per_hour (needed: > 0)", t));
      }
    }
  }
  Allocation a;
  a.types = types;
  a.x.assign(problem.jobs.size() * types, 0);
  const std::vector<double> iso = EqualShareThroughput(problem);
  const size_t n = problem.jobs.size();
  // The LP's size is the number of job classes (identical jobs are one), so that decides the
  // split.
  size_t classes = n;
  if (options.max_jobs_per_lp > 0 && n > static_cast<size_t>(options.max_jobs_per_lp)) {
    std::set<std::vector<double>> distinct;
    std::vector<double> key;
    for (const AllocJob& job : problem.jobs) {
      ClassKey(job, objective, key);
      distinct.insert(key);
    }
    classes = distinct.size();
  }
  const size_t parts =
      options.max_jobs_per_lp > 0 && classes > static_cast<size_t>(options.max_jobs_per_lp)
          ? (classes + options.max_jobs_per_lp - 1) / options.max_jobs_per_lp
          : 1;
  // POP: job j goes to part j mod k (jobs arrive in no particular order of their needs, so
  // this mixes them like POP's random split, deterministically); each part gets 1/k of every type.
  std::vector<double> capacity = problem.capacity;
  for (double& c : capacity) c /= static_cast<double>(parts);
  for (size_t part = 0; part < parts; ++part) {
    std::vector<int32_t> jobs;
    for (size_t j = part; j < n; j += parts) jobs.push_back(static_cast<int32_t>(j));
    RETURN_IF_ERROR(SolvePart(problem, objective, jobs, capacity, iso, solver, options, a));
  }
  Repair(problem, a);
  a.objective = Evaluate(problem, objective, a);
  if (objective == Objective::kMinCost) {
    for (size_t j = 0; j < n; ++j) {
      const AllocJob& job = problem.jobs[j];
      if (job.slo_rate > 0 && Throughput(job, a, j) < job.slo_rate * (1 - 1e-6)) {
        a.slo_missed.push_back(static_cast<int32_t>(j));
      }
    }
  }
  return a;
}

}  // namespace hetsched::sched
