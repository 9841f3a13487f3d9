// Renderers of an Analysis: census (text / JSON) and the full report.
#pragma once
#include <ostream>
#include <vector>

#include "census.h"
#include "input.h"

namespace amdqp {

// One row of the census' process list, merged over all sources.
struct ProcessRow {
    int64_t pid = 0;
    std::string gpu_id;
    uint32_t queues = 0;
    uint32_t xccs = 0; // MQDs per queue (XCC instances the queue spans); 0 unknown
    std::string source;
    uint64_t submissions = 0;
    uint32_t seen = 0;           // distinct queues over the capture (queues: most live at once)
    uint32_t before_capture = 0; // of those, created before the capture started
    std::vector<uint64_t> before_ids;
};

std::vector<ProcessRow> process_rows(const Analysis &a);
// inventory: the files read, used or skipped (parse_paths); listed when given.
void write_census_text(std::ostream &os, const Analysis &a,
                       const std::vector<InputEntry> *inventory = nullptr);
void write_census_json(std::ostream &os, const Analysis &a,
                       const std::vector<InputEntry> *inventory = nullptr);
void write_report(std::ostream &os, const Analysis &a, const std::vector<InputStats> &inputs,
                  const std::vector<InputEntry> *inventory = nullptr);

} // namespace amdqp
