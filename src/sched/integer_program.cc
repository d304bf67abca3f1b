#include "sched/integer_program.h"

#include <CbcModel.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <string>

namespace hetsched::sched {

LpSolution SolveIntegerProgram(const LinearProgram& lp, const std::vector<bool>& integer,
                               double max_seconds) {
  LpSolution out;
  const int n = lp.variables();
  const int m = lp.rows();
  if (static_cast<int>(integer.size()) != n) {
    out.status = LpStatus::kError;
    out.message = "one integrality flag per variable expected";
    return out;
  }
  std::vector<int> starts(lp.start().begin(), lp.start().end());
  std::vector<int> lengths(n);
  for (int j = 0; j < n; ++j) lengths[j] = starts[j + 1] - starts[j];
  const CoinPackedMatrix matrix(/*colordered=*/true, m, n, lp.entries(), lp.value().data(),
                                lp.index().data(), starts.data(), lengths.data());
  OsiClpSolverInterface solver;
  solver.loadProblem(matrix, lp.col_lower().data(), lp.col_upper().data(), lp.objective().data(),
                     lp.row_lower().data(), lp.row_upper().data());
  solver.setObjSense(lp.sense() == LinearProgram::Sense::kMinimize ? 1.0 : -1.0);
  for (int j = 0; j < n; ++j) {
    if (integer[j]) solver.setInteger(j);
  }
  solver.messageHandler()->setLogLevel(0);
  CbcModel model(solver);
  model.messageHandler()->setLogLevel(0);
  model.setLogLevel(0);
  if (max_seconds > 0) model.setMaximumSeconds(max_seconds);
  model.branchAndBound();
  const double* best = model.bestSolution();
  if (best != nullptr) {
    out.values.assign(best, best + n);
    out.objective = model.getObjValue();
  }
  if (model.isProvenOptimal() && best != nullptr) {
    out.status = LpStatus::kOptimal;
  } else if (model.isProvenInfeasible()) {
    out.status = LpStatus::kInfeasible;
    out.message = "no integer solution";
  } else if (model.isSecondsLimitReached()) {
    out.status = LpStatus::kLimit;
    out.message = "time limit";
  } else {
    out.status = LpStatus::kError;
    out.message = "CBC ended with status " + std::to_string(model.status());
  }
  return out;
}

}  // namespace hetsched::sched
