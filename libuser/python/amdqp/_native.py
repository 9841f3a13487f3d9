# SPDX-License-Identifier: MIT
"""ctypes view of libamdqp's C API (include/amdqp/amdqp.h).

The library is looked for, in order, at $AMDQP_LIBRARY, by its soname
(libamdqp.so.MAJOR, through the dynamic loader's search path), then through
ctypes.util.find_library("amdqp"). It is loaded on first use, never at
import, so that `import amdqp` works on any machine.
"""
import ctypes
import ctypes.util
import os
import threading

from ._version import __version__

SONAME = "libamdqp.so." + __version__.split(".")[0]

# Status codes (enum amdqp_status).
OK = 0
ERR_NO_MODULE = -1
ERR_PERMISSION = -2
ERR_NO_GPU = -3
ERR_NO_QUEUE = -4
ERR_INVALID = -5
ERR_ABI_MISMATCH = -6
ERR_BUSY = -7
ERR_SYSTEM = -8

c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_int32 = ctypes.c_int32


class VersionInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_uint32),
        ("abi_major", c_uint32),
        ("abi_minor", c_uint32),
        ("backends", c_uint32),
        ("num_devices", c_uint32),
        ("max_batch", c_uint32),
        ("priority_max", c_uint32),
        ("pad", c_uint32),
        ("features", c_uint64),
    ]


class GpuInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_uint32),
        ("gpu_id", c_uint32),
        ("backend", c_uint32),
        ("sched_mode", c_uint32),
        ("num_xcc", c_uint32),
        ("num_queues", c_uint32),
        ("num_suspended", c_uint32),
        ("pad", c_uint32),
        ("sched_updates", c_uint64),
        ("unmap_packets", c_uint64),
        ("map_packets", c_uint64),
        ("preemptions", c_uint64),
        ("preempt_failures", c_uint64),
        ("resets", c_uint64),
    ]


class QueueInfo(ctypes.Structure):
    _fields_ = [
        ("size", c_uint32),
        ("pid", c_uint32),
        ("uid", c_uint32),
        ("gpu_id", c_uint32),
        ("queue_id", c_uint32),
        ("priority", c_uint32),
        ("ring_va", c_uint64),
        ("ring_size", c_uint64),
        ("state", c_uint32),
        ("holders", c_uint32),
        ("backend", c_uint32),
        ("pad", c_uint32),
        ("suspend_count", c_uint64),
        ("suspended_ns", c_uint64),
        ("busy_ns", c_uint64),
        ("submitted", c_uint64),
        ("completed", c_uint64),
        ("created_ns", c_uint64),
    ]


class Ref(ctypes.Structure):
    _fields_ = [
        ("pid", c_uint32),
        ("gpu_id", c_uint32),
        ("queue_id", c_uint32),
        ("by_ring", c_uint32),
        ("ring_va", c_uint64),
        ("status", c_int32),
        ("error", c_int32),
        ("state", c_uint32),
        ("pad", c_uint32),
    ]


class BatchStats(ctypes.Structure):
    _fields_ = [
        ("size", c_uint32),
        ("done", c_uint32),
        ("skipped", c_uint32),
        ("pad", c_uint32),
        ("latency_ns", c_uint64),
    ]


class EventRecord(ctypes.Structure):
    _fields_ = [
        ("size", c_uint32),
        ("type", c_uint32),
        ("timestamp_ns", c_uint64),
        ("pid", c_uint32),
        ("gpu_id", c_uint32),
        ("queue_id", c_uint32),
        ("error", c_int32),
        ("data", c_uint64),
    ]


_P = ctypes.POINTER
_handle = ctypes.c_void_p

