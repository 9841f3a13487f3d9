// SPDX-License-Identifier: MIT
// A C++ program built against an installed libamdqp. Usage: main VERSION
#include <cstdio>
#include <cstring>

#include <amdqp/activity.hpp>
#include <amdqp/amdqp.hpp>

int main(int argc, char** argv) {
    if (argc < 2 || std::strcmp(amdqp_library_version(), argv[1]) != 0)
        return 1;
    static_assert(AMDQP_EVENT_MASK_ALL != 0);  // the uapi header came along
    if (amdqp::parse_priority("low") != amdqp::priority_low)
        return 1;
    // The activity reader links too (the policy's side of the page).
    amdqp::activity::Snapshot snap;
    std::strcpy(snap.header.group, "tp0");
    if (snap.group() != "tp0" || amdqp::activity::default_coop_lease.count() <= 0)
        return 1;
    try {
        amdqp::Device::open();
    } catch (const amdqp::Error& e) {
        // Caught by type across the library boundary.
        if (e.code() != amdqp::errc::no_module)
            return 1;
        std::printf("c++ consumer ok: %s\n", e.what());
        return 0;
    }
    return 1;
}
