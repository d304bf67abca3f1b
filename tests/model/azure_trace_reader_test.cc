#include "model/io/azure_trace_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "testing/build_paths.h"

namespace hetsched::model::io {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kAzureDir = std::string(HETSCHED_SOURCE_DIR) + "/data/inference/azure-llm-2023";
constexpr const char* kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

std::string TraceError(const std::string& text, const std::string& file = "t.csv") {
  auto result = ParseAzureTrace(text, file);
  EXPECT_FALSE(result.ok()) << "parsed:\n" << text;
  return result.ok() ? "" : result.status().message();
}

// The header and `rows`, one per line.
std::string Csv(const std::vector<std::string>& rows) {
  std::string text = kHeader;
  for (const std::string& row : rows) text += row + "\n";
  return text;
}

TEST(AzureTraceTest, RowsBecomeRequestsRelativeToTheFirst) {
  auto trace = ParseAzureTrace(
      Csv({"2023-11-16 18:15:46.6805900,374,44", "2023-11-16 18:15:50.9951690,396,109",
           "2023-11-16 18:15:50.9951690,0,0", "2023-11-16 18:16:00,1,2"}),
      "t.csv");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->size(), 4u);
  EXPECT_EQ((*trace)[0].arrival_s, 0);
  EXPECT_EQ((*trace)[0].input_tokens, 374);
  EXPECT_EQ((*trace)[0].output_tokens, 44);
  EXPECT_NEAR((*trace)[1].arrival_s, 4.314579, 1e-9);
  EXPECT_EQ((*trace)[1].input_tokens, 396);
  EXPECT_EQ((*trace)[1].output_tokens, 109);
  // Equal times and zero tokens are fine.
  EXPECT_EQ((*trace)[2].arrival_s, (*trace)[1].arrival_s);
  EXPECT_EQ((*trace)[2].input_tokens, 0);
  EXPECT_EQ((*trace)[2].output_tokens, 0);
  EXPECT_NEAR((*trace)[3].arrival_s, 13.31941, 1e-9);
}

TEST(AzureTraceTest, CalendarBoundariesAndFractions) {
  auto trace = ParseAzureTrace(Csv({"2023-12-31 23:59:59.5,1,1", "2024-01-01 00:00:00.25,1,1",
                                    "2024-02-28 23:59:59.123456789,1,1",
                                    "2024-02-29 00:00:00.1,1,1", "2024-03-01 00:00:00.1,1,1"}),
                               "t.csv");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->size(), 5u);
  EXPECT_NEAR((*trace)[1].arrival_s, 0.75, 1e-9);
  // 0.5 s to New Year, then 58 days and 86399.123456789 s to the last second of February 28.
  EXPECT_NEAR((*trace)[2].arrival_s, 0.5 + 58 * 86400.0 + 86399.123456789, 1e-6);
  EXPECT_NEAR((*trace)[3].arrival_s - (*trace)[2].arrival_s, 0.976543211, 1e-6);
  EXPECT_NEAR((*trace)[4].arrival_s - (*trace)[3].arrival_s, 86400, 1e-6);
}

TEST(AzureTraceTest, SkipsBlankLinesAndAcceptsWindowsLineEndsAndByteOrderMark) {
  const std::string text =
      "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n\r\n"
      "2023-11-16 18:15:46,1,2\r\n   \r\n2023-11-16 18:15:47,3,4";
  auto trace = ParseAzureTrace(text, "t.csv");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_EQ((*trace)[1].arrival_s, 1);
  EXPECT_EQ((*trace)[1].output_tokens, 4);
}

