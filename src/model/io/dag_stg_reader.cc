// The STG format of ParseDagStg (the Kasahara standard task graph set): the number of tasks
// n, then n + 2 lines "id processing-time number-of-predecessors predecessor-ids...".
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/io/dag_reader.h"
#include "util/line_reader.h"
#include "util/source_location.h"

namespace hetsched::model::io {
namespace {

using util::Status;

struct Token {
  std::string_view text;
  int column;  // 1-based
};

std::vector<Token> Tokenize(std::string_view line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > begin) out.push_back({line.substr(begin, i - begin), static_cast<int>(begin) + 1});
  }
  return out;
}

// The processors of an STG graph: the options' own, or --procs N named P1..PN.
util::Result<std::vector<DagProcessor>> StgProcessors(const DagReadOptions& options,
                                                      const std::string& file_name) {
  if (!options.processors.empty()) return options.processors;
  if (options.stg_processors <= 0) {
    return util::InputError({file_name, 0, 0}, "",
                            "STG files name no processors; give their number (--procs N)");
  }
  if (options.stg_processors > kMaxDagProcessors) {
    return util::InputError({file_name, 0, 0}, "",
                            fmt::format("{} processors", options.stg_processors),
                            fmt::format("at most {}", kMaxDagProcessors));
  }
  std::vector<DagProcessor> processors;
  for (int32_t p = 0; p < options.stg_processors; ++p) {
    processors.push_back({fmt::format("P{}", p + 1), ""});
  }
  return processors;
}

// An integer field of an STG line from 0 to `max`.
util::Result<int64_t> StgInteger(const Token& tok, const std::string& file_name, int line,
                                 const std::string& what, int64_t max) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), v);
  if (ec != std::errc() || ptr != tok.text.data() + tok.text.size() || v < 0 || v > max) {
    return util::InputError({file_name, line, tok.column}, what,
                            fmt::format("'{}' is not valid", tok.text),
                            fmt::format("an integer from 0 to {}", max));
  }
  return v;
}

// A task's processing time: a finite number >= 0.
util::Result<double> StgCost(const Token& tok, const std::string& file_name, int line_no,
                             const std::string& where) {
  double cost = 0;
  auto [ptr, ec] = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), cost);
  if (ec != std::errc() || ptr != tok.text.data() + tok.text.size() || !std::isfinite(cost) ||
      cost < 0) {
    return util::InputError({file_name, line_no, tok.column}, where + " processing time",
                            fmt::format("'{}' is not valid", tok.text), "a number >= 0");
  }
  return cost;
}

// The first line: the number of tasks n; returns n + 2, the tasks with the dummy entry and
// exit.
util::Result<int64_t> StgTaskCount(const std::vector<Token>& toks, const std::string& file_name,
                                   int line_no, int32_t np) {
  if (toks.size() != 1) {
    return util::InputError({file_name, line_no, toks[1].column}, "",
                            "unexpected text after the number of tasks", "one integer");
  }
  ASSIGN_OR_RETURN(int64_t n,
                   StgInteger(toks[0], file_name, line_no, "number of tasks", kMaxDagTasks - 2));
  const int64_t n_total = n + 2;
  if (n_total * np > kMaxDagCostCells) {
    return util::InputError({file_name, line_no, toks[0].column}, "number of tasks",
                            fmt::format("{} tasks x {} processors", n_total, np),
                            fmt::format("at most {} costs in all", kMaxDagCostCells));
  }
  return n_total;
}

// The edges from each task's listed predecessors (`preds`, on the task's line `pred_line`),
// refusing self-loops, repeats and cycles.
Status AddStgEdges(const std::vector<std::vector<std::pair<int64_t, Token>>>& preds,
                   const std::vector<int>& pred_line, const std::string& file_name,
                   TaskGraph& graph) {
  std::map<std::pair<int32_t, int32_t>, bool> seen;
  std::vector<std::pair<int, int>> edge_where;  // line, column
  for (int32_t t = 0; t < static_cast<int32_t>(preds.size()); ++t) {
    for (const auto& [pred, tok] : preds[t]) {
      const util::SourceLocation at{file_name, pred_line[t], tok.column};
      const std::string where = fmt::format("task {} predecessor", t);
      if (pred == t) return util::InputError(at, where, "the task depends on itself");
      if (!seen.emplace(std::make_pair(static_cast<int32_t>(pred), t), true).second) {
        return util::InputError(at, where, fmt::format("predecessor {} listed twice", pred));
      }
      graph.edges.push_back({static_cast<int32_t>(pred), t, 0});
      edge_where.push_back({pred_line[t], tok.column});
    }
  }
  std::vector<int32_t> cycle = graph.FindCycle();
  if (!cycle.empty()) {
    std::string path = graph.tasks[graph.edges[cycle[0]].from].name;
    for (int32_t k : cycle) path += " -> " + graph.tasks[graph.edges[k].to].name;
    const auto [l, c] = edge_where[cycle[0]];
    return util::InputError({file_name, l, c},
                            fmt::format("task {} predecessor", graph.edges[cycle[0]].to),
                            "cycle " + path, "an acyclic graph");
  }
  return Status::Ok();
}

}  // namespace

