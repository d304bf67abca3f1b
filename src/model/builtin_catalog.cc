// The built-in device catalog: common CPUs, GPUs and NPUs with datasheet figures.
// docs/device-catalog.md lists every entry with its sources and marks the estimates.
//
// Conventions for every entry:
//  - Peak throughput is dense (no structured sparsity). fp16_tflops is the fastest dense
//    fp16/bf16 figure on the datasheet (tensor/matrix cores where the part has them).
//  - Memory capacities that vendors print as "80 GB" of HBM/GDDR are binary (80 GiB);
//    bandwidths are decimal (GB/s = 1e9 bytes/s), as datasheets quote them.
//  - A 0 peak means "no published figure": DeviceType::PeakFlops falls back to fp32, and
//    the cost model treats a 0 fp32 peak as "cannot run this precision" (cost/roofline.h).
//  - `efficiency` is an estimate for every entry (fraction of peak a well-tuned GEMM reaches).
//  - `estimated` is true when any figure (typically idle watts or price) is an estimate;
//    `source` names what is datasheet and what is estimated.
#include <utility>
#include <vector>

#include "model/catalog.h"
#include "util/units.h"

namespace hetsched::model {
namespace {

constexpr double kGBps = 1e9;  // datasheet GB/s

struct Entry {
  const char* name;
  std::vector<std::string> aliases;
  const char* vendor;
  DeviceKind kind;
  std::vector<SoftwareStack> stacks;
  double fp32_tflops;
  double fp16_tflops;
  double int8_tops;
  double memory_gib;
  double bandwidth_gbps;
  double idle_watts;
  double peak_watts;
  double price_per_hour;
  double efficiency;
  bool estimated;
  const char* source;
};

DeviceType Make(Entry e) {
  DeviceType t;
  t.name = e.name;
  t.aliases = std::move(e.aliases);
  t.vendor = e.vendor;
  t.kind = e.kind;
  t.stacks = std::move(e.stacks);
  t.fp32_tflops = e.fp32_tflops;
  t.fp16_tflops = e.fp16_tflops;
  t.int8_tops = e.int8_tops;
  t.memory_bytes = static_cast<uint64_t>(e.memory_gib * static_cast<double>(util::kGiB));
  t.memory_bandwidth = e.bandwidth_gbps * kGBps;
  t.idle_watts = e.idle_watts;
  t.peak_watts = e.peak_watts;
  t.price_per_hour = e.price_per_hour;
  t.efficiency = e.efficiency;
  t.estimated = e.estimated;
  t.source = e.source;
  return t;
}

// Newest toolkit/runtime releases that still list each part. Kepler's last driver branch
// (R470) tops out at CUDA 11.4; CUDA 13.0 removed Maxwell, Pascal and Volta, so those stay
// on 12.9; Turing and newer run the newest CUDA 13 release.
const SoftwareStack kCudaKepler{"cuda", "11.4"};
const SoftwareStack kCudaPascalVolta{"cuda", "12.9"};
const SoftwareStack kCudaCurrent{"cuda", "13.5"};
const SoftwareStack kRocm{"rocm", "7.0"};
const SoftwareStack kCann{"cann", "8.0"};
const SoftwareStack kX86{"x86_64", ""};

// CPU sockets (memory = typical attached DRAM per socket, estimate).
std::vector<Entry> CpuEntries() {
  return {
      {"xeon-8380",
       {"icelake-8380"},
       "intel",
       DeviceKind::kCpu,
       {kX86},
       5.9,
       0,
       23.6,
       256,
       204.8,
       90,
       270,
       3.84,
       0.6,
       true,
       "Intel Xeon Platinum 8380 (ark.intel.com): 40 cores, 2.3 GHz base, 270 W TDP, "
       "8x DDR4-3200 = 204.8 GB/s. Estimates: fp32 = 40 cores x 2.3 GHz x 64 FLOP/cycle "
       "(2 AVX-512 FMA units), int8 = 4x fp32 (AVX-512 VNNI), no fp16/bf16 units; idle 90 W "
       "(~1/3 TDP); 256 GiB DRAM; price = AWS m6i on-demand per-vCPU rate x 80 vCPUs"},
      {"epyc-7763",
       {"milan-7763"},
       "amd",
       DeviceKind::kCpu,
       {kX86},
       5.0,
       0,
       0,
       256,
       204.8,
       100,
       280,
       5.53,
       0.6,
       true,
       "AMD EPYC 7763 (amd.com): 64 cores, 2.45 GHz base, 280 W TDP, 8x DDR4-3200 = "
       "204.8 GB/s. Estimates: fp32 = 64 cores x 2.45 GHz x 32 FLOP/cycle (2 AVX2 FMA "
       "units), no fp16/int8 dot-product units; idle 100 W (~1/3 TDP); 256 GiB DRAM; price "
       "= AWS m6a on-demand per-vCPU rate x 128 vCPUs"},
  };
}

// NVIDIA before Turing: the parts the newest CUDA releases dropped (kCudaKepler,
// kCudaPascalVolta).
std::vector<Entry> NvidiaKeplerToVoltaEntries() {
  return {
      {"k80",
       {"tesla-k80"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaKepler},
       4.37,
       0,
       0,
       12,
       240,
       25,
       150,
       0.45,
       0.6,
       true,
       "NVIDIA Tesla K80 datasheet, per GK210 GPU (a board holds two; clouds and Gavel "
       "count one): 4.37 TFLOPS fp32 boost, 12 GiB GDDR5, 240 GB/s, 150 W (half of the "
       "300 W board). CUDA 11.4 via the R470 driver, the last to support Kepler. Price: GCP "
       "on-demand K80. Estimate: idle 25 W"},
      {"p100",
       {"tesla-p100", "p100-16g"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaPascalVolta},
       9.3,
       18.7,
       0,
       16,
       732,
       30,
       250,
       1.46,
       0.7,
       true,
       "NVIDIA Tesla P100 PCIe 16 GB datasheet: 9.3 TFLOPS fp32, 18.7 fp16, 732 GB/s, "
       "250 W. CUDA 12.9 is the last toolkit for Pascal (removed in 13.0). Price: GCP "
       "on-demand P100. Estimate: idle 30 W"},
      {"v100-32g",
       {"v100", "tesla-v100"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaPascalVolta},
       15.7,
       125,
       0,
       32,
       900,
       40,
       300,
       2.48,
       0.7,
       true,
       "NVIDIA V100 SXM2 32 GB datasheet: 15.7 TFLOPS fp32, 125 fp16 tensor, 900 GB/s, "
       "300 W (REFERENCES.md agrees). CUDA 12.9 is the last toolkit for Volta. Price: GCP "
       "on-demand V100 (the figure Gavel-style cost studies use). Estimate: idle 40 W"},
  };
}

// NVIDIA Turing and Ampere.
std::vector<Entry> NvidiaTuringAmpereEntries() {
  return {
      {"t4",
       {"tesla-t4"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaCurrent},
       8.1,
       65,
       130,
       16,
       320,
       17,
       70,
       0.35,
       0.5,
       false,
       "NVIDIA T4 datasheet: 8.1 TFLOPS fp32, 65 fp16 tensor, 130 TOPS int8, 16 GB GDDR6, "
       "320 GB/s, 70 W; idle ~17 W measured (Kepler power exporter, REFERENCES.md). Price: "
       "GCP on-demand T4"},
      {"a100-40g",
       {"a100-sxm4-40gb"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaCurrent},
       19.5,
       312,
       624,
       40,
       1555,
       50,
       400,
       2.93,
       0.75,
       true,
       "NVIDIA A100 SXM4 40 GB datasheet: 19.5 TFLOPS fp32, 312 fp16/bf16 tensor, 624 TOPS "
       "int8, 1,555 GB/s, 400 W. Price: GCP on-demand A100 40 GB. Estimate: idle 50 W"},
      {"a100-80g",
       {"a100", "a100-sxm4-80gb", "a100-80gb"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaCurrent},
       19.5,
       312,
       624,
       80,
       2039,
       50,
       400,
       3.93,
       0.75,
       true,
       "NVIDIA A100 SXM4 80 GB datasheet: 19.5 TFLOPS fp32, 312 fp16/bf16 tensor, 624 TOPS "
       "int8, 2,039 GB/s, 400 W (REFERENCES.md agrees). Estimates: idle 50 W; price (GCP "
       "A100 80 GB on-demand, approximate)"},
  };
}

// NVIDIA Hopper and Ada Lovelace.
std::vector<Entry> NvidiaHopperAdaEntries() {
  return {
      {"h100-80g",
       {"h100", "h100-sxm", "h100-80gb"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaCurrent},
       67,
       989,
       1979,
       80,
       3350,
       70,
       700,
       6.88,
       0.7,
       true,
       "NVIDIA H100 SXM5 datasheet: 67 TFLOPS fp32, 989 fp16/bf16 tensor, 1,979 TOPS int8 "
       "(dense), 80 GB HBM3, 3.35 TB/s, 700 W (REFERENCES.md agrees). Estimates: idle 70 W "
       "(10% of TDP); price = AWS p5.48xlarge on-demand / 8 after the 2025 price cut"},
      {"l40s",
       {},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaCurrent},
       91.6,
       362,
       733,
       48,
       864,
       35,
       350,
       1.86,
       0.6,
       true,
       "NVIDIA L40S datasheet: 91.6 TFLOPS fp32, 362 fp16/bf16 tensor, 733 TOPS int8 "
       "(dense), 48 GB GDDR6, 864 GB/s, 350 W (REFERENCES.md agrees). Estimates: idle 35 W; "
       "price = AWS g6e.xlarge on-demand (1 GPU)"},
      {"rtx-4090",
       {"4090", "geforce-rtx-4090"},
       "nvidia",
       DeviceKind::kGpu,
       {kCudaCurrent},
       82.6,
       165.2,
       660.6,
       24,
       1008,
       25,
       450,
       0.69,
       0.7,
       true,
       "NVIDIA Ada Lovelace whitepaper (RTX 4090): 82.6 TFLOPS fp32, 165.2 fp16/bf16 tensor "
       "with fp32 accumulate (330 with fp16 accumulate), 660.6 TOPS int8, 24 GB GDDR6X, "
       "1,008 GB/s, 450 W. Estimates: idle 25 W; price (community GPU clouds, no "
       "hyperscaler sells it)"},
  };
}

// AMD Instinct.
std::vector<Entry> AmdEntries() {
  return {
      {"mi100",
       {"instinct-mi100"},
       "amd",
       DeviceKind::kGpu,
       {kRocm},
       23.1,
       184.6,
       184.6,
       32,
       1228.8,
       35,
       300,
       1.00,
       0.6,
       true,
       "AMD Instinct MI100 datasheet: 23.1 TFLOPS fp32 vector (46.1 matrix), 184.6 fp16 "
       "matrix (bf16 92.3), 184.6 TOPS int8, 32 GB HBM2, 1.2288 TB/s, 300 W. Estimates: idle "
       "35 W; price (no on-demand cloud offer)"},
      {"mi250x",
       {"instinct-mi250x"},
       "amd",
       DeviceKind::kGpu,
       {kRocm},
       47.9,
       383,
       383,
       128,
       3276.8,
       90,
       560,
       2.00,
       0.55,
       true,
       "AMD Instinct MI250X datasheet, one OAM module (two GCDs; the OS shows 2 x 64 GB): "
       "47.9 TFLOPS fp32 vector (95.7 matrix), 383 fp16/bf16 matrix, 383 TOPS int8, 128 GB "
       "HBM2e, 3.2768 TB/s, 560 W peak (500 W air-cooled; REFERENCES.md 500-560 W). "
       "Estimates: idle 90 W; price (no on-demand cloud offer)"},
      {"mi300x",
       {"instinct-mi300x"},
       "amd",
       DeviceKind::kGpu,
       {kRocm},
       81.7,
       1307.4,
       2614.9,
       192,
       5300,
       120,
       750,
       6.00,
       0.5,
       true,
       "AMD Instinct MI300X datasheet: 81.7 TFLOPS fp32 vector (163.4 matrix), 1,307.4 "
       "fp16/bf16 matrix, 2,614.9 TOPS int8 (dense), 192 GB HBM3, 5.3 TB/s, 750 W "
       "(REFERENCES.md agrees). Estimates: idle 120 W; price = Azure ND MI300X v5 on-demand "
       "/ 8, approximate"},
  };
}

// Huawei Ascend.
std::vector<Entry> AscendEntries() {
  return {
      {"ascend-910b",
       {"910b"},
       "huawei",
       DeviceKind::kNpu,
       {kCann},
       0,
       320,
       640,
       64,
       1600,
       45,
       310,
       2.00,
       0.55,
       true,
       "Huawei Ascend 910B: ~320 TFLOPS fp16 (secondary sources, unverified; some list "
       "280), 64 GB HBM2e, ~310 W (REFERENCES.md). Estimates: int8 = 2x fp16; bandwidth "
       "1.6 TB/s (sources conflict); idle 45 W; price (no public USD on-demand price). No "
       "published dense fp32 figure: 0 (fp32 work is not costed here; override if measured)"},
      {"ascend-310p",
       {"310p", "atlas-300i-pro"},
       "huawei",
       DeviceKind::kNpu,
       {kCann},
       0,
       70,
       140,
       24,
       204.8,
       12,
       72,
       0.30,
       0.5,
       true,
       "Huawei Atlas 300I Pro inference card (one Ascend 310P): 70 TFLOPS fp16, 140 TOPS "
       "int8, 24 GB LPDDR4X, 204.8 GB/s, 72 W max (Huawei product page). Estimates: idle "
       "12 W; price (no public USD on-demand price). No published fp32 figure: 0"},
  };
}

DeviceCatalog BuildCatalog() {
  DeviceCatalog catalog;
  for (auto family : {CpuEntries, NvidiaKeplerToVoltaEntries, NvidiaTuringAmpereEntries,
                      NvidiaHopperAdaEntries, AmdEntries, AscendEntries}) {
    for (Entry& e : family()) catalog.Upsert(Make(std::move(e)));
  }
  return catalog;
}

}  // namespace

const DeviceCatalog& DeviceCatalog::BuiltIn() {
  static const DeviceCatalog catalog = BuildCatalog();
  return catalog;
}

}  // namespace hetsched::model
