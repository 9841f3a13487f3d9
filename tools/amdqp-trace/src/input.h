// Opening inputs: files or capture folders, format detection, streaming lines
// into the parsers with bounded buffers and an optional progress indicator.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "parser.h"

namespace amdqp {

struct InputOptions {
    std::optional<Format> force_format;
    bool keep_going = false; // skip malformed lines (warn) instead of failing
    bool progress = false;   // draw progress on stderr
    bool strict = false;     // a bad or unrecognised file in a folder is fatal
};

struct InputStats {
    std::string path;
    Format format = Format::Unknown;
    uint64_t bytes = 0;
    uint64_t lines = 0;
    uint64_t bad_lines = 0;
};

// One file of the input as the census lists it: used, or skipped with why.
struct InputEntry {
    std::string path;
    Format format = Format::Unknown; // Unknown: not recognised (or not readable)
    bool used = false;
    std::string reason; // why it was skipped; empty when used
};

class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Longest text line accepted; longer lines are an error (JSON is read in chunks).
constexpr size_t kMaxLine = 1 << 20;

// Parse one file with an already chosen format. Throws InputError ("file:line: ...").
InputStats parse_file(const std::string &path, Format f, Sink &sink, const InputOptions &opt);

// Expand PATHs (folders: their files, sorted, recursively, manifest skipped) and
// parse each; "-" is standard input. Files of unknown format or with errors inside
// folders are skipped with a note (fatal with opt.strict); named explicitly they
// are an error. inventory, when given, gets every file in order: used or skipped.
std::vector<InputStats> parse_paths(const std::vector<std::string> &paths, Sink &sink,
                                    const InputOptions &opt,
                                    std::vector<InputEntry> *inventory = nullptr);

// Feed a memory buffer through a parser as the file reader would (tests, fuzzers).
void parse_buffer(std::string_view data, Format f, Sink &sink);

} // namespace amdqp
