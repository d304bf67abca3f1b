#include "util/units.h"

#include <gtest/gtest.h>

namespace hetsched::util {
namespace {

TEST(UnitsTest, ParsesBytesWithBinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseBytes("80GiB"), 80ull * kGiB);
  EXPECT_EQ(*ParseBytes("1.5 GB"), 1500000000ull);
  EXPECT_EQ(*ParseBytes("42"), 42ull);
}

TEST(UnitsTest, ParsesBandwidthInBitsAndBytes) {
  EXPECT_DOUBLE_EQ(*ParseBandwidth("600GB/s"), 600e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("200Gb/s"), 25e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("100Gbps"), 12.5e9);
}

TEST(UnitsTest, ParsesDurationsAndPower) {
  EXPECT_DOUBLE_EQ(*ParseDuration("3m"), 180);
  EXPECT_DOUBLE_EQ(*ParseDuration("2us"), 2e-6);
  EXPECT_DOUBLE_EQ(*ParsePower("1.2kW"), 1200);
}

TEST(UnitsTest, RejectsNegativeUnknownAndOverflowingValues) {
  EXPECT_FALSE(ParseBytes("-1GiB").ok());
  EXPECT_FALSE(ParseBytes("12 parsecs").ok());
  EXPECT_FALSE(ParseBytes("1e30").ok());
  EXPECT_FALSE(ParseBytes("100000000000TiB").ok());
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("abc").ok());
  EXPECT_FALSE(ParsePower("nan").ok());
  EXPECT_FALSE(ParseBandwidth("inf GB/s").ok());
  EXPECT_NE(ParseBytes("12 parsecs").status().message().find("unknown unit"), std::string::npos);
}

TEST(UnitsTest, FormatsForHumans) {
  EXPECT_EQ(FormatBytes(80ull * kGiB), "80 GiB");
  EXPECT_EQ(FormatBandwidth(600e9), "600 GB/s");
  EXPECT_EQ(FormatPower(1500), "1.5 kW");
}

}  // namespace
}  // namespace hetsched::util
