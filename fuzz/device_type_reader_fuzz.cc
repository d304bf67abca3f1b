// libFuzzer target for the device-type reader: any bytes, read as a `device_types:` document,
// must yield a valid catalog or an InvalidArgument with a message. Never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/io/device_type_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hetsched::util::Result<hetsched::model::DeviceCatalog> catalog =
      hetsched::model::io::ParseDeviceTypesDocument(text, "fuzz.yaml");
  if (!catalog.ok()) {
    // Errors must say what is wrong; an empty message would leave the user guessing.
    if (catalog.status().message().empty()) std::abort();
    return 0;
  }
  // Whatever the reader accepts must satisfy the invariants it promises.
  for (const hetsched::model::DeviceType& t : catalog->types()) {
    const bool valid = !t.name.empty() && !t.stacks.empty() && t.peak_watts > 0 &&
                       t.peak_watts >= t.idle_watts && t.efficiency > 0 && t.efficiency <= 1 &&
                       t.memory_bytes > 0 && t.memory_bandwidth > 0 &&
                       (t.fp32_tflops > 0 || t.fp16_tflops > 0 || t.int8_tops > 0);
    if (!valid) std::abort();
    if (catalog->Find(t.name) != &t) std::abort();
  }
  return 0;
}
