#include "cost/roofline.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/catalog.h"

namespace hetsched::cost {
namespace {

using model::Precision;

// 10 TFLOPS fp32, 100 fp16, no int8 figure, 1 TB/s, half of peak reachable.
model::DeviceType MakeType(double fp32 = 10, double fp16 = 100, double bandwidth = 1e12) {
  model::DeviceType t;
  t.name = "test";
  t.fp32_tflops = fp32;
  t.fp16_tflops = fp16;
  t.memory_bandwidth = bandwidth;
  t.efficiency = 0.5;
  return t;
}

TEST(Roofline, ComputeTimeUsesPeakTimesEfficiency) {
  const model::DeviceType t = MakeType();
  EXPECT_DOUBLE_EQ(ComputeSeconds(1e12, Precision::kFp16, t), 0.02);  // 1e12 / 50e12
  EXPECT_DOUBLE_EQ(ComputeSeconds(1e12, Precision::kFp32, t), 0.2);   // 1e12 / 5e12
  // No int8 figure: falls back to fp32 like DeviceType::PeakFlops.
  EXPECT_DOUBLE_EQ(ComputeSeconds(1e12, Precision::kInt8, t), 0.2);
}

TEST(Roofline, MemoryTimeUsesFullBandwidth) {
  EXPECT_DOUBLE_EQ(MemorySeconds(2'000'000'000'000ull, MakeType()), 2.0);
}

TEST(Roofline, TakesTheLargerOfComputeAndMemory) {
  const model::DeviceType t = MakeType();
  // Compute-bound: 0.02 s of math, 0.001 s of traffic.
  EXPECT_DOUBLE_EQ(RooflineSeconds({1e12, 1'000'000'000ull, Precision::kFp16}, t), 0.02);
  // Memory-bound: 0.02 s of math, 0.1 s of traffic.
  EXPECT_DOUBLE_EQ(RooflineSeconds({1e12, 100'000'000'000ull, Precision::kFp16}, t), 0.1);
}

TEST(Roofline, RidgeIntensityIsEffectivePeakOverBandwidth) {
  EXPECT_DOUBLE_EQ(RidgeIntensity(Precision::kFp16, MakeType()), 50);  // 50e12 / 1e12
  EXPECT_DOUBLE_EQ(RidgeIntensity(Precision::kFp32, MakeType()), 5);
  EXPECT_TRUE(std::isinf(RidgeIntensity(Precision::kFp16, MakeType(10, 100, 0))));
}

TEST(Roofline, ZeroWorkTakesNoTime) {
  const model::DeviceType none = MakeType(0, 0, 0);
  EXPECT_EQ(ComputeSeconds(0, Precision::kFp32, none), 0);
  EXPECT_EQ(MemorySeconds(0, none), 0);
  EXPECT_EQ(RooflineSeconds({0, 0, Precision::kFp16}, none), 0);
}

TEST(Roofline, MissingPeakOrBandwidthIsInfinite) {
  // An fp16-only part (no fp32 figure) cannot be costed for fp32 work.
  EXPECT_TRUE(std::isinf(ComputeSeconds(1, Precision::kFp32, MakeType(0, 100))));
  EXPECT_DOUBLE_EQ(ComputeSeconds(1e12, Precision::kFp16, MakeType(0, 100)), 0.02);
  EXPECT_TRUE(std::isinf(MemorySeconds(1, MakeType(10, 100, 0))));
  model::DeviceType no_efficiency = MakeType();
  no_efficiency.efficiency = 0;
  EXPECT_TRUE(std::isinf(ComputeSeconds(1, Precision::kFp16, no_efficiency)));
}

TEST(Roofline, EffectiveFlopsIsPeakTimesEfficiency) {
  EXPECT_DOUBLE_EQ(EffectiveFlops(Precision::kFp16, MakeType()), 50e12);  // 100 TFLOPS x 0.5
  EXPECT_DOUBLE_EQ(EffectiveFlops(Precision::kInt8, MakeType()), 5e12);   // falls back to fp32
  EXPECT_EQ(EffectiveFlops(Precision::kFp32, MakeType(0, 100)), 0);
}

TEST(Roofline, FromRates) {
  // 1e12 FLOPs at 50 TFLOPS: 0.02 s; 5e11 bytes at 1 TB/s: 0.5 s; half a byte-share allowed.
  EXPECT_DOUBLE_EQ(ComputeSeconds(1e12, 50e12), 0.02);
  EXPECT_DOUBLE_EQ(MemorySeconds(5e11, 1e12), 0.5);
  EXPECT_DOUBLE_EQ(MemorySeconds(0.5, 1.0), 0.5);
  // Compute-bound: 0.02 s of math, 0.001 s of traffic; memory-bound: 0.02 s against 0.1 s.
  EXPECT_DOUBLE_EQ(RooflineSeconds(1e12, 1e9, 50e12, 1e12), 0.02);
  EXPECT_DOUBLE_EQ(RooflineSeconds(1e12, 1e11, 50e12, 1e12), 0.1);
  // No work takes no time, even at no rate; work at no rate cannot finish.
  EXPECT_EQ(ComputeSeconds(0, 0), 0);
  EXPECT_EQ(MemorySeconds(0, 0), 0);
  EXPECT_EQ(RooflineSeconds(0, 0, 0, 0), 0);
  EXPECT_TRUE(std::isinf(ComputeSeconds(1, 0)));
  EXPECT_TRUE(std::isinf(MemorySeconds(1, 0)));
  EXPECT_TRUE(std::isinf(RooflineSeconds(1, 0, 0, 1e12)));
}

TEST(Roofline, RatesAndDeviceTypeAgree) {
  // The DeviceType overloads are the rate ones at EffectiveFlops and memory_bandwidth, exactly.
  const model::DeviceType t = MakeType();
  for (const double flops : {0.0, 3e11, 1e12, 7.5e13}) {
    for (const uint64_t bytes : {0ull, 1'000'000'000ull, 123'456'789'012ull}) {
      EXPECT_EQ(RooflineSeconds({flops, bytes, Precision::kFp16}, t),
                RooflineSeconds(flops, static_cast<double>(bytes),
                                EffectiveFlops(Precision::kFp16, t), t.memory_bandwidth));
    }
  }
}

TEST(Roofline, BuiltInA100) {
  const model::DeviceType* a100 = model::DeviceCatalog::BuiltIn().Find("a100-80g");
  ASSERT_NE(a100, nullptr);
  // 1 PFLOP of bf16 at 312 TFLOPS x 0.75 = 234 TFLOPS -> 4.2735 s.
  EXPECT_NEAR(ComputeSeconds(1e15, Precision::kFp16, *a100), 1e15 / 234e12, 1e-12);
  // 80 GiB streamed once at 2,039 GB/s.
  EXPECT_NEAR(MemorySeconds(80ull << 30, *a100), 85899345920.0 / 2039e9, 1e-12);
}

}  // namespace
}  // namespace hetsched::cost