TEST(AzureTraceTest, BothPublishedFilesParse) {
  // The files end without a newline, so `wc -l` shows one line fewer than they have:
  // 8819 and 19366 requests after the header.
  const std::vector<std::pair<std::string, size_t>> files = {
      {"AzureLLMInferenceTrace_code.csv", 8819}, {"AzureLLMInferenceTrace_conv.csv", 19366}};
  for (const auto& [name, count] : files) {
    auto trace = LoadAzureTrace(kAzureDir + "/" + name);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    ASSERT_EQ(trace->size(), count) << name;
    EXPECT_EQ(trace->front().arrival_s, 0) << name;
    EXPECT_GT(trace->back().arrival_s, 3000) << name;
    EXPECT_LT(trace->back().arrival_s, 3600) << name;
    for (size_t i = 0; i < trace->size(); ++i) {
      const InferenceRequest& r = (*trace)[i];
      EXPECT_GT(r.input_tokens, 0) << name << " " << i;
      EXPECT_GT(r.output_tokens, 0) << name << " " << i;
      if (i > 0) {
        EXPECT_GT(r.arrival_s, (*trace)[i - 1].arrival_s) << name << " " << i;
      }
    }
  }
  auto code = LoadAzureTrace(kAzureDir + "/AzureLLMInferenceTrace_code.csv");
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(code->front().input_tokens, 4808);
  EXPECT_EQ(code->front().output_tokens, 10);
  EXPECT_NEAR((*code)[1].arrival_s, 0.052, 1e-9);
}

TEST(AzureTraceBadInputTest, HeaderMustBeExactlyTheThreeColumns) {
  EXPECT_EQ(TraceError("TIMESTAMP,Context,Generated\n2023-11-16 18:15:46,1,1\n"),
            "t.csv:1:1: header: is \"TIMESTAMP,Context,Generated\" (expected "
            "TIMESTAMP,ContextTokens,GeneratedTokens)");
  EXPECT_THAT(TraceError("\n2023-11-16 18:15:46,1,1\n"),
              StartsWith("t.csv:2:1: header: is \"2023-11-16 18:15:46,1,1\""));
  EXPECT_THAT(TraceError("TIMESTAMP,ContextTokens,GeneratedTokens,Extra\n"),
              HasSubstr("header: is \"TIMESTAMP,ContextTokens,GeneratedTokens,...\""));
}

TEST(AzureTraceBadInputTest, EmptyFileOrHeaderOnlyHasNoRequests) {
  const std::string no_requests =
      "t.csv: no requests (expected the header TIMESTAMP,ContextTokens,GeneratedTokens and then "
      "one row per request)";
  EXPECT_EQ(TraceError(""), no_requests);
  EXPECT_EQ(TraceError("\n \r\n"), no_requests);
  EXPECT_EQ(TraceError(kHeader), no_requests);
  EXPECT_EQ(TraceError(std::string(kHeader) + "\n\n"), no_requests);
}

TEST(AzureTraceBadInputTest, BadTokenCountsNameLineColumnAndField) {
  const std::string row = "2023-11-16 18:15:46.6805900,374,44";
  EXPECT_EQ(
      TraceError(Csv({row, row, row, row, row, "2023-11-16 18:15:46.6805900,-3,44"}), "conv.csv"),
      "conv.csv:7:29: ContextTokens: \"-3\" is negative (expected a whole number of tokens "
      ">= 0)");
  EXPECT_EQ(TraceError(Csv({"2023-11-16 18:15:46,12,abc"})),
            "t.csv:2:24: GeneratedTokens: \"abc\" is not a whole number (expected a whole number "
            "of tokens >= 0)");
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46,1.5,1"})),
              HasSubstr("t.csv:2:21: ContextTokens: \"1.5\" is not a whole number"));
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46,,1"})),
              HasSubstr("t.csv:2:21: ContextTokens: \"\" is not a whole number"));
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46, 1,1"})),
              HasSubstr("ContextTokens: \" 1\" is not a whole number"));
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46,+1,1"})),
              HasSubstr("ContextTokens: \"+1\" is not a whole number"));
  EXPECT_EQ(TraceError(Csv({"2023-11-16 18:15:46,1,10000001"})),
            "t.csv:2:23: GeneratedTokens: \"10000001\" is more than 10000000 (expected at most "
            "10000000 tokens)");
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46,99999999999999999999999,1"})),
              HasSubstr("is more than 10000000"));
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46,-99999999999999999999999,1"})),
              HasSubstr("is negative"));
  auto largest = ParseAzureTrace(Csv({"2023-11-16 18:15:46,10000000,0"}), "t.csv");
  ASSERT_TRUE(largest.ok()) << largest.status().message();
  EXPECT_EQ(largest->front().input_tokens, 10'000'000);
}

