// Services in the workload format (`kind: service`): what is read, and every bad input named at
// its line and column.
#include <gtest/gtest.h>

#include "model/io/workload_reader.h"

namespace hetsched::model::io {
namespace {

util::Result<Workload> Parse(const std::string& yaml) {
  return ParseWorkloadYaml(yaml, "/data/w.yaml");
}

std::string ErrorOf(const std::string& yaml) {
  auto w = Parse(yaml);
  return w.ok() ? "parsed" : w.status().message();
}

TEST(ServiceReader, ReadsModelSloTraceAndRate) {
  auto w = Parse(R"(
jobs:
  - name: chat
    kind: service
    model: llama-70b
    stacks: [cuda, rocm]
    slo: {ttft: 1.5s, tpot: 80ms, percentile: 99.9}
    requests: traces/conv.csv
    rate: [[0h, 1], [14h, 5]]
)");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const Job& j = w->jobs[0];
  EXPECT_EQ(j.kind, JobKind::kService);
  ASSERT_TRUE(j.service.has_value());
  EXPECT_EQ(j.service->model, "llama-70b");
  EXPECT_DOUBLE_EQ(j.service->ttft_s, 1.5);
  EXPECT_DOUBLE_EQ(j.service->tpot_s, 0.08);
  EXPECT_DOUBLE_EQ(j.service->percentile, 99.9);
  EXPECT_EQ(j.service->requests_file, "/data/traces/conv.csv");  // next to the workload
  ASSERT_EQ(j.service->rate.size(), 2u);
  EXPECT_DOUBLE_EQ(j.service->rate[1].first, 14 * 3600);
  EXPECT_DOUBLE_EQ(j.service->rate[1].second, 5);
}

TEST(ServiceReader, RateWithoutATraceNeedsTokens) {
  auto w = Parse(R"(
jobs:
  - name: s
    kind: service
    model: llama-7b
    stacks: [cuda]
    rate: [[0h, 1]]
    tokens: {input: 512, output: 64}
)");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->jobs[0].service->input_tokens, 512);
  EXPECT_EQ(w->jobs[0].service->output_tokens, 64);
  EXPECT_DOUBLE_EQ(w->jobs[0].service->ttft_s, 2);  // default SLO
  EXPECT_EQ(ErrorOf(R"(
jobs:
  - name: s
    kind: service
    model: llama-7b
    stacks: [cuda]
    rate: [[0h, 1]]
)"),
            "/data/w.yaml:3:5: jobs[0].tokens: is missing (expected the tokens of each request "
            "when there is no trace: {input, output})");
}

TEST(ServiceReader, BadInputIsLocated) {
  const std::string head = "jobs:\n  - name: s\n    kind: service\n    stacks: [cuda]\n";
  EXPECT_EQ(ErrorOf(head + "    model: gpt-5\n    rate: [[0h, 1]]\n"
                           "    tokens: {input: 1, output: 1}\n"),
            "/data/w.yaml:5:12: jobs[0].model: unknown model 'gpt-5' (known: llama-7b, "
            "llama-13b, llama-70b, gpt3-175b, llama-405b) (expected a model preset)");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    requests: t.csv\n    work: 10\n"),
            "/data/w.yaml:7:11: jobs[0].work: does not apply to a service (expected a service's "
            "replicas are sized by hetsched from its load)");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    rate: [[2h, 1], [1h, 2]]\n"
                           "    tokens: {input: 1, output: 1}\n"),
            "/data/w.yaml:6:22: jobs[0].rate[1][0]: 3600 s is not after the previous point's "
            "7200 s (expected points in increasing time of day)");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    rate: [[25h, 1]]\n"
                           "    tokens: {input: 1, output: 1}\n"),
            "/data/w.yaml:6:13: jobs[0].rate[0][0]: is 90000 s (expected a time of day in "
            "[0h, 24h))");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    rate: [[0h, -1]]\n"
                           "    tokens: {input: 1, output: 1}\n"),
            "/data/w.yaml:6:17: jobs[0].rate[0][1]: is -1 (expected requests/s >= 0)");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    requests: t.csv\n"
                           "    slo: {ttft: 0s}\n"),
            "/data/w.yaml:7:10: jobs[0].slo: has a zero latency target (expected positive ttft "
            "and tpot)");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    requests: t.csv\n"
                           "    slo: {percentile: 101}\n"),
            "/data/w.yaml:7:23: jobs[0].slo.percentile: is 101 (expected a percent in (0, 100])");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n"),
            "/data/w.yaml:2:5: jobs[0]: has neither requests nor rate (expected requests: FILE "
            "(Azure's trace CSV) or rate: [[time, requests/s], ...])");
  EXPECT_EQ(ErrorOf(head + "    model: llama-7b\n    requests: t.csv\n"
                           "    tokens: {input: 1, output: 1}\n"),
            "/data/w.yaml:7:13: jobs[0].tokens: is given with a trace (expected no tokens: the "
            "trace has them)");
  // Service fields on another kind of job.
  EXPECT_EQ(ErrorOf("jobs:\n  - name: t\n    stacks: [cuda]\n    work: 1\n    model: llama-7b\n"),
            "/data/w.yaml:5:12: jobs[0].model: applies only to services (expected kind: service, "
            "or no model)");
}

TEST(ServiceReader, ElasticMinAboveMaxIsLocated) {
  EXPECT_EQ(ErrorOf("jobs:\n  - name: t\n    stacks: [cuda]\n    work: 1\n    gang_size: 2\n"
                    "    elastic: {min: 4, max: 2}\n"),
            "/data/w.yaml:6:14: jobs[0].elastic: min 4 and max 2 do not bracket gang_size 2 "
            "(expected min <= gang_size <= max)");
}

}  // namespace
}  // namespace hetsched::model::io
