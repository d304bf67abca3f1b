// Recorded outputs of the vendors' device tools (tests/data/smi), for the probe's tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/build_paths.h"

namespace hetsched::testing {

// A recorded sample from tests/data/smi without its leading '#' note lines.
inline std::string SmiSample(const std::string& name) {
  std::ifstream in(std::string(HETSCHED_SOURCE_DIR) + "/tests/data/smi/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::string out, line;
  bool note = true;
  while (std::getline(in, line)) {
    if (note && line.rfind('#', 0) == 0) continue;
    note = false;
    out += line + "\n";
  }
  return out;
}

}  // namespace hetsched::testing
