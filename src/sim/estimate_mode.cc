// The simulator's estimate modes (SimOptions::estimates, `--estimates`): parsed and named.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include "sim/engine.h"

namespace hetsched::sim {

util::Result<EstimateMode> ParseEstimateMode(std::string_view text) {
  constexpr std::string_view kKnown =
      "workload, none, lognormal:SIGMA, user-limit:FACTOR, history, oracle";
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  EstimateMode m;
  const bool takes_parameter = name == "lognormal" || name == "user-limit";
  if (name == "workload") {
    m.kind = EstimateMode::kWorkload;
  } else if (name == "none") {
    m.kind = EstimateMode::kNone;
  } else if (name == "history") {
    m.kind = EstimateMode::kHistory;
  } else if (name == "oracle") {
    m.kind = EstimateMode::kOracle;
  } else if (name == "lognormal") {
    m.kind = EstimateMode::kLognormal;
  } else if (name == "user-limit") {
    m.kind = EstimateMode::kUserLimit;
  } else {
    return util::Status::InvalidArgument(
        fmt::format("--estimates '{}': unknown mode (known: {})", text, kKnown));
  }
  if (!takes_parameter) {
    if (colon != std::string_view::npos) {
      return util::Status::InvalidArgument(
          fmt::format("--estimates '{}': '{}' takes no parameter (known: {})", text, name, kKnown));
    }
    return m;
  }
  const std::string_view value =
      colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  double x = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  const bool lognormal = m.kind == EstimateMode::kLognormal;
  const bool ok = !value.empty() && ec == std::errc() && ptr == value.data() + value.size() &&
                  std::isfinite(x) && (lognormal ? x >= 0 && x <= 10 : x >= 1 && x <= 1000);
  if (!ok) {
    return util::Status::InvalidArgument(fmt::format(
        "--estimates '{}': {} (expected {})", text,
        value.empty() ? "the parameter is missing" : fmt::format("bad parameter '{}'", value),
        lognormal ? "lognormal:SIGMA with 0 <= SIGMA <= 10, e.g. lognormal:1"
                  : "user-limit:FACTOR with 1 <= FACTOR <= 1000, e.g. user-limit:5"));
  }
  m.parameter = x;
  return m;
}

std::string EstimateModeName(const EstimateMode& m) {
  switch (m.kind) {
    case EstimateMode::kWorkload:
      return "workload";
    case EstimateMode::kNone:
      return "none";
    case EstimateMode::kLognormal:
      return fmt::format("lognormal:{}", m.parameter);
    case EstimateMode::kUserLimit:
      return fmt::format("user-limit:{}", m.parameter);
    case EstimateMode::kHistory:
      return "history";
    case EstimateMode::kOracle:
      return "oracle";
  }
  return "?";
}

}  // namespace hetsched::sim
