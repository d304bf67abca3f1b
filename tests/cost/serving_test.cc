// The serving model (cost/serving.h) against hand-computed roofline times, and its calibration
// fit recovering coefficients from measurements generated with them.
#include "cost/serving.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "model/catalog.h"

namespace hetsched::cost {
namespace {

const model::DeviceType& A100() { return *model::DeviceCatalog::BuiltIn().Find("a100-80g"); }

TEST(ServedModel, Llama70bSizes) {
  auto m = ServedPreset("llama-70b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // Llama 2 70B: 69.0 billion parameters; K and V of 80 layers x 8 heads x 128 in fp16.
  EXPECT_NEAR(m->parameters / 1e9, 69.0, 0.1);
  EXPECT_DOUBLE_EQ(m->kv_bytes_per_token, 2.0 * 80 * 8 * 128 * 2);
  EXPECT_DOUBLE_EQ(m->weight_bytes, 2 * m->parameters);
  EXPECT_TRUE(ServedPreset("llama2-70b").ok());  // Splitwise's name
  EXPECT_FALSE(ServedPreset("bloom-176b").ok());
}

TEST(ServingModel, BareDecodeStepIsWeightsOverBandwidth) {
  const ServedModel m = *ServedPreset("llama-7b");
  const ServingModel one(m, A100(), 1, ServingCalibration{}, 0);
  // Batch 1, no context: the step reads every weight once; compute is far below.
  EXPECT_DOUBLE_EQ(one.DecodeStepSeconds(1, 0), m.weight_bytes / A100().memory_bandwidth);
  // tp 4 reads a quarter each; the all-reduce hops cost nothing without a calibration.
  const ServingModel four(m, A100(), 4, ServingCalibration{}, 300e9);
  EXPECT_DOUBLE_EQ(four.DecodeStepSeconds(1, 0), m.weight_bytes / 4 / A100().memory_bandwidth);
  // A batch adds its KV cache to the bytes read.
  EXPECT_DOUBLE_EQ(one.DecodeStepSeconds(8, 1000),
                   (m.weight_bytes + 8 * 1000 * m.kv_bytes_per_token) / A100().memory_bandwidth);
}

TEST(ServingModel, CalibrationAddsItsTerms) {
  const ServedModel m = *ServedPreset("llama-7b");
  ServingCalibration c;
  c.decode_fixed_s = 1e-4;
  c.decode_per_sequence_s = 1e-6;
  c.decode_hop_s = 1e-5;
  const ServingModel bare(m, A100(), 2, ServingCalibration{}, 300e9);
  const ServingModel fitted(m, A100(), 2, c, 300e9);
  // 32 layers x (0.1 ms + 4 x 1 us) + 2 x 32 x (2 - 1) hops x 10 us.
  EXPECT_NEAR(fitted.DecodeStepSeconds(4, 100) - bare.DecodeStepSeconds(4, 100),
              32 * (1e-4 + 4e-6) + 64 * 1e-5, 1e-12);
}

TEST(ServingModel, BarePrefillIsComputeAtEfficiency) {
  const ServedModel m = *ServedPreset("llama-7b");
  const ServingModel one(m, A100(), 1, ServingCalibration{}, 0);
  const double len = 4096;
  const double flops = len * m.flops_per_token + len * (len + 1) / 2 * m.attention_flops_per_pair;
  EXPECT_NEAR(one.PrefillSeconds(1, 4096),
              flops / (A100().PeakFlops(model::Precision::kFp16) * A100().efficiency), 1e-12);
}

TEST(ServingModel, MemoryDecidesWhatFits) {
  const ServedModel m = *ServedPreset("llama-70b");
  EXPECT_FALSE(ServingModel(m, A100(), 1, {}, 0).Fits());  // 138 GB of weights on 80 GiB
  const ServingModel two(m, A100(), 2, {}, 300e9);
  ASSERT_TRUE(two.Fits());
  EXPECT_NEAR(two.KvTokenCapacity(),
              (0.9 * 2 * A100().memory_bytes - m.weight_bytes) / m.kv_bytes_per_token, 1e-6);
  const ReplicaCapacity none = ServingModel(m, A100(), 1, {}, 0).CapacityAt({}, 1000, 200);
  EXPECT_FALSE(none.feasible);
  EXPECT_NE(none.why_not.find("do not fit"), std::string::npos) << none.why_not;
}

TEST(ServingModel, CapacityMeetsTheTargetsItIsSizedFor) {
  const ServedModel m = *ServedPreset("llama-13b");
  const ServingModel r(m, A100(), 1, {}, 0);
  const ServingSlo slo{1.0, 0.05, 99};
  const double input = 2000, output = 100, context = input + output / 2;
  const ReplicaCapacity c = r.CapacityAt(slo, input, output);
  ASSERT_TRUE(c.feasible) << c.why_not;
  EXPECT_GE(c.batch, 1);
  EXPECT_DOUBLE_EQ(c.prefill_s, r.PrefillSeconds(1, 2000));
  EXPECT_DOUBLE_EQ(c.decode_step_s, r.DecodeStepSeconds(c.batch, context));
  // Every iteration (a decode step with its prefill chunk) stays within 90% of TPOT, and the
  // chunk is the largest that does.
  EXPECT_DOUBLE_EQ(c.step_s, r.IterationSeconds(c.batch, context, c.chunk));
  EXPECT_LE(c.step_s, 0.9 * slo.tpot_s);
  EXPECT_GT(r.IterationSeconds(c.batch, context, c.chunk + 1), 0.9 * slo.tpot_s);
  // The rate: within 80% of what the batch decodes and of what the chunks prefill, and the
  // M/M/1 tail of the prompts' wait plus their own prefill within TTFT.
  EXPECT_LE(c.requests_per_s, 0.8 * c.batch / output / c.step_s + 1e-12);
  const double mu = c.chunk / input / c.step_s;
  EXPECT_LE(c.requests_per_s, 0.8 * mu + 1e-12);
  const double prefill_time = std::ceil(input / c.chunk) * c.step_s;
  const double rho = c.requests_per_s / mu;
  EXPECT_LE(prefill_time + std::log(rho / 0.01) / (mu - c.requests_per_s), slo.ttft_s + 1e-6);
  // A TPOT no step can meet: infeasible, and it says by how much.
  const ReplicaCapacity miss = r.CapacityAt({1.0, 0.001, 99}, 2000, 100);
  EXPECT_FALSE(miss.feasible);
  EXPECT_NE(miss.why_not.find("over 90% of the TPOT target (1.0 ms)"), std::string::npos)
      << miss.why_not;
}

TEST(ServingModel, ALongPromptAtThePercentileCostsCapacityOrRulesTheShapeOut) {
  const ServedModel m = *ServedPreset("llama-13b");
  const ServingModel r(m, A100(), 1, {}, 0);
  const ServingSlo slo{1.0, 0.05, 99};
  const ReplicaCapacity mean_only = r.CapacityAt(slo, 2000, 100);
  ASSERT_TRUE(mean_only.feasible) << mean_only.why_not;
  EXPECT_EQ(r.CapacityAt(slo, 2000, 100, 1000).requests_per_s, mean_only.requests_per_s);
  // p99 prompts of 6,000 tokens: their own prefill leaves less of the TTFT for waiting.
  const ReplicaCapacity longer = r.CapacityAt(slo, 2000, 100, 6000);
  ASSERT_TRUE(longer.feasible) << longer.why_not;
  EXPECT_LT(longer.requests_per_s, mean_only.requests_per_s);
  // 60,000 tokens cannot be prefilled within 1 s in chunks at all.
  const ReplicaCapacity none = r.CapacityAt(slo, 2000, 100, 60000);
  EXPECT_FALSE(none.feasible);
  EXPECT_NE(none.why_not.find("a prompt of 60000 tokens (the p99 length) takes at least"),
            std::string::npos)
      << none.why_not;
}

TEST(ServingModel, AMeanPromptTooLongToPrefillIsToldByItsFastestPrefill) {
  const ServedModel m = *ServedPreset("llama-13b");
  const ServingModel r(m, A100(), 1, {}, 0);
  // Prompts of 40,000 tokens cannot be prefilled within half of a 0.2 s TTFT at any batch.
  const ServingSlo slo{0.2, 0.05, 99};
  const ReplicaCapacity none = r.CapacityAt(slo, 40000, 100);
  ASSERT_FALSE(none.feasible);
  // The nearest miss: batch 1, whose decode step leaves the largest chunk. Every larger batch
  // prefills more slowly, so the slowest would overstate how far the shape is from the target.
  const double context = 40000 + 100 / 2.0;
  const int64_t chunk = r.LargestChunk(1, context, 0.9 * slo.tpot_s);
  const double batch_one = std::ceil(40000.0 / chunk) * r.IterationSeconds(1, context, chunk);
  EXPECT_NE(none.why_not.find(fmt::format(
                "a mean prompt's prefill takes at least {:.3f} s in chunks", batch_one)),
            std::string::npos)
      << none.why_not;
}

TEST(ServingModel, CapacityNamesTheBoundsItsRateIsTheLesserOf) {
  const cost::ServingModel m(*ServedPreset("llama-13b"), A100(), 1, {}, 300e9);
  const ServingSlo slo{2, 0.1, 99};
  const ReplicaCapacity c = m.CapacityAt(slo, 1000, 200);
  ASSERT_TRUE(c.feasible) << c.why_not;
  EXPECT_DOUBLE_EQ(c.prompt_rate, static_cast<double>(c.chunk) / 1000 / c.step_s);
  EXPECT_DOUBLE_EQ(c.decode_rate, ServingModel::kTargetUtilisation * c.batch / 200 / c.step_s);
  EXPECT_GE(c.own_s, std::ceil(1000.0 / static_cast<double>(c.chunk)) * c.step_s - 1e-12);
  EXPECT_LE(c.requests_per_s, c.decode_rate + 1e-12);
  EXPECT_LE(c.requests_per_s, ServingModel::kTargetUtilisation * c.prompt_rate + 1e-12);
}

// A tp-8 MI250X replica of llama-70b for the 20-minute window of Azure's conversation trace
// (docs/results.md), in round numbers: a chunk stream of 3.4 prompts/s, 0.36 s of prefill on
// top of the wait, and a decode cap out of the way. M/M/1's p99 TTFT reaches 2 s at 1.218
// requests/s, the model's rating.
ReplicaCapacity WindowReplica() {
  ReplicaCapacity c;
  c.feasible = true;
  c.prompt_rate = 3.4;
  c.own_s = 0.36;
  c.decode_rate = 10;
  c.requests_per_s = 1.2179;
  return c;
}

TEST(CalibratedRate, AMeasuredWaitShorterThanTheModelsRaisesTheRating) {
  const ServingSlo slo{2, 0.1, 99};
  ReplicaCapacity c = WindowReplica();
  // Four replicas carried 5.5 requests/s, 1.375 each, at a p99 TTFT of 1.53 s, where the
  // model says 2.19 s. The stream rate under which M/M/1 gives 1.53 s at 1.375 is 4.33
  // prompts/s, and at that rate the TTFT reaches 2 s at 1.995 requests/s (by hand, bisection).
  const ReplicaMeasurement window{1.375, 1.53, 3301};
  EXPECT_NEAR(CalibratedRate(c, slo, window), 1.995, 1e-3);
  // Still capped by the decode cap.
  c.decode_rate = 1.78;
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, window), 1.78);
  // A measurement at 0.9 requests/s with no wait at all says nothing beyond twice 0.9.
  c.decode_rate = 10;
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, {0.9, 0.36, 3000}), kMaxCalibratedRaise * 0.9);
}

