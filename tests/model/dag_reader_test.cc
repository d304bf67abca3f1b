#include "model/io/dag_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "model/random_dag.h"
#include "testing/build_paths.h"

namespace hetsched::model::io {
namespace {

std::string DataPath(const std::string& name) {
  return std::string(HETSCHED_SOURCE_DIR) + "/tests/data/dag/" + name;
}

// The error message of reading a bad file, with the source directory cut off.
std::string ErrorOf(const std::string& name, const DagReadOptions& options = {}) {
  util::Result<TaskGraph> g = ReadDag(DataPath(name), options);
  EXPECT_FALSE(g.ok()) << name << " was accepted";
  if (g.ok()) return "";
  EXPECT_EQ(g.status().code(), util::StatusCode::kInvalidArgument) << g.status().message();
  std::string msg = g.status().message();
  const std::string prefix = std::string(HETSCHED_SOURCE_DIR) + "/";
  if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
  return msg;
}

TEST(DagReaderTest, ReadsThePaperSample) {
  util::Result<TaskGraph> g =
      ReadDag(std::string(HETSCHED_SOURCE_DIR) + "/data/dag/topcuoglu2002.json");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->num_tasks(), 10);
  EXPECT_EQ(g->num_processors(), 3);
  EXPECT_EQ(g->edges.size(), 15u);
  EXPECT_EQ(g->tasks[3].name, "n4");
  EXPECT_EQ(g->cost(3, 1), 8);  // n4 on P2
  EXPECT_EQ(g->bandwidth, 1.0);
}

TEST(DagReaderTest, CostsByDeviceTypeListAndUnits) {
  util::Result<TaskGraph> g = ReadDag(DataPath("typed.json"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  // load: only the cpu type has a cost.
  EXPECT_EQ(g->cost(0, 0), kCannotRun);
  EXPECT_EQ(g->cost(0, 2), 2);
  // train: "gpu" for g0, its own entry for g1, "cpu" for c0.
  EXPECT_EQ(g->cost(1, 0), 4);
  EXPECT_EQ(g->cost(1, 1), 3);
  EXPECT_EQ(g->cost(1, 2), 40);
  // save: a list in processor order with "inf".
  EXPECT_EQ(g->cost(2, 2), kCannotRun);
  EXPECT_EQ(g->bandwidth, 2.0);
  EXPECT_EQ(g->edges[0].data, 8.0);
  EXPECT_EQ(g->edges[1].data, 0.0);
}

TEST(DagReaderTest, ProcessorsFromACluster) {
  DagReadOptions o;
  o.processors = {{"n0/0", "gpu"}, {"n0/1", "cpu"}};
  util::Result<TaskGraph> g = ParseDagJson(
      R"({"tasks": [{"id": "a", "cost": {"gpu": 1, "cpu": 5}}], "edges": []})", "x.json", o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->cost(0, 1), 5);
}

TEST(DagReaderTest, RejectsACycleAtTheClosingEdge) {
  EXPECT_EQ(ErrorOf("cycle.json"),
            "tests/data/dag/cycle.json:11:5: edges[1]: cycle b -> c -> b (expected an acyclic "
            "graph)");
}

TEST(DagReaderTest, RejectsAnEdgeToAnUnknownTask) {
  EXPECT_EQ(ErrorOf("unknown_task.json"),
            "tests/data/dag/unknown_task.json:10:25: edges[1].to: unknown task 'z' (expected the "
            "id of a task in 'tasks')");
}

TEST(DagReaderTest, RejectsANegativeCostAtItsValue) {
  EXPECT_EQ(ErrorOf("negative_cost.json"),
            "tests/data/dag/negative_cost.json:8:41: tasks[3].cost.P2: -2 is not a valid cost "
            "(expected a finite number >= 0)");
}

TEST(DagReaderTest, RejectsANonNumericCost) {
  EXPECT_EQ(ErrorOf("non_numeric_cost.json"),
            "tests/data/dag/non_numeric_cost.json:5:32: tasks[0].cost.P1: \"fast\" is not a cost "
            "(expected a number >= 0, or \"inf\" or null)");
}

TEST(DagReaderTest, RejectsATaskNoProcessorCanRun) {
  EXPECT_EQ(ErrorOf("nobody_can_run.json"),
            "tests/data/dag/nobody_can_run.json:6:25: tasks[1].cost: no processor can run this "
            "task (expected a finite cost on at least one processor)");
}

TEST(DagReaderTest, RejectsAnEmptyDag) {
  EXPECT_EQ(ErrorOf("empty.json"),
            "tests/data/dag/empty.json:4:12: tasks: the graph has no tasks (expected at least one "
            "task)");
}

TEST(DagReaderTest, RejectsBrokenJsonWithItsPosition) {
  const std::string msg = ErrorOf("syntax_error.json");
  EXPECT_EQ(msg.rfind("tests/data/dag/syntax_error.json:5:27: invalid JSON: ", 0), 0u) << msg;
}

TEST(DagReaderTest, RejectsUnknownKeysAndMissingParts) {
  auto err = [](const std::string& text) {
    util::Result<TaskGraph> g = ParseDagJson(text, "t.json");
    return g.ok() ? std::string("accepted") : g.status().message();
  };
  EXPECT_EQ(err(R"({"processors": ["P1"], "bandwidth": 1, "tasks": [{"id": "a", "cost": 1}],
 "edges": [{"from": "a", "to": "a"}]})"),
            "t.json:2:12: edges[0]: task 'a' depends on itself (expected two distinct tasks)");
  EXPECT_EQ(err(R"({"processors": ["P1"], "bandwidth": 1, "tasks": [{"id": "a", "cots": 1}],
 "edges": []})"),
            "t.json:1:62: tasks[0].cots: unknown key (expected one of id, cost, name, comment)");
  EXPECT_EQ(err(R"({"processors": ["P1"], "tasks": [], "edges": []})"),
            "t.json:1:1: missing key 'bandwidth' (expected data units per time unit, e.g. 1.0 "
            "or \"10GB/s\")");
  EXPECT_EQ(err(R"({"processors": ["P1"], "bandwidth": 1, "tasks": [{"id": "a", "cost": {"P9": 1}}],
 "edges": []})"),
            "t.json:1:71: tasks[0].cost.P9: unknown key (expected a processor or device type: P1)");
  EXPECT_EQ(err(R"({"processors": ["P1", "P1"], "bandwidth": 1, "tasks": [], "edges": []})"),
            "t.json:1:23: processors[1]: duplicate processor 'P1' (expected unique ids)");
  EXPECT_EQ(err("[1, 2]"), "t.json:1:1: the document is not an object (expected a JSON object)");
  EXPECT_EQ(err(R"({"processors": ["P1"], "bandwidth": 0, "tasks": [], "edges": []})"),
            "t.json:1:37: bandwidth: 0 is not positive (expected a bandwidth > 0)");
}

