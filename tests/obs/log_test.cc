#include "obs/log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace hetsched::svc {
namespace {

constexpr double kNoon = 1796299200.123;  // 2026-12-03T12:00:00.123Z

// A logger at `level` whose lines are appended to `lines`, with the clock fixed at `now`.
Logger CollectingLogger(std::vector<std::string>& lines, LogLevel level = LogLevel::kDebug,
                        double now = kNoon) {
  return Logger(
      level, [&lines](std::string_view line) { lines.emplace_back(line); }, [now] { return now; });
}

nlohmann::json Parse(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << line;
  return j;
}

TEST(LogTest, ParseLogLevelAcceptsTheFourNames) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    auto parsed = ParseLogLevel(LogLevelName(level));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, level);
  }
  for (const char* bad : {"", "INFO", "warning", "trace"}) {
    auto parsed = ParseLogLevel(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(),
              std::string("log level \"") + bad + "\": expected debug, info, warn or error");
  }
}

TEST(LogTest, WritesTheExactLineForAFixedClock) {
  std::vector<std::string> lines;
  Logger log = CollectingLogger(lines);
  const std::string job = "train-7";
  log.Info("placed", {{"job", job},
                      {"node", "n1"},  // a literal stays a string, not a bool
                      {"devices", 4},
                      {"attempt", int64_t{-3}},
                      {"bytes", std::numeric_limits<uint64_t>::max()},
                      {"wait_s", 12.5},
                      {"ratio", 0.1f},
                      {"preempted", false},
                      {"gang", true}});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "{\"ts\":\"2026-12-03T12:00:00.123Z\",\"level\":\"info\",\"msg\":\"placed\","
            "\"job\":\"train-7\",\"node\":\"n1\",\"devices\":4,\"attempt\":-3,"
            "\"bytes\":18446744073709551615,\"wait_s\":12.5,\"ratio\":0.10000000149011612,"
            "\"preempted\":false,\"gang\":true}");
}

TEST(LogTest, FormatsTimestampsAsRfc3339UtcMilliseconds) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0, "1970-01-01T00:00:00.000Z"},
      {1.001, "1970-01-01T00:00:01.001Z"},  // 1000.9999... ms in binary: rounded, not truncated
      {1709251199.5, "2024-02-29T23:59:59.500Z"},
      {1796299200.9996, "2026-12-03T12:00:01.000Z"},
      {-5, "1970-01-01T00:00:00.000Z"},  // a broken clock is clamped
      {std::nan(""), "1970-01-01T00:00:00.000Z"},
      {1e300, "9999-12-31T23:59:59.999Z"},
  };
  for (const auto& [now, want] : cases) {
    std::vector<std::string> lines;
    CollectingLogger(lines, LogLevel::kDebug, now).Info("m");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "{\"ts\":\"" + want + "\",\"level\":\"info\",\"msg\":\"m\"}") << now;
  }
}

TEST(LogTest, WritesNonFiniteDoublesAsStrings) {
  std::vector<std::string> lines;
  Logger log = CollectingLogger(lines);
  const double inf = std::numeric_limits<double>::infinity();
  log.Warn("odd", {{"a", std::nan("")}, {"b", inf}, {"c", -inf}});
  ASSERT_EQ(lines.size(), 1u);
  nlohmann::json j = Parse(lines[0]);
  EXPECT_EQ(j["a"], "NaN");
  EXPECT_EQ(j["b"], "+Inf");
  EXPECT_EQ(j["c"], "-Inf");
}

TEST(LogTest, DropsLinesBelowTheLevelWithoutReadingTheClock) {
  std::vector<std::string> lines;
  int clock_reads = 0;
  Logger log(
      LogLevel::kWarn, [&lines](std::string_view line) { lines.emplace_back(line); },
      [&clock_reads] {
        ++clock_reads;
        return kNoon;
      });
  EXPECT_FALSE(log.Enabled(LogLevel::kInfo));
  EXPECT_TRUE(log.Enabled(LogLevel::kWarn));
  log.Debug("d");
  log.Info("i", {{"k", 1}});
  log.Warn("w");
  log.Error("e");
  EXPECT_EQ(clock_reads, 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Parse(lines[0])["level"], "warn");
  EXPECT_EQ(Parse(lines[1])["level"], "error");
}

