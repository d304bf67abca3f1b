#include "sched/cluster_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sched/placement.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using model::DeviceId;
using model::DeviceTypeId;
using model::NodeId;
using testing::MakeCluster;

// The free index recounted device by device: every free, unreserved device of `type` on a node
// that offers it, as (free count, node) for the nodes with any.
std::set<std::pair<int32_t, int32_t>> RecountByFree(const model::Cluster& c,
                                                    const ClusterState& state, DeviceTypeId type) {
  std::vector<int32_t> free(c.nodes.size(), 0);
  for (size_t i = 0; i < c.devices.size(); ++i) {
    const DeviceId d(static_cast<int32_t>(i));
    if (c.device(d).type == type && state.IsFree(d) && !state.IsReserved(d) &&
        state.Offers(c.device(d).node)) {
      ++free[c.device(d).node.value()];
    }
  }
  std::set<std::pair<int32_t, int32_t>> out;
  for (size_t n = 0; n < free.size(); ++n) {
    if (free[n] > 0) out.insert({free[n], static_cast<int32_t>(n)});
  }
  return out;
}

void ExpectIndexed(const model::Cluster& c, const ClusterState& state) {
  for (int32_t t = 0; t < state.type_count(); ++t) {
    const DeviceTypeId type(t);
    const auto want = RecountByFree(c, state, type);
    EXPECT_EQ(state.NodesByFree(type), want) << "type " << t;
    int32_t total = 0;
    for (const auto& [n, node] : want) {
      EXPECT_EQ(state.FreeInNode(NodeId(node), type), n) << "node " << node;
      total += n;
    }
    EXPECT_EQ(state.FreeOfType(type), total) << "type " << t;
  }
}

// Allocate and Release re-file a node once per run of its devices of one type: gangs listed
// node by node, across nodes and types, interleaved and in any order, with reserved and failed
// devices among them, leave the index as a recount finds it.
TEST(ClusterState, RunsOfDevicesKeepTheFreeIndex) {
  // Nodes of 4 and of 8; the first node of 8 holds two types (devices 12-15 amd, 16-19 nv2),
  // so that a run of one node's devices changes type in the middle.
  auto c = MakeCluster({{"nv", "cuda", 3, 4}, {"amd", "rocm", 2, 8}, {"nv2", "cuda", 2, 2}});
  for (int32_t i = 16; i < 20; ++i) c.devices[i].type = DeviceTypeId(2);
  c.Reindex();
  ClusterState state(c);
  std::mt19937 rng(7);
  const int32_t n_dev = static_cast<int32_t>(c.devices.size());
  std::vector<std::vector<DeviceId>> held;
  for (int step = 0; step < 400; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      // Some free devices, in a shuffled or in id order (then runs form on each node).
      std::vector<DeviceId> free;
      for (int32_t i = 0; i < n_dev; ++i) {
        if (state.IsFree(DeviceId(i)) && !state.IsReserved(DeviceId(i)))
          free.push_back(DeviceId(i));
      }
      std::shuffle(free.begin(), free.end(), rng);
      free.resize(std::min<size_t>(free.size(), 1 + rng() % 9));
      if (rng() % 2) std::sort(free.begin(), free.end());
      if (free.empty()) continue;
      state.Allocate(free);
      held.push_back(free);
    } else if (op < 8 && !held.empty()) {
      const size_t k = rng() % held.size();
      state.Release(held[k]);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (op == 8) {
      const DeviceId d(static_cast<int32_t>(rng() % n_dev));
      if (state.IsFailed(d)) {
        state.SetUp(d);
      } else {
        state.SetDown(d);
      }
    } else {
      const DeviceId d(static_cast<int32_t>(rng() % n_dev));
      if (state.IsReserved(d)) {
        state.Unreserve(d);
      } else {
        state.Reserve(d);
      }
    }
    ExpectIndexed(c, state);
    if (::testing::Test::HasFailure()) FAIL() << "step " << step;
  }
}

// A node whose free devices of the type lie in two islands: the gang takes the smallest island
// that holds it, else the bigger island first; a node of one island gives them in id order.
TEST(ClusterState, GangsTakeTheSmallestIslandThatHoldsThem) {
  auto c = MakeCluster({{"nv", "cuda", 1, 8}, {"one", "cuda", 1, 4}});
  model::DeviceGroup low, high, all;
  low.members = {0, 1, 2, 3};
  high.members = {4, 5, 6, 7};
  all.members = {0, 1, 2, 3};
  c.nodes[0].islands = {low, high};
  c.nodes[1].islands = {all};
  for (int32_t i = 0; i < 8; ++i) c.devices[i].island = i < 4 ? 0 : 1;
  for (int32_t i = 8; i < 12; ++i) c.devices[i].island = 0;
  ClusterState state(c);
  // Free: 2, 3 (island 0) and 4, 5, 6 (island 1); on the other node 8 and 11.
  state.Allocate({DeviceId(0), DeviceId(1), DeviceId(7), DeviceId(9), DeviceId(10)});
  const auto ids = [](const std::vector<DeviceId>& ds) {
    std::vector<int32_t> out;
    for (DeviceId d : ds) out.push_back(d.value());
    return out;
  };
  const DeviceTypeId nv(0), one(1);
  EXPECT_EQ(ids(*PlaceGang(state, nv, 2)), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(ids(*PlaceGang(state, nv, 3)), (std::vector<int32_t>{4, 5, 6}));
  EXPECT_EQ(ids(*PlaceGang(state, nv, 4)), (std::vector<int32_t>{4, 5, 6, 2}));
  EXPECT_EQ(ids(*PlaceGang(state, nv, 1)), (std::vector<int32_t>{2}));
  EXPECT_EQ(ids(*PlaceGang(state, one, 2)), (std::vector<int32_t>{8, 11}));
  // Island 1 down to one free device: a gang of 2 now fits only island 0.
  state.Allocate({DeviceId(4), DeviceId(5)});
  EXPECT_EQ(ids(*PlaceGang(state, nv, 2)), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(ids(*PlaceGang(state, nv, 3)), (std::vector<int32_t>{2, 3, 6}));
}

}  // namespace
}  // namespace hetsched::sched
