#include "cli/data_dir.h"

#include <cstdlib>

namespace hetsched::cli {

std::string DataDir() {
  const char* env = std::getenv("HETSCHED_DATA_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return HETSCHED_DEFAULT_DATA_DIR;
}

std::string DataPath(std::string_view relative) { return DataDir() + "/" + std::string(relative); }

std::string ExamplesDir() {
  const char* env = std::getenv("HETSCHED_EXAMPLES_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return HETSCHED_DEFAULT_EXAMPLES_DIR;
}

std::string ExamplePath(std::string_view relative) {
  return ExamplesDir() + "/" + std::string(relative);
}

}  // namespace hetsched::cli