TEST(LogTest, EscapesQuotesBackslashesAndControlCharacters) {
  std::vector<std::string> lines;
  Logger log = CollectingLogger(lines);
  const std::string tricky = std::string("say \"hi\"\\ \n\r\t\x01\x1f") + '\0' + "end";
  log.Info(tricky, {{tricky, tricky}});
  ASSERT_EQ(lines.size(), 1u);
  const std::string escaped = R"("say \"hi\"\\ \n\r\t\u0001\u001f\u0000end")";
  EXPECT_EQ(lines[0], "{\"ts\":\"2026-12-03T12:00:00.123Z\",\"level\":\"info\",\"msg\":" + escaped +
                          "," + escaped + ":" + escaped + "}");
  nlohmann::json j = Parse(lines[0]);
  EXPECT_EQ(j["msg"], tricky);
  EXPECT_EQ(j[tricky], tricky);
}

TEST(LogTest, ReplacesInvalidUtf8WithReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a\xFFz", "a" + r + "z"},                      // never valid in UTF-8
      {"\x80z", r + "z"},                             // stray continuation byte
      {"euro \xE2\x82", "euro " + r},                 // truncated at the end
      {"\xE2\x82z", r + "z"},                         // truncated before ASCII: one U+FFFD
      {"\xC0\xAF", r + r},                            // overlong '/'
      {"\xED\xA0\x80", r + r + r},                    // UTF-16 surrogate
      {"\xF4\x90\x80\x80", r + r + r + r},            // above U+10FFFF
      {"\xF0\x9F\x98", r},                            // truncated 4-byte sequence
      {"Ger\xC3\xA4t \xE2\x82\xAC \xF0\x9F\x98\x80",  // valid: unchanged
       "Ger\xC3\xA4t \xE2\x82\xAC \xF0\x9F\x98\x80"},
  };
  for (const auto& [in, want] : cases) {
    std::vector<std::string> lines;
    CollectingLogger(lines).Info(in, {{"k", in}});
    ASSERT_EQ(lines.size(), 1u);
    nlohmann::json j = Parse(lines[0]);
    EXPECT_EQ(j["msg"], want) << lines[0];
    EXPECT_EQ(j["k"], want) << lines[0];
  }
}

TEST(LogTest, WritesNewlineTerminatedLinesToAFile) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Logger log(LogLevel::kInfo, f, [] { return kNoon; });
    log.Info("one");
    log.Error("two", {{"n", 2}});
  }
  std::rewind(f);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  EXPECT_EQ(text,
            "{\"ts\":\"2026-12-03T12:00:00.123Z\",\"level\":\"info\",\"msg\":\"one\"}\n"
            "{\"ts\":\"2026-12-03T12:00:00.123Z\",\"level\":\"error\",\"msg\":\"two\",\"n\":2}\n");
}

// Runs kThreads writers of kLines lines each and checks that `lines` holds every line whole.
constexpr int kThreads = 8;
constexpr int kLines = 2000;

void LogConcurrently(Logger& log) {
  std::vector<std::thread> threads;
  const std::string payload(300, 'x');  // long enough that torn writes would show
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&log, &payload, t] {
      for (int i = 0; i < kLines; ++i) {
        log.Info("tick", {{"thread", t}, {"i", i}, {"payload", payload}});
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

void ExpectAllLinesWhole(const std::vector<std::string>& lines) {
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLines));
  std::vector<int> next(kThreads, 0);  // each thread's lines arrive in its own order
  for (const std::string& line : lines) {
    nlohmann::json j = Parse(line);
    ASSERT_FALSE(j.is_discarded());
    const int t = j["thread"];
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(j["i"], next[t]++);
    EXPECT_EQ(j["payload"].get<std::string>().size(), 300u);
  }
}

TEST(LogTest, ConcurrentWritersToASinkProduceWholeLines) {
  // The sink does no locking of its own: the logger serializes calls to it.
  std::vector<std::string> lines;
  Logger log = CollectingLogger(lines);
  LogConcurrently(log);
  ExpectAllLinesWhole(lines);
}

TEST(LogTest, ConcurrentWritersToAFileProduceWholeLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Logger log(LogLevel::kInfo, f);
    LogConcurrently(log);
  }
  std::rewind(f);
  std::vector<std::string> lines;
  std::string line;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) {
    if (c == '\n') {
      lines.push_back(std::move(line));
      line.clear();
    } else {
      line += static_cast<char>(c);
    }
  }
  std::fclose(f);
  EXPECT_TRUE(line.empty()) << "unterminated last line: " << line;
  ExpectAllLinesWhole(lines);
}

}  // namespace
}  // namespace hetsched::svc
