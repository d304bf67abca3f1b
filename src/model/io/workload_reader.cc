#include "model/io/workload_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/catalog.h"
#include "model/io/document.h"
#include "model/io/gavel_reader.h"
#include "model/model_spec.h"
#include "util/file.h"
#include "util/line_reader.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::SourceLocation;
using util::Status;

const std::vector<std::string_view> kJobFields = {"name",
                                                  "kind",
                                                  "job_type",
                                                  "gang_size",
                                                  "elastic",
                                                  "stacks",
                                                  "memory_per_worker",
                                                  "cores",
                                                  "host_memory",
                                                  "work",
                                                  "duration",
                                                  "reference_device",
                                                  "throughput",
                                                  "ops",
                                                  "sync_bytes_per_step",
                                                  "priority",
                                                  "priority_weight",
                                                  "tenant",
                                                  "deadline",
                                                  "estimate",
                                                  "time_limit",
                                                  "preemptible",
                                                  "portable_checkpoint",
                                                  "data",
                                                  "pinned_devices",
                                                  "command",
                                                  "arrival",
                                                  "repeat",
                                                  "every",
                                                  "model",
                                                  "slo",
                                                  "requests",
                                                  "rate",
                                                  "tokens"};

// Fields only a service (`kind: service`) has.
const std::vector<std::string_view> kServiceFields = {"model", "slo", "requests", "rate", "tokens"};

// Fields that name or multiply one job make no sense as defaults for all of them.
const std::vector<std::string_view> kNotDefaults = {"name", "repeat", "every"};

// One job entry of the file plus how many copies it stands for.
struct JobTemplate {
  Job job;
  int64_t repeat = 1;
  bool repeated = false;  // `repeat:` was given, so `{i}` in the name is the copy number
  double every_s = 0;
  size_t entry = 0;  // index in the file's job list
  int line = 0;
  int column = 0;
};

// "one of: a, b, c" for errors about an unknown device type name.
std::string KnownTypes(const DeviceCatalog& catalog) {
  const std::string names = catalog.NameList();
  return names.empty() ? "a device type of the cluster (its catalog is empty)" : "one of: " + names;
}

// YAML's spellings of NaN and infinity, which are no number to std::from_chars.
bool IsYamlNonFinite(const std::string& text) {
  std::string_view t = text;
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) t.remove_prefix(1);
  return t == ".nan" || t == ".NaN" || t == ".NAN" || t == ".inf" || t == ".Inf" || t == ".INF";
}

class JobParser {
 public:
  // Device type names resolve against `catalog`, which must outlive the parser.
  JobParser(const std::string& file, const DocValue* defaults, const DeviceCatalog& catalog)
      : p_(file), defaults_(defaults), catalog_(catalog) {}

  // Looks a field up in the job, then in `defaults:`. `path` gets the path to report.
  const DocValue* Get(const DocValue& job, std::string_view key, const std::string& job_path,
                      std::string* path) const {
    if (const DocValue::Field* f = FindField(job, key)) {
      *path = DocReader::Join(job_path, key);
      return &f->value;
    }
    if (defaults_ != nullptr) {
      if (const DocValue::Field* f = FindField(*defaults_, key)) {
        *path = DocReader::Join("defaults", key);
        return &f->value;
      }
    }
    return nullptr;
  }

  Status CheckDefaults() const {
    if (defaults_ == nullptr) return Status::Ok();
    RETURN_IF_ERROR(p_.Expect(*defaults_, DocValue::Kind::kMap, "defaults", "a map of job fields"));
    std::vector<std::string_view> allowed;
    for (std::string_view f : kJobFields) {
      if (std::find(kNotDefaults.begin(), kNotDefaults.end(), f) == kNotDefaults.end()) {
        allowed.push_back(f);
      }
    }
    return p_.OnlyKnown(*defaults_, "defaults", allowed);
  }

