#include "util/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hetsched::util {
namespace {

std::vector<std::string> Lines(std::string_view text) {
  LineReader reader(text);
  std::vector<std::string> out;
  std::string_view line;
  while (reader.Next(line)) {
    out.push_back(std::to_string(reader.line_number()) + ":" + std::string(line));
  }
  return out;
}

TEST(LineReaderTest, NumbersLinesAndStripsCarriageReturns) {
  EXPECT_EQ(Lines("a\r\n\nb"), (std::vector<std::string>{"1:a", "2:", "3:b"}));
  EXPECT_EQ(Lines("a\n"), (std::vector<std::string>{"1:a"}));
  EXPECT_TRUE(Lines("").empty());
}

}  // namespace
}  // namespace hetsched::util
