/* SPDX-License-Identifier: MIT */
/*
 * AMDQP_API marks what libamdqp exports. The library is built with
 * -fvisibility=hidden, so anything without it stays private to the .so.
 */
#ifndef AMDQP_EXPORT_H
#define AMDQP_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define AMDQP_API __attribute__((visibility("default")))
#else
#define AMDQP_API
#endif

#endif /* AMDQP_EXPORT_H */