TEST(CalibratedRate, LeavesTheModelsRatingWithoutEvidenceOrWhenTheModelWaitsNoLonger) {
  const ServingSlo slo{2, 0.1, 99};
  const ReplicaCapacity c = WindowReplica();
  // The TTFT target missed, or a p99 over fewer than 1,000 requests.
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, {1.375, 2.1, 3301}), c.requests_per_s);
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, {1.375, 1.53, 999}), c.requests_per_s);
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, {}), c.requests_per_s);
  // At 0.5 requests/s the model's p99 TTFT is 1.29 s; 1.6 s measured only says the model is
  // not pessimistic there, and the rating is never lowered.
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, {0.5, 1.6, 3000}), c.requests_per_s);
  // Twice a low load measured stays below the model's rating: the rating stands.
  EXPECT_DOUBLE_EQ(CalibratedRate(c, slo, {0.3, 0.36, 3000}), c.requests_per_s);
  ReplicaCapacity infeasible;
  EXPECT_DOUBLE_EQ(CalibratedRate(infeasible, slo, {1.375, 1.53, 3301}), 0);
}

TEST(ServingModel, TheLargestChunkIsTheLastWithinTheStepLimit) {
  const ServingModel r(*ServedPreset("llama-7b"), A100(), 1, {}, 0);
  int64_t previous = std::numeric_limits<int64_t>::max();
  for (int32_t batch : {0, 1, 8, 32}) {
    const int64_t chunk = r.LargestChunk(batch, 1100, 0.09);
    ASSERT_GT(chunk, 0);
    EXPECT_LE(r.IterationSeconds(batch, 1100, chunk), 0.09);
    EXPECT_GT(r.IterationSeconds(batch, 1100, chunk + 1), 0.09);
    EXPECT_LE(chunk, previous);  // more decodes leave less room for prompt tokens
    previous = chunk;
  }
  EXPECT_EQ(r.LargestChunk(32, 1100, 1e-6), 0);  // not even the decode step fits
}

