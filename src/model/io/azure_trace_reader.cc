#include "model/io/azure_trace_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <utility>

#include "util/file.h"
#include "util/line_reader.h"
#include "util/source_location.h"

namespace hetsched::model::io {
namespace {

using util::Result;
using util::Status;

constexpr std::string_view kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr std::string_view kFieldNames[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
constexpr const char* kTimeExpected =
    "YYYY-MM-DD HH:MM:SS[.fraction], like 2023-11-16 18:15:46.6805900";
constexpr const char* kTokensExpected = "a whole number of tokens >= 0";

// A field as the user wrote it, quoted, cut short so a huge field does not make a huge message.
std::string Quoted(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return fmt::format("\"{}\"", text);
  return fmt::format("\"{}...\"", text.substr(0, kMax));
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int64_t y, int64_t m) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// An instant as whole seconds since 1970 and nanoseconds; compared as a pair, so equal and
// near-equal times never suffer from double rounding.
struct Instant {
  int64_t seconds = 0;
  int64_t nanos = 0;
  bool operator<(const Instant& o) const {
    return seconds != o.seconds ? seconds < o.seconds : nanos < o.nanos;
  }
};

// `width` decimal digits at `pos`, or nullopt.
std::optional<int64_t> Digits(std::string_view s, size_t pos, size_t width) {
  if (pos + width > s.size()) return std::nullopt;
  int64_t value = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

// "YYYY-MM-DD HH:MM:SS[.f{1,9}]", strictly.
std::optional<Instant> ParseTimestamp(std::string_view s) {
  constexpr size_t kBase = 19;  // length without the fraction
  if (s.size() < kBase || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  const auto year = Digits(s, 0, 4), month = Digits(s, 5, 2), day = Digits(s, 8, 2);
  const auto hour = Digits(s, 11, 2), minute = Digits(s, 14, 2), second = Digits(s, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > DaysInMonth(*year, *month) || *hour > 23 ||
      *minute > 59 || *second > 59) {
    return std::nullopt;
  }
  Instant at;
  at.seconds = DaysFromCivil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second;
  if (s.size() > kBase) {
    const size_t digits = s.size() - kBase - 1;
    if (s[kBase] != '.' || digits < 1 || digits > 9) return std::nullopt;
    const auto fraction = Digits(s, kBase + 1, digits);
    if (!fraction) return std::nullopt;
    at.nanos = *fraction;
    for (size_t i = digits; i < 9; ++i) at.nanos *= 10;
  }
  return at;
}

struct Field {
  std::string_view text;
  int column;  // 1-based byte column of its first character
};

Result<int32_t> ParseTokens(const Field& f, std::string_view name, const std::string& file,
                            int line) {
  const util::SourceLocation at{file, line, f.column};
  int64_t value = 0;
  const char* end = f.text.data() + f.text.size();
  auto [ptr, ec] = std::from_chars(f.text.data(), end, value);
  const bool digits_only = ptr == end && ec != std::errc::invalid_argument;
  if (!digits_only) {
    return util::InputError(at, std::string(name),
                            fmt::format("{} is not a whole number", Quoted(f.text)),
                            kTokensExpected);
  }
  if (ec == std::errc::result_out_of_range ? f.text.front() == '-' : value < 0) {
    return util::InputError(at, std::string(name), fmt::format("{} is negative", Quoted(f.text)),
                            kTokensExpected);
  }
  if (ec == std::errc::result_out_of_range || value > kMaxAzureTokens) {
    return util::InputError(at, std::string(name),
                            fmt::format("{} is more than {}", Quoted(f.text), kMaxAzureTokens),
                            fmt::format("at most {} tokens", kMaxAzureTokens));
  }
  return static_cast<int32_t>(value);
}

}  // namespace

Result<std::vector<InferenceRequest>> ParseAzureTrace(std::string_view text,
                                                      const std::string& file_name) {
  // Spreadsheet programs put a byte order mark in front of CSV files they save.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  std::vector<InferenceRequest> requests;
  bool header_seen = false;
  Instant first, previous;
  std::string_view previous_text;
  util::LineReader lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    const int line_no = lines.line_number();
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (!header_seen) {
      if (line != kHeader) {
        return util::InputError({file_name, line_no, 1}, "header",
                                fmt::format("is {}", Quoted(line)), std::string(kHeader));
      }
      header_seen = true;
      continue;
    }
    Field fields[3];
    size_t count = 0;
    size_t start = 0;
    while (true) {
      const size_t comma = line.find(',', start);
      if (count < 3) {
        fields[count] = {line.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                            : comma - start),
                         static_cast<int>(start) + 1};
      }
      ++count;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (count != 3) {
      return util::InputError({file_name, line_no, 0}, "",
                              fmt::format("has {} comma-separated fields", count),
                              fmt::format("3: {}", kHeader));
    }
    const std::optional<Instant> at = ParseTimestamp(fields[0].text);
    if (!at) {
      return util::InputError({file_name, line_no, fields[0].column}, std::string(kFieldNames[0]),
                              fmt::format("{} is not a valid time", Quoted(fields[0].text)),
                              kTimeExpected);
    }
    if (!requests.empty() && *at < previous) {
      return util::InputError(
          {file_name, line_no, fields[0].column}, std::string(kFieldNames[0]),
          fmt::format("{} is before the previous row's {}", fields[0].text, previous_text),
          "rows in time order");
    }
    InferenceRequest request;
    ASSIGN_OR_RETURN(request.input_tokens,
                     ParseTokens(fields[1], kFieldNames[1], file_name, line_no));
    ASSIGN_OR_RETURN(request.output_tokens,
                     ParseTokens(fields[2], kFieldNames[2], file_name, line_no));
    if (requests.empty()) first = *at;
    // Whole seconds and nanoseconds apart, each exact in int64 for 4-digit years.
    request.arrival_s = static_cast<double>(at->seconds - first.seconds) +
                        static_cast<double>(at->nanos - first.nanos) * 1e-9;
    requests.push_back(request);
    previous = *at;
    previous_text = fields[0].text;
  }
  if (requests.empty()) {
    return util::InputError({file_name, 0, 0}, "", "no requests",
                            fmt::format("the header {} and then one row per request", kHeader));
  }
  return requests;
}

Result<std::vector<InferenceRequest>> LoadAzureTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, util::ReadFile(path));
  return ParseAzureTrace(text, path);
}

}  // namespace hetsched::model::io
