/* SPDX-License-Identifier: MIT */
/*
 * The in-process controller: amdqpd's control loop as a thread of the
 * calling process, for single-tenant hosts that run no daemon (e.g. an
 * inference server that wants its own batch jobs out of the way).
 *
 * Permission model: the controller acts with the caller's rights. It can
 * read and steer the activity pages of processes of its own user (pages
 * are mode 0600), and amdqp.ko lets it suspend queues of processes it
 * could ptrace (same user; ptrace(2) rules, see Documentation/ioctl.rst)
 * or any with CAP_SYS_ADMIN. Reading a queue's read index
 * (process_vm_readv) also needs ptrace access: under Yama ptrace_scope 1
 * only the controller's descendants qualify, and queues of other processes
 * then count as idle as soon as no new doorbell arrives (the hysteresis
 * still covers the gaps). Processes of other users are skipped: run amdqpd
 * for a shared host.
 *
 * Link with -lamdqp-controller (pkg-config amdqp-controller).
 */
#ifndef AMDQP_CONTROLLER_H
#define AMDQP_CONTROLLER_H

#include <stddef.h>

#include <amdqp/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Starts the controller thread with the amdqpd configuration at
 * @config_path (NULL: the built-in defaults; the [daemon] metrics endpoint
 * is honoured, "" by default here). Returns 0, or -1 with a message in
 * @err (@errlen bytes, may be NULL): a bad configuration, a controller
 * already running, no place for the wake channel.
 */
AMDQP_API int amdqp_controller_start(const char* config_path, char* err, size_t errlen);

/* Stops the thread and releases every suspension it holds. 0, or -1 if
 * none was running. */
AMDQP_API int amdqp_controller_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* AMDQP_CONTROLLER_H */
