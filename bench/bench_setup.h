// Set-up shared by the scheduler and simulator benchmarks (sched_bench, sim_bench, bench_check):
// the Gavel-mix cluster and traces at any number of nodes, and a scheduler whose cluster is full.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/data_dir.h"
#include "model/io/cluster_reader.h"
#include "model/io/gavel_reader.h"
#include "sched/scheduler.h"
#include "sim/trace_gen.h"
#include "util/status.h"

namespace hetsched::bench {

// `nodes` nodes of 8 GPUs, a third each V100, P100 and K80 (K80 takes the remainder): at 10,000
// nodes, the 80,000 devices of sched_bench and sim_bench.
inline util::Result<model::Cluster> GavelMixCluster(int nodes) {
  const int third = nodes / 3;
  const auto type = [](const char* name, int type_nodes) {
    return std::string(name) + "=" + std::to_string(8 * type_nodes) + ":per_node=8";
  };
  return model::io::ParseClusterShorthand(type("v100", third) + "," + type("p100", third) + "," +
                                          type("k80", nodes - 2 * third));
}

// Gavel's measured throughputs, as shipped in data/.
inline util::Result<model::ThroughputProfile> GavelThroughputs() {
  return model::io::LoadGavelThroughputs(cli::DataPath("gavel/simulation_throughputs.json"));
}

// sim_bench's trace: `jobs` jobs of the Gavel mix arriving at about the capacity of `nodes` such
// nodes for this mix (4,000 jobs/h at 10,000 nodes).
inline sim::GavelTraceOptions TraceAtCapacity(int nodes, int64_t jobs) {
  sim::GavelTraceOptions o;
  o.rate_per_hour = 0.4 * nodes;
  o.jobs = jobs;
  o.seed = 0;
  return o;
}

// sched_bench's trace: `jobs` jobs of the Gavel mix that all arrive almost at once.
inline sim::GavelTraceOptions Backlog(int64_t jobs) {
  sim::GavelTraceOptions o;
  o.rate_per_hour = 1e6;
  o.jobs = jobs;
  o.seed = 1;
  return o;
}

// A scheduler that was given every job of a workload at time 0 and decided once, filling the
// cluster (FillCluster). Keeps references to the cluster and profile it was made from.
struct FilledScheduler {
  std::unique_ptr<sched::Scheduler> scheduler;
  // The jobs decisions placed, in order; the first `finished` of them were told to finish.
  std::vector<model::JobId> running;
  size_t finished = 0;

  // The event the benchmarks time is FinishNext, Decide, Record: the earliest placed job that
  // has not finished finishes (freeing its devices), the scheduler decides, and the jobs it
  // placed join the list. False when every placed job has finished.
  bool FinishNext(double now_s) {
    if (finished >= running.size()) return false;
    scheduler->Finish(running[finished++], now_s);
    return true;
  }
  void Record(const sched::Decision& decision) {
    for (const auto& p : decision.placed) running.push_back(p.job);
  }
};

// With options.elastic every job may run at 1 to 8 workers (sched/elastic.h).
inline util::Result<FilledScheduler> FillCluster(const model::Cluster& cluster,
                                                 const model::ThroughputProfile& profile,
                                                 const model::Workload& workload,
                                                 const std::string& policy,
                                                 const sched::SchedulerOptions& options) {
  FilledScheduler filled;
  ASSIGN_OR_RETURN(filled.scheduler, sched::Scheduler::Create(cluster, &profile, policy, options));
  for (model::Job job : workload.jobs) {
    if (options.elastic) job.max_workers = std::max(job.gang_size, 8);
    filled.scheduler->Submit(job, 0);
  }
  filled.Record(filled.scheduler->Decide(0));
  return filled;
}

}  // namespace hetsched::bench
