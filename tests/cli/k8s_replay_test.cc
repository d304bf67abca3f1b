// `hetsched k8s-replay` end to end: the examples of docs/kubernetes.md run as the docs show
// them, and node lists with no node to place pods on.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/cli_runner.h"
#include "testing/temp_dir.h"
#include "util/file.h"

namespace {

using hetsched::testing::RunHetsched;

// One command of a console block and the lines shown after it.
struct Shown {
  std::string command;  // after "$ "
  std::string output;
};

// The commands of each ```console block of docs/kubernetes.md that starts with
// `$ hetsched k8s-replay`.
std::vector<std::vector<Shown>> ReplayBlocks() {
  auto text = hetsched::util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/docs/kubernetes.md");
  EXPECT_TRUE(text.ok());
  std::vector<std::vector<Shown>> blocks;
  std::istringstream in(text.ok() ? *text : "");
  std::string line;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (!in_block) {
      in_block = line == "```console";
      if (in_block) blocks.emplace_back();
      continue;
    }
    if (line == "```") {
      in_block = false;
      if (blocks.back().empty() || blocks.back()[0].command.rfind("hetsched k8s-replay", 0) != 0) {
        blocks.pop_back();
      }
    } else if (line.rfind("$ ", 0) == 0) {
      blocks.back().push_back({line.substr(2), ""});
    } else if (!blocks.back().empty()) {
      blocks.back().back().output += line + "\n";
    }
  }
  return blocks;
}

// Each console block of the docs' k8s-replay examples prints what the docs show: `hetsched`
// commands run, `cat FILE` shows the file, `echo $?` the last exit status.
TEST(K8sReplayCli, TheDocsExamplesPrintWhatTheDocsShow) {
  const auto blocks = ReplayBlocks();
  ASSERT_GE(blocks.size(), 2u);
  for (const auto& block : blocks) {
    int last_status = -1;
    for (const Shown& shown : block) {
      std::string got;
      if (shown.command.rfind("hetsched ", 0) == 0) {
        const auto run = RunHetsched(shown.command.substr(9));
        got = run.out;
        last_status = run.status;
      } else if (shown.command.rfind("cat ", 0) == 0) {
        auto file = hetsched::util::ReadFile(std::string(HETSCHED_SOURCE_DIR) + "/" +
                                             shown.command.substr(4));
        ASSERT_TRUE(file.ok()) << shown.command;
        got = *file;
      } else if (shown.command == "echo $?") {
        got = std::to_string(last_status) + "\n";
      } else {
        ADD_FAILURE() << "the test cannot run `" << shown.command << "`";
      }
      EXPECT_EQ(got, shown.output) << "$ " << shown.command;
    }
  }
}

TEST(K8sReplayCli, ANodeListWithNoNodeToPlaceOnExits2) {
  hetsched::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string empty = dir.File("empty.json");
  ASSERT_TRUE(hetsched::util::WriteFile(empty, R"({"kind":"NodeList","items":[]})").ok());
  auto run = RunHetsched("k8s-replay --nodes " + empty);
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_EQ(run.out, "hetsched: " + empty + ": the node list holds no nodes\n");

  const std::string cordoned = dir.File("cordoned.json");
  ASSERT_TRUE(hetsched::util::WriteFile(cordoned, R"({"kind":"NodeList","items":[
      {"metadata":{"name":"cpu-1"},"spec":{"unschedulable":true},
       "status":{"allocatable":{"cpu":"64"}}}]})")
                  .ok());
  run = RunHetsched("k8s-replay --nodes " + cordoned);
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_EQ(run.out, "hetsched: " + cordoned +
                         ": none of the 1 nodes can take a pod: 0 left out (hetsched cannot "
                         "describe them), 1 cordoned or not ready\n");
}

}  // namespace
