#include "obs/server_load.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "obs/prometheus_text.h"

namespace hetsched::svc {
namespace {

// What vLLM answers (names and label sets as vllm/v1/metrics/loggers.py registers them).
constexpr const char* kVllmPage =
    R"(# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 10.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} 2.0
vllm:prompt_tokens_total{engine="0",model_name="m"} 1200.0
vllm:generation_tokens_total{engine="0",model_name="m"} 600.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 4.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="m"} 12.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 12.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 12.0
vllm:time_per_output_token_seconds_bucket{engine="0",le="0.01",model_name="m"} 0.0
vllm:time_per_output_token_seconds_bucket{engine="0",le="0.05",model_name="m"} 100.0
vllm:time_per_output_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 100.0
)";

TEST(PrometheusText, ReadsSamplesLabelsAndSpecialValues) {
  auto samples = ParsePrometheusText(
      "# comment\n\n  a_b:c 1.5e2 1700000000000\nx{k=\"v\\\"q\\\\\\n\", j = \"\"} NaN\r\n"
      "y{} +Inf\nz -Inf\n");
  ASSERT_TRUE(samples.ok()) << samples.status().message();
  ASSERT_EQ(samples->size(), 4u);
  EXPECT_EQ((*samples)[0].name, "a_b:c");
  EXPECT_EQ((*samples)[0].value, 150);
  EXPECT_EQ((*samples)[1].Label("k"), "v\"q\\\n");
  EXPECT_EQ((*samples)[1].Label("j"), "");
  EXPECT_TRUE(std::isnan((*samples)[1].value));
  EXPECT_TRUE(std::isinf((*samples)[2].value));
  EXPECT_LT((*samples)[3].value, 0);
}

TEST(PrometheusText, RefusesGarbageWithLineAndColumn) {
  const std::pair<std::string, std::string> cases[] = {
      {"ok 1\n9bad 1\n", "line 2: column 1: '9' (expected metric name)"},
      {"m{a=\"x\" 1\n", "line 1: column 9: '1' (expected ',' or '}' after the label value)"},
      {"m{a=\"x}\n", "line 1: column 8: end of line (expected '\"' closing the label value)"},
      {"m{a=x} 1\n", "line 1: column 5: 'x' (expected a quoted label value)"},
      {"m{a=\"\\t\"} 1\n", "line 1: column 7: 't' (expected an escape"},
      {"m 12abc\n", "line 1: column 3: '1' (expected a number as the value)"},
      {"m nan\n", "line 1: column 3: 'n' (expected a number as the value)"},
      {"m 0x10\n", "line 1: column 3: '0' (expected a number as the value)"},
      {"m\n", "line 1: column 2: end of line (expected a value after the metric name)"},
      {"m 1 2 3\n", "line 1: column 7: '3' (expected end of line after the timestamp)"},
      {"m 1e999\n", "line 1: column 3: '1' (expected a number as the value)"},
      {std::string("m 1\0\n", 5), "line 1: column 4: a NUL byte (expected text)"},
      {"<html>\n", "line 1: column 1: '<' (expected metric name)"},
  };
  for (const auto& [text, message] : cases) {
    auto samples = ParsePrometheusText(text);
    ASSERT_FALSE(samples.ok()) << text;
    EXPECT_EQ(samples.status().message().rfind(message, 0), 0u)
        << text << " -> " << samples.status().message();
  }
}

TEST(PrometheusText, RefusesMoreSamplesThanItKeeps) {
  std::string page;
  for (size_t i = 0; i <= kMaxPromSamples; ++i) page += "m 1\n";
  auto samples = ParsePrometheusText(page);
  ASSERT_FALSE(samples.ok());
  EXPECT_NE(samples.status().message().find("more than 100000 samples"), std::string::npos);
}

TEST(ServerLoad, ReadsVllmSummingLabelSets) {
  auto samples = ParsePrometheusText(kVllmPage);
  ASSERT_TRUE(samples.ok()) << samples.status().message();
  auto load = ReadServerLoad(*samples);
  ASSERT_TRUE(load.ok()) << load.status().message();
  EXPECT_EQ(load->server, "vllm");
  EXPECT_EQ(load->running, 3);
  EXPECT_EQ(load->waiting, 1);
  EXPECT_EQ(load->requests, 12);  // stop + length
  EXPECT_EQ(load->prompt_tokens, 1200);
  EXPECT_EQ(load->generation_tokens, 600);
  ASSERT_TRUE(load->ttft.has_value());
  EXPECT_EQ(load->ttft->count(), 12);
  // 12 x 0.5 = 6th observation: in (0.1, 0.5] with 4 below and 8 inside -> 0.1 + 0.4 x 2/8.
  EXPECT_DOUBLE_EQ(*HistogramQuantile(*load->ttft, 0.5), 0.2);
  EXPECT_DOUBLE_EQ(*HistogramQuantile(*load->tpot, 0.99), 0.01 + 0.04 * 0.99);
}

