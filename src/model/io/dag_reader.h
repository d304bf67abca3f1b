// DAG readers: the JSON task-graph format (data/dag/topcuoglu2002.json, docs in
// docs/dag-format.md) and the STG format of the Kasahara standard task graph set.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/task_graph.h"
#include "util/status.h"

namespace hetsched::model::io {

// Limits that keep a hostile file from exhausting memory.
inline constexpr int64_t kMaxDagTasks = 1'000'000;
inline constexpr int64_t kMaxDagEdges = 10'000'000;
inline constexpr int64_t kMaxDagProcessors = 100'000;
inline constexpr int64_t kMaxDagCostCells = 100'000'000;  // tasks * processors

struct DagReadOptions {
  // When not empty, the processors to schedule on instead of the file's own (a cluster's
  // devices, with their device types): the file's `processors` and `bandwidth` are then not
  // used, and task costs are keyed by device type (or processor name).
  std::vector<DagProcessor> processors;
  // STG files name no processors: how many identical processors to use ("P1".."Pn") when
  // `processors` is empty. 0 makes reading an STG file an error that asks for it.
  int32_t stg_processors = 0;
};

// JSON: {"processors": [{"id", "type"?} | "id", ...], "bandwidth": number | "10GB/s",
// "tasks": [{"id", "cost"}], "edges": [{"from", "to", "data"? | "bytes"?}]}. A cost is one
// number for every processor, an array in processor order, or an object keyed by processor id
// or device type; a missing entry, null or "inf" means that processor cannot run the task.
// Other top-level keys (name, source, expected ...) are ignored. Returns a finalized graph;
// errors read `file:line:column: tasks[3].cost.P2: problem (expected ...)`.
util::Result<TaskGraph> ParseDagJson(std::string_view text, const std::string& file_name,
                                     const DagReadOptions& options = {});

// STG: the first line holds n, then n + 2 lines `id cost npred pred...` for tasks 0..n+1 (0
// and n+1 are the zero-cost dummy entry and exit, kept as tasks); '#' lines are comments.
// Every processor gets the same cost; there is no data on edges. Errors read `file:line:column`.
util::Result<TaskGraph> ParseDagStg(std::string_view text, const std::string& file_name,
                                    const DagReadOptions& options = {});

// Reads a file: STG when the name ends in ".stg" or the text starts with a digit or '#',
// JSON otherwise.
util::Result<TaskGraph> ReadDag(const std::string& path, const DagReadOptions& options = {});

// The graph in the JSON format above (processors by name, costs as objects keyed by processor,
// "inf" for cannot-run, "data" on edges). ParseDagJson reads it back to an equal graph.
std::string FormatDagJson(const TaskGraph& graph);

}  // namespace hetsched::model::io
