// SPDX-License-Identifier: MIT
//
// `amdqpctl run`: the tagging layer's activation contract (environment
// variables, the preload library in the loaders' lists), worked out apart
// from the exec so that it can be tested.
#ifndef AMDQPCTL_RUN_PLAN_HPP
#define AMDQPCTL_RUN_PLAN_HPP

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace amdqpctl {

using EnvLookup = std::function<const char*(const char* name)>;

struct RunOptions {
    std::string priority = "normal";
    std::string group;
    bool stream_priority = false;
    std::vector<std::string> command;
};

// Where libamdqp-preload.so may be, in the order they are tried.
struct PreloadSearch {
    std::string exe_dir;          // folder of the running amdqpctl
    std::string build_dir;        // amdqpctl's build folder ("" when unknown)
    std::string build_preload;    // the preload library of that build
    std::string libdir_rel;       // CMAKE_INSTALL_LIBDIR ("lib", "lib/x86_64-linux-gnu")
    std::string install_preload;  // ${libdir}/amdqp/libamdqp-preload.so, absolute
};

struct PreloadFound {
    std::string path;     // empty: none usable
    std::string problem;  // why none (one line), when path is empty
    // libamdqp-rocprofiler.so next to it (rocprofiler-sdk's entry point,
    // kept out of the LD_PRELOAD library), empty if not there.
    std::string rocprofiler;
};

// $AMDQP_PRELOAD_LIB; else, when amdqpctl runs from its build folder, that
// build's library; else the installed one (next to amdqpctl's prefix, then
// the configured libdir). @readable tells whether a file can be loaded.
PreloadFound find_preload(const EnvLookup& env, const PreloadSearch& where,
                          const std::function<bool(const std::string&)>& readable);

struct RunPlan {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // to set
    std::string warning;                                   // one line for stderr, or empty
};

// Throws UsageError for a bad level or group, or no command.
RunPlan plan_run(const RunOptions& opt, const EnvLookup& env, const PreloadFound& preload);

// Adds @item to a @sep separated list unless it is there; in front or at
// the end.
std::string list_with(const char* list, const std::string& item, char sep, bool front);

}  // namespace amdqpctl

#endif  // AMDQPCTL_RUN_PLAN_HPP
