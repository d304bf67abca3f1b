#include "sched/lp_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <coin/ClpSimplex.hpp>

namespace hetsched::sched {

int32_t LinearProgram::AddRow(double lower, double upper) {
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return rows() - 1;
}

void LinearProgram::Reserve(int32_t variables, int32_t entries) {
  start_.reserve(variables + 1);
  col_lower_.reserve(variables);
  col_upper_.reserve(variables);
  objective_.reserve(variables);
  index_.reserve(entries);
  value_.reserve(entries);
}

int32_t LinearProgram::AddVariable(double lower, double upper, double objective,
                                   const int32_t* rows, const double* coefs, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    // CLP's packed matrix must hold no explicit zeros (its pricing asserts on them).
    if (coefs[i] == 0) continue;
    index_.push_back(rows[i]);
    value_.push_back(coefs[i]);
  }
  start_.push_back(static_cast<int64_t>(index_.size()));
  col_lower_.push_back(lower);
  col_upper_.push_back(upper);
  objective_.push_back(objective);
  return variables() - 1;
}

int32_t LinearProgram::AddVariable(double lower, double upper, double objective,
                                   const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (e.coef == 0) continue;  // as above
    index_.push_back(e.row);
    value_.push_back(e.coef);
  }
  start_.push_back(static_cast<int64_t>(index_.size()));
  col_lower_.push_back(lower);
  col_upper_.push_back(upper);
  objective_.push_back(objective);
  return variables() - 1;
}

double LinearProgram::ObjectiveOf(const std::vector<double>& x) const {
  double sum = 0;
  for (int32_t j = 0; j < variables(); ++j) sum += objective_[j] * x[j];
  return sum;
}

double LinearProgram::MaxViolation(const std::vector<double>& x) const {
  double worst = 0;
  std::vector<double> activity(rows(), 0);
  for (int32_t j = 0; j < variables(); ++j) {
    worst = std::max({worst, col_lower_[j] - x[j], x[j] - col_upper_[j]});
    for (int64_t k = start_[j]; k < start_[j + 1]; ++k) activity[index_[k]] += value_[k] * x[j];
  }
  for (int32_t i = 0; i < rows(); ++i) {
    worst = std::max({worst, row_lower_[i] - activity[i], activity[i] - row_upper_[i]});
  }
  return worst;
}

std::string_view LpStatusName(LpStatus status) {
  switch (status) {
    case LpStatus::kOptimal:
      return "optimal";
    case LpStatus::kInfeasible:
      return "infeasible";
    case LpStatus::kUnbounded:
      return "unbounded";
    case LpStatus::kLimit:
      return "time limit";
    case LpStatus::kError:
      return "solver error";
  }
  return "solver error";
}

namespace {

class ClpLpSolver final : public LpSolver {
 public:
  std::string_view name() const override { return "clp"; }

  LpSolution Solve(const LinearProgram& lp, const LpOptions& options) override {
    LpSolution out;
    if (lp.variables() == 0) {
      out.status = LpStatus::kOptimal;
      return out;
    }
    ClpSimplex model;
    model.setLogLevel(0);
    // CLP takes CoinBigIndex (int in Debian's build) column starts.
    std::vector<CoinBigIndex> start(lp.start().begin(), lp.start().end());
    model.loadProblem(lp.variables(), lp.rows(), start.data(), lp.index().data(), lp.value().data(),
                      lp.col_lower().data(), lp.col_upper().data(), lp.objective().data(),
                      lp.row_lower().data(), lp.row_upper().data());
    // No row copy: Debian's CLP 1.17.6 aborts on an assertion (`elValue`, in
    // gutsOfTransposeTimesByRowGE3) pricing some of our LPs through its row copy; the
    // column-wise products give the same answers.
    model.setSpecialOptions(model.specialOptions() | 256);
    model.setOptimizationDirection(lp.sense() == LinearProgram::Sense::kMaximize ? -1 : 1);
    if (options.max_seconds > 0) model.setMaximumSeconds(options.max_seconds);
    switch (options.method) {
      case LpOptions::Method::kPrimal:
        model.primal();
        break;
      case LpOptions::Method::kDual:
        model.dual();
        break;
      case LpOptions::Method::kAuto:
        model.initialSolve();
        break;
    }
    switch (model.status()) {
      case 0:
        out.status = LpStatus::kOptimal;
        break;
      case 1:
        out.status = LpStatus::kInfeasible;
        break;
      case 2:
        out.status = LpStatus::kUnbounded;
        break;
      case 3:
        out.status = LpStatus::kLimit;
        break;
      default:
        out.status = LpStatus::kError;
        break;
    }
    if (out.status != LpStatus::kOptimal) {
      out.message = fmt::format("clp: {} (status {}, secondary {})", LpStatusName(out.status),
                                model.status(), model.secondaryStatus());
      return out;
    }
    const double* x = model.primalColumnSolution();
    out.values.assign(x, x + lp.variables());
    out.objective = model.objectiveValue();
    return out;
  }
};

}  // namespace

std::unique_ptr<LpSolver> MakeClpSolver() { return std::make_unique<ClpLpSolver>(); }

}  // namespace hetsched::sched
