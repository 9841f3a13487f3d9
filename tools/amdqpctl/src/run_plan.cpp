// SPDX-License-Identifier: MIT
#include "run_plan.hpp"

#include <algorithm>
#include <cctype>

#include <amdqp/activity.h>
#include <amdqp/amdqp.hpp>

#include "exit_status.hpp"

namespace amdqpctl {

namespace {

bool quiet(const EnvLookup& env) {
    const char* q = env("AMDQP_QUIET");
    return q && *q && std::string_view(q) != "0";
}

}  // namespace

namespace {

PreloadFound found(const std::string& path,
                   const std::function<bool(const std::string&)>& readable) {
    const auto slash = path.rfind('/');
    const std::string sibling =
        (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) +
        "libamdqp-rocprofiler.so";
    return {path, {}, readable(sibling) ? sibling : std::string()};
}

}  // namespace

PreloadFound find_preload(const EnvLookup& env, const PreloadSearch& where,
                          const std::function<bool(const std::string&)>& readable) {
    if (const char* forced = env("AMDQP_PRELOAD_LIB"); forced && *forced) {
        if (readable(forced))
            return found(forced, readable);
        return {
            {}, std::string("$AMDQP_PRELOAD_LIB names ") + forced + ", which cannot be read", {}};
    }
    std::vector<std::string> candidates;
    // A build tree's amdqpctl goes with its own build's library, not with
    // an older one installed on the machine.
    if (!where.build_dir.empty() && where.exe_dir == where.build_dir &&
        !where.build_preload.empty())
        candidates.push_back(where.build_preload);
    if (!where.exe_dir.empty() && !where.libdir_rel.empty())
        candidates.push_back(where.exe_dir + "/../" + where.libdir_rel +
                             "/amdqp/libamdqp-preload.so");
    if (!where.install_preload.empty())
        candidates.push_back(where.install_preload);
    for (const auto& c : candidates)
        if (readable(c))
            return found(c, readable);
    std::string tried;
    for (const auto& c : candidates)
        tried += (tried.empty() ? "" : ", ") + c;
    return {{},
            "libamdqp-preload.so not found (looked at " + (tried.empty() ? "nothing" : tried) +
                "; set AMDQP_PRELOAD_LIB)",
            {}};
}

std::string list_with(const char* list, const std::string& item, char sep, bool front) {
    const std::string cur = list ? list : "";
    // Already there: keep the list as the user set it.
    std::size_t start = 0;
    while (start <= cur.size()) {
        std::size_t end = cur.find(sep, start);
        if (end == std::string::npos)
            end = cur.size();
        if (cur.compare(start, end - start, item) == 0 && end - start == item.size())
            return cur;
        start = end + 1;
    }
    if (cur.empty())
        return item;
    return front ? item + sep + cur : cur + sep + item;
}

RunPlan plan_run(const RunOptions& opt, const EnvLookup& env, const PreloadFound& preload) {
    auto level = amdqp::try_parse_priority(opt.priority);
    if (!level)
        throw UsageError("unknown priority '" + opt.priority +
                         "': use high (12), normal (7), low (2) or a number 0..15 (15 highest)");
    if (opt.group.size() >= AMDQP_ACT_GROUP_LEN ||
        std::any_of(opt.group.begin(), opt.group.end(),
                    [](unsigned char c) { return !std::isgraph(c); }))
        throw UsageError("bad group name '" + opt.group + "': at most " +
                         std::to_string(AMDQP_ACT_GROUP_LEN - 1) +
                         " printable characters, no spaces");
    if (opt.command.empty())
        throw UsageError("run: no command given (amdqpctl run --priority LEVEL -- COMMAND...)");

    RunPlan plan;
    plan.argv = opt.command;
    plan.env.emplace_back("AMDQP_PRIORITY", amdqp::priority_name(*level));
    if (!opt.group.empty())
        plan.env.emplace_back("AMDQP_GROUP", opt.group);
    if (opt.stream_priority)
        plan.env.emplace_back("AMDQP_STREAM_PRIORITY", "1");
    if (preload.path.empty()) {
        // Nothing else could tell the user that the command runs untagged:
        // the tagging layer, which warns about everything else, is absent.
        if (!quiet(env))
            plan.warning = "amdqpctl: warning: " + preload.problem + "; running " +
                           opt.command.front() + " untagged";
        return plan;
    }
    // LD_PRELOAD: first, so that it is there before the HSA runtime is.
    // HSA_TOOLS_LIB (ROCr, space separated): appended, after tools the user
    // chose.
    plan.env.emplace_back("LD_PRELOAD", list_with(env("LD_PRELOAD"), preload.path, ':', true));
    plan.env.emplace_back("HSA_TOOLS_LIB",
                          list_with(env("HSA_TOOLS_LIB"), preload.path, ' ', false));
    // ROCr (ROCm 6 and later) skips HSA_TOOLS_LIB once a rocprofiler-sdk
    // tool registered, unless told otherwise; a user's own setting stands.
    if (!env("HSA_TOOLS_ROCPROFILER_V1_TOOLS"))
        plan.env.emplace_back("HSA_TOOLS_ROCPROFILER_V1_TOOLS", "1");
    // rocprofiler-sdk's entry library only where ROCP_TOOL_LIBRARIES is in
    // use already (a profiler runs, so rocprofiler-sdk is installed): a
    // non-empty list makes rocprofiler-register load the SDK, and abort the
    // process where it is missing.
    const char* rocp = env("ROCP_TOOL_LIBRARIES");
    if (!preload.rocprofiler.empty() && rocp && *rocp)
        plan.env.emplace_back("ROCP_TOOL_LIBRARIES",
                              list_with(rocp, preload.rocprofiler, ':', false));
    return plan;
}

}  // namespace amdqpctl
