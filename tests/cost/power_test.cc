#include "cost/power.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/catalog.h"

namespace hetsched::cost {
namespace {

model::DeviceType MakeType(double idle, double peak, double price = 0) {
  model::DeviceType t;
  t.name = "test";
  t.idle_watts = idle;
  t.peak_watts = peak;
  t.price_per_hour = price;
  return t;
}

TEST(Power, LinearBetweenIdleAndPeak) {
  const model::DeviceType t = MakeType(50, 400);
  EXPECT_DOUBLE_EQ(PowerWatts(t, 0), 50);
  EXPECT_DOUBLE_EQ(PowerWatts(t, 1), 400);
  EXPECT_DOUBLE_EQ(PowerWatts(t, 0.5), 225);
}

TEST(Power, UtilizationIsClamped) {
  const model::DeviceType t = MakeType(50, 400);
  EXPECT_DOUBLE_EQ(PowerWatts(t, 2), 400);
  EXPECT_DOUBLE_EQ(PowerWatts(t, -1), 50);
  EXPECT_DOUBLE_EQ(PowerWatts(t, std::nan("")), 50);
}

TEST(Power, EnergyOverAnInterval) {
  const model::DeviceType t = MakeType(50, 400);
  // 225 W for an hour = 810 kJ = 0.225 kWh.
  EXPECT_DOUBLE_EQ(EnergyJoules(t, 0.5, 3600), 810000);
  EXPECT_DOUBLE_EQ(JoulesToKwh(EnergyJoules(t, 0.5, 3600)), 0.225);
  EXPECT_DOUBLE_EQ(KwhToJoules(1), 3.6e6);
  EXPECT_EQ(EnergyJoules(100, -5), 0);
}

TEST(Power, MoneyByTheHourAndByTheKwh) {
  EXPECT_DOUBLE_EQ(RentalCost(2.48, 1800), 1.24);
  EXPECT_DOUBLE_EQ(RentalCost(MakeType(50, 400, 3.0), 7200), 6.0);
  EXPECT_DOUBLE_EQ(EnergyCost(810000, 0.10), 0.0225);
  EXPECT_EQ(EnergyCost(-1, 0.10), 0);
}

TEST(Power, BuiltInT4AtFullLoadForADay) {
  const model::DeviceType* t4 = model::DeviceCatalog::BuiltIn().Find("t4");
  ASSERT_NE(t4, nullptr);
  // 70 W x 24 h = 1.68 kWh.
  EXPECT_DOUBLE_EQ(JoulesToKwh(EnergyJoules(*t4, 1, 86400)), 1.68);
  EXPECT_DOUBLE_EQ(PowerWatts(*t4, 0), 17);
}

}  // namespace
}  // namespace hetsched::cost
