#include "model/io/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "util/units.h"

namespace hetsched::model::io {

using util::Result;
using util::Status;

namespace {

std::string Join(std::initializer_list<std::string_view> names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace

Result<YAML::Node> YamlReader::Load(std::string_view text, const std::string& file) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return util::InputError(YamlReader(file).At(e.mark), "", "not YAML: " + e.msg);
  }
}

util::SourceLocation YamlReader::At(const YAML::Mark& mark) const {
  if (mark.line < 0) return {file_, 0, 0};
  return {file_, mark.line + 1, mark.column + 1};
}

std::string YamlReader::Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "empty";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      return fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Undefined:
      break;
  }
  return "missing";
}

Status YamlReader::Mapping(const YAML::Node& node, const std::string& field,
                           const std::string& expected) const {
  if (node.IsMap()) return Status::Ok();
  return Error(node, field, "is not a mapping", expected);
}

Status YamlReader::CheckMap(const YAML::Node& node, const std::string& field,
                            std::initializer_list<std::string_view> known,
                            std::string_view what) const {
  if (!node.IsMap()) {
    return Error(node, field.empty() ? "(document)" : field, "is not a map",
                 std::string(what) + " with fields " + Join(known));
  }
  std::set<std::string, std::less<>> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    // A copy: the iterator hands out a temporary pair, so a reference would dangle.
    const YAML::Node key = it->first;
    if (!key.IsScalar()) return Error(key, field, "a key is not a plain name");
    const std::string& k = key.Scalar();
    const std::string path = field.empty() ? k : field + "." + k;
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      return Error(key, path, "unknown field", "one of: " + Join(known));
    }
    if (!seen.insert(k).second) return Error(key, path, "field appears twice");
  }
  return Status::Ok();
}

Status YamlReader::KnownField(const YAML::Node& key, const std::string& field,
                              const std::set<std::string, std::less<>>& known) const {
  if (known.count(key.Scalar()) != 0) return Status::Ok();
  std::string list;
  for (const auto& f : known) list += (list.empty() ? "" : ", ") + f;
  return Error(key, field, "unknown field", "one of: " + list);
}

Result<std::string> YamlReader::Scalar(const YAML::Node& node, const std::string& field,
                                       const std::string& expected) const {
  if (!node.IsScalar()) return Error(node, field, "is " + Describe(node), expected);
  return node.Scalar();
}

Result<std::string> YamlReader::String(const YAML::Node& node, const std::string& field) const {
  if (!node.IsScalar()) return Error(node, field, "is not a string");
  return node.Scalar();
}

Result<bool> YamlReader::Bool(const YAML::Node& node, const std::string& field) const {
  if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) {
    return node.Scalar() == "true";
  }
  return Error(node, field, "is not a boolean", "true or false");
}

Result<double> YamlReader::Number(const YAML::Node& node, const std::string& field, double least,
                                  double most, bool open_least, const std::string& expected) const {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  const bool low_ok = open_least ? x > least : x >= least;
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !low_ok ||
      !(x <= most)) {
    return Error(node, field, "is '" + text + "'", expected);
  }
  return x;
}

Result<double> YamlReader::FiniteNumber(const YAML::Node& node, const std::string& field,
                                        const std::string& expected) const {
  ASSIGN_OR_RETURN(std::string text, Scalar(node, field, expected));
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Error(node, field, fmt::format("'{}' is not a number", text), expected);
  }
  if (!std::isfinite(value)) {
    return Error(node, field, fmt::format("'{}' is not a finite number", text), expected);
  }
  return value;
}

Result<int64_t> YamlReader::WholeNumber(const YAML::Node& node, const std::string& field,
                                        int64_t least, int64_t most) const {
  const std::string expected = fmt::format("a whole number from {} to {}", least, most);
  ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    return Error(node, field, fmt::format("'{}' is not a whole number", s), expected);
  }
  if (v < least || v > most) {
    return Error(node, field, fmt::format("{} is out of range", v), expected);
  }
  return v;
}

Result<int64_t> YamlReader::Count(const YAML::Node& node, const std::string& field,
                                  int64_t most) const {
  const std::string expected = fmt::format("a whole number from 1 to {}", most);
  RETURN_IF_ERROR(Scalar(node, field, expected).status());
  const std::string& s = node.Scalar();
  if (s.starts_with('-')) {
    return Error(node, field, fmt::format("'{}' is negative", s), expected);
  }
  std::string_view digits = s;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Error(node, field, fmt::format("'{}' is not a whole number", s), expected);
  }
  while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
  const std::optional<int64_t> v = ParseDigits(digits);
  if (!v || *v > most) return Error(node, field, fmt::format("'{}' is too large", s), expected);
  if (*v == 0) return Error(node, field, "is zero", expected);
  return *v;
}

Result<double> YamlReader::Duration(const YAML::Node& node, const std::string& field,
                                    double least_s, double most_s, std::string_view what,
                                    const std::string& expected) const {
  ASSIGN_OR_RETURN(std::string s, String(node, field));
  const Result<double> d = util::ParseDuration(s);
  if (!d.ok() || !(*d >= least_s) || *d > most_s) {
    return Error(node, field, fmt::format("'{}' is not {}", s, what), expected);
  }
  return *d;
}

std::string YamlReader::UnlessSaid(const util::Status& why, const std::string& expected) {
  return why.message().find("(expected") == std::string::npos ? expected : std::string();
}

}  // namespace hetsched::model::io
