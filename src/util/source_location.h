// Where in an input file something is, and the one error format every reader uses:
//   file:line:column: path.to.field: problem (expected ...)
#pragma once

#include <string>

#include "util/status.h"

namespace hetsched::util {

struct SourceLocation {
  std::string file;  // as the user named it; "<string>" for in-memory input
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

// "file:line:column: field: problem (expected ...)". Empty `field` or `expected` are omitted.
std::string FormatInputError(const SourceLocation& at, const std::string& field,
                             const std::string& problem, const std::string& expected = "");

// The same message as an InvalidArgument Status.
Status InputError(const SourceLocation& at, const std::string& field, const std::string& problem,
                  const std::string& expected = "");

}  // namespace hetsched::util
