// SPDX-License-Identifier: MIT
#include "api_table.h"

#include <memory>
#include <type_traits>

#include "api_list.h"
#include "impl.h"

namespace hsasim {

HsaApiTableContainer g_api;

namespace {

// Filled right after g_api is constructed (same file, so in this order),
// at load time: a library's initializers run before those of whatever
// links it, so the table is complete before any program code calls in.
struct FillAtLoad {
    FillAtLoad() { reset_api_table(); }
} fill_at_load;

// Entries outside the stand-in's subset: a tool that saved and calls them
// gets an error instead of a null pointer.
template <typename F>
struct Unsupported;

template <typename R, typename... Args>
struct Unsupported<R(Args...)> {
    static R call(Args...) {
        if constexpr (std::is_same_v<R, hsa_status_t>)
            return HSA_STATUS_ERROR;
        else if constexpr (!std::is_void_v<R>)
            return R{};
    }
};

void fill_core(CoreApiTable& t) {
    using namespace impl;
#define HSASIM_STUB(name) t.name##_fn = &Unsupported<decltype(name)>::call;
    HSASIM_CORE_API(HSASIM_STUB)
#undef HSASIM_STUB
    t.hsa_init_fn = init;
    t.hsa_shut_down_fn = shut_down;
    t.hsa_system_get_info_fn = system_get_info;
    t.hsa_system_extension_supported_fn = system_extension_supported;
    t.hsa_system_major_extension_supported_fn = system_major_extension_supported;
    t.hsa_iterate_agents_fn = iterate_agents;
    t.hsa_agent_get_info_fn = agent_get_info;
    t.hsa_agent_extension_supported_fn = agent_extension_supported;
    t.hsa_agent_major_extension_supported_fn = agent_major_extension_supported;
    t.hsa_status_string_fn = status_string;

    t.hsa_queue_create_fn = queue_create;
    t.hsa_queue_destroy_fn = queue_destroy;
    t.hsa_queue_inactivate_fn = queue_inactivate;
    t.hsa_queue_load_read_index_scacquire_fn = queue_load_read_index<kAcquire>;
    t.hsa_queue_load_read_index_relaxed_fn = queue_load_read_index<kRelaxed>;
    t.hsa_queue_load_write_index_scacquire_fn = queue_load_write_index<kAcquire>;
    t.hsa_queue_load_write_index_relaxed_fn = queue_load_write_index<kRelaxed>;
    t.hsa_queue_store_write_index_relaxed_fn = queue_store_write_index<kRelaxed>;
    t.hsa_queue_store_write_index_screlease_fn = queue_store_write_index<kRelease>;
    t.hsa_queue_cas_write_index_scacq_screl_fn = queue_cas_write_index<kAcqRel>;
    t.hsa_queue_cas_write_index_scacquire_fn = queue_cas_write_index<kAcquire>;
    t.hsa_queue_cas_write_index_relaxed_fn = queue_cas_write_index<kRelaxed>;
    t.hsa_queue_cas_write_index_screlease_fn = queue_cas_write_index<kRelease>;
    t.hsa_queue_add_write_index_scacq_screl_fn = queue_add_write_index<kAcqRel>;
    t.hsa_queue_add_write_index_scacquire_fn = queue_add_write_index<kAcquire>;
    t.hsa_queue_add_write_index_relaxed_fn = queue_add_write_index<kRelaxed>;
    t.hsa_queue_add_write_index_screlease_fn = queue_add_write_index<kRelease>;
    t.hsa_queue_store_read_index_relaxed_fn = queue_store_read_index<kRelaxed>;
    t.hsa_queue_store_read_index_screlease_fn = queue_store_read_index<kRelease>;

    t.hsa_agent_iterate_regions_fn = agent_iterate_regions;
    t.hsa_region_get_info_fn = region_get_info;
    t.hsa_memory_register_fn = memory_register;
    t.hsa_memory_deregister_fn = memory_deregister;
    t.hsa_memory_allocate_fn = memory_allocate;
    t.hsa_memory_free_fn = memory_free;

    t.hsa_signal_create_fn = signal_create;
    t.hsa_signal_destroy_fn = signal_destroy;
    t.hsa_signal_load_relaxed_fn = signal_load<kRelaxed>;
    t.hsa_signal_load_scacquire_fn = signal_load<kAcquire>;
    t.hsa_signal_store_relaxed_fn = signal_store<kRelaxed>;
    t.hsa_signal_store_screlease_fn = signal_store<kRelease>;
    t.hsa_signal_silent_store_relaxed_fn = signal_store<kRelaxed>;
    t.hsa_signal_silent_store_screlease_fn = signal_store<kRelease>;
    t.hsa_signal_wait_relaxed_fn = signal_wait<kRelaxed>;
    t.hsa_signal_wait_scacquire_fn = signal_wait<kAcquire>;
#define HSASIM_SIGNAL_RMW(op)                                 \
    t.hsa_signal_##op##_relaxed_fn = signal_##op<kRelaxed>;   \
    t.hsa_signal_##op##_scacquire_fn = signal_##op<kAcquire>; \
    t.hsa_signal_##op##_screlease_fn = signal_##op<kRelease>; \
    t.hsa_signal_##op##_scacq_screl_fn = signal_##op<kAcqRel>;
    HSASIM_SIGNAL_RMW(and)
    HSASIM_SIGNAL_RMW(or)
    HSASIM_SIGNAL_RMW(xor)
    HSASIM_SIGNAL_RMW(exchange)
    HSASIM_SIGNAL_RMW(add)
    HSASIM_SIGNAL_RMW(subtract)
    HSASIM_SIGNAL_RMW(cas)
#undef HSASIM_SIGNAL_RMW
}

void fill_amd_ext(AmdExtTable& t) {
    using namespace impl;
#define HSASIM_STUB(name) t.name##_fn = &Unsupported<decltype(name)>::call;
    HSASIM_AMD_EXT_API(HSASIM_STUB)
#undef HSASIM_STUB
    t.hsa_amd_queue_set_priority_fn = amd_queue_set_priority;
    t.hsa_amd_queue_cu_set_mask_fn = amd_queue_cu_set_mask;
    t.hsa_amd_queue_cu_get_mask_fn = amd_queue_cu_get_mask;
    t.hsa_amd_signal_create_fn = amd_signal_create;
    t.hsa_amd_signal_wait_any_fn = amd_signal_wait_any;
}

void fill_finalizer_ext(FinalizerExtTable& t) {
#define HSASIM_STUB(name) t.name##_fn = &Unsupported<decltype(name)>::call;
    HSASIM_FINALIZER_EXT_API(HSASIM_STUB)
#undef HSASIM_STUB
}

void fill_image_ext(ImageExtTable& t) {
#define HSASIM_STUB(name) t.name##_fn = &Unsupported<decltype(name)>::call;
    HSASIM_IMAGE_EXT_API(HSASIM_STUB)
#undef HSASIM_STUB
}

}  // namespace

void reset_api_table() {
    // The container's constructor links root to the child tables and sets
    // the versions; a tool may have changed anything.
    std::destroy_at(&g_api);
    std::construct_at(&g_api);
    fill_core(g_api.core);
    fill_amd_ext(g_api.amd_ext);
    fill_finalizer_ext(g_api.finalizer_ext);
    fill_image_ext(g_api.image_ext);
}

}  // namespace hsasim
