#include "model/io/dag_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <variant>

#include "util/file.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using nlohmann::json;
using util::Status;

// ---------------------------------------------------------------------------------------------
// Positions. nlohmann::json keeps no source positions, so errors re-scan the (already valid)
// text along the path of the offending value. Only error paths pay for this.

using PathStep = std::variant<std::string, size_t>;  // object key or array index

class JsonLocator {
 public:
  explicit JsonLocator(std::string_view text) : s_(text) {}

  // Byte offset of the value at `path`, or of the deepest enclosing value that exists.
  size_t Find(const std::vector<PathStep>& path) {
    i_ = 0;
    SkipWs();
    size_t found = i_;
    for (const PathStep& step : path) {
      std::optional<size_t> next;
      if (const std::string* key = std::get_if<std::string>(&step)) {
        next = FindMember(*key);
      } else {
        next = FindElement(std::get<size_t>(step));
      }
      if (!next) return found;
      found = *next;
      i_ = found;
    }
    return found;
  }

  // Offset of the key string of member `key` in the object at `at` (for "unknown key").
  std::optional<size_t> FindKey(const std::vector<PathStep>& object_path, const std::string& key) {
    Find(object_path);
    if (!Peek('{')) return std::nullopt;
    ++i_;
    std::optional<size_t> result;
    while (true) {
      SkipWs();
      if (!Peek('"')) break;
      const size_t key_at = i_;
      const std::string k = ReadString();
      SkipWs();
      if (Peek(':')) ++i_;
      SkipWs();
      if (k == key) result = key_at;
      SkipValue();
      SkipWs();
      if (!Peek(',')) break;
      ++i_;
    }
    return result;
  }

