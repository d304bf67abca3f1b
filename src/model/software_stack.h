// Software stacks: what a device runs (cuda 12.2, rocm 6.0, cann 8.0, x86_64) and what a job
// needs ("cuda>=11.8"). A job may list several; it runs on a device that satisfies any one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace hetsched::model {

struct SoftwareStack {
  std::string name;     // lower case: cuda, rocm, cann, x86_64, aarch64, ...
  std::string version;  // dotted numbers, may be empty ("x86_64")
};

struct StackRequirement {
  std::string name;
  std::string min_version;  // empty: any version
};

// Parses "cuda", "cuda>=11.8", "cuda 12.2" / "cuda=12.2" (as a device stack).
util::Result<StackRequirement> ParseStackRequirement(std::string_view text);
util::Result<SoftwareStack> ParseSoftwareStack(std::string_view text);

// Compares dotted versions numerically: "11.10" > "11.8". Missing parts count as 0.
int CompareVersions(std::string_view a, std::string_view b);

bool Satisfies(const SoftwareStack& have, const StackRequirement& need);
// True when any requirement is met by any of the stacks.
bool AnySatisfied(const std::vector<SoftwareStack>& have,
                  const std::vector<StackRequirement>& need);

std::string ToString(const SoftwareStack& stack);           // "cuda 12.2"
std::string ToString(const StackRequirement& requirement);  // "cuda>=11.8"

}  // namespace hetsched::model
