// Device probe: which accelerators this machine has, as the vendors' own tools report them
// (nvidia-smi, rocm-smi, npu-smi), so the local backend's node can be described.
//
// The parsers are pure and take the tools' recorded output; ProbeDevices runs whichever tools
// exist. A machine without any of them simply has no accelerators: that is not an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace hetsched::svc {

struct ProbedDevice {
  std::string vendor;         // "nvidia", "amd" or "huawei", as LaunchSpec::vendor names them
  int32_t index = 0;          // the number the vendor's *_VISIBLE_DEVICES variable takes
  std::string model;          // as the tool names it, e.g. "NVIDIA A100-SXM4-80GB", "910B3"
  uint64_t memory_bytes = 0;  // device memory; 0 where the tool does not report it
  std::string uuid;           // "" where the tool gives none (npu-smi info never does)
};

// Output of `nvidia-smi --query-gpu=index,name,memory.total,uuid --format=csv,noheader,nounits`
// (memory in MiB). "[N/A]" memory (unified-memory parts such as the GB10) gives 0. Devices in
// the order listed.
util::Result<std::vector<ProbedDevice>> ParseNvidiaSmiCsv(std::string_view text);

// Output of `rocm-smi --showproductname --showmeminfo vram --showuniqueid --json`: an object of
// "card<N>" objects with "Card Series" (older versions: "Card series") and
// "VRAM Total Memory (B)"; other keys are ignored, and so are lines before the JSON (warnings).
// The index is N. Devices by index.
util::Result<std::vector<ProbedDevice>> ParseRocmSmiJson(std::string_view text);

// The device table of `npu-smi info`: two rows per chip, "| <NPU> <name> | <health> | ... |"
// then "| <chip> [<device>|<phy-id>] | <bus id> | <aicore> <used> / <total> ... |". The index
// is the Device or Phy-ID column where the table has one (310P, Atlas A3), else the NPU id
// (910B: one chip per NPU); on a standard install these are the logical ids
// ASCEND_RT_VISIBLE_DEVICES takes (`npu-smi info -m` shows the mapping). Memory is the
// HBM-Usage(MB) total where the table has that column, else Memory-Usage(MB)'s. The process
// table that follows is ignored. Devices in the order listed.
util::Result<std::vector<ProbedDevice>> ParseNpuSmiInfo(std::string_view text);

// The parsers' errors are kInvalidArgument and say where (line number, or the card's key for
// JSON) and what was expected.

struct ProbeOptions {
  // Directories searched for the tools, ':'-separated; empty: the PATH environment variable.
  std::string search_path;
  // How long one tool may run; it is killed (with its process group) after that.
  double timeout_s = 10;
};

struct ProbeReport {
  std::vector<ProbedDevice> devices;  // nvidia-smi's, then rocm-smi's, then npu-smi's
  // One line per tool, e.g. "nvidia-smi: absent", "rocm-smi: found 2 devices (/opt/rocm/bin/
  // rocm-smi)", "npu-smi: failed: exit status 1: ...". A tool that fails adds no devices.
  std::vector<std::string> notes;
  // The tools that exist but reported nothing usable (their notes say why), e.g. "nvidia-smi".
  std::vector<std::string> failed;
};

// Runs each tool that exists (stdout captured up to 4 MiB, stderr discarded) and parses what it
// printed. Never fails as a whole; each tool's outcome is in the notes.
ProbeReport ProbeDevices(const ProbeOptions& options = {});

}  // namespace hetsched::svc
