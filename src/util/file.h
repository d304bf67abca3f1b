// Reading whole input files with a clear error when the OS refuses or the file is too big.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace hetsched::util {

// Inputs larger than this are rejected rather than read into memory (1 GiB).
inline constexpr uint64_t kMaxInputFileBytes = 1ull << 30;

// The whole file as bytes. NotFound / IoError name the path and the OS reason.
Result<std::string> ReadFile(const std::string& path);

// Writes `contents` to `path`, creating parent directories.
Status WriteFile(const std::string& path, const std::string& contents);

// Writes `contents` to PATH.tmp and renames it over `path`, so that a reader sees the old file
// or the new one, never a part.
Status ReplaceFile(const std::string& path, const std::string& contents);

}  // namespace hetsched::util
