// Reading the Prometheus text exposition format (version 0.0.4): what model servers (vLLM, TGI,
// llama.cpp server) answer on GET /metrics, turned into samples. The reader is strict about what
// it reads and bounded in what it keeps; it never throws.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace hetsched::svc {

// One line of the exposition: `name{label="value",...} value [timestamp]`.
struct PromSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;  // NaN and +-Inf as written ("NaN", "+Inf", "-Inf")
  // The value of label `key`, or "" when the sample has none.
  std::string_view Label(std::string_view key) const;
};

// Most samples one page may hold; a page with more is refused (a model server exposes a few
// hundred).
inline constexpr size_t kMaxPromSamples = 100000;

// Parses `text`. Comment lines (`# HELP`, `# TYPE`, any `#`) and blank lines are skipped; every
// other line must be a sample. Errors are kInvalidArgument "line L: column C: what is wrong
// (expected what)", for: a metric or label name that is not [a-zA-Z_:][a-zA-Z0-9_:]*, an
// unterminated label set or quoted value, an unknown escape, a value or timestamp that is not
// a number, text after the timestamp, a NUL byte, more than kMaxPromSamples samples.
util::Result<std::vector<PromSample>> ParsePrometheusText(std::string_view text);

}  // namespace hetsched::svc