TEST(ServerLoad, ReadsTgiAndLlamaCppNames) {
  auto tgi = ReadServerLoad(*ParsePrometheusText(
      "tgi_queue_size 2\ntgi_batch_current_size 5\ntgi_request_success 40\n"
      "tgi_request_input_length_sum 800\ntgi_request_generated_tokens_sum 400\n"
      "tgi_request_mean_time_per_token_duration_bucket{le=\"0.05\"} 40\n"
      "tgi_request_mean_time_per_token_duration_bucket{le=\"+Inf\"} 40\n"));
  ASSERT_TRUE(tgi.ok()) << tgi.status().message();
  EXPECT_EQ(tgi->server, "tgi");
  EXPECT_EQ(tgi->running, 5);
  EXPECT_EQ(tgi->waiting, 2);
  EXPECT_EQ(tgi->requests, 40);
  EXPECT_FALSE(tgi->ttft.has_value());
  ASSERT_TRUE(tgi->tpot.has_value());

  auto llama = ReadServerLoad(*ParsePrometheusText(
      "llamacpp:requests_processing 1\nllamacpp:requests_deferred 0\n"
      "llamacpp:prompt_tokens_total 90\nllamacpp:tokens_predicted_total 30\n"));
  ASSERT_TRUE(llama.ok()) << llama.status().message();
  EXPECT_EQ(llama->server, "llamacpp");
  EXPECT_EQ(llama->running, 1);
  EXPECT_FALSE(llama->requests.has_value());  // llama.cpp server counts no requests
  EXPECT_EQ(llama->generation_tokens, 30);
}

TEST(ServerLoad, RefusesPagesOfNoKnownServerAndBadFigures) {
  const std::pair<std::string, std::string> cases[] = {
      {"process_cpu_seconds_total 3\n", "no metric of vLLM, TGI or llama.cpp server"},
      {"vllm:num_requests_running -1\n", "vllm:num_requests_running: -1 (expected a finite"},
      {"vllm:request_success_total NaN\n", "vllm:request_success_total: nan"},
      {"vllm:time_to_first_token_seconds_bucket{le=\"x\"} 1\n",
       "vllm:time_to_first_token_seconds_bucket: le=\"x\" (expected a number or +Inf)"},
      {"vllm:time_to_first_token_seconds_bucket{le=\"1\"} 1\n",
       "vllm:time_to_first_token_seconds_bucket: no le=\"+Inf\" bucket"},
      {"vllm:time_to_first_token_seconds_bucket{le=\"1\"} 5\n"
       "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 4\n",
       "vllm:time_to_first_token_seconds_bucket: le=\"inf\" counts 4, fewer than the bucket"},
  };
  for (const auto& [text, message] : cases) {
    auto samples = ParsePrometheusText(text);
    ASSERT_TRUE(samples.ok()) << text;
    auto load = ReadServerLoad(*samples);
    ASSERT_FALSE(load.ok()) << text;
    EXPECT_NE(load.status().message().find(message), std::string::npos)
        << text << " -> " << load.status().message();
  }
}

TEST(ServerLoad, HistogramSinceTakesTheDifferenceOrTheWholeAfterARestart) {
  const LatencyHistogram before{{{0.1, 2}, {INFINITY, 4}}};
  const LatencyHistogram now{{{0.1, 5}, {INFINITY, 10}}};
  const LatencyHistogram since = HistogramSince(now, before);
  EXPECT_EQ(since.buckets[0].second, 3);
  EXPECT_EQ(since.count(), 6);
  const LatencyHistogram restarted{{{0.1, 1}, {INFINITY, 1}}};
  EXPECT_EQ(HistogramSince(restarted, before).count(), 1);
  EXPECT_FALSE(HistogramQuantile(LatencyHistogram{{{0.1, 0}, {INFINITY, 0}}}, 0.5).has_value());
  // All of it above the highest finite bound: that bound.
  EXPECT_EQ(HistogramQuantile(LatencyHistogram{{{0.1, 0}, {INFINITY, 3}}}, 0.5), 0.1);
}

}  // namespace
}  // namespace hetsched::svc
