// SPDX-License-Identifier: MIT
// Tools libraries, loaded the way ROCr loads them: HSA_TOOLS_LIB is a
// space-separated list of shared objects, each dlopen'ed at the first
// hsa_init, in order, and handed the live API table through its exported
//   bool OnLoad(HsaApiTable* table, uint64_t runtime_version,
//               uint64_t failed_tool_count, const char* const* failed_tool_names);
// A library without OnLoad, or whose OnLoad returns false, counts as failed
// and is closed again. At the last hsa_shut_down each loaded tool's
// OnUnload() runs, in reverse order, before the table is reset and the
// libraries are closed. HSA_TOOLS_REPORT_LOAD_FAILURE=1 reports failures on
// stderr.
#pragma once

#include <string>
#include <vector>

struct HsaApiTable;

namespace hsasim {

class Tools {
  public:
    Tools() = default;
    Tools(const Tools&) = delete;
    Tools& operator=(const Tools&) = delete;
    ~Tools() { close(); }

    void load(HsaApiTable* table);
    void unload_notify();  // OnUnload of each tool
    void close();          // dlclose, after the table stopped pointing into them

  private:
    std::vector<void*> handles_;
    std::vector<std::string> failed_;
};

}  // namespace hsasim
