#include "model/software_stack.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace hetsched::model {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

bool ValidVersion(std::string_view version) {
  if (version.empty() || version.front() == '.' || version.back() == '.') return false;
  bool last_dot = false;
  for (char c : version) {
    if (c == '.') {
      if (last_dot) return false;
      last_dot = true;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      last_dot = false;
    } else {
      return false;
    }
  }
  return true;
}

constexpr const char* kStackExpected = "a stack like 'cuda', 'cuda>=11.8' or 'rocm 6.0'";

}  // namespace

util::Result<StackRequirement> ParseStackRequirement(std::string_view text) {
  std::string s = Trim(text);
  StackRequirement req;
  size_t op = s.find(">=");
  if (op != std::string::npos) {
    req.name = Lower(Trim(std::string_view(s).substr(0, op)));
    req.min_version = Trim(std::string_view(s).substr(op + 2));
  } else {
    size_t sep = s.find_first_of(" =");
    req.name = Lower(Trim(std::string_view(s).substr(0, sep)));
    if (sep != std::string::npos) req.min_version = Trim(std::string_view(s).substr(sep + 1));
  }
  if (!ValidName(req.name)) {
    return util::Status::InvalidArgument(fmt::format("'{}' is not {}", s, kStackExpected));
  }
  if (!req.min_version.empty() && !ValidVersion(req.min_version)) {
    return util::Status::InvalidArgument(fmt::format(
        "'{}' has version '{}' (expected dotted numbers like 12.2)", s, req.min_version));
  }
  return req;
}

util::Result<SoftwareStack> ParseSoftwareStack(std::string_view text) {
  if (Trim(text).find(">=") != std::string::npos) {
    return util::Status::InvalidArgument(fmt::format(
        "'{}': a device runs one version of a stack (expected 'cuda 12.2', not a range)",
        Trim(text)));
  }
  ASSIGN_OR_RETURN(StackRequirement req, ParseStackRequirement(text));
  return SoftwareStack{req.name, req.min_version};
}

int CompareVersions(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    unsigned long long x = 0, y = 0;
    while (i < a.size() && a[i] != '.') x = std::min(x * 10 + (a[i++] - '0'), 1ull << 40);
    while (j < b.size() && b[j] != '.') y = std::min(y * 10 + (b[j++] - '0'), 1ull << 40);
    if (x != y) return x < y ? -1 : 1;
    if (i < a.size()) ++i;
    if (j < b.size()) ++j;
  }
  return 0;
}

bool Satisfies(const SoftwareStack& have, const StackRequirement& need) {
  if (have.name != need.name) return false;
  if (need.min_version.empty()) return true;
  if (have.version.empty()) return false;
  return CompareVersions(have.version, need.min_version) >= 0;
}

bool AnySatisfied(const std::vector<SoftwareStack>& have,
                  const std::vector<StackRequirement>& need) {
  for (const StackRequirement& n : need) {
    for (const SoftwareStack& h : have) {
      if (Satisfies(h, n)) return true;
    }
  }
  return false;
}

std::string ToString(const SoftwareStack& stack) {
  return stack.version.empty() ? stack.name : stack.name + " " + stack.version;
}

std::string ToString(const StackRequirement& requirement) {
  return requirement.min_version.empty() ? requirement.name
                                         : requirement.name + ">=" + requirement.min_version;
}

}  // namespace hetsched::model
