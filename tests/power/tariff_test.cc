#include "power/tariff.h"

#include <gtest/gtest.h>

namespace hetsched::power {
namespace {

TEST(Tariff, ParsesBandsInAnyOrder) {
  auto t = Tariff::Parse("7-22:0.25,0-7:0.10,22-24:0.1");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->bands().size(), 3u);
  EXPECT_DOUBLE_EQ(t->PriceAt(0), 0.10);
  EXPECT_DOUBLE_EQ(t->PriceAt(7 * 3600), 0.25);
  EXPECT_DOUBLE_EQ(t->PriceAt(21.99 * 3600), 0.25);
  EXPECT_DOUBLE_EQ(t->PriceAt(23 * 3600), 0.10);
  EXPECT_DOUBLE_EQ(t->PriceAt(24 * 3600 + 8 * 3600), 0.25);  // day two
  EXPECT_TRUE(Tariff::Parse("0-6.5:0.1,6.5-24:0.2").ok());
}

TEST(Tariff, CostSplitsAtBandBoundariesAndDays) {
  auto t = Tariff::Parse("0-7:0.10,7-22:0.25,22-24:0.10");
  ASSERT_TRUE(t.ok());
  // 1 kW from 06:00 to 08:00: 1 kWh at 0.10 + 1 kWh at 0.25.
  EXPECT_NEAR(t->Cost(1000, 6 * 3600, 8 * 3600), 0.35, 1e-12);
  // 2 kW for a whole day: 7 + 2 = 9 h at 0.10, 15 h at 0.25.
  EXPECT_NEAR(t->Cost(2000, 0, 86400), 2 * (9 * 0.10 + 15 * 0.25), 1e-9);
  // Across midnight: 23:00 to 01:00 of the next day, all at 0.10.
  EXPECT_NEAR(t->Cost(1000, 23 * 3600, 25 * 3600), 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(t->Cost(1000, 10, 10), 0);
  EXPECT_NEAR(Tariff::Flat(0.12).Cost(500, 0, 7200), 0.12, 1e-12);
}

TEST(Tariff, RejectsBadInputNamingTheProblem) {
  struct Bad {
    const char* text;
    const char* says;
  };
  for (const Bad& b :
       {Bad{"0-7:0.10,7-20:0.25", "hours 20-24 are not covered"},
        Bad{"0-7:0.10,8-24:0.25", "hours 7-8 are not covered"},
        Bad{"0-8:0.10,7-24:0.25", "covered twice"}, Bad{"0-24:-0.1", "price -0.1"},
        Bad{"0-25:0.1", "outside hours 0-24"}, Bad{"7-0:0.1", "start must be before the end"},
        Bad{"", "not START-END:PRICE"}, Bad{"0-24:0.1,", "not START-END:PRICE"},
        Bad{"cheap", "not START-END:PRICE"}, Bad{"0-24:abc", "not START-END:PRICE"}}) {
    auto t = Tariff::Parse(b.text);
    ASSERT_FALSE(t.ok()) << b.text;
    EXPECT_NE(t.status().message().find("--tariff"), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find(b.says), std::string::npos)
        << b.text << ": " << t.status().message();
  }
}

}  // namespace
}  // namespace hetsched::power
