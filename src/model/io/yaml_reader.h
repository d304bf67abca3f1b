// YamlReader: located reads of typed fields from the nodes of one YAML document, shared by
// the YAML readers (clusters, device types, layer files, job classes, serve's and simulate's
// --config). Every error is "file:line:column: field: problem (expected ...)", at the node
// that is wrong (or, for a missing field, at the map that lacks it).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "model/io/document.h"
#include "util/source_location.h"
#include "util/status.h"

namespace hetsched::model::io {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  // The document in `text`, or "FILE:L:C: not YAML: ..." where it stops being YAML.
  static util::Result<YAML::Node> Load(std::string_view text, const std::string& file);

  // 1-based; 0:0 for a node without a position (one yaml-cpp made up).
  util::SourceLocation At(const YAML::Mark& mark) const;
  util::SourceLocation At(const YAML::Node& node) const { return At(node.Mark()); }

  util::Status Error(const YAML::Node& at, const std::string& field, const std::string& problem,
                     const std::string& expected = "") const {
    return util::InputError(At(at), field, problem, expected);
  }
  // "missing required field" at `parent`, the map that lacks `field`.
  util::Status Missing(const YAML::Node& parent, const std::string& field,
                       const std::string& expected) const {
    return Error(parent, field, "missing required field", expected);
  }

  // What `node` is, for "is ..." messages: 'TEXT', a list, a map, empty or missing.
  static std::string Describe(const YAML::Node& node);

  // "is not a mapping" unless `node` is a map.
  util::Status Mapping(const YAML::Node& node, const std::string& field,
                       const std::string& expected) const;
  // `node` must be a map (`what`, in the message) whose keys are unique plain names from
  // `known`; the first that is not is reported at its key.
  util::Status CheckMap(const YAML::Node& node, const std::string& field,
                        std::initializer_list<std::string_view> known,
                        std::string_view what = "a map") const;
  // "unknown field" at `key` (reported as `field`) unless it is one of `known`.
  util::Status KnownField(const YAML::Node& key, const std::string& field,
                          const std::set<std::string, std::less<>>& known) const;

  // The text of a scalar; otherwise "is " and what it is instead (Describe).
  util::Result<std::string> Scalar(const YAML::Node& node, const std::string& field,
                                   const std::string& expected) const;
  // The text of a scalar; otherwise "is not a string".
  util::Result<std::string> String(const YAML::Node& node, const std::string& field) const;

  util::Result<bool> Bool(const YAML::Node& node, const std::string& field) const;

  // A number in [least, most] (`open_least`: above least); otherwise "is 'TEXT'" and
  // `expected`.
  util::Result<double> Number(const YAML::Node& node, const std::string& field, double least,
                              double most, bool open_least, const std::string& expected) const;
  // Any finite decimal number ("'TEXT' is not a number"); range checks are the caller's.
  util::Result<double> FiniteNumber(const YAML::Node& node, const std::string& field,
                                    const std::string& expected) const;
  // A whole number from `least` to `most` ("'TEXT' is not a whole number", "N is out of
  // range").
  util::Result<int64_t> WholeNumber(const YAML::Node& node, const std::string& field, int64_t least,
                                    int64_t most) const;
  // A positive whole number no larger than `most`, saying which way it is wrong (negative, not
  // a whole number, too large, zero).
  util::Result<int64_t> Count(const YAML::Node& node, const std::string& field, int64_t most) const;
  // A duration (seconds, or with a unit: 30s, 10m, 1d) from `least_s` to `most_s`;
  // otherwise "'TEXT' is not WHAT".
  util::Result<double> Duration(const YAML::Node& node, const std::string& field, double least_s,
                                double most_s, std::string_view what,
                                const std::string& expected) const;

  // A scalar read by one of util's unit parsers (ParseBytes, ParsePower, ...); its message
  // when it fails, with `expected` unless the parser already said what it expected.
  // `positive` rejects zero.
  template <typename T>
  util::Result<T> Quantity(const YAML::Node& node, const std::string& field,
                           util::Result<T> (*parse)(std::string_view), const std::string& expected,
                           bool positive = false) const {
    ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
    util::Result<T> v = parse(s);
    if (!v.ok()) return Error(node, field, v.status().message(), UnlessSaid(v.status(), expected));
    if (positive && *v == 0) return Error(node, field, "is zero", expected);
    return *v;
  }

  // A scalar that `parse` knows; otherwise "'TEXT' is not known".
  template <typename T>
  util::Result<T> Enum(const YAML::Node& node, const std::string& field,
                       const std::string& expected,
                       util::Result<T> (*parse)(std::string_view)) const {
    ASSIGN_OR_RETURN(std::string s, Scalar(node, field, expected));
    util::Result<T> v = parse(s);
    if (!v.ok()) return Error(node, field, "'" + s + "' is not known", expected);
    return v;
  }

 private:
  // `expected`, or "" when `why` already says what was expected.
  static std::string UnlessSaid(const util::Status& why, const std::string& expected);

  std::string file_;
};

}  // namespace hetsched::model::io
