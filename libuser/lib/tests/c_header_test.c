/* SPDX-License-Identifier: MIT */
/*
 * The C API from C: the public header compiles as C11 next to the uapi
 * header, and a program without /dev/amdqp gets a message naming the module.
 */
#define _POSIX_C_SOURCE 200809L

#include <linux/amdqp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amdqp/amdqp.h>

int main(void) {
    amdqp_t* h = NULL;
    int prio = -1;
    int ret;

    setenv("AMDQP_DEVICE", "/nonexistent/amdqp", 1);
    ret = amdqp_open(&h);
    if (ret != AMDQP_ERR_NO_MODULE || h) {
        fprintf(stderr, "amdqp_open: %d (%s)\n", ret, amdqp_last_error());
        return 1;
    }
    if (!strstr(amdqp_last_error(), "modprobe amdqp")) {
        fprintf(stderr, "message does not name the module: %s\n", amdqp_last_error());
        return 1;
    }
    if (amdqp_parse_priority("low", &prio) || prio != AMDQP_PRIO_LOW)
        return 1;
    if (AMDQP_EV_MASK_ALL != AMDQP_EVENT_MASK_ALL)
        return 1;
    printf("ok: %s\n", amdqp_last_error());
    return 0;
}
