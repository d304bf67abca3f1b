// DocReader's reads (model/io/document.h); the parsing into DocValues is in document.cc.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "model/io/document.h"
#include "util/units.h"

namespace hetsched::model::io {

using util::Result;
using util::Status;

namespace {

bool IsJsonString(const DocValue& v) { return v.type == DocValue::Type::kString; }

}  // namespace

Status DocReader::Mapping(const DocValue& v, const std::string& path,
                          const std::string& expected) const {
  if (v.IsMap()) return Status::Ok();
  return Error(v, path, "is not a mapping", expected);
}

Status DocReader::CheckMap(const DocValue& v, const std::string& path,
                           std::initializer_list<std::string_view> known,
                           std::string_view what) const {
  if (!v.IsMap()) {
    return Error(v, path.empty() ? "(document)" : path, "is not a map",
                 fmt::format("{} with fields {}", what, fmt::join(known, ", ")));
  }
  return OnlyKnown(v, path, known);
}

Status DocReader::KnownField(const DocValue::Field& key, const std::string& path,
                             const std::set<std::string, std::less<>>& known) const {
  if (known.count(key.key) != 0) return Status::Ok();
  std::string list;
  for (const auto& f : known) list += (list.empty() ? "" : ", ") + f;
  return Error(key, path, "unknown field", "one of: " + list);
}

Status DocReader::OnlyKnown(const DocValue& map, const std::string& path,
                            const std::vector<std::string_view>& known) const {
  for (const DocValue::Field& f : map.fields) {
    if (std::find(known.begin(), known.end(), f.key) == known.end()) {
      return Error(f, Join(path, f.key), "unknown field",
                   fmt::format("one of: {}", fmt::join(known, ", ")));
    }
  }
  return Status::Ok();
}

Result<std::string> DocReader::Scalar(const DocValue& v, const std::string& path,
                                      const std::string& expected) const {
  if (!v.IsScalar()) return Error(v, path, "is " + Describe(v), expected);
  return v.text;
}

Result<std::string> DocReader::String(const DocValue& v, const std::string& path) const {
  if (!v.IsScalar() || v.type == DocValue::Type::kNumber || v.type == DocValue::Type::kBool) {
    return Error(v, path, "is not a string");
  }
  return v.text;
}

Result<std::string> DocReader::NonEmptyString(const DocValue& v, const std::string& path) const {
  if (!v.IsScalar() || v.text.empty() || v.type == DocValue::Type::kNumber ||
      v.type == DocValue::Type::kBool) {
    return Error(v, path, fmt::format("is {}", Describe(v)), "a non-empty string");
  }
  return v.text;
}

Result<bool> DocReader::Bool(const DocValue& v, const std::string& path) const {
  if (v.IsScalar() && !IsJsonString(v)) {
    if (v.text == "true" || v.text == "True" || v.text == "TRUE") return true;
    if (v.text == "false" || v.text == "False" || v.text == "FALSE") return false;
  }
  const std::string problem =
      v.IsScalar() ? Describe(v) + " is not a boolean" : "is " + Describe(v);
  return Error(v, path, problem, "true or false");
}

Result<std::string> DocReader::NumberText(const DocValue& v, const std::string& path,
                                          const std::string& expected) const {
  ASSIGN_OR_RETURN(std::string text, Scalar(v, path, expected));
  if (IsJsonString(v) || v.type == DocValue::Type::kBool) {
    return Error(v, path, Describe(v) + " is not a number", expected);
  }
  return text;
}

Result<double> DocReader::Number(const DocValue& v, const std::string& path, double min,
                                 bool strict, const std::string& expected) const {
  ASSIGN_OR_RETURN(double value, Parsed<double>(v, path, "a number", expected));
  if (!std::isfinite(value)) {
    return Error(v, path, fmt::format("'{}' is not finite", v.text), expected);
  }
  if (value < min || (strict && value == min)) {
    return Error(v, path, fmt::format("is {}", v.text), expected);
  }
  return value;
}

Result<double> DocReader::NumberIn(const DocValue& v, const std::string& path, double least,
                                   double most, bool open_least,
                                   const std::string& expected) const {
  if (!v.IsScalar() || IsJsonString(v) || v.type == DocValue::Type::kBool) {
    return Error(v, path, "is " + Describe(v), expected);
  }
  const std::string& text = v.text;
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  const bool low_ok = open_least ? x > least : x >= least;
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !low_ok ||
      !(x <= most)) {
    return Error(v, path, "is " + Describe(v), expected);
  }
  return x;
}

Result<double> DocReader::FiniteNumber(const DocValue& v, const std::string& path,
                                       const std::string& expected) const {
  ASSIGN_OR_RETURN(std::string text, NumberText(v, path, expected));
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Error(v, path, fmt::format("'{}' is not a number", text), expected);
  }
  if (!std::isfinite(value)) {
    return Error(v, path, fmt::format("'{}' is not a finite number", text), expected);
  }
  return value;
}

Result<int64_t> DocReader::WholeNumber(const DocValue& v, const std::string& path, int64_t least,
                                       int64_t most) const {
  const std::string expected = fmt::format("a whole number from {} to {}", least, most);
  ASSIGN_OR_RETURN(std::string s, NumberText(v, path, expected));
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    return Error(v, path, fmt::format("'{}' is not a whole number", s), expected);
  }
  if (n < least || n > most) {
    return Error(v, path, fmt::format("{} is out of range", n), expected);
  }
  return n;
}

Result<int64_t> DocReader::Count(const DocValue& v, const std::string& path, int64_t most) const {
  const std::string expected = fmt::format("a whole number from 1 to {}", most);
  RETURN_IF_ERROR(NumberText(v, path, expected).status());
  const std::string& s = v.text;
  if (s.starts_with('-')) {
    return Error(v, path, fmt::format("'{}' is negative", s), expected);
  }
  std::string_view digits = s;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Error(v, path, fmt::format("'{}' is not a whole number", s), expected);
  }
  while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
  const std::optional<int64_t> n = ParseDigits(digits);
  if (!n || *n > most) return Error(v, path, fmt::format("'{}' is too large", s), expected);
  if (*n == 0) return Error(v, path, "is zero", expected);
  return *n;
}

Result<double> DocReader::Seconds(const DocValue& v, const std::string& path,
                                  const std::string& expected) const {
  if (!v.IsScalar() || v.type == DocValue::Type::kBool) {
    return Error(v, path, fmt::format("is {}", Describe(v)), expected);
  }
  auto parsed = util::ParseDuration(v.text);
  if (!parsed.ok()) return Error(v, path, parsed.status().message(), expected);
  return *parsed;
}

Result<double> DocReader::Duration(const DocValue& v, const std::string& path, double least_s,
                                   double most_s, std::string_view what,
                                   const std::string& expected) const {
  ASSIGN_OR_RETURN(std::string s, Scalar(v, path, expected));
  const Result<double> d = util::ParseDuration(s);
  if (!d.ok() || !(*d >= least_s) || *d > most_s) {
    return Error(v, path, fmt::format("'{}' is not {}", s, what), expected);
  }
  return *d;
}

std::string DocReader::UnlessSaid(const util::Status& why, const std::string& expected) {
  return why.message().find("(expected") == std::string::npos ? expected : std::string();
}

}  // namespace hetsched::model::io
