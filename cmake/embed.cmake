# Turns INPUT into a C++ source defining the string_view hetsched::svc::embedded::NAME, so the
# daemon serves its dashboard and OpenAPI document from the binary alone.
# Usage: cmake -DINPUT=file -DOUTPUT=file.cc -DNAME=kName -P embed.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
file(WRITE "${OUTPUT}"
  "// Generated from ${INPUT} by cmake/embed.cmake; do not edit.\n"
  "#include \"daemon/api/embedded.h\"\n"
  "namespace hetsched::svc::embedded {\n"
  "namespace {\n"
  "const char kData[] = {${bytes} 0};\n"
  "}  // namespace\n"
  "const std::string_view ${NAME}(kData, sizeof(kData) - 1);\n"
  "}  // namespace hetsched::svc::embedded\n")
