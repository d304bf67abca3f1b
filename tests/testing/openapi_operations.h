// The operations an OpenAPI document lists, for tests that compare them with the routes a
// server answers.
#pragma once

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

namespace hetsched::testing {

// {METHOD, path} of each operation under the document's `paths`, the method in upper case
// ("POST", "/v1/jobs"); a path's other keys (parameters) are not operations.
inline std::set<std::pair<std::string, std::string>> OpenApiOperations(const nlohmann::json& doc) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [key, operation] : item.items()) {
      if (key == "parameters") continue;
      std::string method = key;
      for (char& ch : method) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      out.insert({method, path});
    }
  }
  return out;
}

}  // namespace hetsched::testing
