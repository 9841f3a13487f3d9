// SPDX-License-Identifier: MIT
//
// What the tagging layer's libraries export. Everything else is hidden
// (-fvisibility=hidden, --exclude-libs,ALL and a version script): above all
// no hsa_* name, so that no lookup of the runtime's own functions can land
// in the layer and recurse.
#ifndef AMDQP_PRELOAD_EXPORT_HPP
#define AMDQP_PRELOAD_EXPORT_HPP

#define AMDQP_PRELOAD_EXPORT __attribute__((visibility("default")))

#endif  // AMDQP_PRELOAD_EXPORT_HPP
