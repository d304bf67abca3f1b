// A job's policy state survives a restart as the text the store keeps: every history reads
// back as it was written, by the quick path for the plain form and by JSON for the rest.
#include "daemon/policy_state.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hetsched::svc {
namespace {

TEST(PolicyState, EveryHistoryReadsBackAsWritten) {
  std::vector<sched::JobHistory> histories(5);
  histories[1].attained_s = 12.5;
  histories[1].attained_norm_s = 4.25;
  histories[2].attained_s = 1e20;  // written with an exponent
  histories[2].attained_norm_s = 3.3e-7;
  histories[3].attained_s = 2.0 / 3;  // no short decimal
  histories[3].attained_norm_s = 1.0 / 3;
  histories[4] = histories[1];
  histories[4].received_s = {{"k80", 10}, {"v100", 2.5}};  // in the order JSON keeps them
  for (const sched::JobHistory& h : histories) {
    const std::string text = HistoryJson(h);
    const auto read = ParseHistory(text);
    ASSERT_TRUE(read.has_value()) << text;
    EXPECT_EQ(read->attained_s, h.attained_s) << text;
    EXPECT_EQ(read->attained_norm_s, h.attained_norm_s) << text;
    EXPECT_EQ(read->received_s, h.received_s) << text;
  }
}

TEST(PolicyState, OtherSpellingsAreReadAsJSONAndTextThatIsNoHistoryIsNot) {
  auto plain = ParseHistory(R"({"attained_norm_s":1.5,"attained_s":3})");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->attained_norm_s, 1.5);
  EXPECT_EQ(plain->attained_s, 3);
  auto spaced = ParseHistory(R"({ "attained_s": 3, "attained_norm_s": 1.5 })");
  ASSERT_TRUE(spaced.has_value());
  EXPECT_EQ(spaced->attained_norm_s, 1.5);
  EXPECT_EQ(spaced->attained_s, 3);
  for (const std::string bad :
       {"", "[]", R"({"attained_norm_s":1.5,"attained_s":3}x)",
        R"({"attained_norm_s":1.5,"attained_s":"3"})", R"({"attained_norm_s":1.5})",
        R"({"attained_norm_s":,"attained_s":3})"}) {
    EXPECT_FALSE(ParseHistory(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace hetsched::svc
