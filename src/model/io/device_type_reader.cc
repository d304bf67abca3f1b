#include "model/io/device_type_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "model/io/document.h"
#include "util/file.h"
#include "util/source_location.h"
#include "util/units.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::SourceLocation;
using util::Status;

// Bounds that keep a mistaken or hostile file from producing absurd types.
constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxListLength = 64;  // aliases, stacks
constexpr size_t kMaxSourceLength = 4096;
constexpr double kMaxTflops = 1e7;  // 10 EFLOPS per device: far beyond any part
constexpr double kMaxPricePerHour = 1e6;

constexpr const char* kNameExpected =
    "lower-case letters, digits, '-', '_' or '.', at most 64 characters, like 'a100-80g'";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

Result<std::string> Name(const DocReader& r, const DocValue& node, const std::string& field) {
  ASSIGN_OR_RETURN(std::string text, r.Scalar(node, field, kNameExpected));
  std::string name = Lower(text);
  if (!ValidName(name)) {
    return r.Error(node, field, fmt::format("'{}' is not a valid name", text), kNameExpected);
  }
  return name;
}

class EntryParser {
 public:
  EntryParser(const DocReader& reader, std::string path, DeviceCatalog& catalog)
      : r_(reader), path_(std::move(path)), catalog_(catalog) {}

  // Parses one list item and upserts it. `first_seen` maps names already read from this list
  // to the line they were defined on.
  Status Parse(const DocValue& item, std::map<std::string, int>& first_seen) {
    if (!item.IsMap()) {
      return r_.Error(item, path_, "is " + Describe(item),
                      "a map of device-type fields with at least 'name'");
    }
    RETURN_IF_ERROR(CollectFields(item));

    auto name_field = fields_.find("name");
    if (name_field == fields_.end()) {
      return r_.Error(item, path_ + ".name", "missing", "the device type's name, like 'a100-80g'");
    }
    const DocValue& name_node = name_field->second->value;
    ASSIGN_OR_RETURN(std::string name, Name(r_, name_node, F("name")));

    int line = r_.At(name_node).line;
    if (auto [it, inserted] = first_seen.emplace(name, line); !inserted) {
      return r_.Error(name_node, F("name"),
                      fmt::format("device type '{}' is already defined at line {} of this list",
                                  name, it->second),
                      "each name once per list");
    }

    std::optional<DeviceTypeId> existing = catalog_.FindId(name);
    if (existing && catalog_.Get(*existing).name != name) {
      const std::string& real = catalog_.Get(*existing).name;
      return r_.Error(
          name_node, F("name"), fmt::format("'{}' is an alias of device type '{}'", name, real),
          fmt::format("'{}' to override that type, or a name not yet in the catalog", real));
    }
    const bool is_new = !existing.has_value();
    if (is_new) {
      type_ = DeviceType{};
      type_.name = name;
    } else {
      type_ = catalog_.Get(*existing);
      own_id_ = existing;
    }

    RETURN_IF_ERROR(ApplyFields());
    if (is_new) RETURN_IF_ERROR(CheckRequired(item));
    RETURN_IF_ERROR(CheckConsistent(item));
    catalog_.Upsert(std::move(type_));
    return Status::Ok();
  }

 private:
  std::string F(const std::string& field) const { return path_ + "." + field; }

  Status CollectFields(const DocValue& item) {
    const std::vector<std::string>& known = DeviceTypeFieldNames();
    for (const DocValue::Field& f : item.fields) {
      if (std::find(known.begin(), known.end(), f.key) == known.end()) {
        return r_.Error(f, F(f.key), "unknown field", "one of " + JoinNames(known));
      }
      fields_.emplace(f.key, &f);  // keys are unique (ParseYamlDocument)
    }
    return Status::Ok();
  }

  const DocValue* Value(const std::string& field) const {
    auto it = fields_.find(field);
    return it == fields_.end() ? nullptr : &it->second->value;
  }

