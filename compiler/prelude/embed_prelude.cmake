# Turns prelude.relay into a C++ source holding its text, so the prelude is
# built into the binary and still edited (and checked) as Relay.
file(READ "${INPUT}" PRELUDE_TEXT)
file(WRITE "${OUTPUT}"
  "// Generated from compiler/prelude/prelude.relay by embed_prelude.cmake; do not edit.\n"
  "#include <string_view>\n"
  "namespace relay::compiler {\n"
  "extern const std::string_view kPreludeText;\n"
  "const std::string_view kPreludeText = R\"relay_prelude(${PRELUDE_TEXT})relay_prelude\";\n"
  "}  // namespace relay::compiler\n")
