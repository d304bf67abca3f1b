#include "daemon/plan_request.h"

#include <gtest/gtest.h>

#include <string>

namespace hetsched::svc {
namespace {

TEST(PlanRequest, AModelWithItsOptions) {
  auto r = ParsePlanRequest(
      R"({"model":"llama-7b","batch":64,"micro_batch":2,"seq_len":2048,"precision":"bf16",)"
      R"("optimizer":"adam","max_stages":8,"memory_reserve":0.2,"offload":false,)"
      R"("only_type":"a100-80g","nodes":"all"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->model, "llama-7b");
  EXPECT_TRUE(r->dag_json.empty());
  EXPECT_EQ(r->preset.global_batch, 64);
  EXPECT_EQ(r->preset.micro_batch, 2);
  EXPECT_EQ(r->preset.seq_len, 2048);
  EXPECT_EQ(r->preset.precision, "bf16");
  EXPECT_EQ(r->partition.max_stages, 8);
  EXPECT_DOUBLE_EQ(r->partition.memory_reserve, 0.2);
  EXPECT_FALSE(r->partition.allow_offload);
  EXPECT_EQ(r->partition.only_type, "a100-80g");
  EXPECT_EQ(r->nodes, "all");
}

TEST(PlanRequest, ADagKeepsItsDocumentAndDefaultsToHeftOnIdleNodes) {
  auto r = ParsePlanRequest(R"({"dag":{"tasks":[{"id":"a","cost":1}],"edges":[]}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dag_json, R"({"edges":[],"tasks":[{"cost":1,"id":"a"}]})");
  EXPECT_EQ(r->algo, "heft");
  EXPECT_EQ(r->nodes, "idle");
  EXPECT_EQ(ParsePlanRequest(R"({"dag":{},"algo":"peft"})")->algo, "peft");
}

TEST(PlanRequest, BadRequestsNameTheFieldAndWhatWasExpected) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "not JSON (expected one plan request object)"},
      {"[1]", "a JSON array (expected one plan request object)"},
      {"{}", "give either model (a preset name) or dag"},
      {R"({"model":"llama-7b","dag":{}})", "not both"},
      {R"({"model":""})", "model: is \"\" (expected a non-empty string)"},
      {R"({"model":7})", "model: is 7 (expected a non-empty string)"},
      {R"({"dag":[1]})", "dag: is a list (expected a DAG object"},
      {R"({"model":"llama-7b","batch":0})", "batch: is zero (expected a whole number from 1 to"},
      {R"({"model":"llama-7b","batch":1.5})",
       "batch: '1.5' is not a whole number (expected a whole number"},
      {R"({"model":"llama-7b","max_stages":2000})",
       "max_stages: '2000' is too large (expected a whole number from 1 to 1024)"},
      {R"({"model":"llama-7b","memory_reserve":1})", "memory_reserve: is 1 (expected a fraction"},
      {R"({"model":"llama-7b","offload":"yes"})",
       "offload: \"yes\" is not a boolean (expected true or false)"},
      {R"({"model":"llama-7b","nodes":"some"})", "nodes: is \"some\" (expected idle or all)"},
      {R"({"model":"llama-7b","algo":"heft"})", "algo: applies to a DAG, not a model"},
      {R"({"dag":{},"batch":8})", "batch: applies to a model, not a DAG"},
      {R"({"dag":{},"algo":"exact"})", "algo: is \"exact\" (expected heft, cpop or peft)"},
      {R"({"model":"llama-7b","batch":"8"})",
       "batch: \"8\" is not a number (expected a whole number from 1 to"},
      {R"({"model":"llama-7b","gpus":8})", "gpus: unknown field (expected one of: model, dag,"},
  };
  for (const auto& [body, want] : cases) {
    auto r = ParsePlanRequest(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), util::StatusCode::kInvalidArgument) << body;
    EXPECT_NE(r.status().message().find(want), std::string::npos)
        << body << " -> " << r.status().message();
    EXPECT_EQ(r.status().message().rfind("request body:", 0), 0u) << r.status().message();
  }
}

}  // namespace
}  // namespace hetsched::svc