  Status ApplyFields() {
    if (const DocValue* v = Value("aliases")) RETURN_IF_ERROR(ParseAliases(*v));
    if (const DocValue* v = Value("vendor")) {
      constexpr const char* kExpected = "a vendor like nvidia, amd, intel or huawei";
      ASSIGN_OR_RETURN(std::string text, r_.Scalar(*v, F("vendor"), kExpected));
      std::string vendor = Lower(text);
      if (!ValidName(vendor)) {
        return r_.Error(*v, F("vendor"), fmt::format("'{}' is not a valid vendor", text),
                        kExpected);
      }
      type_.vendor = vendor;
    }
    if (const DocValue* v = Value("kind")) {
      constexpr const char* kExpected = "cpu, gpu, npu or asic";
      ASSIGN_OR_RETURN(std::string text, r_.Scalar(*v, F("kind"), kExpected));
      util::Result<DeviceKind> kind = ParseDeviceKind(Lower(text));
      if (!kind.ok()) {
        return r_.Error(*v, F("kind"), fmt::format("unknown device kind '{}'", text), kExpected);
      }
      type_.kind = *kind;
    }
    if (const DocValue* v = Value("stacks")) RETURN_IF_ERROR(ParseStacks(*v));
    RETURN_IF_ERROR(Peak("fp32_tflops", type_.fp32_tflops));
    RETURN_IF_ERROR(Peak("fp16_tflops", type_.fp16_tflops));
    RETURN_IF_ERROR(Peak("int8_tops", type_.int8_tops));
    if (const DocValue* v = Value("memory")) {
      ASSIGN_OR_RETURN(uint64_t bytes, r_.Quantity<uint64_t>(*v, F("memory"), util::ParseBytes,
                                                             "bytes like 80GiB"));
      if (bytes == 0) return r_.Error(*v, F("memory"), "must be positive", "bytes like 80GiB");
      type_.memory_bytes = bytes;
    }
    if (const DocValue* v = Value("memory_bandwidth")) {
      constexpr const char* kExpected = "a bandwidth like 2039GB/s";
      ASSIGN_OR_RETURN(double bw, r_.Quantity<double>(*v, F("memory_bandwidth"),
                                                      util::ParseBandwidth, kExpected));
      if (!(bw > 0)) return r_.Error(*v, F("memory_bandwidth"), "must be positive", kExpected);
      type_.memory_bandwidth = bw;
    }
    if (const DocValue* v = Value("idle_power")) {
      ASSIGN_OR_RETURN(type_.idle_watts, r_.Quantity<double>(*v, F("idle_power"), util::ParsePower,
                                                             "watts like 50W"));
    }
    if (const DocValue* v = Value("peak_power")) {
      ASSIGN_OR_RETURN(double watts, r_.Quantity<double>(*v, F("peak_power"), util::ParsePower,
                                                         "watts like 700W"));
      if (!(watts > 0)) {
        return r_.Error(*v, F("peak_power"), "must be positive", "watts like 700W");
      }
      type_.peak_watts = watts;
    }
    if (const DocValue* v = Value("price_per_hour")) {
      constexpr const char* kExpected = "US dollars per device-hour, like 2.5";
      ASSIGN_OR_RETURN(double price, r_.FiniteNumber(*v, F("price_per_hour"), kExpected));
      if (price < 0 || price > kMaxPricePerHour) {
        return r_.Error(*v, F("price_per_hour"), fmt::format("{} is out of range", price),
                        kExpected);
      }
      type_.price_per_hour = price;
    }
    if (const DocValue* v = Value("efficiency")) {
      constexpr const char* kExpected = "a fraction of peak in (0, 1], like 0.6";
      ASSIGN_OR_RETURN(double eff, r_.FiniteNumber(*v, F("efficiency"), kExpected));
      if (!(eff > 0 && eff <= 1)) {
        return r_.Error(*v, F("efficiency"), fmt::format("{} is outside (0, 1]", eff), kExpected);
      }
      type_.efficiency = eff;
    } else if (!own_id_ && !Value("estimated")) {
      // A new type without a measured efficiency runs on the default guess: say so.
      type_.estimated = true;
    }
    if (const DocValue* v = Value("power_cap_curve")) RETURN_IF_ERROR(ParseCapCurve(*v));
    if (const DocValue* v = Value("source")) {
      ASSIGN_OR_RETURN(std::string text, r_.Scalar(*v, F("source"), "text naming the source"));
      if (text.size() > kMaxSourceLength) {
        return r_.Error(*v, F("source"), "is too long", "at most 4096 characters");
      }
      type_.source = text;
    }
    if (const DocValue* v = Value("estimated")) {
      ASSIGN_OR_RETURN(std::string text, r_.Scalar(*v, F("estimated"), "true or false"));
      if (text != "true" && text != "false") {
        return r_.Error(*v, F("estimated"), fmt::format("'{}' is not a boolean", text),
                        "true or false");
      }
      type_.estimated = text == "true";
    }
    return Status::Ok();
  }

