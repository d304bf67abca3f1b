// Device types from YAML: the `device_types:` list of a cluster file or of a types file, added
// to a DeviceCatalog or overriding entries of it. Format and examples: docs/device-catalog.md.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/catalog.h"
#include "model/io/document.h"
#include "util/status.h"

namespace hetsched::model::io {

// More entries than this in one list are rejected before any is read (each upsert reindexes the
// catalog, so a huge list would cost quadratic time).
inline constexpr size_t kMaxDeviceTypesPerList = 10'000;

// The field names a device-type entry may have, in documentation order.
const std::vector<std::string>& DeviceTypeFieldNames();

// Reads `list`, a list of device-type maps from a YAML document (ParseYamlDocument), and
// upserts each into `catalog`.
//  - An entry whose `name` is already in the catalog overrides it: fields it gives replace the
//    old values, the rest are kept, and the type keeps its id.
//  - A new name must give vendor, kind, stacks, memory, memory_bandwidth, idle_power,
//    peak_power and at least one of fp32_tflops / fp16_tflops / int8_tops.
//  - A null `list` (an empty `device_types:`) adds nothing.
// Errors read `file:line:column: device_types[i].field: problem (expected ...)`, with 1-based
// line and column from the document. On error `catalog` is left unchanged.
util::Status ParseDeviceTypesYaml(const DocValue& list, const std::string& file_name,
                                  DeviceCatalog& catalog);

// A types document: a map whose only key is `device_types:`. Returns the built-in catalog with
// the document's types applied. `file_name` is used in messages only.
util::Result<DeviceCatalog> ParseDeviceTypesDocument(std::string_view text,
                                                     const std::string& file_name);

// Reads `path` and applies it as ParseDeviceTypesDocument does.
util::Result<DeviceCatalog> LoadDeviceTypesFile(const std::string& path);

}  // namespace hetsched::model::io