TEST(DagReaderTest, ReadsStg) {
  DagReadOptions o;
  o.stg_processors = 2;
  util::Result<TaskGraph> g = ReadDag(DataPath("example.stg"), o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->num_tasks(), 12);  // 10 tasks and the two dummies
  EXPECT_EQ(g->num_processors(), 2);
  EXPECT_EQ(g->edges.size(), 15u);
  EXPECT_EQ(g->cost(7, 1), 20);
  EXPECT_EQ(g->tasks[11].name, "11");
}

TEST(DagReaderTest, StgErrors) {
  DagReadOptions o;
  o.stg_processors = 2;
  EXPECT_EQ(ErrorOf("bad_pred.stg", o),
            "tests/data/dag/bad_pred.stg:4:9: task 2 predecessor: 'x' is not valid (expected an "
            "integer from 0 to 4)");
  EXPECT_EQ(ErrorOf("cycle.stg", o),
            "tests/data/dag/cycle.stg:3:9: task 1 predecessor: cycle 2 -> 1 -> 2 (expected an "
            "acyclic graph)");
  EXPECT_NE(ErrorOf("example.stg").find("give their number (--procs N)"), std::string::npos);
  auto err = [&](const std::string& text) {
    util::Result<TaskGraph> g = ParseDagStg(text, "t.stg", o);
    return g.ok() ? std::string("accepted") : g.status().message();
  };
  EXPECT_EQ(err(""), "t.stg:1: the file is empty (expected the number of tasks on the first line)");
  EXPECT_EQ(err("1\n0 0 0\n1 -3 1 0\n2 0 1 1\n"),
            "t.stg:3:3: task 1 processing time: '-3' is not valid (expected a number >= 0)");
  EXPECT_EQ(err("1\n0 0 0\n1 3 2 0\n2 0 1 1\n"),
            "t.stg:3:7: task 1: 1 predecessors listed, 2 announced (expected as many predecessor "
            "ids as announced)");
  EXPECT_EQ(err("1\n0 0 0\n1 3 1 0\n"),
            "t.stg:4: 2 task lines, 3 announced (expected n + 2 task lines including the dummy "
            "entry and exit)");
}

TEST(DagReaderTest, GeneratedGraphsRoundTrip) {
  RandomDagOptions o;
  o.tasks = 30;
  o.processors = 3;
  o.seed = 5;
  util::Result<TaskGraph> g = GenerateRandomDag(o);
  ASSERT_TRUE(g.ok());
  g->tasks[4].cost[1] = kCannotRun;
  util::Result<TaskGraph> back = ParseDagJson(FormatDagJson(*g), "gen.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->num_tasks(), g->num_tasks());
  for (int32_t t = 0; t < g->num_tasks(); ++t) EXPECT_EQ(back->tasks[t].cost, g->tasks[t].cost);
  ASSERT_EQ(back->edges.size(), g->edges.size());
  for (size_t k = 0; k < g->edges.size(); ++k) {
    EXPECT_EQ(back->edges[k].from, g->edges[k].from);
    EXPECT_EQ(back->edges[k].to, g->edges[k].to);
    EXPECT_EQ(back->edges[k].data, g->edges[k].data);
  }
}

TEST(RandomDagTest, SameSeedSameGraphAndOptionsChecked) {
  RandomDagOptions o;
  o.tasks = 50;
  o.ccr = 2;
  util::Result<TaskGraph> a = GenerateRandomDag(o), b = GenerateRandomDag(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FormatDagJson(*a), FormatDagJson(*b));
  EXPECT_EQ(a->num_tasks(), 50);
  o.beta = 2;
  EXPECT_FALSE(GenerateRandomDag(o).ok());
  o.beta = 0.5;
  o.tasks = 0;
  EXPECT_FALSE(GenerateRandomDag(o).ok());
}

}  // namespace
}  // namespace hetsched::model::io