  Status Peak(const std::string& field, double& out) {
    const DocValue* v = Value(field);
    if (!v) return Status::Ok();
    constexpr const char* kExpected = "a non-negative number of TFLOPS (TOPS for int8)";
    ASSIGN_OR_RETURN(double value, r_.FiniteNumber(*v, F(field), kExpected));
    if (value < 0 || value > kMaxTflops) {
      return r_.Error(*v, F(field), fmt::format("{} is out of range", value), kExpected);
    }
    out = value;
    return Status::Ok();
  }

  Status ParseAliases(const DocValue& v) {
    constexpr const char* kExpected = "a list of names like [v100]";
    if (!v.IsList()) return r_.Error(v, F("aliases"), "is " + Describe(v), kExpected);
    if (v.size() > kMaxListLength) {
      return r_.Error(v, F("aliases"), fmt::format("has {} entries", v.size()), "at most 64");
    }
    std::vector<std::string> aliases;
    for (size_t i = 0; i < v.size(); ++i) {
      const DocValue& a = v[i];
      std::string field = fmt::format("{}[{}]", F("aliases"), i);
      ASSIGN_OR_RETURN(std::string alias, Name(r_, a, field));
      if (alias == type_.name) {
        return r_.Error(a, field, fmt::format("'{}' is the type's own name", alias),
                        "other names for the type");
      }
      if (std::optional<DeviceTypeId> id = catalog_.FindId(alias); id && id != own_id_) {
        return r_.Error(
            a, field,
            fmt::format("'{}' already names device type '{}'", alias, catalog_.Get(*id).name),
            "a name not used by another type");
      }
      if (std::find(aliases.begin(), aliases.end(), alias) != aliases.end()) {
        return r_.Error(a, field, fmt::format("'{}' is listed twice", alias), "each alias once");
      }
      aliases.push_back(alias);
    }
    type_.aliases = std::move(aliases);
    return Status::Ok();
  }

  Status ParseStacks(const DocValue& v) {
    constexpr const char* kExpected = "a list of stacks like [\"cuda 12.2\", x86_64]";
    if (!v.IsList()) return r_.Error(v, F("stacks"), "is " + Describe(v), kExpected);
    if (v.size() == 0) return r_.Error(v, F("stacks"), "is empty", kExpected);
    if (v.size() > kMaxListLength) {
      return r_.Error(v, F("stacks"), fmt::format("has {} entries", v.size()), "at most 64");
    }
    std::vector<SoftwareStack> stacks;
    for (size_t i = 0; i < v.size(); ++i) {
      const DocValue& s = v[i];
      std::string field = fmt::format("{}[{}]", F("stacks"), i);
      ASSIGN_OR_RETURN(std::string text, r_.Scalar(s, field, "a stack like 'cuda 12.2'"));
      util::Result<SoftwareStack> stack = ParseSoftwareStack(text);
      if (!stack.ok()) return r_.Error(s, field, stack.status().message());
      for (const SoftwareStack& earlier : stacks) {
        if (earlier.name == stack->name) {
          return r_.Error(s, field, fmt::format("stack '{}' is listed twice", stack->name),
                          "one entry per stack, with the newest version the device runs");
        }
      }
      stacks.push_back(*stack);
    }
    type_.stacks = std::move(stacks);
    return Status::Ok();
  }

