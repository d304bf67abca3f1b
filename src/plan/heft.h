// HEFT (Topcuoglu, Hariri, Wu, IEEE TPDS 13(3), 2002): tasks by decreasing upward rank, each
// on the processor with the earliest finish time, inserted into idle gaps. O(V log V + E * P).
#pragma once

#include <vector>

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

// rank_u(i) = w-bar(i) + max over successors j of (c-bar(i,j) + rank_u(j)), indexed by task.
std::vector<double> UpwardRanks(const DagProblem& problem);
// rank_d(i) = max over predecessors j of (rank_d(j) + w-bar(j) + c-bar(j,i)); 0 for entries.
std::vector<double> DownwardRanks(const DagProblem& problem);

// Ties in rank go to the task earlier in topological order; ties between processors to the
// lowest processor index.
Schedule Heft(const DagProblem& problem);

}  // namespace hetsched::plan
