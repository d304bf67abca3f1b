// hetsched plan service: how one replica of an LLM serves on each device type (the serving
// model of cost/serving.h), and, with --check, how that model compares with measured step times.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/data_dir.h"
#include "cost/serving.h"
#include "model/catalog.h"
#include "report/table.h"
#include "util/units.h"

namespace hetsched::cli {
namespace {

struct PlanServiceArgs {
  std::string model = "llama-70b";
  std::string ttft = "2s";
  std::string tpot = "100ms";
  double input_tokens = 1024;
  double output_tokens = 256;
  double long_input_tokens = 0;  // 0: --input
  int32_t max_tp = 8;
  std::string link_bandwidth = "300GB/s";
  std::string calibration;  // "" = the shipped Splitwise table; "none" = bare roofline
  bool check = false;
  bool json = false;
};

std::string DefaultCalibrationFile() { return DataPath("inference/splitwise-perf/perf_model.csv"); }

double Mape(double sum_abs_rel, int n) { return n > 0 ? 100.0 * sum_abs_rel / n : 0; }

// The rows a held-out calibration is fitted on: short prompts and small batches.
bool InTrainingSet(const cost::ServingMeasurement& r) {
  return r.prompt_tokens <= 2048 && r.batch <= 8;
}

// Sums of relative errors of one measured pair (model, type, tp) under each calibration.
struct PairErrors {
  int n = 0, held_out = 0, left_out = 0;
  double ttft_bare = 0, tpot_bare = 0, ttft_fit = 0, tpot_fit = 0, ttft_held = 0, tpot_held = 0;
};

// Each measured pair's errors ("model on type (tp N)") against the bare roofline, the
// calibration fitted to all rows (`all`) and the one fitted to the training set (`part`).
std::map<std::string, PairErrors> ErrorsByPair(const std::vector<cost::ServingMeasurement>& rows,
                                               const model::DeviceCatalog& catalog,
                                               const cost::CalibrationFit& all,
                                               const cost::CalibrationFit& part, double link) {
  std::map<std::string, PairErrors> by_pair;
  for (const auto& r : rows) {
    const model::DeviceType* type = catalog.Find(r.device);
    auto served = cost::ServedPreset(r.model);
    if (type == nullptr || !served.ok() || all.by_type.count(type->name) == 0) continue;
    PairErrors& e = by_pair[fmt::format("{} on {} (tp {})", r.model, type->name, r.tp)];
    auto rel = [](double est, double measured) { return std::abs(est - measured) / measured; };
    // Rows faster than the datasheet allows are measurement errors: left out here as in the fit.
    const cost::ImpossibleParts impossible = cost::FasterThanDatasheet(r, *served, *type, link);
    if (impossible.prefill || impossible.decode) {
      ++e.left_out;
      continue;
    }
    auto add = [&](const cost::ServingCalibration& c, double& ttft, double& tpot) {
      const cost::ServingModel m(*served, *type, r.tp, c, link);
      ttft += rel(m.PrefillSeconds(r.batch, r.prompt_tokens), r.prompt_s);
      tpot += rel(m.DecodeStepSeconds(r.batch, r.prompt_tokens + r.output_tokens / 2.0), r.token_s);
    };
    ++e.n;
    add(cost::ServingCalibration{}, e.ttft_bare, e.tpot_bare);
    add(all.by_type.at(type->name), e.ttft_fit, e.tpot_fit);
    if (!InTrainingSet(r) && part.by_type.count(type->name) > 0) {
      ++e.held_out;
      add(part.by_type.at(type->name), e.ttft_held, e.tpot_held);
    }
  }
  return by_pair;
}

nlohmann::ordered_json CheckJson(const cost::CalibrationFit& all,
                                 const std::map<std::string, PairErrors>& by_pair) {
  nlohmann::ordered_json j;
  for (const auto& [name, c] : all.by_type) {
    j["calibration"][name] = {{"decode_fixed_s_per_layer", c.decode_fixed_s},
                              {"decode_per_sequence_s_per_layer", c.decode_per_sequence_s},
                              {"decode_hop_s", c.decode_hop_s},
                              {"decode_memory_scale", c.decode_memory_scale},
                              {"prefill_fixed_s_per_layer", c.prefill_fixed_s},
                              {"prefill_hop_s", c.prefill_hop_s},
                              {"prefill_compute_scale", c.prefill_compute_scale},
                              {"prefill_attention_scale", c.prefill_attention_scale},
                              {"prefill_comm_scale", c.prefill_comm_scale},
                              {"source", c.source}};
  }
  for (const auto& [pair, e] : by_pair) {
    j["errors"].push_back({{"pair", pair},
                           {"rows", e.n},
                           {"rows_left_out", e.left_out},
                           {"ttft_error_roofline_pct", Mape(e.ttft_bare, e.n)},
                           {"tpot_error_roofline_pct", Mape(e.tpot_bare, e.n)},
                           {"ttft_error_fitted_pct", Mape(e.ttft_fit, e.n)},
                           {"tpot_error_fitted_pct", Mape(e.tpot_fit, e.n)},
                           {"held_out_rows", e.held_out},
                           {"ttft_error_held_out_pct", Mape(e.ttft_held, e.held_out)},
                           {"tpot_error_held_out_pct", Mape(e.tpot_held, e.held_out)}});
  }
  j["skipped"] = all.skipped;
  return j;
}

std::string CheckText(const cost::CalibrationFit& all,
                      const std::map<std::string, PairErrors>& by_pair) {
  report::Table fitted({"type", "decode fixed/layer", "per seq/layer", "hop", "memory x",
                        "prefill fixed/layer", "hop", "dense x", "attention x", "all-reduce x"});
  for (const auto& [name, c] : all.by_type) {
    fitted.AddRow({name, fmt::format("{:.1f} us", c.decode_fixed_s * 1e6),
                   fmt::format("{:.2f} us", c.decode_per_sequence_s * 1e6),
                   fmt::format("{:.1f} us", c.decode_hop_s * 1e6),
                   fmt::format("{:.2f}", c.decode_memory_scale),
                   fmt::format("{:.1f} us", c.prefill_fixed_s * 1e6),
                   fmt::format("{:.1f} us", c.prefill_hop_s * 1e6),
                   fmt::format("{:.2f}", c.prefill_compute_scale),
                   fmt::format("{:.2f}", c.prefill_attention_scale),
                   fmt::format("{:.2f}", c.prefill_comm_scale)});
  }
  report::Table errors({"measured pair", "rows", "left out", "TTFT err roofline",
                        "TPOT err roofline", "TTFT err fitted", "TPOT err fitted", "held out",
                        "TTFT err", "TPOT err"});
  for (const auto& [pair, e] : by_pair) {
    errors.AddRow({pair, std::to_string(e.n), std::to_string(e.left_out),
                   fmt::format("{:.1f}%", Mape(e.ttft_bare, e.n)),
                   fmt::format("{:.1f}%", Mape(e.tpot_bare, e.n)),
                   fmt::format("{:.1f}%", Mape(e.ttft_fit, e.n)),
                   fmt::format("{:.1f}%", Mape(e.tpot_fit, e.n)), std::to_string(e.held_out),
                   fmt::format("{:.1f}%", Mape(e.ttft_held, e.held_out)),
                   fmt::format("{:.1f}%", Mape(e.tpot_held, e.held_out))});
  }
  std::string out =
      "Calibration fitted to all rows (fixed costs per layer; x: scale on the "
      "roofline term):\n" +
      fitted.Render() +
      "\nMean absolute error per measured pair (TTFT: prefill of the batch; TPOT: "
      "one decode step).\nLeft out: rows faster than the datasheet allows "
      "(measurement errors).\nHeld out: fitted on prompts <= 2048 tokens and batches "
      "<= 8 only, judged on the other rows.\n" +
      errors.Render();
  for (const std::string& s : all.skipped) out += "skipped " + s + "\n";
  return out;
}

// The measured rows against the bare roofline, the calibration fitted to all rows, and a
// calibration fitted only on short prompts and small batches (prompt <= 2048, batch <= 8) and
// judged on the rest (held out).
int RunCheck(const PlanServiceArgs& a, const std::vector<cost::ServingMeasurement>& rows,
             double link) {
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  const cost::CalibrationFit all = cost::FitServingCalibration(rows, catalog, link);
  std::vector<cost::ServingMeasurement> train;
  for (const auto& r : rows) {
    if (InTrainingSet(r)) train.push_back(r);
  }
  const cost::CalibrationFit part = cost::FitServingCalibration(train, catalog, link);
  const std::map<std::string, PairErrors> by_pair = ErrorsByPair(rows, catalog, all, part, link);
  if (a.json) {
    std::fputs((CheckJson(all, by_pair).dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(CheckText(all, by_pair).c_str(), stdout);
  }
  return kExitOk;
}

// The parsed --ttft, --tpot and --link-bandwidth.
struct ServiceTargets {
  double ttft_s = 0, tpot_s = 0, link_bandwidth = 0;
};

util::Result<ServiceTargets> ParseTargets(const PlanServiceArgs& a) {
  ServiceTargets t;
  auto ttft = util::ParseDuration(a.ttft);
  if (!ttft.ok() || *ttft <= 0) {
    return util::Status::InvalidArgument(
        fmt::format("--ttft: '{}' (expected a positive duration such as 2s)", a.ttft));
  }
  t.ttft_s = *ttft;
  auto tpot = util::ParseDuration(a.tpot);
  if (!tpot.ok() || *tpot <= 0) {
    return util::Status::InvalidArgument(
        fmt::format("--tpot: '{}' (expected a positive duration such as 100ms)", a.tpot));
  }
  t.tpot_s = *tpot;
  auto link = util::ParseBandwidth(a.link_bandwidth);
  if (!link.ok() || *link <= 0) {
    return util::Status::InvalidArgument(
        fmt::format("--link-bandwidth: '{}' (expected a positive bandwidth such as 300GB/s)",
                    a.link_bandwidth));
  }
  t.link_bandwidth = *link;
  return t;
}

// The feasible shape with the lowest price per request, or null when none is feasible.
const cost::ReplicaOption* CheapestPerRequest(const std::vector<cost::ReplicaOption>& options,
                                              double price_per_hour) {
  const cost::ReplicaOption* best = nullptr;
  for (const auto& o : options) {
    if (!o.capacity.feasible) continue;
    if (best == nullptr || o.tp * price_per_hour / o.capacity.requests_per_s <
                               best->tp * price_per_hour / best->capacity.requests_per_s) {
      best = &o;
    }
  }
  return best;
}

// Sizes a replica on every catalog type and prints the table (or JSON).
int SizeReplicas(const PlanServiceArgs& a, const cost::ServedModel& served, const ServiceTargets& t,
                 const cost::ServingCalibrations& calibrations) {
  const model::DeviceCatalog& catalog = model::DeviceCatalog::BuiltIn();
  const cost::ServingSlo slo{t.ttft_s, t.tpot_s, 99};
  report::Table table({"type", "tp", "batch", "chunk", "iteration", "req/s", "prefill alone", "$/h",
                       "$ per 1M req", "calibration"});
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const model::DeviceType& type : catalog.types()) {
    const auto options =
        cost::ReplicaOptions(served, type, a.max_tp, t.link_bandwidth, calibrations, slo,
                             a.input_tokens, a.output_tokens, a.long_input_tokens);
    // The cheapest feasible shape per request; else why the largest one fails.
    const cost::ReplicaOption* best = CheapestPerRequest(options, type.price_per_hour);
    const std::string source = calibrations.For(type.name).source;
    if (best == nullptr) {
      const auto& last = options.back();
      table.AddRow({type.name, "-", "-", "-", "-", "-", "-", "-", "-",
                    fmt::format("no (tp {}: {})", last.tp, last.capacity.why_not)});
      j.push_back({{"type", type.name}, {"feasible", false}, {"why_not", last.capacity.why_not}});
      continue;
    }
    const auto& c = best->capacity;
    const double usd_h = best->tp * type.price_per_hour;
    const double per_million = usd_h / (c.requests_per_s * 3600) * 1e6;
    table.AddRow({type.name, std::to_string(best->tp), std::to_string(c.batch),
                  std::to_string(c.chunk), fmt::format("{:.1f} ms", c.step_s * 1e3),
                  fmt::format("{:.2f}", c.requests_per_s),
                  fmt::format("{:.0f} ms", c.prefill_s * 1e3), fmt::format("{:.2f}", usd_h),
                  fmt::format("{:.2f}", per_million), source});
    j.push_back({{"type", type.name},
                 {"feasible", true},
                 {"tp", best->tp},
                 {"batch", c.batch},
                 {"chunk", c.chunk},
                 {"iteration_s", c.step_s},
                 {"requests_per_s", c.requests_per_s},
                 {"prefill_s", c.prefill_s},
                 {"decode_step_s", c.decode_step_s},
                 {"usd_per_hour", usd_h},
                 {"usd_per_million_requests", per_million},
                 {"calibration", source}});
  }
  if (a.json) {
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    return kExitOk;
  }
  const std::string long_prompts =
      a.long_input_tokens > a.input_tokens
          ? fmt::format(" (p99 prompt {:.0f} tokens)", a.long_input_tokens)
          : "";
  std::fputs(fmt::format("{} replicas meeting TTFT {} and TPOT {} at p99 for requests of {:.0f} "
                         "prompt{} and {:.0f} output tokens: the cheapest shape per request on "
                         "each type, with chunked prefill (docs/serving.md):\n",
                         a.model, util::FormatDuration(t.ttft_s), util::FormatDuration(t.tpot_s),
                         a.input_tokens, long_prompts, a.output_tokens)
                 .c_str(),
             stdout);
  std::fputs(table.Render().c_str(), stdout);
  return kExitOk;
}

int Run(const PlanServiceArgs& a) {
  auto served = cost::ServedPreset(a.model);
  if (!served.ok()) return ReportError(served.status());
  auto targets = ParseTargets(a);
  if (!targets.ok()) return ReportError(targets.status());
  const std::string file = a.calibration.empty() ? DefaultCalibrationFile() : a.calibration;
  if (a.check) {
    if (a.calibration == "none") {
      return ReportError(
          util::Status::InvalidArgument("--check needs measurements (--calibration FILE)"));
    }
    auto rows = cost::LoadServingMeasurements(file);
    if (!rows.ok()) return ReportError(rows.status());
    return RunCheck(a, *rows, cost::kMeasuredLinkBandwidth);
  }
  auto calibrations = cost::LoadServingCalibrations(file, model::DeviceCatalog::BuiltIn());
  if (!calibrations.ok()) return ReportError(calibrations.status());
  return SizeReplicas(a, *served, *targets, *calibrations);
}

}  // namespace

void AddPlanServiceCommand(CLI::App& plan, CommandResult& result) {
  auto args = std::make_shared<PlanServiceArgs>();
  auto* cmd = plan.add_subcommand(
      "service",
      "Size the replicas of an LLM service on each device type (serving model), or "
      "check the serving model against measurements (--check)");
  cmd->add_option("model", args->model, "Preset (llama-7b, llama-13b, llama-70b, ...)")
      ->capture_default_str();
  cmd->add_option("--ttft", args->ttft, "Time-to-first-token target")->capture_default_str();
  cmd->add_option("--tpot", args->tpot, "Time-per-output-token target")->capture_default_str();
  cmd->add_option("--input", args->input_tokens, "Mean prompt tokens per request")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--output", args->output_tokens, "Mean generated tokens per request")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--long-input", args->long_input_tokens,
                  "Prompt tokens at the 99th percentile of prompt lengths: one such prompt must "
                  "be prefilled within the TTFT target, waiting included (default: --input)")
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--max-tp", args->max_tp, "Largest tensor-parallel degree (devices per node)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--link-bandwidth", args->link_bandwidth,
                  "Bandwidth between a replica's devices (per direction)")
      ->capture_default_str();
  cmd->add_option("--calibration", args->calibration,
                  "Measured step times (Splitwise's perf_model.csv format), or 'none' for the "
                  "bare roofline (default: the shipped data/inference/splitwise-perf table)");
  cmd->add_flag("--check", args->check,
                "Compare the serving model with the measurements instead of sizing replicas");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args, &result] { result.exit_code = Run(*args); });
}

}  // namespace hetsched::cli
