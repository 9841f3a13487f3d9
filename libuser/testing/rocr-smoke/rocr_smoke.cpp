// SPDX-License-Identifier: MIT
//
// amdqp-rocr-smoke: starts the HSA runtime the way every HIP program does
// (hsa_init, agents, hsa_shut_down) and reports what the runtime did with
// the tools libraries named in HSA_TOOLS_LIB. Written against the public
// HSA headers only and linked to the system's libhsa-runtime64: in the test
// VM that is Debian's ROCr 5.2.3 on the CPU-only /dev/kfd of the patched
// amdgpu (kfd-glue/vmtest/rocr.sh).
//
//   amdqp-rocr-smoke [--label NAME] [--checks FILE] [--cpu-only]
//                    [--smoke-tool PATH [--queue-create-owner LIB]]
//                    [--loaded PATH]... [--not-loaded PATH]...
//
//   --cpu-only         expect no GPU agent
//   --smoke-tool PATH  PATH is this folder's tools library and HSA_TOOLS_LIB
//                      names it: check the OnLoad it saw and its hooks
//   --queue-create-owner LIB
//                      after every tool's OnLoad, the runtime's table entry
//                      for hsa_queue_create must lie in LIB (the last tool
//                      that wrapped it)
//   --loaded PATH      PATH must be mapped in the process after hsa_init
//   --not-loaded PATH  PATH must not be
//
// Prints one JSON object on stdout, and one "ok - NAME: ..." or
// "not ok - NAME: ..." line per check to FILE (default stderr, which the
// runtime and the tools libraries share). Exit status: 0 when every check
// passed, 1 when one failed, 2 on bad usage.
#include <dlfcn.h>
#include <hsa/hsa.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tool_report.hpp"

namespace {

using Json = nlohmann::ordered_json;
using amdqp::rocr_smoke::ToolReport;

struct Options {
    std::string label = "rocr";
    std::string checks_path;
    bool cpu_only = false;
    std::string smoke_tool;
    std::string queue_create_owner;
    std::vector<std::string> loaded;
    std::vector<std::string> not_loaded;
};

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

class Checks {
  public:
    Checks(std::FILE* out, std::string label) : out_(out), label_(std::move(label)) {}

    bool expect(bool ok, const std::string& what) {
        std::fprintf(out_, "%s - %s: %s\n", ok ? "ok" : "not ok", label_.c_str(), what.c_str());
        std::fflush(out_);
        ++(ok ? passed_ : failed_);
        return ok;
    }
    int passed() const { return passed_; }
    int failed() const { return failed_; }

