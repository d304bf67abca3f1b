// Workload readers: jobs from YAML (a `jobs:` list with optional `defaults:`), from JSONL (one
// job object per line, same fields) and, by extension, from Gavel traces. docs/workload-format.md
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model/catalog.h"
#include "model/io/document.h"
#include "model/job.h"
#include "util/status.h"

namespace hetsched::model::io {

// Upper bound on the jobs one workload file may produce, `repeat:` copies included. It is
// checked before anything is allocated, so `repeat: 1e12` fails at once instead of exhausting
// memory; it is twice the million-job traces hetsched is designed for.
inline constexpr size_t kMaxWorkloadJobs = 2'000'000;
// Upper bound on the memory the copies made by `repeat:` may take (estimated from the size of
// each copied job), so that a small file cannot allocate gigabytes through long names.
inline constexpr size_t kMaxRepeatBytes = size_t{512} << 20;
// Upper bound on a job's `estimate` and `time_limit`: 10 years (of 365 days), in seconds.
// Anything longer is a typo or a unit mistake, not a job.
inline constexpr double kMaxJobTimeS = 10.0 * 365 * 86400;
// Lower bound on a job's `time_limit`, in seconds. No real job starts in under a minute
// (container pull, CUDA context, data loader), so a shorter limit can only be a mistake. Jobs
// and workloads carry no start-up time of their own (the simulator's start-up and restore
// times are its options, not the file's), hence this fixed floor.
inline constexpr double kMinTimeLimitS = 60;
// Upper bound on a job's `cores` per worker: as many as a cluster file's node may declare.
inline constexpr int64_t kMaxCoresPerWorker = 1'000'000;

// Parses a YAML workload. Device type names in `throughput` and `reference_device` are resolved
// against `catalog` (aliases allowed; stored under the canonical name): pass the catalog of the
// cluster the workload runs on (model::Cluster::catalog, the built-in types plus the cluster
// file's `device_types`) so that jobs may name the cluster's own types; an unknown name is an
// error listing the catalog's names. Jobs come back sorted by arrival (stable, so equal
// arrivals keep file order) with ids equal to their positions.
// Errors are InvalidArgument "file:line:column: jobs[3].gang_size: problem (expected ...)";
// `jobs[i]` counts entries of the file, before `repeat:` expansion. Each job's Job::origin
// keeps its entry and position.
util::Result<Workload> ParseWorkloadYaml(std::string_view text, const std::string& file_name,
                                         const DeviceCatalog& catalog = DeviceCatalog::BuiltIn());

// Parses JSON Lines: each non-blank line one JSON object with the fields of a YAML job.
// Positions in errors are the line of the object and, for syntax errors, the byte column.
// Device type names resolve against `catalog` as in ParseWorkloadYaml.
util::Result<Workload> ParseWorkloadJsonl(std::string_view text, const std::string& file_name,
                                          const DeviceCatalog& catalog = DeviceCatalog::BuiltIn());

// One job given as a document value (the daemon's request body, read with FromJson typed so
// that a JSON string is no number): the job as the workload of it alone would hold it (id 0,
// its origin entry 0 of `file`), without building that workload: a daemon's restart reads
// hundreds of thousands this way. Errors are named like those of a JSON Lines entry
// ("jobs[0].gang_size") and located as `job`'s values are; `repeat` is refused (one job).
util::Result<Job> ParseWorkloadJob(const DocValue& job, std::shared_ptr<const std::string> file,
                                   const DeviceCatalog& catalog);

// Reads `path` and picks the reader by extension: .yaml/.yml YAML, .jsonl/.json JSONL,
// .trace Gavel trace (model/io/gavel_reader.h). Other extensions are an InvalidArgument error.
// YAML and JSONL resolve device type names against `catalog` (a Gavel trace names none).
util::Result<Workload> LoadWorkload(const std::string& path,
                                    const DeviceCatalog& catalog = DeviceCatalog::BuiltIn());

}  // namespace hetsched::model::io
