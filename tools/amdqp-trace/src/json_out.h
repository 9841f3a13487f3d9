// JSON output: documents are built with nlohmann-json; these write them in the
// two layouts the tool uses (one Perfetto event per line; the census with one
// row per line, readable and greppable).
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace amdqp {

// Members keep the order they were added in (field order is part of the output).
using Json = nlohmann::ordered_json;

// Compact, no spaces, ASCII only: raw capture bytes need not be UTF-8, invalid
// sequences become U+FFFD instead of an exception.
std::string json_dump(const Json &j);

// An object whose arrays have one element per line:
// {\n  "key": [\n    {"a": 1, "b": 2},\n    ...\n  ],\n  "other": 3\n}
void write_json_rows(std::ostream &os, const Json &doc);

} // namespace amdqp