  Result<JobTemplate> Parse(const DocValue& v, size_t entry) const {
    const std::string jp = fmt::format("jobs[{}]", entry);
    RETURN_IF_ERROR(p_.Expect(v, DocValue::Kind::kMap, jp, "a map of job fields"));
    RETURN_IF_ERROR(p_.OnlyKnown(v, jp, kJobFields));
    JobTemplate t;
    t.entry = entry;
    t.line = v.line;
    t.column = v.column;
    Job& job = t.job;
    std::string path;

    const DocValue* name = Get(v, "name", jp, &path);
    if (name == nullptr) return p_.Error(v, jp + ".name", "is missing", "a unique job name");
    ASSIGN_OR_RETURN(job.name, p_.NonEmptyString(*name, path));

    if (const DocValue* x = Get(v, "kind", jp, &path)) {
      ASSIGN_OR_RETURN(std::string text, p_.NonEmptyString(*x, path));
      auto kind = ParseJobKind(text);
      if (!kind.ok()) {
        return p_.Error(*x, path, fmt::format("'{}' is not a job kind", text),
                        "training, inference, batch, realtime or service");
      }
      job.kind = *kind;
    }
    if (const DocValue* x = Get(v, "job_type", jp, &path)) {
      ASSIGN_OR_RETURN(job.job_type, p_.NonEmptyString(*x, path));
    }

    if (const DocValue* x = Get(v, "gang_size", jp, &path)) {
      ASSIGN_OR_RETURN(int64_t g, p_.Integer(*x, path, 1, std::numeric_limits<int32_t>::max(),
                                             "a positive integer"));
      job.gang_size = static_cast<int32_t>(g);
    }
    job.min_workers = job.max_workers = job.gang_size;
    if (const DocValue* x = Get(v, "elastic", jp, &path)) {
      RETURN_IF_ERROR(ParseElastic(*x, path, &job));
    }

    const DocValue* stacks = Get(v, "stacks", jp, &path);
    if (stacks == nullptr) {
      return p_.Error(v, jp + ".stacks", "is missing",
                      "a list of stacks the job can run on, like [cuda>=11.8, rocm]");
    }
    RETURN_IF_ERROR(ParseStacks(*stacks, path, &job));

    if (const DocValue* x = Get(v, "memory_per_worker", jp, &path)) {
      ASSIGN_OR_RETURN(job.memory_per_worker, p_.Bytes(*x, path));
    }
    if (const DocValue* x = Get(v, "cores", jp, &path)) {
      ASSIGN_OR_RETURN(int64_t cores, p_.Integer(*x, path, 0, kMaxCoresPerWorker,
                                                 fmt::format("a whole number of cores from 0 to {}",
                                                             kMaxCoresPerWorker)));
      job.cores_per_worker = static_cast<int32_t>(cores);
    }
    if (const DocValue* x = Get(v, "host_memory", jp, &path)) {
      ASSIGN_OR_RETURN(job.host_memory_per_worker, p_.Bytes(*x, path));
    }
    if (const DocValue* x = Get(v, "throughput", jp, &path)) {
      RETURN_IF_ERROR(ParseThroughput(*x, path, &job));
    }
    if (job.kind == JobKind::kService) {
      RETURN_IF_ERROR(ParseService(v, jp, &job));
    } else {
      for (std::string_view key : kServiceFields) {
        if (const DocValue* x = Get(v, key, jp, &path)) {
          return p_.Error(*x, path, "applies only to services",
                          "kind: service, or no " + std::string(key));
        }
      }
      RETURN_IF_ERROR(ParseWork(v, jp, &job));
    }

    if (const DocValue* x = Get(v, "ops", jp, &path)) RETURN_IF_ERROR(ParseOps(*x, path, &job));
    if (const DocValue* x = Get(v, "sync_bytes_per_step", jp, &path)) {
      ASSIGN_OR_RETURN(job.sync_bytes_per_step, p_.Bytes(*x, path));
    }
    if (const DocValue* x = Get(v, "priority", jp, &path)) {
      ASSIGN_OR_RETURN(int64_t prio,
                       p_.Integer(*x, path, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), "a 32-bit integer"));
      job.priority = static_cast<int32_t>(prio);
    }
    if (const DocValue* x = Get(v, "priority_weight", jp, &path)) {
      ASSIGN_OR_RETURN(job.priority_weight,
                       p_.Number(*x, path, 0, /*strict=*/true, "a positive number"));
    }
    if (const DocValue* x = Get(v, "tenant", jp, &path)) {
      ASSIGN_OR_RETURN(job.tenant, p_.NonEmptyString(*x, path));
    }
    if (const DocValue* x = Get(v, "preemptible", jp, &path)) {
      ASSIGN_OR_RETURN(job.preemptible, p_.Bool(*x, path));
    }
    if (const DocValue* x = Get(v, "portable_checkpoint", jp, &path)) {
      ASSIGN_OR_RETURN(job.portable_checkpoint, p_.Bool(*x, path));
    }
    // An estimate above the time limit is not an error: users write that. Both are lengths of
    // time, not instants, so `repeat:` copies keep them unchanged.
    if (const DocValue* x = Get(v, "estimate", jp, &path)) {
      ASSIGN_OR_RETURN(job.estimate_s,
                       JobTime(*x, path, 0, "a positive duration up to 10 years, like 2h"));
    }
    if (const DocValue* x = Get(v, "time_limit", jp, &path)) {
      ASSIGN_OR_RETURN(
          job.time_limit_s,
          JobTime(*x, path, kMinTimeLimitS,
                  fmt::format("a duration from {} s to 10 years, like 4h", kMinTimeLimitS)));
    }
    if (const DocValue* x = Get(v, "data", jp, &path)) RETURN_IF_ERROR(ParseData(*x, path, &job));
    if (const DocValue* x = Get(v, "pinned_devices", jp, &path)) {
      RETURN_IF_ERROR(
          p_.Expect(*x, DocValue::Kind::kList, path, "a list of 'node' or 'node/index'"));
      for (size_t i = 0; i < x->items.size(); ++i) {
        ASSIGN_OR_RETURN(std::string dev,
                         p_.NonEmptyString(x->items[i], fmt::format("{}[{}]", path, i)));
        job.pinned_devices.push_back(std::move(dev));
      }
    }
    if (const DocValue* x = Get(v, "command", jp, &path)) {
      RETURN_IF_ERROR(p_.Expect(*x, DocValue::Kind::kList, path, "a non-empty list of strings"));
      if (x->items.empty()) {
        return p_.Error(*x, path, "is empty", "a non-empty list of strings (program, arguments)");
      }
      for (size_t i = 0; i < x->items.size(); ++i) {
        const std::string item_path = fmt::format("{}[{}]", path, i);
        ASSIGN_OR_RETURN(std::string arg, p_.NonEmptyString(x->items[i], item_path));
        job.command.push_back(std::move(arg));
      }
    }
    if (const DocValue* x = Get(v, "arrival", jp, &path)) {
      ASSIGN_OR_RETURN(job.arrival_s, p_.Seconds(*x, path));
    }
    if (const DocValue* x = Get(v, "deadline", jp, &path)) {
      ASSIGN_OR_RETURN(double deadline, p_.Seconds(*x, path));
      if (deadline <= job.arrival_s) {
        return p_.Error(
            *x, path, fmt::format("{} s is not after the arrival at {} s", deadline, job.arrival_s),
            "an absolute time later than arrival");
      }
      job.deadline_s = deadline;
    }
    RETURN_IF_ERROR(ParseRepeat(v, jp, &t));
    return t;
  }

 private:
  // `estimate` or `time_limit`: a duration > 0, at least `min_s` and at most kMaxJobTimeS.
  Result<double> JobTime(const DocValue& x, const std::string& path, double min_s,
                         const std::string& expected) const {
    if (x.kind == DocValue::Kind::kScalar && IsYamlNonFinite(x.text)) {
      return p_.Error(x, path, fmt::format("'{}' is not finite", x.text), expected);
    }
    ASSIGN_OR_RETURN(double s, p_.Seconds(x, path, expected));
    if (s == 0) return p_.Error(x, path, "is 0", expected);
    if (s > kMaxJobTimeS) {
      return p_.Error(x, path, fmt::format("is {} s, more than 10 years", s), expected);
    }
    if (s < min_s) {
      // kMinTimeLimitS: no real job starts in under a minute.
      return p_.Error(x, path,
                      fmt::format("is {} s, less than the {} s any real job takes just to start "
                                  "(container pull, CUDA context, data loader)",
                                  s, min_s),
                      expected);
    }
    return s;
  }

  // A service's model, SLO and request stream (ServiceSpec in model/job.h).
  Status ParseService(const DocValue& v, const std::string& jp, Job* job) const {
    ServiceSpec service;
    std::string path;
    for (std::string_view key : {"work", "duration", "gang_size", "elastic", "pinned_devices"}) {
      if (const DocValue* x = Get(v, key, jp, &path)) {
        return p_.Error(*x, path, "does not apply to a service",
                        "a service's replicas are sized by hetsched from its load");
      }
    }
    const DocValue* model = Get(v, "model", jp, &path);
    if (model == nullptr) {
      return p_.Error(v, jp + ".model", "is missing", "a model preset such as llama-70b");
    }
    ASSIGN_OR_RETURN(service.model, p_.NonEmptyString(*model, path));
    if (auto shape = PresetShape(service.model); !shape.ok()) {
      return p_.Error(*model, path, shape.status().message(), "a model preset");
    }
    if (const DocValue* x = Get(v, "slo", jp, &path)) {
      RETURN_IF_ERROR(p_.Expect(*x, DocValue::Kind::kMap, path, "{ttft: 2s, tpot: 100ms}"));
      RETURN_IF_ERROR(p_.OnlyKnown(*x, path, {"ttft", "tpot", "percentile"}));
      if (const DocValue::Field* f = FindField(*x, "ttft")) {
        ASSIGN_OR_RETURN(service.ttft_s, p_.Seconds(f->value, path + ".ttft"));
      }
      if (const DocValue::Field* f = FindField(*x, "tpot")) {
        ASSIGN_OR_RETURN(service.tpot_s, p_.Seconds(f->value, path + ".tpot"));
      }
      if (const DocValue::Field* f = FindField(*x, "percentile")) {
        ASSIGN_OR_RETURN(service.percentile, p_.Number(f->value, path + ".percentile", 0,
                                                       /*strict=*/true, "a percent in (0, 100]"));
        if (service.percentile > 100) {
          return p_.Error(f->value, path + ".percentile", fmt::format("is {}", service.percentile),
                          "a percent in (0, 100]");
        }
      }
      if (service.ttft_s <= 0 || service.tpot_s <= 0) {
        return p_.Error(*x, path, "has a zero latency target", "positive ttft and tpot");
      }
    }
    if (const DocValue* x = Get(v, "requests", jp, &path)) {
      ASSIGN_OR_RETURN(std::string file, p_.NonEmptyString(*x, path));
      const std::filesystem::path base = std::filesystem::path(p_.At(*x).file).parent_path();
      service.requests_file =
          std::filesystem::path(file).is_absolute() || base.empty() ? file : (base / file).string();
    }
    if (const DocValue* x = Get(v, "rate", jp, &path)) {
      const char* kExpected = "a list of [time of day, requests/s] pairs like [[0h, 2], [14h, 10]]";
      RETURN_IF_ERROR(p_.Expect(*x, DocValue::Kind::kList, path, kExpected));
      if (x->items.empty()) return p_.Error(*x, path, "is empty", kExpected);
      for (size_t i = 0; i < x->items.size(); ++i) {
        const DocValue& point = x->items[i];
        const std::string pp = fmt::format("{}[{}]", path, i);
        RETURN_IF_ERROR(p_.Expect(point, DocValue::Kind::kList, pp, kExpected));
        if (point.items.size() != 2) {
          return p_.Error(point, pp, fmt::format("has {} items", point.items.size()), kExpected);
        }
        ASSIGN_OR_RETURN(double t, p_.Seconds(point.items[0], pp + "[0]"));
        ASSIGN_OR_RETURN(double r, p_.Number(point.items[1], pp + "[1]", 0, /*strict=*/false,
                                             "requests/s >= 0"));
        if (t >= 86400) {
          return p_.Error(point.items[0], pp + "[0]", fmt::format("is {} s", t),
                          "a time of day in [0h, 24h)");
        }
        if (!service.rate.empty() && t <= service.rate.back().first) {
          return p_.Error(point.items[0], pp + "[0]",
                          fmt::format("{} s is not after the previous point's {} s", t,
                                      service.rate.back().first),
                          "points in increasing time of day");
        }
        service.rate.emplace_back(t, r);
      }
      bool any = false;
      for (const auto& [t, r] : service.rate) any = any || r > 0;
      if (!any) return p_.Error(*x, path, "is zero all day", "some rate above 0");
    }
    if (const DocValue* x = Get(v, "tokens", jp, &path)) {
      if (!service.requests_file.empty()) {
        return p_.Error(*x, path, "is given with a trace", "no tokens: the trace has them");
      }
      RETURN_IF_ERROR(p_.Expect(*x, DocValue::Kind::kMap, path, "{input: 1024, output: 256}"));
      RETURN_IF_ERROR(p_.OnlyKnown(*x, path, {"input", "output"}));
      const DocValue::Field* in = FindField(*x, "input");
      const DocValue::Field* out = FindField(*x, "output");
      if (in == nullptr || out == nullptr) {
        return p_.Error(*x, path, "needs both input and output", "{input: 1024, output: 256}");
      }
      ASSIGN_OR_RETURN(int64_t i, p_.Integer(in->value, path + ".input", 1, 10'000'000,
                                             "tokens from 1 to 10,000,000"));
      ASSIGN_OR_RETURN(int64_t o, p_.Integer(out->value, path + ".output", 1, 10'000'000,
                                             "tokens from 1 to 10,000,000"));
      service.input_tokens = static_cast<int32_t>(i);
      service.output_tokens = static_cast<int32_t>(o);
    }
    if (service.requests_file.empty()) {
      if (service.rate.empty()) {
        return p_.Error(v, jp, "has neither requests nor rate",
                        "requests: FILE (Azure's trace CSV) or rate: [[time, requests/s], ...]");
      }
      if (service.input_tokens == 0) {
        return p_.Error(v, jp + ".tokens", "is missing",
                        "the tokens of each request when there is no trace: {input, output}");
      }
    }
    job->service = std::move(service);
    return Status::Ok();
  }

  Status ParseElastic(const DocValue& x, const std::string& path, Job* job) const {
    RETURN_IF_ERROR(p_.Expect(x, DocValue::Kind::kMap, path, "a map with min and max workers"));
    RETURN_IF_ERROR(p_.OnlyKnown(x, path, {"min", "max"}));
    const DocValue::Field* min = FindField(x, "min");
    const DocValue::Field* max = FindField(x, "max");
    if (min == nullptr || max == nullptr) {
      return p_.Error(x, path, "needs both min and max", "elastic: {min: 1, max: 8}");
    }
    const int64_t kMax = std::numeric_limits<int32_t>::max();
    ASSIGN_OR_RETURN(int64_t lo,
                     p_.Integer(min->value, path + ".min", 1, kMax, "a positive integer"));
    ASSIGN_OR_RETURN(int64_t hi,
                     p_.Integer(max->value, path + ".max", 1, kMax, "a positive integer"));
    if (lo > job->gang_size || hi < job->gang_size) {
      return p_.Error(
          x, path,
          fmt::format("min {} and max {} do not bracket gang_size {}", lo, hi, job->gang_size),
          "min <= gang_size <= max");
    }
    job->min_workers = static_cast<int32_t>(lo);
    job->max_workers = static_cast<int32_t>(hi);
    return Status::Ok();
  }

  Status ParseStacks(const DocValue& x, const std::string& path, Job* job) const {
    const char* kExpected = "a non-empty list of stacks like [cuda>=11.8, rocm]";
    RETURN_IF_ERROR(p_.Expect(x, DocValue::Kind::kList, path, kExpected));
    if (x.items.empty()) return p_.Error(x, path, "is empty", kExpected);
    for (size_t i = 0; i < x.items.size(); ++i) {
      const std::string item_path = fmt::format("{}[{}]", path, i);
      ASSIGN_OR_RETURN(std::string text, p_.NonEmptyString(x.items[i], item_path));
      auto req = ParseStackRequirement(text);
      if (!req.ok()) return p_.Error(x.items[i], item_path, req.status().message());
      job->stacks.push_back(std::move(req).value());
    }
    return Status::Ok();
  }

  Status ParseThroughput(const DocValue& x, const std::string& path, Job* job) const {
    RETURN_IF_ERROR(p_.Expect(x, DocValue::Kind::kMap, path,
                              "a map of device type to steps/s, like {v100: 12}"));
    for (const DocValue::Field& f : x.fields) {
      const std::string fp = DocReader::Join(path, f.key);
      const DeviceType* type = catalog_.Find(f.key);
      if (type == nullptr) {
        return util::InputError({p_.At(x).file, f.line, f.column}, fp,
                                fmt::format("unknown device type '{}'", f.key),
                                KnownTypes(catalog_));
      }
      if (job->throughput.count(type->name) != 0) {
        return util::InputError({p_.At(x).file, f.line, f.column}, fp,
                                fmt::format("device type '{}' is given twice", type->name),
                                "each device type once (names and aliases count as one)");
      }
      ASSIGN_OR_RETURN(double steps,
                       p_.Number(f.value, fp, 0, /*strict=*/true, "a positive number of steps/s"));
      job->throughput[type->name] = steps;
    }
    return Status::Ok();
  }

  // `work` in steps, or `duration` on `reference_device` (work = duration x throughput there).
  Status ParseWork(const DocValue& v, const std::string& jp, Job* job) const {
    std::string work_path, duration_path, ref_path;
    const DocValue* work = Get(v, "work", jp, &work_path);
    const DocValue* duration = Get(v, "duration", jp, &duration_path);
    const DocValue* ref = Get(v, "reference_device", jp, &ref_path);
    if (work != nullptr && duration != nullptr) {
      return p_.Error(*duration, duration_path, "is given together with work",
                      "either work (steps) or duration with reference_device");
    }
    if (work != nullptr) {
      if (ref != nullptr) {
        return p_.Error(*ref, ref_path, "only applies to duration", "no reference_device");
      }
      ASSIGN_OR_RETURN(
          job->work, p_.Number(*work, work_path, 0, /*strict=*/true, "a positive number of steps"));
      return Status::Ok();
    }
    if (duration == nullptr) {
      std::string command_path;
      // A job that runs a command may leave its size unsaid: the process decides when it ends.
      if (Get(v, "command", jp, &command_path) != nullptr) return Status::Ok();
      return p_.Error(v, jp + ".work", "is missing",
                      "work (steps), or duration with reference_device");
    }
    ASSIGN_OR_RETURN(double seconds, p_.Seconds(*duration, duration_path));
    if (seconds <= 0) {
      return p_.Error(*duration, duration_path, "is 0", "a positive duration like 2h");
    }
    if (ref == nullptr) {
      return p_.Error(*duration, jp + ".reference_device", "is missing",
                      "the device type whose throughput turns duration into steps");
    }
    ASSIGN_OR_RETURN(std::string ref_name, p_.NonEmptyString(*ref, ref_path));
    const DeviceType* type = catalog_.Find(ref_name);
    if (type == nullptr) {
      return p_.Error(*ref, ref_path, fmt::format("unknown device type '{}'", ref_name),
                      KnownTypes(catalog_));
    }
    auto it = job->throughput.find(type->name);
    if (it == job->throughput.end()) {
      return p_.Error(*ref, ref_path, fmt::format("'{}' has no entry under throughput", type->name),
                      "a device type listed under throughput");
    }
    job->work = seconds * it->second;
    if (!std::isfinite(job->work)) {
      return p_.Error(*duration, duration_path, "times the throughput overflows");
    }
    return Status::Ok();
  }

  Status ParseOps(const DocValue& x, const std::string& path, Job* job) const {
    RETURN_IF_ERROR(p_.Expect(x, DocValue::Kind::kMap, path,
                              "a map with flops_per_step, bytes_per_step, precision"));
    RETURN_IF_ERROR(p_.OnlyKnown(x, path, {"flops_per_step", "bytes_per_step", "precision"}));
    OperatorLoad ops;
    const DocValue::Field* flops = FindField(x, "flops_per_step");
    if (flops == nullptr) return p_.Error(x, path + ".flops_per_step", "is missing");
    ASSIGN_OR_RETURN(ops.flops_per_step, p_.Number(flops->value, path + ".flops_per_step", 0,
                                                   /*strict=*/true, "a positive FLOP count"));
    if (const DocValue::Field* f = FindField(x, "bytes_per_step")) {
      ASSIGN_OR_RETURN(ops.bytes_per_step, p_.Bytes(f->value, path + ".bytes_per_step"));
    }
    if (const DocValue::Field* f = FindField(x, "precision")) {
      ASSIGN_OR_RETURN(std::string prec, p_.NonEmptyString(f->value, path + ".precision"));
      if (prec == "fp16" || prec == "bf16") {
        ops.low_precision = true;
      } else if (prec == "fp32") {
        ops.low_precision = false;
      } else {
        return p_.Error(f->value, path + ".precision", fmt::format("'{}' is unknown", prec),
                        "fp16, bf16 or fp32");
      }
    }
    job->ops = ops;
    return Status::Ok();
  }

  Status ParseData(const DocValue& x, const std::string& path, Job* job) const {
    RETURN_IF_ERROR(
        p_.Expect(x, DocValue::Kind::kMap, path, "a map with size, location and checkpoint"));
    RETURN_IF_ERROR(p_.OnlyKnown(x, path, {"size", "location", "checkpoint"}));
    if (const DocValue::Field* f = FindField(x, "size")) {
      ASSIGN_OR_RETURN(job->data_bytes, p_.Bytes(f->value, path + ".size"));
    }
    if (const DocValue::Field* f = FindField(x, "checkpoint")) {
      ASSIGN_OR_RETURN(job->checkpoint_bytes, p_.Bytes(f->value, path + ".checkpoint"));
    }
    if (const DocValue::Field* f = FindField(x, "location")) {
      ASSIGN_OR_RETURN(job->data_location, p_.NonEmptyString(f->value, path + ".location"));
    }
    return Status::Ok();
  }

  Status ParseRepeat(const DocValue& v, const std::string& jp, JobTemplate* t) const {
    const DocValue::Field* repeat = FindField(v, "repeat");
    const DocValue::Field* every = FindField(v, "every");
    if (repeat == nullptr) {
      if (every != nullptr) {
        return p_.Error(every->value, jp + ".every", "is given without repeat",
                        "repeat: N together with every");
      }
      return Status::Ok();
    }
    t->repeated = true;
    ASSIGN_OR_RETURN(
        t->repeat,
        p_.Integer(repeat->value, jp + ".repeat", 1, static_cast<int64_t>(kMaxWorkloadJobs),
                   fmt::format("an integer from 1 to {}", kMaxWorkloadJobs)));
    if (every == nullptr) {
      return p_.Error(repeat->value, jp + ".every", "is missing",
                      "every: the spacing of the copies, like 10m (0 for all at once)");
    }
    ASSIGN_OR_RETURN(t->every_s, p_.Seconds(every->value, jp + ".every"));
    if (t->job.name.find("{i}") == std::string::npos) {
      const DocValue::Field* name = FindField(v, "name");
      return p_.Error(name->value, jp + ".name",
                      fmt::format("'{}' has no {{i}} placeholder for the copy number", t->job.name),
                      "a pattern like 'infer-{i}' when repeat is given");
    }
    return Status::Ok();
  }

  DocReader p_;
  const DocValue* defaults_;
  const DeviceCatalog& catalog_;
};

