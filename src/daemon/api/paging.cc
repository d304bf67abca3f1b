#include "daemon/api/paging.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/units.h"

namespace hetsched::svc {
namespace {

using nlohmann::json;

constexpr std::string_view kBase64Url =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// RFC 4648 section 5 (URL- and file-safe alphabet), without padding: a cursor goes in a query
// string as it is.
std::string EncodeBase64Url(std::string_view bytes) {
  std::string out;
  uint32_t bits = 0;
  int held = 0;
  for (const unsigned char c : bytes) {
    bits = (bits << 8) | c;
    held += 8;
    while (held >= 6) {
      held -= 6;
      out += kBase64Url[(bits >> held) & 63];
    }
  }
  if (held > 0) out += kBase64Url[(bits << (6 - held)) & 63];
  return out;
}

std::optional<std::string> DecodeBase64Url(std::string_view text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (size_t i = 0; i < kBase64Url.size(); ++i) {
    value[static_cast<unsigned char>(kBase64Url[i])] = static_cast<int>(i);
  }
  std::string out;
  uint32_t bits = 0;
  int held = 0;
  for (const char c : text) {
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out += static_cast<char>((bits >> held) & 0xFF);
    }
  }
  // One character alone cannot end a whole byte: the text was cut.
  if (held >= 6) return std::nullopt;
  return out;
}

std::string Encode(std::string_view list, json fields) {
  fields["list"] = list;
  return EncodeBase64Url(fields.dump());
}

util::Status NotACursor(std::string_view list) {
  return util::Status::InvalidArgument(fmt::format(
      "cursor: not a cursor of GET {} (send the next_cursor of the page before, or no cursor "
      "for the first page)",
      list));
}

// The fields of a cursor of `list`; `read` takes them apart and throws json::exception (or
// returns an error) for anything but what the list's cursors hold.
template <typename T, typename Read>
util::Result<T> Decode(std::string_view list, std::string_view cursor, Read read) {
  const std::optional<std::string> text = DecodeBase64Url(cursor);
  if (!text) return NotACursor(list);
  const json fields = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!fields.is_object() || fields.value("list", "") != list) return NotACursor(list);
  try {
    return read(fields);
  } catch (const json::exception&) {
    return NotACursor(list);
  }
}

std::string StateText(std::optional<JobState> state) {
  return state ? std::string(JobStateName(*state)) : "";
}

}  // namespace

util::Result<size_t> ParsePageLimit(const std::string& text) {
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || n < 1 || n > static_cast<long long>(kMaxPageLimit)) {
    return util::Status::InvalidArgument(
        fmt::format("limit: '{}' (expected a whole number from 1 to {})", text, kMaxPageLimit));
  }
  return static_cast<size_t>(n);
}

std::string JobCursor(const JobPosition& position, std::optional<JobState> state) {
  return Encode("/v1/jobs", {{"state", StateText(state)},
                             {"as_of", position.as_of_s},
                             {"ended_part", position.in_ended_part},
                             {"submitted", position.last.submitted_s},
                             {"name", position.last.name}});
}

util::Result<JobPosition> ReadJobCursor(std::string_view cursor, std::optional<JobState> state) {
  return Decode<JobPosition>("/v1/jobs", cursor, [&](const json& f) -> util::Result<JobPosition> {
    const std::string made_for = f.at("state").get<std::string>();
    if (made_for != StateText(state)) {
      return util::Status::InvalidArgument(
          fmt::format("cursor: it pages {}, not {}: send the same state as for the first page",
                      made_for.empty() ? "every job" : "the jobs in state " + made_for,
                      state ? "the jobs in state " + StateText(state) : "every job"));
    }
    return JobPosition{f.at("as_of").get<double>(),
                       f.at("ended_part").get<bool>(),
                       {f.at("submitted").get<double>(), f.at("name").get<std::string>()}};
  });
}

std::string NodeCursor(int32_t after) { return Encode("/v1/nodes", {{"after", after}}); }

util::Result<int32_t> ReadNodeCursor(std::string_view cursor) {
  return Decode<int32_t>("/v1/nodes", cursor, [](const json& f) -> util::Result<int32_t> {
    const json& after = f.at("after");
    if (!after.is_number_unsigned() || after.get<uint64_t>() > INT32_MAX) {
      return NotACursor("/v1/nodes");
    }
    return after.get<int32_t>();
  });
}

std::string HistoryCursor(const HistoryPosition& position) {
  return Encode("/v1/history", {{"since", position.since_s}, {"after", position.after}});
}

util::Result<HistoryPosition> ReadHistoryCursor(std::string_view cursor) {
  return Decode<HistoryPosition>(
      "/v1/history", cursor, [](const json& f) -> util::Result<HistoryPosition> {
        const json& after = f.at("after");
        if (!after.is_number_integer()) return NotACursor("/v1/history");
        return HistoryPosition{f.at("since").get<double>(), after.get<int64_t>()};
      });
}

util::Result<double> ParseSince(const std::string& text, double now_s) {
  const auto bad = [&] {
    return util::Status::InvalidArgument(fmt::format(
        "since: '{}' (expected unix seconds, like 1700000000, or a duration before now with its "
        "unit, like 30m or 2h)",
        text));
  };
  double unix_s = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), unix_s);
  if (ec == std::errc() && ptr == text.data() + text.size()) {
    if (!std::isfinite(unix_s) || unix_s < 0) return bad();
    return unix_s;
  }
  // A bare number reads as unix seconds above: a duration here has its unit.
  const util::Result<double> ago = util::ParseDuration(text);
  if (!ago.ok()) return bad();
  return now_s - *ago;
}

std::string KubernetesNodeCursor(const std::string& after) {
  return Encode("/v1/k8s/nodes", {{"after", after}});
}

util::Result<std::string> ReadKubernetesNodeCursor(std::string_view cursor) {
  return Decode<std::string>(
      "/v1/k8s/nodes", cursor,
      [](const json& f) -> util::Result<std::string> { return f.at("after").get<std::string>(); });
}

}  // namespace hetsched::svc
