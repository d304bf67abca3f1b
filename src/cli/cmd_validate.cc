// `hetsched validate CLUSTER... [--workload FILE] [--json]`: loads each cluster (file or
// shorthand), prints what it holds, and with a workload says which device types can run each
// job and why the others can run nowhere (a job that only its host cores or memory per worker
// keep off the cluster is also reported at its entry in the workload file). Exit 2 on unusable
// input or unrunnable jobs.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/data_dir.h"
#include "cost/serving.h"
#include "model/compatibility.h"
#include "model/io/cluster_reader.h"
#include "model/io/workload_reader.h"
#include "report/table.h"
#include "sim/serving.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::cli {
namespace {

using nlohmann::json;

// Jobs listed one per line in the text output; --json always lists all.
constexpr size_t kMaxJobLinesInText = 50;

struct TypeSummary {
  const model::DeviceType* type;
  int32_t count;
};

struct ValidateOptions {
  std::vector<std::string> clusters;
  std::string workload;
  bool json = false;
};

std::string Requirements(const model::Job& job) {
  if (job.stacks.empty()) return "any";
  std::string out;
  for (const auto& s : job.stacks) out += (out.empty() ? "" : " | ") + model::ToString(s);
  return out;
}

// True when `job` could run on the cluster but for its host request (cores, host memory).
bool OnlyHostStopsIt(const model::Cluster& cluster, const model::Job& job) {
  if (!model::AsksForHost(job)) return false;
  model::Job without = job;
  without.cores_per_worker = 0;
  without.host_memory_per_worker = 0;
  return !model::CompatibleTypes(cluster, without).empty();
}

// A located error about `job` at its entry in `workload_path` when the reader recorded it;
// `subfield` is appended to the entry's field ("jobs[3].data.location").
util::Status JobError(const std::string& workload_path, const model::Job& job,
                      const std::string& subfield, const std::string& problem,
                      const std::string& expected) {
  const util::SourceLocation at{workload_path, job.origin.line, job.origin.column};
  const std::string field = job.origin.entry >= 0 ? fmt::format("jobs[{}]", job.origin.entry)
                                                  : fmt::format("job '{}'", job.name);
  return util::InputError(at, field + subfield, fmt::format("'{}' {}", job.name, problem),
                          expected);
}

// For a service (kind service): why no device type of `cluster` can serve it within its SLO,
// as `simulate` would say it (sim::CheckService, with the shipped Splitwise calibration and
// its requests of the first day); nullopt when one can, or for any other job.
std::optional<std::string> ServiceProblem(const model::Cluster& cluster, const model::Job& job) {
  if (job.kind != model::JobKind::kService) return std::nullopt;
  sim::ServingOptions options;
  auto calibrations = cost::LoadServingCalibrations(
      DataPath("inference/splitwise-perf/perf_model.csv"), cluster.catalog);
  if (!calibrations.ok()) return calibrations.status().message();
  options.calibrations = *std::move(calibrations);
  auto requests = sim::RequestsOf(job, options.horizon_s, 0);
  if (!requests.ok()) return requests.status().message();
  const util::Status status = sim::CheckService(cluster, job, *requests, options);
  if (status.ok()) return std::nullopt;
  return status.message();
}

// True when `location` names a node, rack or storage of `cluster` (where a job's data lies).
bool KnownDataLocation(const model::Cluster& cluster, const std::string& location) {
  return cluster.FindNode(location) || cluster.FindRack(location) || cluster.FindStorage(location);
}

// What the cluster holds: device types, devices by vendor and kind, power, software stacks.
void AddHardware(const model::Cluster& cluster, json& out) {
  double device_idle = 0, device_peak = 0, base = 0;
  json types = json::array();
  std::map<std::pair<std::string, std::string>, int64_t> by_vendor_kind;
  std::map<std::string, json> stacks;  // stack name -> [{type, version, devices}]
  for (const auto& [id, count] : cluster.DeviceTypeCounts()) {
    const model::DeviceType& t = cluster.catalog.Get(id);
    device_idle += t.idle_watts * count;
    device_peak += t.peak_watts * count;
    by_vendor_kind[{t.vendor, std::string(model::DeviceKindName(t.kind))}] += count;
    types.push_back({{"type", t.name},
                     {"vendor", t.vendor},
                     {"kind", model::DeviceKindName(t.kind)},
                     {"devices", count},
                     {"memory_bytes_each", t.memory_bytes},
                     {"memory_bytes_total", t.memory_bytes * static_cast<uint64_t>(count)},
                     {"idle_watts_each", t.idle_watts},
                     {"peak_watts_each", t.peak_watts}});
    for (const model::SoftwareStack& s : t.stacks) {
      stacks[s.name].push_back({{"type", t.name}, {"version", s.version}, {"devices", count}});
    }
  }
  for (const model::Node& n : cluster.nodes) base += n.base_watts;
  out["device_types"] = std::move(types);
  json vk = json::array();
  for (const auto& [key, count] : by_vendor_kind) {
    vk.push_back({{"vendor", key.first}, {"kind", key.second}, {"devices", count}});
  }
  out["by_vendor_kind"] = std::move(vk);
  out["power"] = {{"device_idle_watts", device_idle},
                  {"device_peak_watts", device_peak},
                  {"node_base_watts", base},
                  {"idle_watts", device_idle + base},
                  {"peak_watts", device_peak + base}};
  json stack_list = json::array();
  for (auto& [name, where] : stacks) stack_list.push_back({{"stack", name}, {"runs_on", where}});
  out["stacks"] = std::move(stack_list);
  int64_t no_power = 0;
  for (const model::Node& n : cluster.nodes) no_power += (n.base_watts == 0 || n.boot_s == 0);
  out["nodes_without_power_model"] = no_power;
}

// One job's entry: what it asks for, the device types that can run it and, when it cannot run
// (no type fits, no type meets its SLO, its data lies nowhere), why not; `runnable` says which,
// and `job_errors` gets the located error of a job only its host request or its data location
// stops.
json JobSummary(const model::Cluster& cluster, const model::Job& job,
                const std::string& workload_path, bool& runnable,
                std::vector<util::Status>& job_errors) {
  std::vector<model::DeviceTypeId> ids = model::CompatibleTypes(cluster, job);
  json j = {{"job", job.name},
            {"stacks", Requirements(job)},
            {"workers", model::WorkersNeeded(job)},
            {"memory_per_worker_bytes", job.memory_per_worker},
            {"cores_per_worker", job.cores_per_worker},
            {"host_memory_per_worker_bytes", job.host_memory_per_worker}};
  json names = json::array();
  for (model::DeviceTypeId id : ids) names.push_back(cluster.catalog.Get(id).name);
  j["runs_on"] = std::move(names);
  runnable = false;
  if (ids.empty()) {
    j["reason"] = model::WhyNoDeviceFits(cluster, job);
    if (OnlyHostStopsIt(cluster, job)) {
      job_errors.push_back(JobError(workload_path, job, "", j["reason"].get<std::string>(),
                                    "cores and host_memory per worker that the nodes of a "
                                    "device type it can use hold for the whole gang"));
    }
  } else if (auto why = ServiceProblem(cluster, job)) {
    // A service its stacks allow somewhere, but whose SLO no device type meets.
    j["reason"] = *why;
    job_errors.push_back(util::Status::InvalidArgument(*why));
  } else if (!job.data_location.empty() && !KnownDataLocation(cluster, job.data_location)) {
    j["reason"] = fmt::format("reads its data from '{}', no node, rack or storage of {}",
                              job.data_location, cluster.name);
    job_errors.push_back(JobError(workload_path, job, ".data.location",
                                  j["reason"].get<std::string>(),
                                  "the name of a node, rack or storage of the cluster"));
  } else {
    runnable = true;
  }
  return j;
}

// Summarizes one cluster; `unrunnable` counts jobs no device type can run or whose data lies
// nowhere in the cluster, and `job_errors` gets a located error for each of them that only its
// host request stops and for each unknown data location.
json Summarize(const std::string& source, const model::Cluster& cluster,
               const model::Workload* workload, const std::string& workload_path, int& unrunnable,
               std::vector<util::Status>& job_errors) {
  json out;
  out["source"] = source;
  out["name"] = cluster.name;
  out["nodes"] = cluster.nodes.size();
  out["racks"] = cluster.racks.size();
  out["devices"] = cluster.devices.size();
  AddHardware(cluster, out);
  if (workload) {
    json jobs = json::array();
    int64_t runnable = 0;
    for (const model::Job& job : workload->jobs) {
      bool ok = false;
      jobs.push_back(JobSummary(cluster, job, workload_path, ok, job_errors));
      if (ok) {
        ++runnable;
      } else {
        ++unrunnable;
      }
    }
    out["workload"] = {{"jobs", workload->jobs.size()},
                       {"runnable", runnable},
                       {"unrunnable", workload->jobs.size() - runnable},
                       {"per_job", std::move(jobs)}};
  }
  return out;
}

std::string Plural(int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string RenderText(const json& s) {
  std::string out = fmt::format("cluster {} ({})\n", s["name"].get<std::string>(),
                                s["source"].get<std::string>());
  out += fmt::format("  {}, {}, {}\n\n", Plural(s["nodes"], "node"), Plural(s["racks"], "rack"),
                     Plural(s["devices"], "device"));
  report::Table types({"type", "vendor", "kind", "devices", "memory each", "memory total",
                       "idle each", "peak each"});
  for (const json& t : s["device_types"]) {
    types.AddRow(
        {t["type"], t["vendor"], t["kind"], std::to_string(t["devices"].get<int64_t>()),
         util::FormatBytes(t["memory_bytes_each"]), util::FormatBytes(t["memory_bytes_total"]),
         util::FormatPower(t["idle_watts_each"]), util::FormatPower(t["peak_watts_each"])});
  }
  out += types.Render() + "\n";
  std::string vk;
  for (const json& v : s["by_vendor_kind"]) {
    vk += fmt::format("{}{} {} {}", vk.empty() ? "" : ", ", v["devices"].get<int64_t>(),
                      v["vendor"].get<std::string>(), v["kind"].get<std::string>());
  }
  out += "  by vendor and kind: " + vk + "\n";
  const json& p = s["power"];
  out += fmt::format("  power: idle {} (devices {} + node base {}), peak {} (devices {})\n",
                     util::FormatPower(p["idle_watts"]), util::FormatPower(p["device_idle_watts"]),
                     util::FormatPower(p["node_base_watts"]), util::FormatPower(p["peak_watts"]),
                     util::FormatPower(p["device_peak_watts"]));
  if (int64_t n = s["nodes_without_power_model"]; n > 0) {
    out += fmt::format(
        "  note: {} nodes declare no base_power or boot_time; their power and wake-up are not "
        "modelled\n",
        n);
  }
  out += "  stacks:\n";
  for (const json& st : s["stacks"]) {
    std::string where;
    for (const json& w : st["runs_on"]) {
      std::string version = w["version"];
      where += fmt::format("{}{}{} ({} devices)", where.empty() ? "" : ", ",
                           w["type"].get<std::string>(), version.empty() ? "" : " " + version,
                           w["devices"].get<int64_t>());
    }
    out += fmt::format("    {}: {}\n", st["stack"].get<std::string>(), where);
  }
  if (s.contains("workload")) {
    const json& w = s["workload"];
    out += fmt::format("\n  workload: {} jobs, {} can run here, {} can run nowhere\n",
                       w["jobs"].get<int64_t>(), w["runnable"].get<int64_t>(),
                       w["unrunnable"].get<int64_t>());
    report::Table jobs({"job", "stacks", "workers", "memory/worker", "runs on"});
    size_t shown = 0;
    for (const json& j : w["per_job"]) {
      if (shown++ >= kMaxJobLinesInText) break;
      std::string on;
      for (const json& t : j["runs_on"]) on += (on.empty() ? "" : ", ") + t.get<std::string>();
      jobs.AddRow({j["job"], j["stacks"], std::to_string(j["workers"].get<int64_t>()),
                   util::FormatBytes(j["memory_per_worker_bytes"]), on.empty() ? "NOWHERE" : on});
    }
    out += jobs.Render();
    if (w["per_job"].size() > kMaxJobLinesInText) {
      out += fmt::format("  ... {} more jobs (--json lists all)\n",
                         w["per_job"].size() - kMaxJobLinesInText);
    }
    for (const json& j : w["per_job"]) {
      if (j.contains("reason")) {
        out += fmt::format("  job {} can run nowhere: {}\n", j["job"].get<std::string>(),
                           j["reason"].get<std::string>());
      }
    }
  }
  return out;
}

int RunValidate(const ValidateOptions& options) {
  int exit_code = kExitOk;
  json all = json::array();
  bool first = true;
  std::string workload_error;  // the last one reported, so that each is reported once
  for (const std::string& source : options.clusters) {
    util::Result<model::Cluster> cluster = model::io::LoadCluster(source);
    if (!cluster.ok()) {
      exit_code = std::max(exit_code, ReportError(cluster.status()));
      continue;
    }
    // The workload is read against each cluster's catalog (the built-in types plus the
    // cluster file's device_types), so its throughput may name the cluster's own types.
    std::optional<model::Workload> workload;
    if (!options.workload.empty()) {
      util::Result<model::Workload> w = model::io::LoadWorkload(options.workload, cluster->catalog);
      if (!w.ok()) {
        if (w.status().message() != workload_error) {
          workload_error = w.status().message();
          exit_code = std::max(exit_code, ReportError(w.status()));
        }
        continue;
      }
      workload = std::move(w).value();
    }
    int unrunnable = 0;
    std::vector<util::Status> job_errors;
    json summary = Summarize(source, *cluster, workload ? &*workload : nullptr, options.workload,
                             unrunnable, job_errors);
    for (const util::Status& error : job_errors) ReportError(error);
    if (unrunnable > 0) {
      std::fprintf(stderr,
                   "hetsched: %s: %d jobs cannot run on the cluster (the summary says why)\n",
                   source.c_str(), unrunnable);
      exit_code = std::max(exit_code, kExitBadInput);
    }
    if (options.json) {
      all.push_back(std::move(summary));
    } else {
      std::fputs(((first ? "" : "\n") + RenderText(summary)).c_str(), stdout);
      first = false;
    }
  }
  if (options.json) std::fputs((json{{"clusters", all}}.dump(2) + "\n").c_str(), stdout);
  return exit_code;
}

}  // namespace

void AddValidateCommand(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Check cluster files (or shorthands like v100=36,p100=36) and summarize them; with "
      "--workload, say which device types can run each job");
  cmd->add_option("cluster", options->clusters, "Cluster YAML files or shorthands")->required();
  cmd->add_option("--workload", options->workload, "Workload file (.yaml, .jsonl, .trace)");
  cmd->add_flag("--json", options->json, "Print the summary as JSON");
  cmd->callback([options, &result] { result.exit_code = RunValidate(*options); });
}

}  // namespace hetsched::cli
