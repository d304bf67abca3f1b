// Small integer programs solved exactly with COIN-OR CBC (branch and cut over CLP): a
// LinearProgram (sched/lp_solver.h) whose chosen variables must take whole values. Used where
// a decision is a count of things (replicas of a service per device type, sim/serving.h).
#pragma once

#include <vector>

#include "sched/lp_solver.h"

namespace hetsched::sched {

// Solves `lp` with the variables flagged in `integer` (one flag per variable) restricted to
// whole numbers. kOptimal: values hold a proven optimum; kLimit: the time ran out (values hold
// the best solution found, if any: check `values.size()`); kInfeasible: no solution exists.
LpSolution SolveIntegerProgram(const LinearProgram& lp, const std::vector<bool>& integer,
                               double max_seconds = 10);

}  // namespace hetsched::sched
