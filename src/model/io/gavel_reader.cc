#include "model/io/gavel_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "model/catalog.h"
#include "util/file.h"
#include "util/line_reader.h"
#include "util/source_location.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::SourceLocation;
using util::Status;

// Largest gang a trace line may ask for; far above any real cluster, small enough that
// gang_size fits int32 with room to spare.
constexpr int64_t kMaxScaleFactor = 1 << 20;
// Steps are integers in Gavel; beyond 2^53 a double no longer holds every integer.
constexpr int64_t kMaxSteps = int64_t{1} << 53;

constexpr std::string_view kUnconsolidatedSuffix = "_unconsolidated";

// 1-based line and column of byte `offset` (0-based) in `text`.
SourceLocation LocationOf(std::string_view text, size_t offset, const std::string& file) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {file, line, static_cast<int>(offset - line_start) + 1};
}

// Parses Gavel's "('<job type>', <scale factor>)" strictly.
bool ParseJobKey(std::string_view key, std::string* job_type, int* scale) {
  constexpr std::string_view kOpen = "('";
  constexpr std::string_view kSep = "', ";
  if (key.size() < kOpen.size() + kSep.size() + 2 || key.substr(0, 2) != kOpen ||
      key.back() != ')') {
    return false;
  }
  std::string_view inner = key.substr(kOpen.size(), key.size() - kOpen.size() - 1);
  const size_t sep = inner.rfind(kSep);
  if (sep == std::string_view::npos || sep == 0) return false;
  std::string_view type = inner.substr(0, sep);
  std::string_view number = inner.substr(sep + kSep.size());
  if (type.find('\'') != std::string_view::npos) return false;
  // Python writes the scale factor without leading zeros; "01" would alias "1".
  if (number.empty() || number.front() == '0') return false;
  int value = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size() || value < 1 ||
      value > kMaxScaleFactor) {
    return false;
  }
  *job_type = std::string(type);
  *scale = value;
  return true;
}

constexpr const char* kKeyExpected = "a key like \"('ResNet-50 (batch size 64)', 1)\"";

Result<double> Throughput(const nlohmann::json& j, const std::string& file,
                          const std::string& path) {
  if (!j.is_number()) {
    return util::InputError({file, 0, 0}, path, fmt::format("is {}", j.dump()),
                            "a non-negative number of steps/s");
  }
  const double value = j.get<double>();
  if (!std::isfinite(value) || value < 0) {
    return util::InputError({file, 0, 0}, path, fmt::format("is {}", j.dump()),
                            "a non-negative number of steps/s");
  }
  return value;
}

Status ParseWorkerType(const nlohmann::json& entries, const std::string& worker,
                       const std::string& device, const std::string& file,
                       ThroughputProfile* profile) {
  if (!entries.is_object()) {
    return util::InputError({file, 0, 0}, worker, "is not an object",
                            "job type keys mapping to throughputs");
  }
  for (const auto& [key, value] : entries.items()) {
    const std::string path = fmt::format("{}.{}", worker, key);
    std::string job_type;
    int scale = 0;
    if (!ParseJobKey(key, &job_type, &scale)) {
      return util::InputError({file, 0, 0}, path, "is not a job type key", kKeyExpected);
    }
    if (!value.is_object()) {
      return util::InputError({file, 0, 0}, path, "is not an object",
                              "\"null\" and partner keys mapping to throughputs");
    }
    auto isolated = value.find("null");
    if (isolated == value.end()) {
      return util::InputError({file, 0, 0}, path, "has no \"null\" entry",
                              "the isolated throughput under \"null\"");
    }
    ASSIGN_OR_RETURN(double alone, Throughput(*isolated, file, path + ".null"));
    profile->SetIsolated(job_type, scale, device, alone);
    for (const auto& [partner_key, pair] : value.items()) {
      if (partner_key == "null") continue;
      const std::string pair_path = fmt::format("{}.{}", path, partner_key);
      std::string partner;
      int partner_scale = 0;
      if (!ParseJobKey(partner_key, &partner, &partner_scale)) {
        return util::InputError({file, 0, 0}, pair_path, "is not a job type key", kKeyExpected);
      }
      if (!pair.is_array() || pair.size() != 2) {
        return util::InputError({file, 0, 0}, pair_path, fmt::format("is {}", pair.dump()),
                                "[own, partner] steps/s");
      }
      ASSIGN_OR_RETURN(double own, Throughput(pair[0], file, pair_path + "[0]"));
      ASSIGN_OR_RETURN(double other, Throughput(pair[1], file, pair_path + "[1]"));
      profile->SetColocated(job_type, scale, partner, partner_scale, device, own, other);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Traces

enum class TraceFormat { kTenColumns, kSevenColumns };

struct Column {
  std::string_view text;
  int column;  // 1-based byte column of its first character
};

// The columns a trace line uses, in order, by format.
constexpr std::string_view kTenNames[] = {
    "job_type",    "command",      "working_dir",     "num_steps_arg", "needs_data_dir",
    "total_steps", "scale_factor", "priority_weight", "SLO",           "arrival_time"};
constexpr std::string_view kSevenNames[] = {"job_type",       "command",     "num_steps_arg",
                                            "needs_data_dir", "total_steps", "arrival_time",
                                            "scale_factor"};

class TraceLine {
 public:
  TraceLine(const std::string& file, int line, std::vector<Column> cols, TraceFormat format)
      : file_(file), line_(line), cols_(std::move(cols)), format_(format) {}

  const Column& Get(std::string_view name, std::string* label) const {
    const std::string_view* names = format_ == TraceFormat::kTenColumns ? kTenNames : kSevenNames;
    const size_t n = format_ == TraceFormat::kTenColumns ? 10 : 7;
    for (size_t i = 0; i < n; ++i) {
      if (names[i] == name) {
        *label = fmt::format("column {} ({})", i + 1, name);
        return cols_[i];
      }
    }
    // Callers only ask for names of the format; reaching here is a programmer error.
    *label = std::string(name);
    return cols_[0];
  }

  Status Error(const Column& c, const std::string& label, const std::string& problem,
               const std::string& expected) const {
    return util::InputError({file_, line_, c.column}, label, problem, expected);
  }

  Result<int64_t> Integer(std::string_view name, int64_t min, int64_t max,
                          const std::string& expected) const {
    std::string label;
    const Column& c = Get(name, &label);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), value);
    if (ec != std::errc() || ptr != c.text.data() + c.text.size() || value < min || value > max) {
      return Error(c, label, fmt::format("'{}' is out of range or not an integer", c.text),
                   expected);
    }
    return value;
  }

  Result<double> Number(std::string_view name, const std::string& expected) const {
    std::string label;
    const Column& c = Get(name, &label);
    double value = 0;
    auto [ptr, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), value);
    if (ec != std::errc() || ptr != c.text.data() + c.text.size() || !std::isfinite(value)) {
      return Error(c, label, fmt::format("'{}' is not a finite number", c.text), expected);
    }
    return value;
  }

 private:
  const std::string& file_;
  int line_;
  std::vector<Column> cols_;
  TraceFormat format_;
};