util::Result<TaskGraph> ParseDagStg(std::string_view text, const std::string& file_name,
                                    const DagReadOptions& options) {
  TaskGraph graph;
  ASSIGN_OR_RETURN(graph.processors, StgProcessors(options, file_name));
  const int32_t np = graph.num_processors();

  int64_t n_total = -1;  // tasks including the two dummies
  int64_t next_task = 0;
  std::vector<std::vector<std::pair<int64_t, Token>>> preds;  // per task: (pred id, where)
  std::vector<int> pred_line;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const int line_no = lines.line_number();
    std::vector<Token> toks = Tokenize(line);
    if (toks.empty() || toks[0].text[0] == '#') continue;
    if (n_total < 0) {
      ASSIGN_OR_RETURN(n_total, StgTaskCount(toks, file_name, line_no, np));
      continue;
    }
    if (next_task >= n_total) {
      return util::InputError({file_name, line_no, toks[0].column}, "",
                              fmt::format("unexpected line after the {} task lines", n_total),
                              "only '#' comments");
    }
    const std::string where = fmt::format("task {}", next_task);
    if (toks.size() < 3) {
      return util::InputError({file_name, line_no, toks.back().column}, where, "too few fields",
                              "id, processing time, number of predecessors");
    }
    ASSIGN_OR_RETURN(int64_t id,
                     StgInteger(toks[0], file_name, line_no, where + " id", n_total - 1));
    if (id != next_task) {
      return util::InputError({file_name, line_no, toks[0].column}, where + " id",
                              fmt::format("task {} listed where task {} belongs", id, next_task),
                              "tasks in order 0, 1, 2, ...");
    }
    ASSIGN_OR_RETURN(const double cost, StgCost(toks[1], file_name, line_no, where));
    ASSIGN_OR_RETURN(int64_t npred, StgInteger(toks[2], file_name, line_no,
                                               where + " number of predecessors", n_total));
    if (static_cast<int64_t>(toks.size()) != 3 + npred) {
      const Token& tok =
          static_cast<int64_t>(toks.size()) > 3 + npred ? toks[3 + npred] : toks.back();
      return util::InputError(
          {file_name, line_no, tok.column}, where,
          fmt::format("{} predecessors listed, {} announced", toks.size() - 3, npred),
          "as many predecessor ids as announced");
    }
    graph.tasks.push_back({std::to_string(id), std::vector<double>(np, cost)});
    preds.emplace_back();
    pred_line.push_back(line_no);
    for (int64_t k = 0; k < npred; ++k) {
      ASSIGN_OR_RETURN(int64_t pred, StgInteger(toks[3 + k], file_name, line_no,
                                                where + " predecessor", n_total - 1));
      preds.back().push_back({pred, toks[3 + k]});
    }
    ++next_task;
  }
  if (n_total < 0) {
    return util::InputError({file_name, 1, 0}, "", "the file is empty",
                            "the number of tasks on the first line");
  }
  if (next_task < n_total) {
    // Points at the first missing line.
    return util::InputError({file_name, lines.line_number() + 1, 0}, "",
                            fmt::format("{} task lines, {} announced", next_task, n_total),
                            "n + 2 task lines including the dummy entry and exit");
  }
  RETURN_IF_ERROR(AddStgEdges(preds, pred_line, file_name, graph));
  graph.name = file_name;
  Status st = graph.Finalize();
  if (!st.ok()) return util::InputError({file_name, 0, 0}, "", st.message());
  return graph;
}

}  // namespace hetsched::model::io
