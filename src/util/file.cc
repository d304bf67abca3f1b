#include "util/file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hetsched::util {

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Status::NotFound(fmt::format("{}: no such file", path));
  }
  if (std::filesystem::is_directory(status)) {
    return Status::InvalidArgument(fmt::format("{}: is a directory, expected a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (std::filesystem::is_regular_file(status)) {
    uint64_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxInputFileBytes) {
      return Status::InvalidArgument(fmt::format(
          "{}: {} bytes is larger than the {} byte input limit", path, size, kMaxInputFileBytes));
    }
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::IoError(fmt::format("{}: read failed", path));
  return out.str();
}

Status WriteFile(const std::string& path, const std::string& contents) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  out << contents;
  out.close();
  if (!out) return Status::IoError(fmt::format("{}: write failed", path));
  return Status::Ok();
}

Status ReplaceFile(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  RETURN_IF_ERROR(WriteFile(tmp, contents));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError(fmt::format("{}: cannot replace: {}", path, std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace hetsched::util
