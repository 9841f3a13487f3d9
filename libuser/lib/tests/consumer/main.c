/* SPDX-License-Identifier: MIT */
/* A C program built against an installed libamdqp. Usage: main VERSION */
#include <stdio.h>
#include <string.h>

#include <amdqp/amdqp.h>

int main(int argc, char** argv) {
    amdqp_t* h = NULL;
    int prio = -1;

    if (argc < 2 || strcmp(amdqp_library_version(), argv[1])) {
        fprintf(stderr, "library version %s\n", amdqp_library_version());
        return 1;
    }
    if (amdqp_parse_priority("high", &prio) || prio != AMDQP_PRIO_HIGH)
        return 1;
    /* Run with AMDQP_DEVICE=/nonexistent: no module, and a message saying so. */
    if (amdqp_open(&h) != AMDQP_ERR_NO_MODULE || !strstr(amdqp_last_error(), "modprobe"))
        return 1;
    printf("c consumer ok: %s\n", amdqp_last_error());
    return 0;
}