std::string ReplaceAll(std::string text, std::string_view from, const std::string& to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

// Expands repeats, checks unique names, sorts by arrival and numbers the jobs.
// Rough heap and vector footprint of one job, to bound what `repeat:` may allocate.
size_t EstimateJobBytes(const Job& job) {
  size_t bytes = sizeof(Job) + job.name.size() + 8 + job.job_type.size() +
                 job.data_location.size() + job.tenant.size();
  for (const StackRequirement& s : job.stacks) {
    bytes += sizeof(s) + s.name.size() + s.min_version.size();
  }
  for (const auto& [device, rate] : job.throughput) bytes += 64 + device.size();
  for (const std::string& d : job.pinned_devices) bytes += sizeof(d) + d.size();
  for (const std::string& a : job.command) bytes += sizeof(a) + a.size();
  return bytes + 64;  // the name index entry
}

Result<Workload> Assemble(std::vector<JobTemplate> templates, const std::string& file) {
  size_t total = 0;
  size_t repeated_bytes = 0;
  for (const JobTemplate& t : templates) {
    total += static_cast<size_t>(t.repeat);
    if (total > kMaxWorkloadJobs) {
      return util::InputError({file, t.line, t.column}, fmt::format("jobs[{}].repeat", t.entry),
                              fmt::format("brings the workload past {} jobs", kMaxWorkloadJobs),
                              "fewer copies");
    }
    if (t.repeated) {
      repeated_bytes += static_cast<size_t>(t.repeat) * EstimateJobBytes(t.job);
      if (repeated_bytes > kMaxRepeatBytes) {
        return util::InputError(
            {file, t.line, t.column}, fmt::format("jobs[{}].repeat", t.entry),
            fmt::format("copies would take about {} of memory, more than the {} allowed",
                        util::FormatBytes(repeated_bytes), util::FormatBytes(kMaxRepeatBytes)),
            "fewer copies or shorter fields");
      }
    }
  }
  Workload workload;
  workload.jobs.reserve(total);
  std::unordered_map<std::string, size_t> entry_of;  // name -> entry that made it
  entry_of.reserve(total);
  const auto file_name = std::make_shared<const std::string>(file);
  for (JobTemplate& t : templates) {
    for (int64_t i = 0; i < t.repeat; ++i) {
      Job job = t.job;
      job.origin = {static_cast<int32_t>(t.entry), t.line, t.column, file_name};
      if (t.repeated) {
        job.name = ReplaceAll(t.job.name, "{i}", std::to_string(i));
      }
      const double shift = static_cast<double>(i) * t.every_s;
      job.arrival_s += shift;
      if (job.deadline_s) *job.deadline_s += shift;
      if (!std::isfinite(job.arrival_s)) {
        return util::InputError({file, t.line, t.column}, fmt::format("jobs[{}].every", t.entry),
                                "makes an arrival time overflow");
      }
      auto [it, inserted] = entry_of.emplace(job.name, t.entry);
      if (!inserted) {
        return util::InputError(
            {file, t.line, t.column}, fmt::format("jobs[{}].name", t.entry),
            fmt::format("'{}' is already used by jobs[{}]", job.name, it->second),
            "unique job names");
      }
      workload.jobs.push_back(std::move(job));
    }
  }
  SortByArrival(&workload);
  return workload;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

Result<Workload> ParseWorkloadYaml(std::string_view text, const std::string& file_name,
                                   const DeviceCatalog& catalog) {
  ASSIGN_OR_RETURN(const DocValue root, ParseYamlDocument(text, file_name));
  DocReader p(file_name);
  if (root.kind != DocValue::Kind::kMap) {
    return p.Error(root, "", fmt::format("the document is {}", Describe(root)),
                   "a map with a 'jobs' list");
  }
  RETURN_IF_ERROR(p.OnlyKnown(root, "", {"jobs", "defaults"}));
  const DocValue::Field* jobs = FindField(root, "jobs");
  if (jobs == nullptr) return p.Error(root, "jobs", "is missing", "a list of jobs");
  RETURN_IF_ERROR(p.Expect(jobs->value, DocValue::Kind::kList, "jobs", "a list of jobs"));
  if (jobs->value.items.empty()) {
    return p.Error(jobs->value, "jobs", "is empty", "at least one job");
  }
  const DocValue::Field* defaults = FindField(root, "defaults");
  JobParser parser(file_name, defaults ? &defaults->value : nullptr, catalog);
  RETURN_IF_ERROR(parser.CheckDefaults());
  std::vector<JobTemplate> templates;
  templates.reserve(jobs->value.items.size());
  for (size_t i = 0; i < jobs->value.items.size(); ++i) {
    ASSIGN_OR_RETURN(JobTemplate t, parser.Parse(jobs->value.items[i], i));
    templates.push_back(std::move(t));
  }
  return Assemble(std::move(templates), file_name);
}

Result<Workload> ParseWorkloadJsonl(std::string_view text, const std::string& file_name,
                                    const DeviceCatalog& catalog) {
  JobParser parser(file_name, nullptr, catalog);
  std::vector<JobTemplate> templates;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const int line_no = lines.line_number();
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const SourceLocation at{file_name, line_no, 0};
    DocValue value;
    try {
      nlohmann::json j = nlohmann::json::parse(line);
      RETURN_IF_ERROR(FromJson(j, at, &value));
    } catch (const nlohmann::json::parse_error& e) {
      // nlohmann counts bytes from 1 up to and including the offending one.
      const int column = static_cast<int>(
          std::min<size_t>(std::max<size_t>(e.byte, 1), std::max<size_t>(line.size(), 1)));
      std::string msg = e.what();
      // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: ".
      if (size_t colon = msg.find(": "); colon != std::string::npos) msg = msg.substr(colon + 2);
      return util::InputError({file_name, line_no, column}, "",
                              fmt::format("not valid JSON: {}", msg));
    } catch (const std::exception& e) {
      return util::InputError(at, "", fmt::format("cannot read JSON: {}", e.what()));
    }
    ASSIGN_OR_RETURN(JobTemplate t, parser.Parse(value, templates.size()));
    templates.push_back(std::move(t));
    if (templates.size() > kMaxWorkloadJobs) {
      return util::InputError(at, "", fmt::format("more than {} jobs", kMaxWorkloadJobs));
    }
  }
  if (templates.empty()) {
    return util::InputError({file_name, 0, 0}, "", "no jobs", "one JSON object per line");
  }
  return Assemble(std::move(templates), file_name);
}

Result<Job> ParseWorkloadJob(const DocValue& job, std::shared_ptr<const std::string> file,
                             const DeviceCatalog& catalog) {
  JobParser parser(*file, nullptr, catalog);
  ASSIGN_OR_RETURN(JobTemplate t, parser.Parse(job, 0));
  if (t.repeated) {
    const DocValue::Field* repeat = FindField(job, "repeat");
    return util::InputError({*file, repeat->value.line, repeat->value.column}, "jobs[0].repeat",
                            "copies a job given alone", "no repeat: one job");
  }
  // What Assemble does for one entry that is not repeated.
  if (!std::isfinite(t.job.arrival_s)) {
    return util::InputError({*file, t.line, t.column}, "jobs[0].every",
                            "makes an arrival time overflow");
  }
  Job out = std::move(t.job);
  out.origin = {0, t.line, t.column, std::move(file)};
  out.id = JobId(0);
  return out;
}

Result<Workload> LoadWorkload(const std::string& path, const DeviceCatalog& catalog) {
  const std::string ext = Lower(std::filesystem::path(path).extension().string());
  enum class Format { kYaml, kJsonl, kTrace } format;
  if (ext == ".yaml" || ext == ".yml") {
    format = Format::kYaml;
  } else if (ext == ".jsonl" || ext == ".json") {
    format = Format::kJsonl;
  } else if (ext == ".trace") {
    format = Format::kTrace;
  } else {
    return Status::InvalidArgument(fmt::format(
        "{}: unknown workload format '{}' (expected .yaml, .yml, .jsonl, .json or .trace)", path,
        ext));
  }
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  switch (format) {
    case Format::kYaml:
      return ParseWorkloadYaml(text, path, catalog);
    case Format::kJsonl:
      return ParseWorkloadJsonl(text, path, catalog);
    case Format::kTrace:
      return ParseGavelTrace(text, path);
  }
  return Status::Internal("unreachable workload format");
}

}  // namespace hetsched::model::io