TEST(AzureTraceBadInputTest, WrongFieldCountNamesTheLine) {
  EXPECT_EQ(TraceError(Csv({"2023-11-16 18:15:46,1,1", "2023-11-16 18:15:47,1"})),
            "t.csv:3: has 2 comma-separated fields (expected 3: "
            "TIMESTAMP,ContextTokens,GeneratedTokens)");
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46,1,1,"})),
              StartsWith("t.csv:2: has 4 comma-separated fields"));
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46;1;1"})),
              StartsWith("t.csv:2: has 1 comma-separated fields"));
}

TEST(AzureTraceBadInputTest, TimestampsMustBeValidAndInOrder) {
  const std::string row = "2023-11-16 18:15:46,1,1";
  EXPECT_EQ(
      TraceError(Csv({row, row, row, row, row, row, row, "2023-11-16 18:15:40,1,1"}), "conv.csv"),
      "conv.csv:9:1: TIMESTAMP: 2023-11-16 18:15:40 is before the previous row's "
      "2023-11-16 18:15:46 (expected rows in time order)");
  EXPECT_THAT(TraceError(Csv({"2023-11-16 18:15:46.7,1,1", "2023-11-16 18:15:46.6,1,1"})),
              HasSubstr("t.csv:3:1: TIMESTAMP: 2023-11-16 18:15:46.6 is before the previous "
                        "row's 2023-11-16 18:15:46.7"));
  for (const char* bad :
       {"2023-11-16T18:15:46", "2023-13-01 00:00:00", "2023-00-10 00:00:00", "2023-02-29 00:00:00",
        "2023-04-31 00:00:00", "2023-11-00 00:00:00", "2023-11-16 24:00:00", "2023-11-16 18:60:00",
        "2023-11-16 18:15:60", "2023-11-16 18:15:46.", "2023-11-16 18:15:46.1234567890",
        "2023-11-16 18:15:46.12a", "2023-11-16 18:15:46 ", "2023-11-16 18:15", "23-11-16 18:15:46",
        "", "abcd-ef-gh ij:kl:mn", "2023-1-16 18:15:46.5"}) {
    const std::string message = TraceError(Csv({std::string(bad) + ",1,1"}));
    EXPECT_THAT(message, StartsWith("t.csv:2:1: TIMESTAMP: \"" + std::string(bad) +
                                    "\" is not a valid time (expected YYYY-MM-DD "
                                    "HH:MM:SS[.fraction], like 2023-11-16 18:15:46.6805900)"))
        << bad;
  }
  auto leap = ParseAzureTrace(Csv({"2000-02-29 00:00:00,1,1", "2400-02-29 00:00:00,1,1"}), "t");
  EXPECT_TRUE(leap.ok()) << leap.status().message();
  EXPECT_FALSE(ParseAzureTrace(Csv({"1900-02-29 00:00:00,1,1"}), "t").ok());
}

TEST(AzureTraceBadInputTest, MutatedFilesNeverCrash) {
  const std::string base = Csv({"2023-11-16 18:15:46.6805900,374,44",
                                "2023-11-16 18:15:50.9951690,396,109", "2023-11-17 00:00:00,1,1"});
  const std::string alphabet = "0123456789-:., \n\r\t\xEF";
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::string mutated = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0:
          mutated[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          mutated.erase(at, 1 + rng() % 3);
          break;
        default:
          mutated.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
      if (mutated.empty()) mutated = "x";
    }
    auto result = ParseAzureTrace(mutated, "m.csv");
    if (result.ok()) {
      EXPECT_FALSE(result->empty());
      EXPECT_EQ(result->front().arrival_s, 0);
      EXPECT_TRUE(std::is_sorted(result->begin(), result->end(),
                                 [](const InferenceRequest& a, const InferenceRequest& b) {
                                   return a.arrival_s < b.arrival_s;
                                 }));
    } else {
      EXPECT_THAT(result.status().message(), StartsWith("m.csv")) << mutated;
    }
  }
}

TEST(AzureTraceBadInputTest, LargeRandomBinaryFailsQuickly) {
  std::mt19937 rng(11);
  std::string junk(4 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ParseAzureTrace(junk, "junk.csv").ok());
  EXPECT_FALSE(ParseAzureTrace(std::string(kHeader) + junk, "junk.csv").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(AzureTraceBadInputTest, MissingFileIsAnError) {
  auto result = LoadAzureTrace(kAzureDir + "/no-such-file.csv");
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("no-such-file.csv"));
}

}  // namespace
}  // namespace hetsched::model::io