 private:
  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void SkipWs() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void SkipString() {  // at '"'
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') i_ += (s_[i_] == '\\') ? 2 : 1;
    ++i_;
  }
  // The key as nlohmann decodes it, for the escapes that matter in names.
  std::string ReadString() {
    std::string out;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        const char e = s_[i_ + 1];
        if (e == 'u' && i_ + 5 < s_.size()) {
          unsigned code = 0;
          std::from_chars(s_.data() + i_ + 2, s_.data() + i_ + 6, code, 16);
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          i_ += 6;
          continue;
        }
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          default:
            out += e;
        }
        i_ += 2;
      } else {
        out += s_[i_++];
      }
    }
    ++i_;
    return out;
  }
  // Skips one value without recursion (nesting depth is unbounded in hostile input).
  void SkipValue() {
    if (Peek('"')) {
      SkipString();
      return;
    }
    if (Peek('{') || Peek('[')) {
      int64_t depth = 0;
      while (i_ < s_.size()) {
        const char c = s_[i_];
        if (c == '"') {
          SkipString();
          continue;
        }
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
        ++i_;
        if (depth == 0) return;
      }
      return;
    }
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' &&
           s_[i_] != '\n' && s_[i_] != '\t' && s_[i_] != '\r')
      ++i_;
  }
  std::optional<size_t> FindMember(const std::string& key) {
    if (!Peek('{')) return std::nullopt;
    ++i_;
    std::optional<size_t> result;  // the last duplicate wins, as in nlohmann::json
    while (true) {
      SkipWs();
      if (!Peek('"')) break;
      const std::string k = ReadString();
      SkipWs();
      if (Peek(':')) ++i_;
      SkipWs();
      if (k == key) result = i_;
      SkipValue();
      SkipWs();
      if (!Peek(',')) break;
      ++i_;
    }
    return result;
  }
  std::optional<size_t> FindElement(size_t index) {
    if (!Peek('[')) return std::nullopt;
    ++i_;
    for (size_t k = 0;; ++k) {
      SkipWs();
      if (Peek(']') || i_ >= s_.size()) return std::nullopt;
      if (k == index) return i_;
      SkipValue();
      SkipWs();
      if (!Peek(',')) return std::nullopt;
      ++i_;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

util::SourceLocation LocationOfOffset(std::string_view text, size_t offset,
                                      const std::string& file) {
  util::SourceLocation at{file, 1, 1};
  offset = std::min(offset, text.size());
  for (size_t k = 0; k < offset; ++k) {
    if (text[k] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

std::string PathName(const std::vector<PathStep>& path) {
  std::string out;
  for (const PathStep& step : path) {
    if (const std::string* key = std::get_if<std::string>(&step)) {
      if (!out.empty()) out += '.';
      out += *key;
    } else {
      out += fmt::format("[{}]", std::get<size_t>(step));
    }
  }
  return out;
}

std::string Describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

std::string JoinNames(const std::vector<std::string>& names, size_t limit = 12) {
  std::string out;
  for (size_t k = 0; k < names.size() && k < limit; ++k) {
    if (k > 0) out += ", ";
    out += names[k];
  }
  if (names.size() > limit) out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON reader.

class JsonDagParser {
 public:
  JsonDagParser(std::string_view text, const std::string& file, const DagReadOptions& options)
      : text_(text), file_(file), options_(options), locator_(text) {}

  util::Result<TaskGraph> Parse() {
    json root;
    try {
      root = json::parse(text_.begin(), text_.end());
    } catch (const json::parse_error& e) {
      std::string what = e.what();
      const size_t colon = what.find(": ", what.find("column"));
      if (colon != std::string::npos) what = what.substr(colon + 2);
      const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
      return util::InputError(LocationOfOffset(text_, offset, file_), "", "invalid JSON: " + what);
    } catch (const json::exception& e) {
      return util::InputError({file_, 0, 0}, "", std::string("invalid JSON: ") + e.what());
    }
    if (!root.is_object()) return Error({}, "the document is not an object", "a JSON object");
    RETURN_IF_ERROR(ReadProcessors(root));
    RETURN_IF_ERROR(ReadBandwidth(root));
    RETURN_IF_ERROR(ReadTasks(root));
    RETURN_IF_ERROR(ReadEdges(root));
    if (root.contains("name") && root["name"].is_string()) graph_.name = root["name"];
    std::vector<int32_t> cycle = graph_.FindCycle();
    if (!cycle.empty()) {
      std::string path = graph_.tasks[graph_.edges[cycle[0]].from].name;
      for (int32_t k : cycle) path += " -> " + graph_.tasks[graph_.edges[k].to].name;
      return Error({std::string("edges"), edge_index_[cycle[0]]}, "cycle " + path,
                   "an acyclic graph");
    }
    Status st = graph_.Finalize();
    if (!st.ok()) return util::InputError({file_, 0, 0}, "", st.message());
    return std::move(graph_);
  }

 private:
  Status Error(const std::vector<PathStep>& path, const std::string& problem,
               const std::string& expected = "") {
    return util::InputError(LocationOfOffset(text_, locator_.Find(path), file_), PathName(path),
                            problem, expected);
  }
  Status UnknownKey(const std::vector<PathStep>& path, const std::string& key,
                    const std::string& known) {
    std::optional<size_t> at = locator_.FindKey(path, key);
    std::vector<PathStep> field = path;
    field.push_back(key);
    return util::InputError(LocationOfOffset(text_, at ? *at : locator_.Find(path), file_),
                            PathName(field), "unknown key", known);
  }
  Status CheckKeys(const json& obj, const std::vector<PathStep>& path,
                   std::initializer_list<const char*> known) {
    std::string list;
    for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (const char* k : known) ok = ok || it.key() == k;
      if (!ok) return UnknownKey(path, it.key(), "one of " + list);
    }
    return Status::Ok();
  }
  // A name: a string, or an integer written without quotes.
  util::Result<std::string> Name(const json& v, const std::vector<PathStep>& path) {
    if (v.is_string() && !v.get_ref<const std::string&>().empty()) return v.get<std::string>();
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    return Error(path, Describe(v) + " is not a name", "a non-empty string");
  }

  Status ReadProcessors(const json& root) {
    if (!options_.processors.empty()) {
      graph_.processors = options_.processors;
    } else {
      if (!root.contains("processors")) {
        return Error({}, "missing key 'processors'", "a list of processors");
      }
      const json& list = root["processors"];
      const std::vector<PathStep> path{std::string("processors")};
      if (!list.is_array()) return Error(path, "not a list", "a list of processors");
      if (list.empty()) return Error(path, "no processors", "at least one processor");
      if (static_cast<int64_t>(list.size()) > kMaxDagProcessors) {
        return Error(path, fmt::format("{} processors", list.size()),
                     fmt::format("at most {}", kMaxDagProcessors));
      }
      for (size_t k = 0; k < list.size(); ++k) {
        std::vector<PathStep> at{std::string("processors"), k};
        const json& item = list[k];
        DagProcessor proc;
        if (item.is_object()) {
          RETURN_IF_ERROR(CheckKeys(item, at, {"id", "type"}));
          if (!item.contains("id")) return Error(at, "missing key 'id'", "a processor name");
          at.push_back(std::string("id"));
          ASSIGN_OR_RETURN(proc.name, Name(item["id"], at));
          at.pop_back();
          if (item.contains("type")) {
            at.push_back(std::string("type"));
            ASSIGN_OR_RETURN(proc.type, Name(item["type"], at));
          }
        } else {
          ASSIGN_OR_RETURN(proc.name, Name(item, at));
        }
        graph_.processors.push_back(std::move(proc));
      }
    }
    for (int32_t p = 0; p < graph_.num_processors(); ++p) {
      const DagProcessor& proc = graph_.processors[p];
      if (!processor_index_.emplace(proc.name, p).second) {
        return Error({std::string("processors"), static_cast<size_t>(p)},
                     fmt::format("duplicate processor '{}'", proc.name), "unique ids");
      }
      if (!proc.type.empty()) type_members_[proc.type].push_back(p);
    }
    return Status::Ok();
  }

  Status ReadBandwidth(const json& root) {
    if (!options_.processors.empty()) return Status::Ok();  // the cluster's links decide
    const std::vector<PathStep> path{std::string("bandwidth")};
    if (!root.contains("bandwidth")) {
      return Error({}, "missing key 'bandwidth'",
                   "data units per time unit, e.g. 1.0 or \"10GB/s\"");
    }
    const json& v = root["bandwidth"];
    double bw = 0;
    if (v.is_number()) {
      bw = v.get<double>();
    } else if (v.is_string()) {
      util::Result<double> parsed = util::ParseBandwidth(v.get<std::string>());
      if (!parsed.ok()) return Error(path, parsed.status().message());
      bw = *parsed;
    } else {
      return Error(path, Describe(v) + " is not a bandwidth",
                   "a number or a string like \"10GB/s\"");
    }
    if (!(bw > 0) || std::isnan(bw)) {
      return Error(path, fmt::format("{} is not positive", Describe(v)), "a bandwidth > 0");
    }
    graph_.bandwidth = bw;
    return Status::Ok();
  }

  // One cost value: a finite number >= 0, or null / "inf" for cannot-run.
  util::Result<double> CostValue(const json& v, const std::vector<PathStep>& path) {
    if (v.is_null()) return kCannotRun;
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s == "inf" || s == "infinity") return kCannotRun;
      return Error(path, Describe(v) + " is not a cost", "a number >= 0, or \"inf\" or null");
    }
    if (!v.is_number()) {
      return Error(path, Describe(v) + " is not a cost", "a number >= 0, or \"inf\" or null");
    }
    const double c = v.get<double>();
    if (!std::isfinite(c) || c < 0) {
      return Error(path, Describe(v) + " is not a valid cost", "a finite number >= 0");
    }
    return c;
  }

  Status ReadCost(const json& v, std::vector<PathStep> path, std::vector<double>& cost) {
    const int32_t np = graph_.num_processors();
    cost.assign(np, kCannotRun);
    if (v.is_number() || v.is_string() || v.is_null()) {
      ASSIGN_OR_RETURN(double c, CostValue(v, path));
      std::fill(cost.begin(), cost.end(), c);
    } else if (v.is_array()) {
      if (static_cast<int32_t>(v.size()) != np) {
        return Error(path, fmt::format("{} costs for {} processors", v.size(), np),
                     "one cost per processor, in processor order");
      }
      for (int32_t p = 0; p < np; ++p) {
        path.push_back(static_cast<size_t>(p));
        ASSIGN_OR_RETURN(cost[p], CostValue(v[p], path));
        path.pop_back();
      }
    } else if (v.is_object()) {
      std::vector<bool> by_name(np, false);
      for (auto it = v.begin(); it != v.end(); ++it) {
        path.push_back(it.key());
        ASSIGN_OR_RETURN(double c, CostValue(it.value(), path));
        path.pop_back();
        if (auto p = processor_index_.find(it.key()); p != processor_index_.end()) {
          cost[p->second] = c;
          by_name[p->second] = true;
        } else if (auto t = type_members_.find(it.key()); t != type_members_.end()) {
          for (int32_t q : t->second) {
            if (!by_name[q]) cost[q] = c;  // a processor's own entry beats its type's
          }
        } else {
          std::vector<std::string> known;
          for (const DagProcessor& proc : graph_.processors) known.push_back(proc.name);
          for (const auto& [type, members] : type_members_) known.push_back(type);
          return UnknownKey(path, it.key(), "a processor or device type: " + JoinNames(known));
        }
      }
    } else {
      return Error(path, Describe(v) + " is not a cost",
                   "a number, a list in processor order, or an object keyed by processor");
    }
    if (std::all_of(cost.begin(), cost.end(), [](double c) { return c == kCannotRun; })) {
      return Error(path, "no processor can run this task",
                   "a finite cost on at least one processor");
    }
    return Status::Ok();
  }

  Status ReadTasks(const json& root) {
    if (!root.contains("tasks")) return Error({}, "missing key 'tasks'", "a list of tasks");
    const json& list = root["tasks"];
    const std::vector<PathStep> path{std::string("tasks")};
    if (!list.is_array()) return Error(path, "not a list", "a list of tasks");
    if (list.empty()) return Error(path, "the graph has no tasks", "at least one task");
    if (static_cast<int64_t>(list.size()) > kMaxDagTasks) {
      return Error(path, fmt::format("{} tasks", list.size()),
                   fmt::format("at most {}", kMaxDagTasks));
    }
    if (static_cast<int64_t>(list.size()) * graph_.num_processors() > kMaxDagCostCells) {
      return Error(path,
                   fmt::format("{} tasks x {} processors", list.size(), graph_.num_processors()),
                   fmt::format("at most {} costs in all", kMaxDagCostCells));
    }
    graph_.tasks.reserve(list.size());
    for (size_t k = 0; k < list.size(); ++k) {
      std::vector<PathStep> at{std::string("tasks"), k};
      const json& item = list[k];
      if (!item.is_object())
        return Error(at, Describe(item) + " is not a task", "an object with id and cost");
      RETURN_IF_ERROR(CheckKeys(item, at, {"id", "cost", "name", "comment"}));
      if (!item.contains("id")) return Error(at, "missing key 'id'", "a task name");
      if (!item.contains("cost")) return Error(at, "missing key 'cost'", "a cost per processor");
      DagTask task;
      at.push_back(std::string("id"));
      ASSIGN_OR_RETURN(task.name, Name(item["id"], at));
      at.back() = std::string("cost");
      RETURN_IF_ERROR(ReadCost(item["cost"], at, task.cost));
      at.pop_back();
      if (!task_index_.emplace(task.name, static_cast<int32_t>(k)).second) {
        at.push_back(std::string("id"));
        return Error(at, fmt::format("duplicate task '{}'", task.name), "unique ids");
      }
      graph_.tasks.push_back(std::move(task));
    }
    return Status::Ok();
  }

  Status ReadEdges(const json& root) {
    if (!root.contains("edges")) {
      return Error({}, "missing key 'edges'", "a list of edges (may be empty)");
    }
    const json& list = root["edges"];
    const std::vector<PathStep> path{std::string("edges")};
    if (!list.is_array()) return Error(path, "not a list", "a list of edges");
    if (static_cast<int64_t>(list.size()) > kMaxDagEdges) {
      return Error(path, fmt::format("{} edges", list.size()),
                   fmt::format("at most {}", kMaxDagEdges));
    }
    std::map<std::pair<int32_t, int32_t>, size_t> seen;
    for (size_t k = 0; k < list.size(); ++k) {
      std::vector<PathStep> at{std::string("edges"), k};
      const json& item = list[k];
      if (!item.is_object())
        return Error(at, Describe(item) + " is not an edge", "an object with from and to");
      RETURN_IF_ERROR(CheckKeys(item, at, {"from", "to", "data", "bytes", "comment"}));
      DagEdge edge;
      for (const char* end : {"from", "to"}) {
        if (!item.contains(end))
          return Error(at, fmt::format("missing key '{}'", end), "a task id");
        at.push_back(std::string(end));
        ASSIGN_OR_RETURN(std::string name, Name(item[end], at));
        auto it = task_index_.find(name);
        if (it == task_index_.end()) {
          return Error(at, fmt::format("unknown task '{}'", name), "the id of a task in 'tasks'");
        }
        (std::string(end) == "from" ? edge.from : edge.to) = it->second;
        at.pop_back();
      }
      if (item.contains("data") && item.contains("bytes")) {
        at.push_back(std::string("bytes"));
        return Error(at, "both 'data' and 'bytes' given", "one of them");
      }
      if (item.contains("data")) {
        at.push_back(std::string("data"));
        const json& v = item["data"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
          return Error(at, Describe(v) + " is not an amount of data", "a finite number >= 0");
        }
        edge.data = v.get<double>();
        at.pop_back();
      } else if (item.contains("bytes")) {
        at.push_back(std::string("bytes"));
        const json& v = item["bytes"];
        if (v.is_number_unsigned() || v.is_number_integer()) {
          if (v.is_number_integer() && v.get<int64_t>() < 0) {
            return Error(at, Describe(v) + " is negative", "bytes >= 0");
          }
          edge.data = v.get<double>();
        } else if (v.is_string()) {
          util::Result<uint64_t> b = util::ParseBytes(v.get<std::string>());
          if (!b.ok()) return Error(at, b.status().message());
          edge.data = static_cast<double>(*b);
        } else {
          return Error(at, Describe(v) + " is not a size", "an integer or a string like \"64MB\"");
        }
        at.pop_back();
      }
      if (edge.from == edge.to) {
        return Error(at, fmt::format("task '{}' depends on itself", graph_.tasks[edge.from].name),
                     "two distinct tasks");
      }
      if (!seen.emplace(std::make_pair(edge.from, edge.to), k).second) {
        return Error(at,
                     fmt::format("duplicate edge {} -> {}", graph_.tasks[edge.from].name,
                                 graph_.tasks[edge.to].name),
                     "one edge per pair of tasks");
      }
      graph_.edges.push_back(edge);
      edge_index_.push_back(k);
    }
    return Status::Ok();
  }

  std::string_view text_;
  std::string file_;
  const DagReadOptions& options_;
  JsonLocator locator_;
  TaskGraph graph_;
  std::unordered_map<std::string, int32_t> processor_index_;
  std::map<std::string, std::vector<int32_t>> type_members_;
  std::unordered_map<std::string, int32_t> task_index_;
  std::vector<size_t> edge_index_;  // graph edge -> index in the file's list
};

}  // namespace

util::Result<TaskGraph> ParseDagJson(std::string_view text, const std::string& file_name,
                                     const DagReadOptions& options) {
  return JsonDagParser(text, file_name, options).Parse();
}

util::Result<TaskGraph> ReadDag(const std::string& path, const DagReadOptions& options) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  bool stg = path.size() >= 4 && path.compare(path.size() - 4, 4, ".stg") == 0;
  if (!stg) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    stg = first != std::string::npos &&
          (std::isdigit(static_cast<unsigned char>(text[first])) || text[first] == '#');
  }
  return stg ? ParseDagStg(text, path, options) : ParseDagJson(text, path, options);
}

