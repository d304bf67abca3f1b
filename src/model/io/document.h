// DocValue and DocReader: one located document tree for every reader of YAML or JSON
// documents (clusters, device types, layer files, job classes, workloads, serve's and
// simulate's --config, the daemon's requests), and typed reads of its fields. A YAML document
// or a JSON value is first turned into a DocValue (scalars keep their text and, from JSON,
// their type; maps keep their keys' positions); DocReader then reads a field, and every error
// is "file:line:column: field: problem (expected ...)", at the value that is wrong (or, for a
// missing field, at the map that lacks it).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/source_location.h"
#include "util/status.h"
#include "util/units.h"

namespace hetsched::model::io {

// An unsigned decimal of at most 18 digits; nullopt for anything else (signs included).
inline std::optional<int64_t> ParseDigits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// A document value. Scalars keep their text; the field reads decide what the text must be.
struct DocValue {
  // kMissing: a field a map does not have (what operator[] gives for it), never parsed.
  enum class Kind { kMissing, kNull, kScalar, kList, kMap };
  // What the source said a scalar is: YAML leaves that to the reader (kUntyped, "2" may be a
  // number), JSON says it (a string "2" is no number).
  enum class Type { kUntyped, kString, kNumber, kBool };
  struct Field;

  Kind kind = Kind::kNull;
  Type type = Type::kUntyped;  // scalars only
  std::string text;            // scalars only
  std::vector<DocValue> items;
  std::vector<Field> fields;  // maps only, in file order, keys unique
  int line = 0;               // 1-based; 0 unknown
  int column = 0;

  bool IsMissing() const { return kind == Kind::kMissing; }
  bool IsNull() const { return kind == Kind::kNull; }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsList() const { return kind == Kind::kList; }
  bool IsMap() const { return kind == Kind::kMap; }
  // A list's items or a map's fields; 0 for anything else.
  size_t size() const;
  // A list's item `i` (< size()).
  const DocValue& operator[](size_t i) const { return items[i]; }
  // Whether a map has the field `key`.
  bool Has(std::string_view key) const;
  // The value of the field `key`, or a missing value (no position) when there is none.
  const DocValue& operator[](std::string_view key) const;
};

struct DocValue::Field {
  std::string key;
  int line = 0;
  int column = 0;
  DocValue value;
};

inline size_t DocValue::size() const { return IsMap() ? fields.size() : items.size(); }

// What `v` is, for "is ..." messages: 'TEXT' (from JSON: "TEXT", or a number or boolean as
// written), a list, a map, empty or missing.
std::string Describe(const DocValue& v);

// The YAML document in `text` ("not valid YAML: ..." where it stops being YAML). Nesting
// deeper than 64 and aliases expanding beyond the text's size are refused, as are keys given
// twice and keys that are not plain names.
util::Result<DocValue> ParseYamlDocument(std::string_view text, const std::string& file);

// `j` as a DocValue, every value located at `at` (nlohmann keeps no positions). With
// `typed`, scalars keep their JSON type (a request's "2" is no number); without, they are
// read like YAML's (a workload file's JSON Lines may quote numbers).
util::Status FromJson(const nlohmann::json& j, const util::SourceLocation& at, DocValue* out,
                      bool typed = false);

// The JSON text `text` as FromJson(nlohmann::json::parse(text), at, out, typed) reads it
// (fields in key order), in one pass without nlohmann's document: a daemon's restart reads
// hundreds of thousands of stored requests. Errors are "file:line:0: not valid JSON: ...",
// and a key given twice in one object or nesting deeper than 64 is refused (FromJson's
// document would keep the last value of such a key).
util::Status ParseJson(std::string_view text, const util::SourceLocation& at, DocValue* out,
                       bool typed = false);

// The field `key` of `map`, or nullptr.
const DocValue::Field* FindField(const DocValue& map, std::string_view key);

// Typed reads of document values. Each takes the value and the path used in messages
// ("jobs[3].gang_size").
class DocReader {
 public:
  explicit DocReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  util::SourceLocation At(const DocValue& v) const { return {file_, v.line, v.column}; }
  util::SourceLocation At(const DocValue::Field& key) const {
    return {file_, key.line, key.column};
  }

