#include "model/job.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace hetsched::model {
namespace {

Workload Arrivals(const std::vector<std::pair<std::string, double>>& jobs) {
  Workload w;
  for (const auto& [name, arrival] : jobs) {
    Job j;
    j.name = name;
    j.arrival_s = arrival;
    j.id = JobId(99);
    w.jobs.push_back(j);
  }
  return w;
}

std::vector<std::string> Names(const Workload& w) {
  std::vector<std::string> out;
  for (const Job& j : w.jobs) out.push_back(j.name);
  return out;
}

TEST(SortByArrival, OrdersByArrivalKeepingTiesInFileOrderAndNumbersIds) {
  Workload w = Arrivals({{"c", 5}, {"a", 1}, {"b1", 3}, {"b2", 3}, {"z", 0}});
  SortByArrival(&w);
  EXPECT_EQ(Names(w), (std::vector<std::string>{"z", "a", "b1", "b2", "c"}));
  for (size_t i = 0; i < w.jobs.size(); ++i) {
    EXPECT_EQ(w.jobs[i].id, JobId(static_cast<int32_t>(i))) << w.jobs[i].name;
  }
}

TEST(SortByArrival, SortedInputKeepsItsOrderAndStillGetsIds) {
  Workload w = Arrivals({{"a", 0}, {"b", 0}, {"c", 2}});
  SortByArrival(&w);
  EXPECT_EQ(Names(w), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(w.jobs[2].id, JobId(2));
}

}  // namespace
}  // namespace hetsched::model