Result<Job> ParseTraceJob(const TraceLine& line, size_t index) {
  Job job;
  job.name = fmt::format("job-{}", index);
  job.kind = JobKind::kTraining;
  std::string label;
  const Column& type = line.Get("job_type", &label);
  if (type.text.empty()) {
    return line.Error(type, label, "is empty", "a job type like 'ResNet-50 (batch size 64)'");
  }
  job.job_type = std::string(type.text);
  ASSIGN_OR_RETURN(int64_t scale,
                   line.Integer("scale_factor", 1, kMaxScaleFactor,
                                fmt::format("an integer from 1 to {}", kMaxScaleFactor)));
  job.gang_size = job.min_workers = job.max_workers = static_cast<int32_t>(scale);
  ASSIGN_OR_RETURN(int64_t steps, line.Integer("total_steps", 1, kMaxSteps, "a positive integer"));
  job.work = static_cast<double>(steps);
  RETURN_IF_ERROR(line.Integer("needs_data_dir", 0, 1, "0 or 1").status());
  ASSIGN_OR_RETURN(job.arrival_s, line.Number("arrival_time", "seconds, at least 0"));
  if (job.arrival_s < 0) {
    const Column& c = line.Get("arrival_time", &label);
    return line.Error(c, label, fmt::format("is {}", c.text), "seconds, at least 0");
  }
  job.stacks = {StackRequirement{"cuda", ""}};
  job.preemptible = true;
  return job;
}

Status ParseTenColumnExtras(const TraceLine& line, Job* job) {
  ASSIGN_OR_RETURN(job->priority_weight, line.Number("priority_weight", "a positive number"));
  if (job->priority_weight <= 0) {
    std::string label;
    const Column& c = line.Get("priority_weight", &label);
    return line.Error(c, label, fmt::format("is {}", c.text), "a positive number");
  }
  // Gavel writes -1 when a job has no SLO.
  ASSIGN_OR_RETURN(double slo, line.Number("SLO", "a multiple of the job's duration, or -1"));
  if (slo > 0) job->slo_factor = slo;
  return Status::Ok();
}