std::string FormatDagJson(const TaskGraph& graph) {
  using ojson = nlohmann::ordered_json;
  ojson root = ojson::object();
  if (!graph.name.empty()) root["name"] = graph.name;
  ojson procs = ojson::array();
  for (const DagProcessor& p : graph.processors) {
    ojson item = {{"id", p.name}};
    if (!p.type.empty()) item["type"] = p.type;
    procs.push_back(item);
  }
  root["processors"] = procs;
  root["bandwidth"] = graph.bandwidth;
  ojson tasks = ojson::array();
  for (const DagTask& t : graph.tasks) {
    ojson cost = ojson::object();
    for (size_t p = 0; p < t.cost.size(); ++p) {
      if (t.cost[p] == kCannotRun) {
        cost[graph.processors[p].name] = "inf";
      } else {
        cost[graph.processors[p].name] = t.cost[p];
      }
    }
    tasks.push_back({{"id", t.name}, {"cost", cost}});
  }
  root["tasks"] = tasks;
  ojson edges = ojson::array();
  for (const DagEdge& e : graph.edges) {
    edges.push_back(
        {{"from", graph.tasks[e.from].name}, {"to", graph.tasks[e.to].name}, {"data", e.data}});
  }
  root["edges"] = edges;
  return root.dump(1) + "\n";
}

}  // namespace hetsched::model::io
