#include "util/source_location.h"

namespace hetsched::util {

std::string FormatInputError(const SourceLocation& at, const std::string& field,
                             const std::string& problem, const std::string& expected) {
  std::string out = at.file.empty() ? std::string("<input>") : at.file;
  if (at.line > 0) {
    out += ":" + std::to_string(at.line);
    if (at.column > 0) out += ":" + std::to_string(at.column);
  }
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += problem;
  if (!expected.empty()) out += " (expected " + expected + ")";
  return out;
}

Status InputError(const SourceLocation& at, const std::string& field, const std::string& problem,
                  const std::string& expected) {
  return Status::InvalidArgument(FormatInputError(at, field, problem, expected));
}

}  // namespace hetsched::util
