// DocValue and DocReader: one located document tree for the readers that take YAML or JSON
// documents, and typed reads of its fields. A YAML document or a JSON value is first turned
// into a DocValue (scalars keep their text, maps keep their keys' positions); DocReader then
// reads a field as a string, an integer, a number, a boolean, a duration or a byte count, and
// every error is "file:line:column: field: problem (expected ...)".
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/source_location.h"
#include "util/status.h"
#include "util/units.h"

namespace hetsched::model::io {

// A document value. Scalars keep their text; the field reads decide what the text must be.
struct DocValue {
  enum class Kind { kNull, kScalar, kList, kMap };
  struct Field;
  Kind kind = Kind::kNull;
  std::string text;  // scalars only
  std::vector<DocValue> items;
  std::vector<Field> fields;  // maps only, in file order, keys unique
  int line = 0;               // 1-based; 0 unknown
  int column = 0;
};

struct DocValue::Field {
  std::string key;
  int line = 0;
  int column = 0;
  DocValue value;
};

// What `v` is, for "is ..." messages: 'TEXT', a list, a map or empty.
std::string KindName(const DocValue& v);

// The YAML document in `text` ("not valid YAML: ..." where it stops being YAML). Nesting
// deeper than 64 and aliases expanding beyond the text's size are refused, as are keys given
// twice.
util::Result<DocValue> ParseYamlDocument(std::string_view text, const std::string& file);

// `j` as a DocValue, every value located at `at` (nlohmann keeps no positions).
util::Status FromJson(const nlohmann::json& j, const util::SourceLocation& at, DocValue* out);

// The field `key` of `map`, or nullptr.
const DocValue::Field* FindField(const DocValue& map, std::string_view key);

// Typed reads of document values. Each takes the value and the path used in messages
// ("jobs[3].gang_size").
class DocReader {
 public:
  explicit DocReader(const std::string& file) : file_(file) {}

  util::SourceLocation Loc(const DocValue& v) const { return {file_, v.line, v.column}; }

  util::Status Error(const DocValue& v, const std::string& path, const std::string& problem,
                     const std::string& expected = "") const {
    return util::InputError(Loc(v), path, problem, expected);
  }

  util::Result<std::string> String(const DocValue& v, const std::string& path) const {
    if (v.kind != DocValue::Kind::kScalar || v.text.empty()) {
      return Error(v, path, fmt::format("is {}", KindName(v)), "a non-empty string");
    }
    return v.text;
  }

  util::Result<int64_t> Integer(const DocValue& v, const std::string& path, int64_t min,
                                int64_t max, const std::string& expected) const {
    ASSIGN_OR_RETURN(int64_t value, Scalar<int64_t>(v, path, "an integer", expected));
    if (value < min || value > max) {
      return Error(v, path, fmt::format("is {}", v.text), expected);
    }
    return value;
  }

  // A finite number >= min (or > min when `strict`).
  util::Result<double> Number(const DocValue& v, const std::string& path, double min, bool strict,
                              const std::string& expected) const {
    ASSIGN_OR_RETURN(double value, Scalar<double>(v, path, "a number", expected));
    if (!std::isfinite(value)) {
      return Error(v, path, fmt::format("'{}' is not finite", v.text), expected);
    }
    if (value < min || (strict && value == min)) {
      return Error(v, path, fmt::format("is {}", v.text), expected);
    }
    return value;
  }

  util::Result<bool> Bool(const DocValue& v, const std::string& path) const {
    if (v.kind == DocValue::Kind::kScalar) {
      if (v.text == "true" || v.text == "True" || v.text == "TRUE") return true;
      if (v.text == "false" || v.text == "False" || v.text == "FALSE") return false;
    }
    return Error(v, path, fmt::format("is {}", KindName(v)), "true or false");
  }

  // Seconds as a number or a duration string ("10m", "2h").
  util::Result<double> Seconds(
      const DocValue& v, const std::string& path,
      const std::string& expected = "seconds or a duration like 10m") const {
    if (v.kind != DocValue::Kind::kScalar) {
      return Error(v, path, fmt::format("is {}", KindName(v)), expected);
    }
    auto parsed = util::ParseDuration(v.text);
    if (!parsed.ok()) {
      return Error(v, path, parsed.status().message(), expected);
    }
    return *parsed;
  }

  util::Result<uint64_t> Bytes(const DocValue& v, const std::string& path) const {
    if (v.kind != DocValue::Kind::kScalar) {
      return Error(v, path, fmt::format("is {}", KindName(v)), "a byte count like 40GiB");
    }
    auto parsed = util::ParseBytes(v.text);
    if (!parsed.ok()) return Error(v, path, parsed.status().message(), "a byte count like 40GiB");
    return *parsed;
  }

  util::Status Expect(const DocValue& v, DocValue::Kind kind, const std::string& path,
                      const std::string& expected) const {
    if (v.kind != kind) return Error(v, path, fmt::format("is {}", KindName(v)), expected);
    return util::Status::Ok();
  }

  // Rejects keys of `map` not in `known`, naming the known ones.
  util::Status OnlyKnown(const DocValue& map, const std::string& path,
                         const std::vector<std::string_view>& known) const {
    for (const DocValue::Field& f : map.fields) {
      if (std::find(known.begin(), known.end(), f.key) == known.end()) {
        return util::InputError({file_, f.line, f.column}, Join(path, f.key), "unknown field",
                                fmt::format("one of: {}", fmt::join(known, ", ")));
      }
    }
    return util::Status::Ok();
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

 private:
  // The whole scalar text as a T (std::from_chars), or an error naming `what` it is not.
  template <typename T>
  util::Result<T> Scalar(const DocValue& v, const std::string& path, const char* what,
                         const std::string& expected) const {
    if (v.kind != DocValue::Kind::kScalar) {
      return Error(v, path, fmt::format("is {}", KindName(v)), expected);
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

  const std::string& file_;
};

}  // namespace hetsched::model::io
