// Builders shared by the DAG planner tests: the paper's sample graph and seeded random DAGs.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "model/io/dag_reader.h"
#include "model/random_dag.h"
#include "model/task_graph.h"
#include "testing/build_paths.h"

namespace hetsched::plan::testing {

inline std::string SamplePath() {
  return std::string(HETSCHED_SOURCE_DIR) + "/data/dag/topcuoglu2002.json";
}

inline model::TaskGraph LoadSample() {
  auto g = model::io::ReadDag(SamplePath());
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

inline model::TaskGraph RandomDag(int32_t tasks, int32_t procs, double ccr, double beta,
                                  uint64_t seed, double alpha = 1.0) {
  model::RandomDagOptions o;
  o.tasks = tasks;
  o.processors = procs;
  o.ccr = ccr;
  o.beta = beta;
  o.alpha = alpha;
  o.seed = seed;
  auto g = model::GenerateRandomDag(o);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

}  // namespace hetsched::plan::testing
