// Random task graphs in the style of the generator of Topcuoglu, Hariri and Wu (IEEE TPDS
// 2002, section 5.1): shape alpha, heterogeneity beta, communication-to-computation ratio CCR.
#pragma once

#include <cstdint>

#include "model/task_graph.h"
#include "util/status.h"

namespace hetsched::model {

struct RandomDagOptions {
  int32_t tasks = 100;      // v >= 1
  int32_t processors = 4;   // >= 1, named P1..Pn
  double ccr = 1.0;         // mean edge transfer time / mean task cost, >= 0
  double alpha = 1.0;       // shape: about sqrt(v)/alpha levels of about alpha*sqrt(v) tasks
  double beta = 0.5;        // cost spread across processors, in [0, 2)
  int32_t out_degree = 3;   // each non-final task gets 1..out_degree children
  double mean_cost = 50.0;  // w-bar_DAG: mean task cost (time units)
  uint64_t seed = 1;
};

// The paper's recipe: each task's mean cost w_i ~ U(0, 2 w_DAG), its cost on each processor
// ~ U(w_i (1 - beta/2), w_i (1 + beta/2)); edge data ~ U(0, 2 CCR w_DAG) at bandwidth 1.
// Levels: round(sqrt(v)/alpha) of them, sizes drawn around alpha*sqrt(v) and scaled to v.
// Every task below the top level gets a parent in the level above; every task above the
// bottom level gets 1..out_degree children in lower levels (mostly the next one). Values are
// rounded to 3 decimals so the JSON file reads back exactly. Deterministic for a seed with the
// same standard library. InvalidArgument for out-of-range options.
util::Result<TaskGraph> GenerateRandomDag(const RandomDagOptions& options);

}  // namespace hetsched::model