# name: (restype, argtypes)
_PROTOTYPES = {
    "amdqp_library_version": (ctypes.c_char_p, []),
    "amdqp_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "amdqp_last_error": (ctypes.c_char_p, []),
    "amdqp_last_errno": (ctypes.c_int, []),
    "amdqp_open": (ctypes.c_int, [_P(_handle)]),
    "amdqp_open_path": (ctypes.c_int, [ctypes.c_char_p, _P(_handle)]),
    "amdqp_close": (None, [_handle]),
    "amdqp_fd": (ctypes.c_int, [_handle]),
    "amdqp_get_version": (ctypes.c_int, [_handle, _P(VersionInfo)]),
    "amdqp_get_gpus": (ctypes.c_int, [_handle, _P(GpuInfo), ctypes.c_size_t, ctypes.c_size_t]),
    "amdqp_get_queues": (
        ctypes.c_int,
        [_handle, c_uint32, c_uint32, _P(QueueInfo), ctypes.c_size_t, ctypes.c_size_t],
    ),
    "amdqp_find_queue": (
        ctypes.c_int,
        [_handle, c_uint32, c_uint32, c_uint32, _P(QueueInfo), ctypes.c_size_t],
    ),
    "amdqp_find_queue_by_ring": (
        ctypes.c_int,
        [_handle, c_uint32, c_uint64, _P(QueueInfo), ctypes.c_size_t],
    ),
    "amdqp_set_queue_priority": (ctypes.c_int, [_handle, _P(Ref), ctypes.c_int]),
    "amdqp_suspend": (
        ctypes.c_int,
        [_handle, _P(Ref), ctypes.c_size_t, ctypes.c_size_t, c_uint32, _P(BatchStats)],
    ),
    "amdqp_resume": (
        ctypes.c_int,
        [_handle, _P(Ref), ctypes.c_size_t, ctypes.c_size_t, _P(BatchStats)],
    ),
    "amdqp_ref_message": (ctypes.c_char_p, [_P(Ref), ctypes.c_int]),
    "amdqp_suspend_below": (
        ctypes.c_int,
        [_handle, _P(c_uint32), ctypes.c_size_t, ctypes.c_int, c_uint32, _P(BatchStats)],
    ),
    "amdqp_resume_all": (
        ctypes.c_int,
        [_handle, _P(c_uint32), ctypes.c_size_t, _P(BatchStats)],
    ),
    "amdqp_events_subscribe": (ctypes.c_int, [_handle, c_uint64]),
    "amdqp_events_fd": (ctypes.c_int, [_handle]),
    "amdqp_events_read": (
        ctypes.c_int,
        [_handle, _P(EventRecord), ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int],
    ),
    "amdqp_event_name": (ctypes.c_char_p, [c_uint32]),
    "amdqp_parse_priority": (ctypes.c_int, [ctypes.c_char_p, _P(ctypes.c_int)]),
    "amdqp_priority_name": (ctypes.c_char_p, [ctypes.c_int]),
}

# The hint API may be absent (an older library): looked up separately.
HINT_FUNCTIONS = ("amdqp_busy_begin", "amdqp_busy_end")


class LoadError(Exception):
    """libamdqp could not be loaded; the message says where it was looked for."""


_lock = threading.Lock()
_lib = None
_load_error = None


def _candidates():
    env = os.environ.get("AMDQP_LIBRARY")
    if env:
        # An explicit choice is not second-guessed.
        return [env]
    names = [SONAME]
    found = ctypes.util.find_library("amdqp")
    if found and found not in names:
        names.append(found)
    return names


def _bind(lib):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    for name in HINT_FUNCTIONS:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_int
            fn.argtypes = []
    return lib


def load():
    """Returns the bound library, or raises LoadError (and remembers why)."""
    global _lib, _load_error
    with _lock:
        if _lib is not None:
            return _lib
        if _load_error is not None:
            raise LoadError(_load_error)
        tried = []
        for name in _candidates():
            try:
                _lib = _bind(ctypes.CDLL(name))
                return _lib
            except (OSError, AttributeError) as e:
                tried.append("%s (%s)" % (name, e))
        where = (
            "$AMDQP_LIBRARY names it"
            if os.environ.get("AMDQP_LIBRARY")
            else "install it (cmake --install) or point $AMDQP_LIBRARY at libamdqp.so"
        )
        _load_error = "amdqp: cannot load libamdqp: %s; tried %s" % (where, "; ".join(tried))
        raise LoadError(_load_error)


def text(ptr):
    return ptr.decode("utf-8", "replace") if ptr else ""
