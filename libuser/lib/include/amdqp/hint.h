/* SPDX-License-Identifier: MIT */
/*
 * Hint API: an application that knows its request boundaries tells the
 * policy when high-priority work starts and ends, on top of what the
 * tagging layer sees at the doorbell. Calls nest (busy while more begins
 * than ends were made), cost a few stores into the process's activity page
 * (amdqp/activity.h) and never fail the application: without the page,
 * the module or the daemon they do nothing.
 */
#ifndef AMDQP_HINT_H
#define AMDQP_HINT_H

#include <amdqp/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 0, or a negative AMDQP_ERR_* when the hint could not be recorded. */
AMDQP_API int amdqp_busy_begin(void);
AMDQP_API int amdqp_busy_end(void);

#ifdef __cplusplus
}
#endif

#endif /* AMDQP_HINT_H */
