// SPDX-License-Identifier: MIT
#include "tools.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "api_table.h"
#include "util.h"

namespace hsasim {

namespace {

using OnLoadFn = bool (*)(HsaApiTable*, uint64_t, uint64_t, const char* const*);
using OnUnloadFn = void (*)();

bool report_failures() {
    return env_u64("HSA_TOOLS_REPORT_LOAD_FAILURE", 0) != 0;
}

}  // namespace

void Tools::load(HsaApiTable* table) {
    const char* list = getenv("HSA_TOOLS_LIB");
    if (!list)
        return;
    std::istringstream names{std::string(list)};
    std::string name;
    while (names >> name) {
        void* h = dlopen(name.c_str(), RTLD_LAZY);
        if (!h) {
            if (report_failures())
                fprintf(stderr, "hsa-sim: tool %s not loaded: %s\n", name.c_str(), dlerror());
            failed_.push_back(name);
            continue;
        }
        auto on_load = reinterpret_cast<OnLoadFn>(dlsym(h, "OnLoad"));
        std::vector<const char*> failed;
        for (const auto& f : failed_)
            failed.push_back(f.c_str());
        failed.push_back(nullptr);
        if (!on_load || !on_load(table, table->version.major_id, failed_.size(), failed.data())) {
            if (report_failures())
                fprintf(stderr, "hsa-sim: tool %s: %s\n", name.c_str(),
                        on_load ? "OnLoad failed" : "no OnLoad");
            failed_.push_back(name);
            dlclose(h);
            continue;
        }
        debug("tool %s loaded", name.c_str());
        handles_.push_back(h);
    }
}

void Tools::unload_notify() {
    for (auto it = handles_.rbegin(); it != handles_.rend(); ++it) {
        if (auto on_unload = reinterpret_cast<OnUnloadFn>(dlsym(*it, "OnUnload")))
            on_unload();
    }
}

void Tools::close() {
    for (auto it = handles_.rbegin(); it != handles_.rend(); ++it)
        dlclose(*it);
    handles_.clear();
    failed_.clear();
}

}  // namespace hsasim