std::string Clean(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

Result<ThroughputProfile> ParseGavelThroughputs(std::string_view text,
                                                const std::string& file_name) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (size_t colon = msg.find(": "); colon != std::string::npos) msg = msg.substr(colon + 2);
    return util::InputError(LocationOf(text, e.byte > 0 ? e.byte - 1 : 0, file_name), "",
                            fmt::format("not valid JSON: {}", msg));
  } catch (const std::exception& e) {
    return util::InputError({file_name, 0, 0}, "", fmt::format("cannot read JSON: {}", e.what()));
  }
  if (!root.is_object()) {
    return util::InputError({file_name, 0, 0}, "", "the document is not an object",
                            "worker types (k80, p100, v100) mapping to job types");
  }
  const DeviceCatalog& catalog = DeviceCatalog::BuiltIn();
  ThroughputProfile profile;
  std::map<std::string, std::string> worker_of;  // catalog name -> worker type that gave it
  for (const auto& [worker, entries] : root.items()) {
    std::string_view name = worker;
    if (name.size() > kUnconsolidatedSuffix.size() &&
        name.substr(name.size() - kUnconsolidatedSuffix.size()) == kUnconsolidatedSuffix) {
      // Skipped on purpose; see the header: hetsched models cross-server placement itself.
      continue;
    }
    const DeviceType* type = catalog.Find(worker);
    if (type == nullptr) {
      return util::InputError({file_name, 0, 0}, worker,
                              fmt::format("unknown worker type '{}'", worker),
                              fmt::format("a device type of the catalog: {}", catalog.NameList()));
    }
    auto [seen, inserted] = worker_of.emplace(type->name, worker);
    if (!inserted) {
      return util::InputError(
          {file_name, 0, 0}, worker,
          fmt::format("names device type '{}' like '{}' does", type->name, seen->second),
          "each device type once");
    }
    try {
      RETURN_IF_ERROR(ParseWorkerType(entries, worker, type->name, file_name, &profile));
    } catch (const std::exception& e) {
      return util::InputError({file_name, 0, 0}, worker, fmt::format("cannot read: {}", e.what()));
    }
  }
  if (profile.empty()) {
    return util::InputError({file_name, 0, 0}, "", "no throughputs",
                            "at least one worker type with job types");
  }
  return profile;
}

Result<ThroughputProfile> LoadGavelThroughputs(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseGavelThroughputs(text, path);
}

Result<Workload> ParseGavelTrace(std::string_view text, const std::string& file_name) {
  Workload workload;
  std::optional<TraceFormat> format;
  int first_line = 0;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const int line_no = lines.line_number();
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::vector<Column> cols;
    size_t start = 0;
    while (true) {
      const size_t tab = line.find('\t', start);
      cols.push_back(
          {line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start),
           static_cast<int>(start) + 1});
      if (tab == std::string_view::npos || cols.size() > 10) break;
      start = tab + 1;
    }
    TraceFormat this_format;
    if (cols.size() == 10) {
      this_format = TraceFormat::kTenColumns;
    } else if (cols.size() == 7) {
      this_format = TraceFormat::kSevenColumns;
    } else {
      return util::InputError(
          {file_name, line_no, 0}, "",
          fmt::format("has {}{} tab-separated columns", cols.size() > 10 ? "more than " : "",
                      std::min<size_t>(cols.size(), 10)),
          "10 (job_type command working_dir num_steps_arg needs_data_dir total_steps "
          "scale_factor priority_weight SLO arrival_time) or 7 (job_type command num_steps_arg "
          "needs_data_dir total_steps arrival_time scale_factor)");
    }
    if (!format) {
      format = this_format;
      first_line = line_no;
    } else if (*format != this_format) {
      return util::InputError({file_name, line_no, 0}, "",
                              fmt::format("has {} columns but line {} has {}", cols.size(),
                                          first_line, *format == TraceFormat::kTenColumns ? 10 : 7),
                              "one format per file");
    }
    TraceLine parsed(file_name, line_no, std::move(cols), this_format);
    ASSIGN_OR_RETURN(Job job, ParseTraceJob(parsed, workload.jobs.size()));
    if (this_format == TraceFormat::kTenColumns)
      RETURN_IF_ERROR(ParseTenColumnExtras(parsed, &job));
    workload.jobs.push_back(std::move(job));
  }
  if (workload.jobs.empty()) {
    return util::InputError({file_name, 0, 0}, "", "no jobs", "one tab-separated job per line");
  }
  SortByArrival(&workload);
  return workload;
}

Result<Workload> LoadGavelTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseGavelTrace(text, path);
}

std::string FormatGavelTrace(const Workload& workload) {
  std::string out;
  for (const Job& job : workload.jobs) {
    const std::string slo = job.slo_factor ? fmt::format("{}", *job.slo_factor) : "-1";
    fmt::format_to(std::back_inserter(out), "{}\t{}\t.\t--num_steps\t{}\t{:.0f}\t{}\t{}\t{}\t{}\n",
                   Clean(job.job_type), Clean(job.name), job.data_bytes > 0 ? 1 : 0,
                   std::ceil(job.work), job.gang_size, job.priority_weight, slo, job.arrival_s);
  }
  return out;
}

Status ApplyGavelSlo(const ThroughputProfile& profile, Workload* workload,
                     const std::string& reference_device) {
  std::vector<std::pair<size_t, double>> deadlines;
  for (size_t i = 0; i < workload->jobs.size(); ++i) {
    const Job& job = workload->jobs[i];
    if (!job.slo_factor) continue;
    auto rate = profile.Isolated(job.job_type, job.gang_size, reference_device);
    if (!rate || *rate <= 0) {
      return Status::NotFound(
          fmt::format("job '{}': no {} throughput for ('{}', {}) to turn its SLO into a deadline",
                      job.name, reference_device, job.job_type, job.gang_size));
    }
    deadlines.emplace_back(i, job.arrival_s + *job.slo_factor * job.work / *rate);
  }
  for (const auto& [i, deadline] : deadlines) workload->jobs[i].deadline_s = deadline;
  return Status::Ok();
}

}  // namespace hetsched::model::io
