// PEFT (Arabnejad and Barbosa, IEEE TPDS 25(3), 2014): an optimistic cost table (OCT) looks
// one step ahead; tasks by decreasing mean OCT, each on the processor minimizing EFT + OCT.
// O(E * P) for the table (min / second-min trick) plus O(V log V + E * P) for the schedule.
#pragma once

#include <vector>

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

// OCT(t, p) = max over successors s of min over q of (OCT(s, q) + w(s, q) + c-bar(t, s) if
// q != p, else 0); 0 for exit tasks. Row-major: [t * processors + p].
std::vector<double> OptimisticCostTable(const DagProblem& problem);

// Ready tasks by decreasing rank_oct (mean of the task's OCT row), ties by topological
// position; processors by smallest EFT + OCT, ties to the lowest index.
Schedule Peft(const DagProblem& problem);

}  // namespace hetsched::plan
