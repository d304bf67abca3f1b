#include "cost/link_sharing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hetsched::cost {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

FlowLinks Over(std::vector<FlowLinks::Use> links, double demand = kInf) {
  return FlowLinks{std::move(links), demand};
}

TEST(MaxMinShares, TwoFlowsSplitOneLinkEvenly) {
  const auto r = MaxMinShares({10}, {Over({{0, 1}}), Over({{0, 1}})});
  EXPECT_DOUBLE_EQ(r[0], 5);
  EXPECT_DOUBLE_EQ(r[1], 5);
}

// Link 0 (10) carries flows a and b, link 1 (4) carries b and c: b and c share link 1 at 2
// each; a takes what b leaves of link 0, 8.
TEST(MaxMinShares, AFlowTakesWhatABottleneckedNeighbourLeaves) {
  const auto r = MaxMinShares({10, 4}, {Over({{0, 1}}), Over({{0, 1}, {1, 1}}), Over({{1, 1}})});
  EXPECT_DOUBLE_EQ(r[0], 8);
  EXPECT_DOUBLE_EQ(r[1], 2);
  EXPECT_DOUBLE_EQ(r[2], 2);
}

// The parking lot: a long flow over two links of 1, a short one on each: 1/2 each.
TEST(MaxMinShares, ParkingLot) {
  const auto r = MaxMinShares({1, 1}, {Over({{0, 1}, {1, 1}}), Over({{0, 1}}), Over({{1, 1}})});
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.5);
}

// A flow that needs 2 of a link of 10 gets 2; the other gets the 8 left.
TEST(MaxMinShares, ADemandBelowTheFairShareLeavesTheRestToOthers) {
  const auto r = MaxMinShares({10}, {Over({{0, 1}}, 2), Over({{0, 1}})});
  EXPECT_DOUBLE_EQ(r[0], 2);
  EXPECT_DOUBLE_EQ(r[1], 8);
}

// A ring crossing a link twice puts twice its rate there: 2x + x = 12, so x = 4 for both.
TEST(MaxMinShares, WeightsCountEachCrossing) {
  const auto r = MaxMinShares({12}, {Over({{0, 2}}), Over({{0, 1}})});
  EXPECT_DOUBLE_EQ(r[0], 4);
  EXPECT_DOUBLE_EQ(r[1], 4);
}

TEST(MaxMinShares, UnboundedLinksAndDemandsGiveInfinity) {
  const auto r = MaxMinShares({kInf, 5}, {Over({{0, 1}}), Over({}, 3), Over({{0, 1}, {1, 1}})});
  EXPECT_TRUE(std::isinf(r[0]));
  EXPECT_DOUBLE_EQ(r[1], 3);
  EXPECT_DOUBLE_EQ(r[2], 5);
}

TEST(MaxMinShares, NoFlows) { EXPECT_TRUE(MaxMinShares({1, 2}, {}).empty()); }

// Every link's load stays within its capacity, and every flow is either at its demand or
// crosses a full link (the definition of max-min fairness).
TEST(MaxMinShares, EveryFlowIsAtItsDemandOrOnAFullLink) {
  const std::vector<double> cap = {7, 3, 11, 5};
  const std::vector<FlowLinks> flows = {Over({{0, 1}, {1, 1}}), Over({{0, 2}, {2, 1}}, 1.5),
                                        Over({{2, 1}, {3, 1}}), Over({{3, 3}}),
                                        Over({{0, 1}, {2, 1}, {3, 1}})};
  const auto r = MaxMinShares(cap, flows);
  std::vector<double> load(cap.size(), 0);
  for (size_t f = 0; f < flows.size(); ++f) {
    for (const auto& u : flows[f].links) load[u.link] += u.weight * r[f];
  }
  for (size_t l = 0; l < cap.size(); ++l) EXPECT_LE(load[l], cap[l] * (1 + 1e-9)) << l;
  for (size_t f = 0; f < flows.size(); ++f) {
    bool on_full = false;
    for (const auto& u : flows[f].links) on_full |= load[u.link] >= cap[u.link] * (1 - 1e-9);
    EXPECT_TRUE(on_full || r[f] >= flows[f].demand * (1 - 1e-9)) << f;
  }
}

}  // namespace
}  // namespace hetsched::cost
