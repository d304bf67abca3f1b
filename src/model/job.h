// Job and Workload: what users submit. A job names the stacks it can run on, its gang size,
// memory per worker and amount of work; its speed on each device type comes from a measured
// profile (model/profile.h), its own throughput table, or an operator-level description.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/software_stack.h"
#include "util/strong_id.h"

namespace hetsched::model {

using JobId = util::StrongId<struct JobTag>;

enum class JobKind { kTraining, kInference, kBatch, kRealtime, kService };
// "training", "inference", "batch", "realtime", "service"
std::string_view JobKindName(JobKind kind);
util::Result<JobKind> ParseJobKind(std::string_view text);

// What one step of the job does, for the cost model when no measurement exists.
struct OperatorLoad {
  double flops_per_step = 0;    // per worker
  uint64_t bytes_per_step = 0;  // device-memory traffic per worker
  bool low_precision = true;    // fp16/bf16 math (else fp32)
};

// Where a job was read, for errors found later against a cluster (hetsched validate): its
// entry in the file's job list (before `repeat:` copies) and that entry's line and column
// (column 0 in JSON lines). Entry -1 and line 0 when it was not read from a YAML or JSON-lines
// workload.
struct JobOrigin {
  int32_t entry = -1;
  int32_t line = 0;
  int32_t column = 0;
  std::shared_ptr<const std::string> file;  // as the reader was given it; shared by its jobs
};

// An online inference service (`kind: service`): a model answering a stream of requests under
// a latency target. The simulator sizes, places and scales its replicas (sim/serving.h); a
// service is never a gang and has no amount of work.
struct ServiceSpec {
  std::string model;       // a preset name (model::PresetNames())
  double ttft_s = 2;       // time to first token
  double tpot_s = 0.1;     // time per output token
  double percentile = 99;  // share of requests that must meet both, in percent
  // Azure's LLM inference trace CSV (model/io/azure_trace_reader.h), resolved against the
  // workload file's folder; empty: requests come from the rate curve alone.
  std::string requests_file;
  // Requests/s by time of day (seconds since midnight), piecewise linear, repeating daily. With
  // a trace, the trace's arrivals are time-warped to follow it; empty: the trace as recorded.
  std::vector<std::pair<double, double>> rate;
  int32_t input_tokens = 0;   // per request, when there is no trace
  int32_t output_tokens = 0;  // per request, when there is no trace
};

struct Job {
  JobId id;
  std::string name;  // user-facing id; unique within a workload
  JobKind kind = JobKind::kTraining;
  std::string job_type;     // key into a ThroughputProfile, e.g. "ResNet-50 (batch size 64)"
  int32_t gang_size = 1;    // workers started together (Gavel's scale factor)
  int32_t min_workers = 1;  // elastic range; both equal gang_size when not elastic
  int32_t max_workers = 1;
  std::vector<StackRequirement> stacks;  // runs on a device meeting any one of them
  uint64_t memory_per_worker = 0;        // bytes of device memory
  // Host resources each worker takes on the node of its device while it runs, whatever the
  // device's kind (a CPU device is a socket; these are the node's cores and DRAM). 0: nothing
  // reserved. A node whose Node::cores or host_memory_bytes is 0 does not limit that resource
  // (sched::ClusterState keeps what is left on each node).
  int32_t cores_per_worker = 0;
  uint64_t host_memory_per_worker = 0;  // bytes of host DRAM
  double work = 0;                      // steps to complete
  // Measured steps/s per worker by device type name; overrides the profile.
  std::map<std::string, double> throughput;
  // Nothing says how fast it runs (no throughput, job_type or ops: the daemon's unmeasured
  // commands), so it is assumed to run 1 step/s per worker on every type that runs it
  // (model::TypeRunsJob): cost::EstimateStepTime reads this as it would a throughput table of
  // those types, which each such job would otherwise carry (a map of up to one entry per
  // catalog type, rebuilt for every live job at a daemon restart). Set with `throughput` empty.
  bool unit_speed_assumed = false;
  std::optional<OperatorLoad> ops;
  uint64_t sync_bytes_per_step = 0;  // bytes each worker exchanges per step (gradient all-reduce)
  int32_t priority = 0;              // larger runs first under the priority policy
  double priority_weight = 1;        // Gavel's weight for fairness policies
  std::string tenant;                // the team it belongs to (model/tenant.h); empty: none
  std::optional<double> deadline_s;  // absolute time by which it should complete
  // Gavel's SLO: the job should finish by arrival + slo_factor x its duration (total steps at
  // its V100 isolated throughput); set from Gavel traces, see model/io/gavel_reader.h.
  std::optional<double> slo_factor;
  bool preemptible = true;
  // What the user says about the job's size (the scheduler sees these, never `work`), in
  // seconds of running on the fastest device type the job may use: an expected run time, and
  // the most it may run (a Slurm-style time limit; users over-ask). Both optional.
  std::optional<double> estimate_s;
  std::optional<double> time_limit_s;
  // Its checkpoint loads on another vendor's software stack (e.g. a framework-level state
  // dict). Without it, moving between vendors restarts the job from the beginning.
  bool portable_checkpoint = false;
  // Its input (`data.size`), read before each run computes, and the size of one checkpoint
  // (`data.checkpoint`), written back to the same place when a preemption stops it and read
  // again when it resumes (sim/network.h).
  uint64_t data_bytes = 0;
  uint64_t checkpoint_bytes = 0;
  std::string data_location;  // node, rack or storage holding both; empty: the first storage
  std::vector<std::string> pinned_devices;  // "node/index" or "node": reserved for this job
  // What a backend that runs processes executes (argv); the simulator does not need it.
  std::vector<std::string> command;
  double arrival_s = 0;
  JobOrigin origin;
  std::optional<ServiceSpec> service;  // set exactly when kind == kService
};

struct Workload {
  std::vector<Job> jobs;  // ids are positions
};

// Sorts jobs by arrival time, keeping the order of jobs that arrive together, and sets each
// job's id to its new position. O(n log n) comparisons; each job is moved once.
void SortByArrival(Workload* workload);

}  // namespace hetsched::model
