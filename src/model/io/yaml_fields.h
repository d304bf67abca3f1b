// YamlFields: located reads of the fields of a small YAML configuration document, for the
// readers that take a few typed fields (serve's --config, simulate's --config). Every error
// is "file:line:column: field: problem (expected ...)".
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "util/source_location.h"
#include "util/status.h"

namespace hetsched::model::io {

class YamlFields {
 public:
  explicit YamlFields(std::string file) : file_(std::move(file)) {}

  // The document in `text`, or where it stops being YAML.
  static util::Result<YAML::Node> Load(std::string_view text, const std::string& file) {
    try {
      return YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      return util::InputError({file, e.mark.line + 1, e.mark.column + 1}, "", "not YAML: " + e.msg);
    }
  }

  util::Status Error(const YAML::Node& n, const std::string& field, const std::string& problem,
                     const std::string& expected = "") const {
    return util::InputError(Where(n), field, problem, expected);
  }
  util::SourceLocation Where(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return {file_, m.line + 1, m.column + 1};
  }

  util::Result<std::string> String(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) return Error(n, field, "is not a string");
    return n.Scalar();
  }

  // kInvalidArgument listing the known fields when `key` (at `field`) is not one of them.
  util::Status KnownField(const YAML::Node& key, const std::string& field,
                          const std::set<std::string, std::less<>>& known) const {
    if (known.count(key.Scalar()) != 0) return util::Status::Ok();
    std::string list;
    for (const auto& f : known) list += (list.empty() ? "" : ", ") + f;
    return Error(key, field, "unknown field", "one of: " + list);
  }

  // A number in [least, most] (`open_least`: above least); otherwise "is 'TEXT'" and `expected`.
  util::Result<double> Number(const YAML::Node& n, const std::string& field, double least,
                              double most, bool open_least, const std::string& expected) const {
    const std::string text = n.IsScalar() ? n.Scalar() : "";
    double x = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    const bool low_ok = open_least ? x > least : x >= least;
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !low_ok ||
        !(x <= most)) {
      return Error(n, field, "is '" + text + "'", expected);
    }
    return x;
  }

  util::Result<bool> Bool(const YAML::Node& n, const std::string& field) const {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) {
      return n.Scalar() == "true";
    }
    return Error(n, field, "is not a boolean", "true or false");
  }

 private:
  std::string file_;
};

}  // namespace hetsched::model::io