TEST(ServingModel, AnIterationIsADecodeStepPlusItsChunksCompute) {
  const ServedModel m = *ServedPreset("llama-7b");
  const ServingModel r(m, A100(), 1, {}, 0);
  EXPECT_DOUBLE_EQ(r.IterationSeconds(4, 500, 0), r.DecodeStepSeconds(4, 500));
  EXPECT_DOUBLE_EQ(r.IterationSeconds(0, 0, 512), r.PrefillSeconds(1, 512));
  const double chunk_flops = 512 * m.flops_per_token + 512.0 * 513 / 2 * m.attention_flops_per_pair;
  EXPECT_NEAR(r.IterationSeconds(4, 500, 512) - r.DecodeStepSeconds(4, 500),
              chunk_flops / (A100().PeakFlops(model::Precision::kFp16) * A100().efficiency), 1e-12);
}

TEST(ServingCalibration, FitRecoversTheCoefficientsThatMadeTheData) {
  ServingCalibration truth;
  truth.decode_fixed_s = 2e-4;
  truth.decode_per_sequence_s = 3e-6;
  truth.decode_hop_s = 1.2e-5;
  truth.decode_memory_scale = 1.1;
  truth.prefill_fixed_s = 5e-4;
  truth.prefill_hop_s = 2e-5;
  truth.prefill_compute_scale = 1.5;
  truth.prefill_attention_scale = 4;
  truth.prefill_comm_scale = 6;
  const ServedModel m = *ServedPreset("llama-70b");
  std::vector<ServingMeasurement> rows;
  for (int tp : {2, 4, 8}) {
    const ServingModel model(m, A100(), tp, truth, kMeasuredLinkBandwidth);
    for (int prompt : {128, 512, 2048, 8192}) {
      for (int batch : {1, 4, 16}) {
        ServingMeasurement r;
        r.model = "llama2-70b";
        r.device = "a100-80gb";
        r.tp = tp;
        r.prompt_tokens = prompt;
        r.batch = batch;
        r.output_tokens = 128;
        r.prompt_s = model.PrefillSeconds(batch, prompt);
        r.token_s = model.DecodeStepSeconds(batch, prompt + 64);
        rows.push_back(r);
      }
    }
  }
  const CalibrationFit fit =
      FitServingCalibration(rows, model::DeviceCatalog::BuiltIn(), kMeasuredLinkBandwidth);
  ASSERT_EQ(fit.by_type.count("a100-80g"), 1u);
  const ServingCalibration& c = fit.by_type.at("a100-80g");
  EXPECT_NEAR(c.decode_fixed_s, truth.decode_fixed_s, 1e-9);
  EXPECT_NEAR(c.decode_per_sequence_s, truth.decode_per_sequence_s, 1e-10);
  EXPECT_NEAR(c.decode_hop_s, truth.decode_hop_s, 1e-9);
  EXPECT_NEAR(c.decode_memory_scale, truth.decode_memory_scale, 1e-6);
  EXPECT_NEAR(c.prefill_fixed_s, truth.prefill_fixed_s, 1e-8);
  EXPECT_NEAR(c.prefill_hop_s, truth.prefill_hop_s, 1e-8);
  EXPECT_NEAR(c.prefill_compute_scale, truth.prefill_compute_scale, 1e-5);
  EXPECT_NEAR(c.prefill_attention_scale, truth.prefill_attention_scale, 1e-4);
  EXPECT_NEAR(c.prefill_comm_scale, truth.prefill_comm_scale, 1e-4);
  EXPECT_TRUE(fit.skipped.empty());
}