  Status CheckRequired(const DocValue& item) const {
    static const std::vector<std::pair<const char*, const char*>> kRequired = {
        {"vendor", "a vendor like nvidia"},
        {"kind", "cpu, gpu, npu or asic"},
        {"stacks", "a list of stacks like [\"cuda 12.2\"]"},
        {"memory", "bytes like 80GiB"},
        {"memory_bandwidth", "a bandwidth like 2039GB/s"},
        {"idle_power", "watts like 50W"},
        {"peak_power", "watts like 700W"},
    };
    for (const auto& [field, expected] : kRequired) {
      if (!Value(field)) {
        return r_.Error(item, F(field), fmt::format("missing for new device type '{}'", type_.name),
                        expected);
      }
    }
    return Status::Ok();
  }

  Status CheckConsistent(const DocValue& item) const {
    if (!(type_.fp32_tflops > 0 || type_.fp16_tflops > 0 || type_.int8_tops > 0)) {
      // Point at the first peak the entry gave (all of them are 0), else at the entry.
      const char* field = "fp32_tflops";
      for (const char* f : {"fp32_tflops", "fp16_tflops", "int8_tops"}) {
        if (Value(f)) {
          field = f;
          break;
        }
      }
      const DocValue* at = Value(field);
      return r_.Error(at ? *at : item, F(field),
                      fmt::format("device type '{}' has no positive peak throughput", type_.name),
                      "fp32_tflops, fp16_tflops or int8_tops above 0");
    }
    if (type_.peak_watts < type_.idle_watts) {
      const bool peak_given = Value("peak_power") != nullptr;
      const DocValue* at = peak_given ? Value("peak_power") : Value("idle_power");
      return r_.Error(
          at ? *at : item, F(peak_given ? "peak_power" : "idle_power"),
          fmt::format("peak power {} is below idle power {}", util::FormatPower(type_.peak_watts),
                      util::FormatPower(type_.idle_watts)),
          "peak_power >= idle_power");
    }
    return Status::Ok();
  }

  // power_cap_curve: [{cap: 0.5, throughput: 0.87, power: 0.76}, ..., {cap: 1, ...: 1}].
  Status ParseCapCurve(const DocValue& list) {
    constexpr const char* kExpected =
        "a list of {cap, throughput, power} fractions with caps increasing in (0, 1] and the "
        "last at cap 1, like [{cap: 0.7, throughput: 0.96, power: 0.85}, {cap: 1, "
        "throughput: 1, power: 1}]";
    const std::string field = F("power_cap_curve");
    if (!list.IsList() || list.size() == 0 || list.size() > kMaxListLength) {
      return r_.Error(list, field,
                      list.IsList() ? "has no points or too many" : "is " + Describe(list),
                      kExpected);
    }
    std::vector<PowerCapPoint> points;
    for (size_t i = 0; i < list.size(); ++i) {
      const DocValue& p = list[i];
      const std::string at = fmt::format("{}[{}]", field, i);
      if (!p.IsMap()) return r_.Error(p, at, "is " + Describe(p), kExpected);
      for (const DocValue::Field& f : p.fields) {
        if (f.key != "cap" && f.key != "throughput" && f.key != "power") {
          return r_.Error(f, at, fmt::format("has an unknown field '{}'", f.key),
                          "cap, throughput and power");
        }
      }
      PowerCapPoint point;
      const std::tuple<const char*, double*, double> parts[] = {
          {"cap", &point.cap, 1},
          {"throughput", &point.throughput, 1.05},
          {"power", &point.power, 1.05}};
      for (const auto& [name, slot, max] : parts) {
        const DocValue& v = p[name];
        if (v.IsMissing()) return r_.Error(p, at + "." + name, "is missing", kExpected);
        ASSIGN_OR_RETURN(*slot, r_.FiniteNumber(v, at + "." + name, kExpected));
        if (!(*slot > 0 && *slot <= max)) {
          return r_.Error(v, at + "." + name, fmt::format("{} is outside (0, {}]", *slot, max),
                          kExpected);
        }
      }
      if (!points.empty() && !(point.cap > points.back().cap)) {
        return r_.Error(p["cap"], at + ".cap",
                        fmt::format("{} does not increase on {}", point.cap, points.back().cap),
                        kExpected);
      }
      points.push_back(point);
    }
    if (points.back().cap != 1) {
      return r_.Error(list[list.size() - 1]["cap"],
                      fmt::format("{}[{}].cap", field, list.size() - 1),
                      fmt::format("the last point is at cap {}", points.back().cap), kExpected);
    }
    type_.power_cap_curve = std::move(points);
    return Status::Ok();
  }

