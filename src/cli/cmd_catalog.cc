// `hetsched catalog`: lists the device types hetsched knows (built-in, plus a types file),
// as a console table or as JSON with every field.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "model/catalog.h"
#include "model/io/device_type_reader.h"
#include "power/cap_curve.h"
#include "report/table.h"
#include "util/units.h"

namespace hetsched::cli {
namespace {

std::string StackList(const model::DeviceType& type) {
  std::string out;
  for (const model::SoftwareStack& s : type.stacks) {
    if (!out.empty()) out += ", ";
    out += model::ToString(s);
  }
  return out;
}

// "-" for a figure the datasheet does not give (0), else the number with up to 4 digits.
std::string Figure(double value) { return value > 0 ? fmt::format("{:.4g}", value) : "-"; }

// "zeus v100 0.5-1" style: where the power-cap curve comes from and the caps it spans.
std::string CapCurveSummary(const model::DeviceType& type) {
  const power::CapCurve curve = power::CurveFor(type);
  if (type.kind == model::DeviceKind::kCpu && type.power_cap_curve.empty()) return "-";
  std::string source = power::CurveSource(type);
  if (source.rfind("default", 0) == 0) source = "default";
  return fmt::format("{} {:.2g}-1", source, curve.points.front().cap);
}

std::string RenderTable(const model::DeviceCatalog& catalog) {
  report::Table table({"name", "vendor", "kind", "stacks", "fp32 TFLOPS", "fp16 TFLOPS", "memory",
                       "bandwidth", "idle W", "peak W", "$/h", "cap curve", "est"});
  for (const model::DeviceType& t : catalog.types()) {
    table.AddRow({t.name, t.vendor, std::string(model::DeviceKindName(t.kind)), StackList(t),
                  Figure(t.fp32_tflops), Figure(t.fp16_tflops), util::FormatBytes(t.memory_bytes),
                  util::FormatBandwidth(t.memory_bandwidth), fmt::format("{:.4g}", t.idle_watts),
                  fmt::format("{:.4g}", t.peak_watts), fmt::format("{:.2f}", t.price_per_hour),
                  CapCurveSummary(t), t.estimated ? "*" : ""});
  }
  return table.Render() +
         "\n* some figures (often idle power or price) are estimates; `hetsched catalog --json`\n"
         "  gives each type's source, and docs/device-catalog.md says which figures are "
         "estimated.\n"
         "cap curve: where the power-cap curve (throughput and power vs cap) comes from and the "
         "caps it\n  spans (docs/power.md); `--json` lists its points.\n";
}

nlohmann::ordered_json ToJson(const model::DeviceType& t) {
  nlohmann::ordered_json stacks = nlohmann::ordered_json::array();
  for (const model::SoftwareStack& s : t.stacks) stacks.push_back(model::ToString(s));
  nlohmann::ordered_json cap_curve = nlohmann::ordered_json::array();
  for (const power::CapPoint& p : power::CurveFor(t).points) {
    cap_curve.push_back({{"cap", p.cap}, {"throughput", p.throughput}, {"power", p.power}});
  }
  return nlohmann::ordered_json{
      {"name", t.name},
      {"aliases", t.aliases},
      {"vendor", t.vendor},
      {"kind", std::string(model::DeviceKindName(t.kind))},
      {"stacks", stacks},
      {"fp32_tflops", t.fp32_tflops},
      {"fp16_tflops", t.fp16_tflops},
      {"int8_tops", t.int8_tops},
      {"memory_bytes", t.memory_bytes},
      {"memory_bandwidth_bytes_per_s", t.memory_bandwidth},
      {"idle_watts", t.idle_watts},
      {"peak_watts", t.peak_watts},
      {"price_per_hour_usd", t.price_per_hour},
      {"efficiency", t.efficiency},
      {"estimated", t.estimated},
      {"source", t.source},
      {"power_cap_curve_source", power::CurveSource(t)},
      {"power_cap_curve", cap_curve},
  };
}

}  // namespace

void AddCatalogCommand(CLI::App& app, CommandResult& result) {
  struct Options {
    bool json = false;
    std::string types_file;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "catalog",
      "List the device types hetsched knows: vendor, kind, software stacks, peak TFLOPS, "
      "memory, bandwidth, idle/peak power and price per hour.");
  cmd->footer(
      "Examples:\n"
      "  hetsched catalog                      built-in types as a table\n"
      "  hetsched catalog --json               every field, with sources, as JSON\n"
      "  hetsched catalog --types mine.yaml    built-in types plus/overridden by mine.yaml\n"
      "A types file is a map with one key, `device_types:`, holding a list of types; an entry\n"
      "whose name is already known overrides only the fields it gives. Format and sources:\n"
      "docs/device-catalog.md.");
  cmd->add_flag("--json", options->json, "Print a JSON array with every field of every type");
  cmd->add_option("--types", options->types_file,
                  "YAML file whose `device_types:` list adds types or overrides built-in ones")
      ->type_name("FILE");
  cmd->callback([options, &result] {
    model::DeviceCatalog catalog = model::DeviceCatalog::BuiltIn();
    if (!options->types_file.empty()) {
      util::Result<model::DeviceCatalog> loaded =
          model::io::LoadDeviceTypesFile(options->types_file);
      if (!loaded.ok()) {
        result.exit_code = ReportError(loaded.status());
        return;
      }
      catalog = std::move(loaded).value();
    }
    std::string out;
    if (options->json) {
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      for (const model::DeviceType& t : catalog.types()) array.push_back(ToJson(t));
      // Sources from user files may hold invalid UTF-8: replace it rather than throw.
      out = array.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    } else {
      out = RenderTable(catalog);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    result.exit_code = kExitOk;
  });
}

}  // namespace hetsched::cli
