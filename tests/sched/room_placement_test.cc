// Gang placement on nodes known by their room for workers (sched/room_placement.h): the rules
// of PlaceGang, worker by worker.
#include "sched/room_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace hetsched::sched {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

// Workers per node name, from a placement.
std::map<std::string, int32_t> ByNode(const std::vector<NodeRoom>& rooms,
                                      const std::optional<std::vector<int32_t>>& placed) {
  std::map<std::string, int32_t> out;
  if (placed) {
    for (int32_t i : *placed) ++out[rooms[i].name];
  }
  return out;
}

TEST(RoomPlacement, OneNodeByBestFitKeepsTheBiggerRoomFree) {
  const std::vector<NodeRoom> rooms = {{"big", "r1", 4}, {"snug", "r1", 2}, {"small", "r1", 1}};
  EXPECT_THAT(PlaceGangByRoom(rooms, 2), Optional(ElementsAre(1, 1)));
  EXPECT_THAT(PlaceGangByRoom(rooms, 3), Optional(ElementsAre(0, 0, 0)));
}

TEST(RoomPlacement, TheDataNodeWhenTheWholeGangFitsThereElseItsRack) {
  const std::vector<NodeRoom> rooms = {
      {"a1", "ra", 2}, {"a2", "ra", 4}, {"b1", "rb", 2}, {"b2", "rb", 4}};
  EXPECT_THAT(PlaceGangByRoom(rooms, 2, {"b2", "rb"}), Optional(ElementsAre(3, 3)));
  // b1 holds 2 of 3: one node of its rack (b2) rather than the best fit elsewhere.
  EXPECT_THAT(PlaceGangByRoom(rooms, 3, {"b1", "rb"}), Optional(ElementsAre(3, 3, 3)));
  // A data node that is not a room still names its rack.
  EXPECT_THAT(PlaceGangByRoom(rooms, 2, {"b9", "rb"}), Optional(ElementsAre(2, 2)));
}

TEST(RoomPlacement, OneRackBeforeTheFewestNodesAcrossRacks) {
  // 5 workers: no node holds them; rack ra does (3 + 3), rack rb's 4 + 1 does too but with
  // fewer to spare; the rack with the fewest places that still hold them is taken.
  const std::vector<NodeRoom> rooms = {
      {"a1", "ra", 3}, {"a2", "ra", 3}, {"b1", "rb", 4}, {"b2", "rb", 1}};
  EXPECT_EQ(ByNode(rooms, PlaceGangByRoom(rooms, 5)),
            (std::map<std::string, int32_t>{{"b1", 4}, {"b2", 1}}));
  // 7 workers: no rack holds them; the nodes with most room first, so the fewest nodes.
  const std::vector<NodeRoom> across = {
      {"a1", "ra", 3}, {"a2", "ra", 2}, {"b1", "rb", 4}, {"b2", "rb", 1}};
  EXPECT_EQ(ByNode(across, PlaceGangByRoom(across, 7)),
            (std::map<std::string, int32_t>{{"a1", 3}, {"b1", 4}}));
}

TEST(RoomPlacement, NodesWithoutARackAndGangsThatDoNotFit) {
  const std::vector<NodeRoom> rooms = {{"x", "", 2}, {"y", "", 3}, {"z", "r", 0}};
  EXPECT_EQ(ByNode(rooms, PlaceGangByRoom(rooms, 5)),
            (std::map<std::string, int32_t>{{"x", 2}, {"y", 3}}));
  EXPECT_EQ(PlaceGangByRoom(rooms, 6), std::nullopt);
  EXPECT_EQ(PlaceGangByRoom(rooms, 0), std::nullopt);
  EXPECT_EQ(PlaceGangByRoom({}, 1), std::nullopt);
}

}  // namespace
}  // namespace hetsched::sched