  const DocReader& r_;
  std::string path_;
  DeviceCatalog& catalog_;
  std::map<std::string, const DocValue::Field*> fields_;
  DeviceType type_;
  std::optional<DeviceTypeId> own_id_;
};

Status ParseList(const DocValue& list, const DocReader& reader, DeviceCatalog& catalog) {
  if (list.IsNull()) return Status::Ok();
  if (!list.IsList()) {
    return reader.Error(list, "device_types", "is " + Describe(list),
                        "a list of device types, each a map starting with '- name: ...'");
  }
  if (list.size() > kMaxDeviceTypesPerList) {
    return reader.Error(list, "device_types", fmt::format("has {} entries", list.size()),
                        fmt::format("at most {}", kMaxDeviceTypesPerList));
  }
  std::map<std::string, int> first_seen;
  for (size_t i = 0; i < list.size(); ++i) {
    EntryParser entry(reader, fmt::format("device_types[{}]", i), catalog);
    RETURN_IF_ERROR(entry.Parse(list[i], first_seen));
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& DeviceTypeFieldNames() {
  static const std::vector<std::string> kNames = {
      "name",        "aliases",        "vendor",         "kind",       "stacks",
      "fp32_tflops", "fp16_tflops",    "int8_tops",      "memory",     "memory_bandwidth",
      "idle_power",  "peak_power",     "price_per_hour", "efficiency", "source",
      "estimated",   "power_cap_curve"};
  return kNames;
}

Status ParseDeviceTypesYaml(const DocValue& list, const std::string& file_name,
                            DeviceCatalog& catalog) {
  DocReader reader(file_name);
  // Work on a copy so that a failure part-way leaves the caller's catalog as it was.
  DeviceCatalog updated = catalog;
  RETURN_IF_ERROR(ParseList(list, reader, updated));
  catalog = std::move(updated);
  return Status::Ok();
}

util::Result<DeviceCatalog> ParseDeviceTypesDocument(std::string_view text,
                                                     const std::string& file_name) {
  DocReader reader(file_name);
  constexpr const char* kExpected = "a map with the single key 'device_types:'";
  ASSIGN_OR_RETURN(const DocValue root, ParseYamlDocument(text, file_name));
  if (!root.IsMap()) {
    return reader.Error(root, "", "the document is " + Describe(root), kExpected);
  }
  for (const DocValue::Field& f : root.fields) {
    if (f.key != "device_types") {
      return reader.Error(f, f.key, "unknown top-level field", kExpected);
    }
  }
  if (!root.Has("device_types")) return reader.Error(root, "device_types", "missing", kExpected);
  DeviceCatalog catalog = DeviceCatalog::BuiltIn();
  RETURN_IF_ERROR(ParseDeviceTypesYaml(root["device_types"], file_name, catalog));
  return catalog;
}

util::Result<DeviceCatalog> LoadDeviceTypesFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseDeviceTypesDocument(text, path);
}

}  // namespace hetsched::model::io
