// SPDX-License-Identifier: MIT
//
// rocprofiler-sdk's tool interface (ROCm 6.2 and later, 7.x): the runtime
// hands its API table to rocprofiler-sdk through rocprofiler-register, and
// rocprofiler-sdk passes it to every tool that asked for it from its
// rocprofiler_configure() with rocprofiler_at_intercept_table_registration
// (ROCPROFILER_HSA_TABLE). Tools are found as loaded libraries exporting
// rocprofiler_configure, or through ROCP_TOOL_LIBRARIES.
//
// rocprofiler-sdk is not in Debian, so this file declares the few types it
// uses itself, after rocprofiler-sdk's public headers (registration.h,
// intercept_table.h, fwd.h) and documentation, and finds
// rocprofiler_at_intercept_table_registration at run time. It is built into
// its own library (libamdqp-rocprofiler.so), never into the LD_PRELOAD one:
// a visible rocprofiler_configure makes rocprofiler-register load
// librocprofiler-sdk.so, and where that library is missing (a runtime
// without rocprofiler-sdk) rocprofiler-register aborts the process
// (LOG(FATAL) in rocp_reg_scan_for_tools).
//
// NOT TESTED on a real ROCm: nothing here has rocprofiler-sdk. The tests
// drive this entry point with a stand-in registration function only.
#include <dlfcn.h>

#include <cstdint>

#include "export.hpp"
#include "preload.hpp"

extern "C" {

// rocprofiler-sdk/registration.h
struct rocprofiler_client_id_t {
    const char* name;
    const std::uint32_t handle;
};
struct rocprofiler_tool_configure_result_t;

// rocprofiler-sdk/fwd.h: rocprofiler_intercept_table_t
constexpr int amdqp_rocprofiler_hsa_table = 1 << 0;  // ROCPROFILER_HSA_TABLE

// rocprofiler-sdk/intercept_table.h
using amdqp_rocprofiler_intercept_library_cb_t = void (*)(int type, std::uint64_t lib_version,
                                                          std::uint64_t lib_instance, void** tables,
                                                          std::uint64_t num_tables,
                                                          void* user_data);
using amdqp_rocprofiler_at_intercept_table_registration_t =
    int (*)(amdqp_rocprofiler_intercept_library_cb_t callback, int libs, void* data);

}  // extern "C"

namespace {

void on_table(int type, std::uint64_t, std::uint64_t, void** tables, std::uint64_t num_tables,
              void*) {
    if (type != amdqp_rocprofiler_hsa_table || num_tables < 1 || !tables || !tables[0])
        return;
    try {
        amdqp::preload::primary_instance()->install(tables[0]);
    } catch (...) {
    }
}

amdqp_rocprofiler_at_intercept_table_registration_t find_registration() {
    const char* name = "rocprofiler_at_intercept_table_registration";
    if (void* f = dlsym(RTLD_DEFAULT, name))
        return reinterpret_cast<amdqp_rocprofiler_at_intercept_table_registration_t>(f);
    for (const char* lib : {"librocprofiler-sdk.so.1", "librocprofiler-sdk.so"}) {
        if (void* h = dlopen(lib, RTLD_NOLOAD | RTLD_LAZY)) {
            void* f = dlsym(h, name);
            dlclose(h);  // still loaded: NOLOAD took a reference of its own
            if (f)
                return reinterpret_cast<amdqp_rocprofiler_at_intercept_table_registration_t>(f);
        }
    }
    return nullptr;
}

}  // namespace

extern "C" AMDQP_PRELOAD_EXPORT rocprofiler_tool_configure_result_t* rocprofiler_configure(
    std::uint32_t version, const char* runtime_version, std::uint32_t priority,
    rocprofiler_client_id_t* client_id) {
    (void)version;
    (void)runtime_version;
    (void)priority;
    if (client_id)
        client_id->name = "amdqp";
    if (auto registration = find_registration())
        registration(&on_table, amdqp_rocprofiler_hsa_table, nullptr);
    // No contexts and no finalizer: like the intercept-table example of
    // rocprofiler-sdk's documentation, the tool only wants the table.
    return nullptr;
}
