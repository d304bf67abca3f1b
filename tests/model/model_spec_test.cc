#include "model/model_spec.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hetsched::model {
namespace {

double Billions(const ModelSpec& m) { return static_cast<double>(m.ParameterCount()) / 1e9; }

// Published sizes: Llama 2 paper (Touvron et al. 2023) 7B/13B/70B (6.74B, 13.0B, 69.0B in the
// released checkpoints); Llama 3 paper (2024) 405B; GPT-3 paper (Brown et al. 2020) 175B.
TEST(ModelSpec, PresetParameterCountsMatchPublished) {
  struct Case {
    const char* name;
    double published_billions;
  };
  for (const Case& c : {Case{"llama-7b", 6.74}, Case{"llama-13b", 13.0}, Case{"llama-70b", 70.0},
                        Case{"llama-405b", 405.0}, Case{"gpt3-175b", 175.0}}) {
    auto m = MakePreset(c.name, {});
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_NEAR(Billions(*m), c.published_billions, 0.03 * c.published_billions) << c.name;
  }
}

TEST(ModelSpec, Llama7bLayersFromHyperParameters) {
  auto m = MakePreset("llama-7b", {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->layers.size(), 34u);  // embedding, 32 blocks, head
  EXPECT_EQ(m->layers.front().kind, LayerKind::kEmbedding);
  EXPECT_EQ(m->layers.back().kind, LayerKind::kHead);
  // 4 h^2 attention + 3 h I SwiGLU + 2 h RMSNorm.
  EXPECT_EQ(m->layers[1].parameters, 4ull * 4096 * 4096 + 3ull * 4096 * 11008 + 2 * 4096);
  EXPECT_EQ(m->layers[0].parameters, 32000ull * 4096);
  EXPECT_EQ(m->setup.seq_len, 4096);
  EXPECT_EQ(m->OptimizerBytesPerParam() + m->WeightBytesPerParam() + m->GradBytesPerParam(), 16);
}

TEST(ModelSpec, Llama70bUsesGroupedQueryAttention) {
  auto m = MakePreset("llama-70b", {});
  ASSERT_TRUE(m.ok());
  const uint64_t h = 8192, kv = 8 * 128;  // 8 KV heads of 128
  EXPECT_EQ(m->layers[1].parameters, 2 * h * h + 2 * h * kv + 3 * h * 28672 + 2 * h);
}

TEST(ModelSpec, Gpt3FlopsFollowTheTextbookFormula) {
  auto m = MakePreset("gpt3-175b", {});
  ASSERT_TRUE(m.ok());
  const double s = 2048, h = 12288;
  // Forward FLOPs per sample of one block: 24 s h^2 + 4 s^2 h (REFERENCES.md).
  EXPECT_DOUBLE_EQ(m->layers[1].fwd_flops, 24 * s * h * h + 4 * s * s * h);
  // Training compute ~ 6 N per token; attention and the head add a few percent.
  double flops = 0;
  for (const LayerSpec& l : m->layers) flops += 3 * l.fwd_flops;
  const double per_token = flops / s;
  EXPECT_NEAR(per_token / (6 * static_cast<double>(m->ParameterCount())), 1.0, 0.10);
  EXPECT_TRUE(m->layers.back().tied);
}

TEST(ModelSpec, OptionsChangeTheSetUp) {
  PresetOptions o;
  o.global_batch = 64;
  o.micro_batch = 4;
  o.seq_len = 1024;
  o.precision = "fp32";
  o.optimizer = "sgd";
  auto m = MakePreset("llama-7b", o);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->setup.global_batch, 64);
  EXPECT_EQ(m->setup.micro_batch, 4);
  EXPECT_EQ(m->WeightBytesPerParam(), 4);
  EXPECT_EQ(m->OptimizerBytesPerParam(), 4);  // fp32 momentum, no master copy
  EXPECT_DOUBLE_EQ(m->layers[1].fwd_flops, 2.0 * 1024 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) +
                                               4.0 * 1024 * 1024 * 4096);
  o.optimizer = "none";
  auto inf = MakePreset("llama-7b", o);
  ASSERT_TRUE(inf.ok());
  EXPECT_FALSE(inf->training());
  EXPECT_EQ(inf->GradBytesPerParam(), 0);
}

TEST(ModelSpec, UnknownPresetListsKnownOnes) {
  auto m = MakePreset("llama-8b", {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), util::StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("llama-7b, llama-13b, llama-70b, gpt3-175b, llama-405b"),
            std::string::npos);
}

TEST(ModelSpec, BadOptionsAreRejected) {
  PresetOptions o;
  o.global_batch = 8;
  o.micro_batch = 3;
  auto m = MakePreset("llama-7b", o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("does not divide"), std::string::npos);
  o.micro_batch = 0;
  o.precision = "fp8";
  EXPECT_FALSE(MakePreset("llama-7b", o).ok());
  o.precision = "";
  o.optimizer = "lion";
  EXPECT_FALSE(MakePreset("llama-7b", o).ok());
  o.optimizer = "";
  o.global_batch = -1;
  EXPECT_FALSE(MakePreset("llama-7b", o).ok());
}

TEST(ModelSpec, FamiliesInIncreasingSize) {
  auto f = PresetsOfFamily("llama");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->back(), "llama-405b");
  EXPECT_FALSE(PresetsOfFamily("bert").ok());
}

}  // namespace
}  // namespace hetsched::model
