#include "util/status.h"

#include <gtest/gtest.h>

#include "util/source_location.h"

namespace hetsched::util {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, ResultPropagatesTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().ToString(), "invalid argument: odd");
}

TEST(StatusTest, InputErrorHasFileLineColumnFieldAndExpectation) {
  Status s = InputError({"c.yaml", 3, 7}, "nodes[0].count", "is -1", "a positive integer");
  EXPECT_EQ(s.message(), "c.yaml:3:7: nodes[0].count: is -1 (expected a positive integer)");
}

}  // namespace
}  // namespace hetsched::util