TEST(ServingCalibration, UnknownModelsAndDevicesAreSkippedAndSaid) {
  std::vector<ServingMeasurement> rows(2);
  rows[0].model = "bloom-176b";
  rows[0].device = "a100-80gb";
  rows[1].model = "llama2-70b";
  rows[1].device = "h100-80gb-pcap";
  for (auto& r : rows) r.prompt_s = r.token_s = 1, r.prompt_tokens = 1;
  const CalibrationFit fit = FitServingCalibration(rows, model::DeviceCatalog::BuiltIn(), 300e9);
  EXPECT_TRUE(fit.by_type.empty());
  ASSERT_EQ(fit.skipped.size(), 2u);
  EXPECT_EQ(fit.skipped[0], "bloom-176b (not a preset model): 1 rows");
  EXPECT_EQ(fit.skipped[1], "h100-80gb-pcap (not a catalog type): 1 rows");
}

TEST(ServingMeasurements, ReadsSplitwisesTableAndLocatesErrors) {
  const std::string header =
      "model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,prompt_time,"
      "token_time,e2e_time,tensor_parallel\n";
  auto ok = ParseServingMeasurements(
      header + "llama2-70b,a100-80gb,512,1,128,1.0,0.7,196.25,54.88,7168.98,2\n", "p.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].tp, 2);
  EXPECT_DOUBLE_EQ((*ok)[0].prompt_s, 0.19625);
  EXPECT_DOUBLE_EQ((*ok)[0].token_s, 0.05488);

  auto bad = ParseServingMeasurements(
      header + "llama2-70b,a100-80gb,512,1,128,1.0,0.7,fast,54.88,7168.98,2\n", "p.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "p.csv:2:40: prompt_time: 'fast' (expected a number in [1e-06, 1000000000])");
  auto fields = ParseServingMeasurements(header + "llama2-70b,a100-80gb,512\n", "p.csv");
  EXPECT_EQ(fields.status().message(), "p.csv:2:1: 3 fields (expected 11)");
  auto head = ParseServingMeasurements("model,hardware\n", "p.csv");
  EXPECT_NE(head.status().message().find("p.csv:1:1: header: 'model,hardware'"), std::string::npos)
      << head.status().message();
  EXPECT_EQ(ParseServingMeasurements(header, "p.csv").status().message(), "p.csv: no measurements");
}

}  // namespace
}  // namespace hetsched::cost
