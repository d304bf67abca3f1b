// Max-min fair sharing of link capacity among flows: how fast each of several concurrent
// transfers (or gang synchronizations) that cross the same links can go.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace hetsched::cost {

// One flow: the links it crosses, each with how many units of the flow's rate it puts on that
// link (a ring all-reduce whose ring crosses a rack uplink twice puts twice its per-hop rate on
// it), and the most it can use (a gang that computes between synchronizations needs only its
// average traffic; a bulk copy takes all it can get).
struct FlowLinks {
  struct Use {
    int32_t link = 0;
    int32_t weight = 1;  // >= 1
  };
  std::vector<Use> links;
  double demand = std::numeric_limits<double>::infinity();  // same unit as the rates
};

// The max-min fair rates of `flows` on links of capacity `capacity` (by link index; +infinity:
// never a bottleneck): progressive filling raises every unfrozen flow's rate at the same pace
// and freezes a flow when it reaches its demand or one of its links is full. The result: no
// flow can go faster without slowing one that goes no faster than it (Bertsekas and Gallager,
// Data Networks, 2nd ed., section 6.5.2). A flow over no finite link and with infinite demand
// gets +infinity. O(rounds x uses), rounds <= flows + links used.
std::vector<double> MaxMinShares(const std::vector<double>& capacity,
                                 const std::vector<FlowLinks>& flows);

}  // namespace hetsched::cost
