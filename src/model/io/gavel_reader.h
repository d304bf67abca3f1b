// Readers and a writer for the files of Gavel (Narayanan et al., OSDI 2020): its measured
// throughput matrix (simulation_throughputs.json) and its tab-separated job traces.
#pragma once

#include <string>
#include <string_view>

#include "model/job.h"
#include "model/profile.h"
#include "util/status.h"

namespace hetsched::model::io {

// Parses Gavel's throughput file. Top-level keys are worker types, mapped to catalog names
// through the built-in catalog's aliases (k80 -> k80, p100 -> p100, v100 -> v100-32g); unknown
// worker types are an error. Under each, keys "('<job type>', <scale factor>)" hold an object:
// "null" -> isolated steps/s of the whole gang; "('<partner>', <scale>)" -> [own, partner]
// steps/s when the two share the device. Zero means "does not fit" and is kept as 0; negative
// or non-numeric values are errors naming the key path.
// The "<type>_unconsolidated" worker types are skipped: Gavel uses them for multi-GPU jobs
// whose workers are spread over servers; hetsched derives that slowdown from its own topology
// and cost model instead (cost/), so a second, placement-dependent matrix would double count.
util::Result<ThroughputProfile> ParseGavelThroughputs(std::string_view text,
                                                      const std::string& file_name);
util::Result<ThroughputProfile> LoadGavelThroughputs(const std::string& path);

// Parses a Gavel trace: one job per line, tab-separated, either the 10 columns of the
// physical_cluster traces
//   job_type command working_dir num_steps_arg needs_data_dir total_steps scale_factor
//   priority_weight SLO arrival_time
// or the 7 columns of the older MSR traces
//   job_type command num_steps_arg needs_data_dir total_steps arrival_time scale_factor.
// The first job line fixes the format; a line with another column count is an error with
// file:line. Blank lines are skipped. Each job becomes: name "job-<n>" (n = its position among
// the file's jobs), kind training, gang_size = min = max = scale_factor, work = total_steps,
// stacks {cuda} (Gavel's jobs are PyTorch CUDA programs), preemptible, arrival_time, and from
// 10-column files priority_weight and, when SLO > 0, slo_factor = SLO. Gavel turns the SLO into
// a deadline of arrival + SLO x duration, where duration needs a throughput profile; see
// ApplyGavelSlo. Commands, working directories and data-dir flags are not kept.
// Jobs are sorted by arrival (stable); ids are positions.
util::Result<Workload> ParseGavelTrace(std::string_view text, const std::string& file_name);
util::Result<Workload> LoadGavelTrace(const std::string& path);

// Writes `workload` in the 10-column format, one line per job in workload order, such that
// ParseGavelTrace gives back the same job types, gang sizes, work, priority weights, SLOs and
// arrivals (job names become "job-<n>"). Gavel reads total_steps as an integer, so work is
// rounded up to whole steps. Gavel's simulator ignores the command columns; the command column
// holds the job's name, the working dir ".", num_steps_arg "--num_steps", needs_data_dir 1 when
// the job has input data. Tabs and line breaks inside job types and names are written as spaces.
std::string FormatGavelTrace(const Workload& workload);

// Sets deadline_s = arrival + slo_factor x work / (isolated steps/s of the job's type at its gang
// size on `reference_device`) for every job with a slo_factor, as Gavel does with V100 (its
// job durations are defined on V100). NotFound names the first job the profile has no
// throughput (or a zero one) for; nothing is changed then.
util::Status ApplyGavelSlo(const ThroughputProfile& profile, Workload* workload,
                           const std::string& reference_device = "v100-32g");

}  // namespace hetsched::model::io
