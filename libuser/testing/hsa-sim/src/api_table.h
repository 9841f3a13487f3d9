// SPDX-License-Identifier: MIT
// The API table. Every exported hsa_* function calls through it, as ROCr's
// do, so that a tools library that replaced an entry in OnLoad sees the
// program's calls.
#pragma once

// hsa_api_trace.h finds its siblings as "inc/..." unless built inside ROCr.
#ifndef AMD_INTERNAL_BUILD
#define AMD_INTERNAL_BUILD
#endif
#include <hsa/hsa_api_trace.h>

namespace hsasim {

extern HsaApiTableContainer g_api;

// Puts the stand-in's own functions into every entry; entries it does not
// implement get a stub that returns HSA_STATUS_ERROR.
void reset_api_table();

}  // namespace hsasim