  private:
    std::FILE* out_;
    std::string label_;
    int passed_ = 0;
    int failed_ = 0;
};

// A reference to a library that is already loaded; never loads one.
class LoadedLibrary {
  public:
    explicit LoadedLibrary(const std::string& path)
        : handle_(dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {}
    ~LoadedLibrary() {
        if (handle_ != nullptr) {
            dlclose(handle_);
        }
    }
    LoadedLibrary(const LoadedLibrary&) = delete;
    LoadedLibrary& operator=(const LoadedLibrary&) = delete;

    bool loaded() const { return handle_ != nullptr; }
    void* symbol(const char* name) const {
        return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
    }

  private:
    void* handle_;
};

std::string status_text(hsa_status_t status) {
    const char* text = nullptr;
    if (hsa_status_string(status, &text) != HSA_STATUS_SUCCESS || text == nullptr) {
        return "status " + std::to_string(static_cast<int>(status));
    }
    std::string_view s(text);
    return std::string(s.substr(0, s.find(':')));
}

Json status_json(hsa_status_t status) {
    return Json{{"status", static_cast<int>(status)}, {"text", status_text(status)}};
}

std::string real_path(const char* path) {
    std::unique_ptr<char, decltype(&std::free)> real(realpath(path, nullptr), std::free);
    return real ? std::string(real.get()) : std::string(path);
}

// The file of the library that holds code address `entry` ("" if none).
std::string owner_of(const void* entry) {
    Dl_info info{};
    if (entry == nullptr || dladdr(entry, &info) == 0 || info.dli_fname == nullptr) {
        return "";
    }
    return real_path(info.dli_fname);
}

template <typename Function>
std::string owner_of_function(Function* function) {
    return owner_of(reinterpret_cast<const void*>(function));
}

// Which libhsa-runtime64 answered: the test means nothing on a stand-in.
std::string runtime_library() {
    return owner_of(dlsym(RTLD_DEFAULT, "hsa_init"));
}

struct Agent {
    hsa_agent_t handle;
    hsa_device_type_t type;
    std::string name;
    std::uint32_t node;
};

hsa_status_t collect_agent(hsa_agent_t handle, void* data) {
    auto* agents = static_cast<std::vector<Agent>*>(data);
    Agent agent{handle, HSA_DEVICE_TYPE_CPU, "", 0};
    char name[64] = {};
    hsa_status_t status = hsa_agent_get_info(handle, HSA_AGENT_INFO_DEVICE, &agent.type);
    if (status == HSA_STATUS_SUCCESS) {
        status = hsa_agent_get_info(handle, HSA_AGENT_INFO_NAME, name);
    }
    if (status == HSA_STATUS_SUCCESS) {
        status = hsa_agent_get_info(handle, HSA_AGENT_INFO_NODE, &agent.node);
    }
    agent.name.assign(name, strnlen(name, sizeof(name)));
    agents->push_back(agent);
    return status;
}

const char* type_name(hsa_device_type_t type) {
    switch (type) {
        case HSA_DEVICE_TYPE_CPU:
            return "cpu";
        case HSA_DEVICE_TYPE_GPU:
            return "gpu";
        default:
            return "other";
    }
}

std::string version_text(const amdqp::rocr_smoke::TableVersion& v) {
    return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.step);
}

Json report_json(const ToolReport& r) {
    const auto version = [](const amdqp::rocr_smoke::TableVersion& v) {
        return Json{{"major", v.major}, {"minor", v.minor}, {"step", v.step}};
    };
    return Json{{"on_load_calls", r.on_load_calls.load()},
                {"on_unload_calls", r.on_unload_calls.load()},
                {"runtime_version", r.runtime_version},
                {"failed_tool_count", r.failed_tool_count},
                {"table", version(r.root)},
                {"core", version(r.core)},
                {"amd_ext", version(r.amd_ext)},
                {"entries_checked", r.entries_checked},
                {"missing_entry", r.missing_entry},
                {"hooks_installed", r.hooks_installed},
                {"iterate_agents_calls", r.iterate_agents_calls.load()},
                {"queue_create_calls", r.queue_create_calls.load()},
                {"last_queue_create_status", r.last_queue_create_status.load()}};
}

// What OnLoad received must be what ROCr's tools interface promises: the
// API table's major version as runtime_version, tables whose major versions
// this header knows, and every entry the tagging layer replaces or calls.
void check_on_load(Checks& checks, const ToolReport& r) {
    checks.expect(r.on_load_calls.load() == 1, "OnLoad called once at hsa_init (" +
                                                   std::to_string(r.on_load_calls.load()) + ")");
    checks.expect(r.runtime_version == HSA_API_TABLE_MAJOR_VERSION,
                  "OnLoad's runtime_version is the API table's major version " +
                      std::to_string(HSA_API_TABLE_MAJOR_VERSION) + " (" +
                      std::to_string(r.runtime_version) + ")");
    checks.expect(r.failed_tool_count == 0,
                  "OnLoad's failed_tool_count is 0 (" + std::to_string(r.failed_tool_count) + ")");
    checks.expect(r.root.major == HSA_API_TABLE_MAJOR_VERSION &&
                      r.root.minor >= offsetof(HsaApiTable, amd_ext_) + sizeof(void*),
                  "HsaApiTable version " + version_text(r.root) + ": major " +
                      std::to_string(HSA_API_TABLE_MAJOR_VERSION) +
                      ", sized to hold core_ and amd_ext_");
    checks.expect(r.has_core && r.core.major == HSA_CORE_API_TABLE_MAJOR_VERSION,
                  "core_ table present, version " + version_text(r.core));
    checks.expect(r.has_amd_ext && r.amd_ext.major == HSA_AMD_EXT_API_TABLE_MAJOR_VERSION,
                  "amd_ext_ table present, version " + version_text(r.amd_ext));
    checks.expect(r.missing_entry[0] == '\0' && r.entries_checked > 0,
                  "the " + std::to_string(r.entries_checked) +
                      " entries the tagging layer uses (hsa_queue_create_fn, "
                      "hsa_queue_destroy_fn, hsa_signal_store_screlease_fn, ...) are inside "
                      "the tables and non-null" +
                      (r.missing_entry[0] != '\0' ? std::string(": missing ") + r.missing_entry
                                                  : std::string()));
    checks.expect(r.hooks_installed,
                  "OnLoad replaced hsa_iterate_agents_fn and hsa_queue_create_fn");
}

int usage() {
    std::fputs(
        "usage: amdqp-rocr-smoke [--label NAME] [--checks FILE] [--cpu-only]\n"
        "                        [--smoke-tool PATH [--queue-create-owner LIB]]\n"
        "                        [--loaded PATH]... [--not-loaded PATH]...\n",
        stderr);
    return 2;
}

bool parse(int argc, char** argv, Options& opt) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        const bool has_value = i + 1 < argc;
        if (arg == "--cpu-only") {
            opt.cpu_only = true;
        } else if (!has_value) {
            return false;
        } else if (arg == "--label") {
            opt.label = argv[++i];
        } else if (arg == "--checks") {
            opt.checks_path = argv[++i];
        } else if (arg == "--smoke-tool") {
            opt.smoke_tool = argv[++i];
        } else if (arg == "--queue-create-owner") {
            opt.queue_create_owner = argv[++i];
        } else if (arg == "--loaded") {
            opt.loaded.emplace_back(argv[++i]);
        } else if (arg == "--not-loaded") {
            opt.not_loaded.emplace_back(argv[++i]);
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    if (!parse(argc, argv, opt) || (!opt.queue_create_owner.empty() && opt.smoke_tool.empty())) {
        return usage();
    }
    std::unique_ptr<std::FILE, FileCloser> checks_file;
    if (!opt.checks_path.empty()) {
        checks_file.reset(std::fopen(opt.checks_path.c_str(), "a"));
        if (!checks_file) {
            std::perror(opt.checks_path.c_str());
            return 2;
        }
    }
    Checks checks(checks_file ? checks_file.get() : stderr, opt.label);
    const char* tools_env = std::getenv("HSA_TOOLS_LIB");
    Json out{{"label", opt.label},
             {"hsa_tools_lib", tools_env != nullptr ? Json(tools_env) : Json(nullptr)}};

    const hsa_status_t init = hsa_init();
    out["runtime_library"] = runtime_library();
    out["hsa_init"] = status_json(init);
    if (!checks.expect(init == HSA_STATUS_SUCCESS,
                       "hsa_init succeeds (" + status_text(init) + ")")) {
        out["checks"] = Json{{"passed", checks.passed()}, {"failed", checks.failed()}};
        std::printf("%s\n", out.dump().c_str());
        return 1;
    }

    std::uint16_t major = 0;
    std::uint16_t minor = 0;
    hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major);
    hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MINOR, &minor);
    out["hsa_version"] = std::to_string(major) + "." + std::to_string(minor);

    // References taken now keep each library mapped after hsa_shut_down,
    // when ROCr dlclose()s its tools, so the report stays readable.
    std::vector<std::unique_ptr<LoadedLibrary>> keep;
    Json libraries = Json::array();
    for (const auto& path : opt.loaded) {
        keep.push_back(std::make_unique<LoadedLibrary>(path));
        checks.expect(keep.back()->loaded(), path + " is loaded after hsa_init");
        libraries.push_back(Json{{"path", path}, {"loaded", keep.back()->loaded()}});
    }
    for (const auto& path : opt.not_loaded) {
        const LoadedLibrary lib(path);
        checks.expect(!lib.loaded(), path + " is not loaded after hsa_init");
        libraries.push_back(Json{{"path", path}, {"loaded", lib.loaded()}});
    }
    const ToolReport* report = nullptr;
    if (!opt.smoke_tool.empty()) {
        keep.push_back(std::make_unique<LoadedLibrary>(opt.smoke_tool));
        const LoadedLibrary& tool = *keep.back();
        libraries.push_back(Json{{"path", opt.smoke_tool}, {"loaded", tool.loaded()}});
        auto get = reinterpret_cast<amdqp::rocr_smoke::ReportFunction>(
            tool.symbol(amdqp::rocr_smoke::kReportSymbol));
        report = get != nullptr ? get() : nullptr;
        if (checks.expect(report != nullptr,
                          "ROCr loaded the smoke tools library " + opt.smoke_tool)) {
            check_on_load(checks, *report);
        }
    }
    if (report != nullptr && report->live_core != nullptr) {
        const CoreApiTable& core = *report->live_core;
        const std::string queue_create = owner_of_function(core.hsa_queue_create_fn);
        out["table_entries_land_in"] =
            Json{{"hsa_iterate_agents_fn", owner_of_function(core.hsa_iterate_agents_fn)},
                 {"hsa_queue_create_fn", queue_create},
                 {"hsa_queue_destroy_fn", owner_of_function(core.hsa_queue_destroy_fn)},
                 {"hsa_signal_store_screlease_fn",
                  owner_of_function(core.hsa_signal_store_screlease_fn)}};
        if (!opt.queue_create_owner.empty()) {
            const std::string want = real_path(opt.queue_create_owner.c_str());
            checks.expect(queue_create == want,
                          "the runtime's table entry for hsa_queue_create lies in " + want + " (" +
                              queue_create + ")");
        }
    } else if (!opt.queue_create_owner.empty()) {
        checks.expect(false, "the runtime's table is visible through the smoke tools library");
    }
    out["libraries"] = libraries;

    std::vector<Agent> agents;
    const hsa_status_t iterate = hsa_iterate_agents(collect_agent, &agents);
    checks.expect(iterate == HSA_STATUS_SUCCESS,
                  "hsa_iterate_agents succeeds (" + status_text(iterate) + ")");
    int cpus = 0;
    int gpus = 0;
    Json agent_list = Json::array();
    for (const auto& a : agents) {
        cpus += a.type == HSA_DEVICE_TYPE_CPU;
        gpus += a.type == HSA_DEVICE_TYPE_GPU;
        agent_list.push_back(Json{{"type", type_name(a.type)}, {"name", a.name}, {"node", a.node}});
    }
    out["agents"] = agent_list;
    checks.expect(cpus >= 1, "at least one CPU agent (" + std::to_string(cpus) + ")");
    if (opt.cpu_only) {
        checks.expect(gpus == 0, "no GPU agent: CPU-only KFD topology (" + std::to_string(gpus) +
                                     " GPU agents)");
    }

    // A CPU agent has no AQL packet processor: ROCr refuses the queue. The
    // call still goes through the table, so every tool's wrapper sees it and
    // must hand back the runtime's answer.
    for (const auto& a : agents) {
        if (a.type != HSA_DEVICE_TYPE_CPU) {
            continue;
        }
        hsa_queue_t* queue = nullptr;
        const hsa_status_t qs = hsa_queue_create(a.handle, 64, HSA_QUEUE_TYPE_MULTI, nullptr,
                                                 nullptr, UINT32_MAX, UINT32_MAX, &queue);
        out["queue_create_on_cpu"] = status_json(qs);
        checks.expect(qs != HSA_STATUS_SUCCESS,
                      "hsa_queue_create on a CPU agent fails (" + status_text(qs) + ")");
        if (qs == HSA_STATUS_SUCCESS && queue != nullptr) {
            hsa_queue_destroy(queue);
        }
        if (report != nullptr) {
            checks.expect(report->queue_create_calls.load() == 1 &&
                              report->last_queue_create_status.load() == static_cast<int>(qs),
                          "hsa_queue_create went through OnLoad's table entry, which returned "
                          "the same status (" +
                              std::to_string(report->queue_create_calls.load()) + " calls)");
        }
        break;
    }
    if (report != nullptr) {
        checks.expect(report->iterate_agents_calls.load() == 1,
                      "hsa_iterate_agents went through OnLoad's table entry (" +
                          std::to_string(report->iterate_agents_calls.load()) + " calls)");
    }

    const hsa_status_t shut = hsa_shut_down();
    out["hsa_shut_down"] = status_json(shut);
    checks.expect(shut == HSA_STATUS_SUCCESS, "hsa_shut_down succeeds (" + status_text(shut) + ")");
    if (report != nullptr) {
        checks.expect(report->on_unload_calls.load() == 1,
                      "OnUnload called once at hsa_shut_down (" +
                          std::to_string(report->on_unload_calls.load()) + ")");
        out["tool"] = report_json(*report);
    }
    out["checks"] = Json{{"passed", checks.passed()}, {"failed", checks.failed()}};
    std::printf("%s\n", out.dump().c_str());
    return checks.failed() == 0 ? 0 : 1;
}
