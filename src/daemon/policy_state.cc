#include "daemon/policy_state.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace hetsched::svc {

std::string HistoryJson(const sched::JobHistory& h) {
  nlohmann::json j = {{"attained_s", h.attained_s}, {"attained_norm_s", h.attained_norm_s}};
  if (!h.received_s.empty()) {
    nlohmann::json received = nlohmann::json::object();
    for (const auto& [type, seconds] : h.received_s) received[type] = seconds;
    j["received_s"] = received;
  }
  return j.dump();
}

namespace {

// A number of `text` from `at`, which moves past it; nullopt when none starts there.
std::optional<double> NumberAt(std::string_view text, size_t& at) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (ec != std::errc()) return std::nullopt;
  at = static_cast<size_t>(end - text.data());
  return value;
}

// The form without received_s, exactly as HistoryJson writes it; nullopt for any other text.
std::optional<sched::JobHistory> ParsePlainHistory(std::string_view text) {
  constexpr std::string_view kNorm = "{\"attained_norm_s\":", kAttained = ",\"attained_s\":";
  if (!text.starts_with(kNorm)) return std::nullopt;
  size_t at = kNorm.size();
  const std::optional<double> norm = NumberAt(text, at);
  if (!norm || text.compare(at, kAttained.size(), kAttained) != 0) return std::nullopt;
  at += kAttained.size();
  const std::optional<double> attained = NumberAt(text, at);
  if (!attained || text.substr(at) != "}") return std::nullopt;
  sched::JobHistory h;
  h.attained_norm_s = *norm;
  h.attained_s = *attained;
  return h;
}

}  // namespace

std::optional<sched::JobHistory> ParseHistory(std::string_view text) {
  if (auto plain = ParsePlainHistory(text)) return plain;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.value("attained_s", nlohmann::json()).is_number() ||
      !j.value("attained_norm_s", nlohmann::json()).is_number()) {
    return std::nullopt;
  }
  sched::JobHistory h;
  h.attained_s = j["attained_s"].get<double>();
  h.attained_norm_s = j["attained_norm_s"].get<double>();
  if (auto it = j.find("received_s"); it != j.end() && it->is_object()) {
    for (const auto& [type, seconds] : it->items()) {
      if (seconds.is_number()) h.received_s.push_back({type, seconds.get<double>()});
    }
  }
  return h;
}

}  // namespace hetsched::svc
