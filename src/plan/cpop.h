// CPOP (Topcuoglu, Hariri, Wu, IEEE TPDS 13(3), 2002): priority rank_u + rank_d; the tasks of
// the critical path all go to the one processor that runs them fastest in total, the others to
// the processor with the earliest finish. O(V log V + E * P).
#pragma once

#include "plan/dag_problem.h"
#include "plan/schedule.h"

namespace hetsched::plan {

// The critical path starts at the entry task of highest priority and follows, at each step,
// the successor of highest priority among those whose priority equals |CP| (within 1e-9
// relative). Ready tasks are taken by highest priority, ties by topological position. The
// critical-path processor minimizes the summed cost over processors able to run every
// critical task; when no processor can, critical tasks are placed like the others (EFT).
Schedule Cpop(const DagProblem& problem);

}  // namespace hetsched::plan
