// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "exit_status.hpp"
#include "run_plan.hpp"

namespace amdqpctl {
namespace {

struct Env {
    std::map<std::string, std::string> vars;
    EnvLookup lookup() const {
        return [this](const char* name) -> const char* {
            auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    }
};

std::map<std::string, std::string> as_map(const RunPlan& p) {
    return {p.env.begin(), p.env.end()};
}

const PreloadFound preload{
    "/opt/amdqp/lib/amdqp/libamdqp-preload.so", {}, "/opt/amdqp/lib/amdqp/libamdqp-rocprofiler.so"};

TEST(RunPlan, SetsTheActivationContract) {
    Env env;
    RunOptions opt;
    opt.priority = "HIGH";
    opt.group = "tp0";
    opt.command = {"python3", "serve.py"};
    auto plan = plan_run(opt, env.lookup(), preload);
    auto vars = as_map(plan);
    EXPECT_EQ(vars["AMDQP_PRIORITY"], "high");
    EXPECT_EQ(vars["AMDQP_GROUP"], "tp0");
    EXPECT_EQ(vars.count("AMDQP_STREAM_PRIORITY"), 0u);
    EXPECT_EQ(vars["LD_PRELOAD"], preload.path);
    EXPECT_EQ(vars["HSA_TOOLS_LIB"], preload.path);
    EXPECT_EQ(vars["HSA_TOOLS_ROCPROFILER_V1_TOOLS"], "1");
    // Not started: a non-empty list makes rocprofiler-register load
    // rocprofiler-sdk, and abort the process where it is not installed.
    EXPECT_EQ(vars.count("ROCP_TOOL_LIBRARIES"), 0u);
    EXPECT_EQ(plan.argv, opt.command);
    EXPECT_TRUE(plan.warning.empty());
}

TEST(RunPlan, NumbersStayNumbers) {
    Env env;
    RunOptions opt;
    opt.priority = "9";
    opt.stream_priority = true;
    opt.command = {"true"};
    auto vars = as_map(plan_run(opt, env.lookup(), preload));
    EXPECT_EQ(vars["AMDQP_PRIORITY"], "9");
    EXPECT_EQ(vars["AMDQP_STREAM_PRIORITY"], "1");
}

TEST(RunPlan, KeepsWhatTheUserPreloads) {
    Env env;
    env.vars = {{"LD_PRELOAD", "/a.so:/b.so"},
                {"HSA_TOOLS_LIB", "libtool1.so libtool2.so"},
                {"ROCP_TOOL_LIBRARIES", "/p.so"},
                {"HSA_TOOLS_ROCPROFILER_V1_TOOLS", "0"}};
    RunOptions opt;
    opt.command = {"true"};
    auto vars = as_map(plan_run(opt, env.lookup(), preload));
    // In front for the loader; after the user's tools for the runtimes, the
    // rocprofiler-sdk entry (not the preload library) with a profiler's.
    EXPECT_EQ(vars["LD_PRELOAD"], preload.path + ":/a.so:/b.so");
    EXPECT_EQ(vars["HSA_TOOLS_LIB"], "libtool1.so libtool2.so " + preload.path);
    EXPECT_EQ(vars["ROCP_TOOL_LIBRARIES"], "/p.so:" + preload.rocprofiler);
    EXPECT_EQ(vars.count("HSA_TOOLS_ROCPROFILER_V1_TOOLS"), 0u);  // the user's 0 stands
}

TEST(RunPlan, EmptyRocprofilerListStaysEmpty) {
    Env env;
    env.vars = {{"ROCP_TOOL_LIBRARIES", ""}};
    RunOptions opt;
    opt.command = {"true"};
    auto vars = as_map(plan_run(opt, env.lookup(), preload));
    EXPECT_EQ(vars.count("ROCP_TOOL_LIBRARIES"), 0u);
    EXPECT_EQ(vars["HSA_TOOLS_ROCPROFILER_V1_TOOLS"], "1");
}

TEST(RunPlan, NestedRunsDoNotLoadItTwice) {
    Env env;
    env.vars = {{"LD_PRELOAD", preload.path},
                {"HSA_TOOLS_LIB", "x.so " + preload.path},
                {"ROCP_TOOL_LIBRARIES", preload.rocprofiler + ":/p.so"},
                {"HSA_TOOLS_ROCPROFILER_V1_TOOLS", "1"}};
    RunOptions opt;
    opt.command = {"true"};
    auto vars = as_map(plan_run(opt, env.lookup(), preload));
    EXPECT_EQ(vars["LD_PRELOAD"], preload.path);
    EXPECT_EQ(vars["HSA_TOOLS_LIB"], "x.so " + preload.path);
    EXPECT_EQ(vars["ROCP_TOOL_LIBRARIES"], preload.rocprofiler + ":/p.so");
}

TEST(RunPlan, WithoutThePreloadLibraryOneWarningUnlessQuiet) {
    Env env;
    RunOptions opt;
    opt.command = {"sh"};
    PreloadFound none{{}, "libamdqp-preload.so not found", {}};
    auto plan = plan_run(opt, env.lookup(), none);
    EXPECT_NE(plan.warning.find("untagged"), std::string::npos);
    EXPECT_EQ(plan.warning.find('\n'), std::string::npos);
    EXPECT_EQ(as_map(plan).count("LD_PRELOAD"), 0u);
    EXPECT_EQ(as_map(plan).count("HSA_TOOLS_ROCPROFILER_V1_TOOLS"), 0u);
    EXPECT_EQ(as_map(plan)["AMDQP_PRIORITY"], "normal");

    env.vars["AMDQP_QUIET"] = "1";
    EXPECT_TRUE(plan_run(opt, env.lookup(), none).warning.empty());
}

TEST(RunPlan, BadInputIsAUsageError) {
    Env env;
    RunOptions opt;
    opt.command = {"true"};
    for (const char* level : {"urgent", "16", "-1", "", "1.5"}) {
        opt.priority = level;
        EXPECT_THROW(plan_run(opt, env.lookup(), preload), UsageError) << level;
    }
    opt.priority = "low";
    opt.group = std::string(40, 'g');
    EXPECT_THROW(plan_run(opt, env.lookup(), preload), UsageError);
    opt.group = "has space";
    EXPECT_THROW(plan_run(opt, env.lookup(), preload), UsageError);
    opt.group.clear();
    opt.command.clear();
    EXPECT_THROW(plan_run(opt, env.lookup(), preload), UsageError);
}

TEST(RunPlan, NoRocprofilerEntryNoRocprofilerVariable) {
    Env env;
    RunOptions opt;
    opt.command = {"true"};
    env.vars = {{"ROCP_TOOL_LIBRARIES", "/p.so"}};
    PreloadFound only{preload.path, {}, {}};
    auto vars = as_map(plan_run(opt, env.lookup(), only));
    EXPECT_EQ(vars["LD_PRELOAD"], preload.path);
    EXPECT_EQ(vars.count("ROCP_TOOL_LIBRARIES"), 0u);  // the profiler's list, untouched
}

TEST(FindPreload, RocprofilerEntryNextToIt) {
    Env env;
    env.vars["AMDQP_PRELOAD_LIB"] = "/x/libamdqp-preload.so";
    std::set<std::string> present = {"/x/libamdqp-preload.so", "/x/libamdqp-rocprofiler.so"};
    auto readable = [&](const std::string& p) { return present.contains(p); };
    EXPECT_EQ(find_preload(env.lookup(), PreloadSearch{}, readable).rocprofiler,
              "/x/libamdqp-rocprofiler.so");
    present.erase("/x/libamdqp-rocprofiler.so");
    EXPECT_EQ(find_preload(env.lookup(), PreloadSearch{}, readable).rocprofiler, "");
}

TEST(FindPreload, EnvironmentFirst) {
    Env env;
    env.vars["AMDQP_PRELOAD_LIB"] = "/x/libamdqp-preload.so";
    PreloadSearch where{"/b", "/b", "/b/libamdqp-preload.so", "lib", "/usr/lib/amdqp/p.so"};
    auto all = [](const std::string&) { return true; };
    EXPECT_EQ(find_preload(env.lookup(), where, all).path, "/x/libamdqp-preload.so");
    auto none = [](const std::string&) { return false; };
    auto found = find_preload(env.lookup(), where, none);
    EXPECT_TRUE(found.path.empty());
    EXPECT_NE(found.problem.find("AMDQP_PRELOAD_LIB"), std::string::npos);
}

TEST(FindPreload, BuildTreeThenInstalled) {
    Env env;
    std::set<std::string> present = {"/b/pre/libamdqp-preload.so",
                                     "/usr/bin/../lib/amdqp/libamdqp-preload.so",
                                     "/usr/lib/amdqp/libamdqp-preload.so"};
    auto readable = [&](const std::string& p) { return present.contains(p); };
    PreloadSearch build{"/b/ctl", "/b/ctl", "/b/pre/libamdqp-preload.so", "lib",
                        "/usr/lib/amdqp/libamdqp-preload.so"};
    EXPECT_EQ(find_preload(env.lookup(), build, readable).path, "/b/pre/libamdqp-preload.so");
    // Installed: relative to the prefix amdqpctl runs from, even though the
    // build tree's library still exists.
    PreloadSearch installed = build;
    installed.exe_dir = "/usr/bin";
    EXPECT_EQ(find_preload(env.lookup(), installed, readable).path,
              "/usr/bin/../lib/amdqp/libamdqp-preload.so");
    present.erase("/usr/bin/../lib/amdqp/libamdqp-preload.so");
    EXPECT_EQ(find_preload(env.lookup(), installed, readable).path,
              "/usr/lib/amdqp/libamdqp-preload.so");
    present.clear();
    EXPECT_NE(find_preload(env.lookup(), installed, readable).problem.find("not found"),
              std::string::npos);
}

}  // namespace
}  // namespace amdqpctl