  util::Status Error(const DocValue& v, const std::string& path, const std::string& problem,
                     const std::string& expected = "") const {
    return util::InputError(At(v), path, problem, expected);
  }
  // An error at a field's key.
  util::Status Error(const DocValue::Field& key, const std::string& path,
                     const std::string& problem, const std::string& expected = "") const {
    return util::InputError(At(key), path, problem, expected);
  }
  // "missing required field" at `parent`, the map that lacks `field`.
  util::Status Missing(const DocValue& parent, const std::string& field,
                       const std::string& expected) const {
    return Error(parent, field, "missing required field", expected);
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  // ---- shape

  util::Status Expect(const DocValue& v, DocValue::Kind kind, const std::string& path,
                      const std::string& expected) const {
    if (v.kind != kind) return Error(v, path, fmt::format("is {}", Describe(v)), expected);
    return util::Status::Ok();
  }
  // "is not a mapping" unless `v` is a map.
  util::Status Mapping(const DocValue& v, const std::string& path,
                       const std::string& expected) const;
  // `v` must be a map (`what`, in the message) whose keys are all in `known`; the first that
  // is not is reported at its key.
  util::Status CheckMap(const DocValue& v, const std::string& path,
                        std::initializer_list<std::string_view> known,
                        std::string_view what = "a map") const;
  // "unknown field" at `key` (reported as `path`) unless it is one of `known`.
  util::Status KnownField(const DocValue::Field& key, const std::string& path,
                          const std::set<std::string, std::less<>>& known) const;
  // Rejects keys of `map` not in `known`, naming the known ones.
  util::Status OnlyKnown(const DocValue& map, const std::string& path,
                         const std::vector<std::string_view>& known) const;

  // ---- text

  // The text of a scalar; otherwise "is " and what it is instead (Describe).
  util::Result<std::string> Scalar(const DocValue& v, const std::string& path,
                                   const std::string& expected) const;
  // The text of a scalar that is no JSON number or boolean; otherwise "is not a string".
  util::Result<std::string> String(const DocValue& v, const std::string& path) const;
  // The same, not empty; otherwise "is ..." (Describe) and "a non-empty string".
  util::Result<std::string> NonEmptyString(const DocValue& v, const std::string& path) const;
  // true or false (True, TRUE, False, FALSE too, as YAML 1.2 reads them); from JSON, a
  // boolean only.
  util::Result<bool> Bool(const DocValue& v, const std::string& path) const;

  // ---- numbers (a JSON string is no number)

  // An integer from `min` to `max` ("'TEXT' is not an integer", "is N").
  util::Result<int64_t> Integer(const DocValue& v, const std::string& path, int64_t min,
                                int64_t max, const std::string& expected) const {
    ASSIGN_OR_RETURN(int64_t value, Parsed<int64_t>(v, path, "an integer", expected));
    if (value < min || value > max) return Error(v, path, fmt::format("is {}", v.text), expected);
    return value;
  }
  // A finite number >= min (or > min when `strict`) ("'TEXT' is not finite", "is N").
  util::Result<double> Number(const DocValue& v, const std::string& path, double min, bool strict,
                              const std::string& expected) const;
  // A number in [least, most] (`open_least`: above least); otherwise "is 'TEXT'" (Describe).
  util::Result<double> NumberIn(const DocValue& v, const std::string& path, double least,
                                double most, bool open_least, const std::string& expected) const;
  // Any finite decimal number ("'TEXT' is not a number"); range checks are the caller's.
  util::Result<double> FiniteNumber(const DocValue& v, const std::string& path,
                                    const std::string& expected) const;
  // A whole number from `least` to `most` ("'TEXT' is not a whole number", "N is out of
  // range").
  util::Result<int64_t> WholeNumber(const DocValue& v, const std::string& path, int64_t least,
                                    int64_t most) const;
  // A positive whole number no larger than `most`, saying which way it is wrong (negative, not
  // a whole number, too large, zero).
  util::Result<int64_t> Count(const DocValue& v, const std::string& path, int64_t most) const;

  // ---- quantities with units

  // Seconds as a number or a duration string ("10m", "2h"); the parser's message otherwise.
  util::Result<double> Seconds(
      const DocValue& v, const std::string& path,
      const std::string& expected = "seconds or a duration like 10m") const;
  // A duration (seconds, or with a unit: 30s, 10m, 1d) from `least_s` to `most_s`;
  // otherwise "'TEXT' is not WHAT".
  util::Result<double> Duration(const DocValue& v, const std::string& path, double least_s,
                                double most_s, std::string_view what,
                                const std::string& expected) const;
  util::Result<uint64_t> Bytes(const DocValue& v, const std::string& path) const {
    return Quantity<uint64_t>(v, path, util::ParseBytes, "a byte count like 40GiB");
  }

  // A scalar read by one of util's unit parsers (ParseBytes, ParsePower, ...); its message
  // when it fails, with `expected` unless the parser already said what it expected.
  // `positive` rejects zero.
  template <typename T>
  util::Result<T> Quantity(const DocValue& v, const std::string& path,
                           util::Result<T> (*parse)(std::string_view), const std::string& expected,
                           bool positive = false) const {
    ASSIGN_OR_RETURN(std::string s, Scalar(v, path, expected));
    util::Result<T> parsed = parse(s);
    if (!parsed.ok()) {
      return Error(v, path, parsed.status().message(), UnlessSaid(parsed.status(), expected));
    }
    if (positive && *parsed == 0) return Error(v, path, "is zero", expected);
    return *parsed;
  }

  // A scalar that `parse` knows; otherwise "'TEXT' is not known".
  template <typename T>
  util::Result<T> Enum(const DocValue& v, const std::string& path, const std::string& expected,
                       util::Result<T> (*parse)(std::string_view)) const {
    ASSIGN_OR_RETURN(std::string s, Scalar(v, path, expected));
    util::Result<T> parsed = parse(s);
    if (!parsed.ok()) return Error(v, path, "'" + s + "' is not known", expected);
    return parsed;
  }

 private:
  // The whole scalar text as a T (std::from_chars), or an error naming `what` it is not.
  template <typename T>
  util::Result<T> Parsed(const DocValue& v, const std::string& path, const char* what,
                         const std::string& expected) const {
    if (v.kind != DocValue::Kind::kScalar) {
      return Error(v, path, fmt::format("is {}", Describe(v)), expected);
    }
    if (v.type == DocValue::Type::kString || v.type == DocValue::Type::kBool) {
      return Error(v, path, fmt::format("{} is not {}", Describe(v), what), expected);
    }
    T value{};
    const char* first = v.text.data();
    const char* last = first + v.text.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      return Error(v, path, fmt::format("{} is out of range", v.text), expected);
    }
    if (ec != std::errc() || ptr != last) {
      return Error(v, path, fmt::format("'{}' is not {}", v.text, what), expected);
    }
    return value;
  }
  // The text of a scalar that may be a number: no JSON string or boolean.
  util::Result<std::string> NumberText(const DocValue& v, const std::string& path,
                                       const std::string& expected) const;
  // `expected`, or "" when `why` already says what was expected.
  static std::string UnlessSaid(const util::Status& why, const std::string& expected);

  std::string file_;
};

}  // namespace hetsched::model::io
