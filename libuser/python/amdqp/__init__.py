# SPDX-License-Identifier: MIT
"""amdqp: priority preemption of AMD GPU hardware queues, from Python.

Bindings of libamdqp's C API. Module functions use one shared, lazily opened
/dev/amdqp handle (suspensions it takes last until resume() or the end of
the process); Device() gives a handle of your own:

    import amdqp
    for q in amdqp.list_queues():
        print(q.pid, q.gpu_id, q.queue_id, amdqp.priority_name(q.priority))
    with amdqp.Device() as dev:
        dev.suspend_below(8, gpus=[1])     # held until dev is closed
        ...

    with amdqp.busy():                     # hint API: never raises
        y = model(x)

Errors raise amdqp.Error (or a subclass) with libamdqp's message, which says
what to do, e.g. "amdqp: /dev/amdqp not found: load the module (sudo
modprobe amdqp, ...)".
"""
import ctypes
import dataclasses
import os
import threading

from . import _native
from ._hint import busy, busy_begin, busy_end
from ._version import __version__

__all__ = [
    "Error", "NoModuleError", "PermissionDeniedError", "NoGpuError", "NoQueueError",
    "InvalidError", "AbiMismatchError", "BusyError", "LibraryNotFoundError",
    "Device", "Gpu", "Queue", "QueueRef", "Result", "Event",
    "list_queues", "devices", "find_queue", "set_priority", "suspend", "resume",
    "suspend_below", "resume_all", "events",
    "parse_priority", "priority_name", "library_version",
    "busy", "busy_begin", "busy_end",
    "LOW", "NORMAL", "HIGH", "EVENT_MASK_ALL", "EVENT_TYPES",
    "__version__",
]

LOW, NORMAL, HIGH = 2, 7, 12
PRIORITY_MIN, PRIORITY_MAX = 0, 15

QUEUE_SUSPENDED, QUEUE_HELD, QUEUE_COOLDOWN = 1, 2, 4

EVENT_TYPES = {
    0: "overflow",
    1: "queue_created",
    2: "queue_destroyed",
    3: "process_exit",
    4: "gpu_reset",
    5: "preempt_failed",
    6: "watchdog",
    7: "device_added",
    8: "device_removed",
    9: "priority",
    10: "confine_watchdog",
}
EVENT_MASK_ALL = (1 << len(EVENT_TYPES)) - 1


class Error(Exception):
    """A libamdqp failure. str(e) is the library's message; .code names the
    kind ("no_module", "permission", ...), .errno the system error if any."""

    code = "system"

    def __init__(self, message, status=_native.ERR_SYSTEM, errno=0):
        super().__init__(message)
        self.status = status
        self.errno = errno


class NoModuleError(Error):
    code = "no_module"


class PermissionDeniedError(Error):
    code = "permission"


class NoGpuError(Error):
    code = "no_gpu"


class NoQueueError(Error):
    code = "no_queue"


class InvalidError(Error, ValueError):
    code = "invalid"


class AbiMismatchError(Error):
    code = "abi_mismatch"


class BusyError(Error):
    code = "busy"


class LibraryNotFoundError(Error):
    code = "no_library"


_BY_STATUS = {
    _native.ERR_NO_MODULE: NoModuleError,
    _native.ERR_PERMISSION: PermissionDeniedError,
    _native.ERR_NO_GPU: NoGpuError,
    _native.ERR_NO_QUEUE: NoQueueError,
    _native.ERR_INVALID: InvalidError,
    _native.ERR_ABI_MISMATCH: AbiMismatchError,
    _native.ERR_BUSY: BusyError,
}


def _lib():
    try:
        return _native.load()
    except _native.LoadError as e:
        raise LibraryNotFoundError(str(e)) from None


def _error(status, lib=None):
    lib = lib or _lib()
    message = _native.text(lib.amdqp_last_error()) or _native.text(lib.amdqp_strerror(status))
    return _BY_STATUS.get(status, Error)(message, status, lib.amdqp_last_errno())


def _check(status, lib):
    if status < 0:
        raise _error(status, lib)
    return status


@dataclasses.dataclass(frozen=True)
class Gpu:
    gpu_id: int
    backend: int
    sched_mode: int
    num_xcc: int
    num_queues: int
    num_suspended: int
    sched_updates: int
    unmap_packets: int
    map_packets: int
    preemptions: int
    preempt_failures: int
    resets: int


@dataclasses.dataclass(frozen=True)
class Queue:
    pid: int
    uid: int
    gpu_id: int
    queue_id: int
    ring_va: int
    ring_size: int
    priority: int
    state: int
    holders: int
    backend: int
    suspend_count: int
    suspended_ns: int
    busy_ns: int
    submitted: int
    completed: int
    created_ns: int

    @property
    def suspended(self):
        return bool(self.state & QUEUE_SUSPENDED)

    @property
    def held(self):
        return bool(self.state & QUEUE_HELD)

    def ref(self):
        return QueueRef(self.pid, self.gpu_id, self.queue_id)


@dataclasses.dataclass(frozen=True)
class QueueRef:
    """A queue by (pid, gpu_id, queue_id), or by (pid, ring_va) when ring_va is set."""

    pid: int
    gpu_id: int = 0
    queue_id: int = 0
    ring_va: int = None


@dataclasses.dataclass(frozen=True)
class Result:
    """One queue's outcome in suspend()/resume(); message says why when not ok."""

    ref: QueueRef
    ok: bool
    code: str
    errno: int
    state: int
    message: str


@dataclasses.dataclass(frozen=True)
class Event:
    type: int
    name: str
    timestamp_ns: int
    pid: int
    gpu_id: int
    queue_id: int
    error: int
    data: int


_GPU_FIELDS = [f.name for f in dataclasses.fields(Gpu)]
_QUEUE_FIELDS = [f.name for f in dataclasses.fields(Queue)]


def _to_ref(target):
    if isinstance(target, QueueRef):
        return target
    if isinstance(target, Queue):
        return target.ref()
    if isinstance(target, tuple) and len(target) == 3:
        return QueueRef(*target)
    raise InvalidError(
        "amdqp: name a queue as amdqp.Queue, amdqp.QueueRef, or (pid, gpu_id, queue_id), not %r"
        % (target,),
        _native.ERR_INVALID,
    )


def _to_c_ref(ref):
    c = _native.Ref()
    c.pid = ref.pid
    if ref.ring_va is not None:
        c.by_ring = 1
        c.ring_va = ref.ring_va
    else:
        c.gpu_id = ref.gpu_id
        c.queue_id = ref.queue_id
    return c


def _gpu_array(gpus):
    ids = list(gpus or ())
    return (ctypes.c_uint32 * len(ids))(*ids) if ids else None, len(ids)


def parse_priority(value):
    """'high' | 'normal' | 'low' | '0'..'15' | an int 0..15 -> int."""
    if isinstance(value, bool):
        raise InvalidError("amdqp: bad priority %r" % (value,), _native.ERR_INVALID)
    if isinstance(value, int):
        if PRIORITY_MIN <= value <= PRIORITY_MAX:
            return value
        value = str(value)
    if not isinstance(value, str):
        raise InvalidError("amdqp: bad priority %r" % (value,), _native.ERR_INVALID)
    try:
        lib = _native.load()
    except _native.LoadError:
        lib = None
    if lib is None:
        # Same words as the library, for hosts without it.
        words = {"high": HIGH, "normal": NORMAL, "low": LOW}
        v = value.lower()
        if v in words:
            return words[v]
        if v.isdigit() and len(v) <= 2 and int(v) <= PRIORITY_MAX:
            return int(v)
        raise InvalidError(
            "amdqp: bad priority '%s': use high (12), normal (7), low (2) or a number "
            "0..15 (15 highest)" % value,
            _native.ERR_INVALID,
        )
    out = ctypes.c_int()
    _check(lib.amdqp_parse_priority(value.encode(), ctypes.byref(out)), lib)
    return out.value


def priority_name(priority):
    """'high', 'normal', 'low' for 12, 7, 2; the number otherwise."""
    return {HIGH: "high", NORMAL: "normal", LOW: "low"}.get(priority, str(priority))


def library_version():
    return _native.text(_lib().amdqp_library_version())


class Device:
    """An open /dev/amdqp (or $AMDQP_DEVICE, or path). Suspensions belong to
    it: close() (or the end of the process) resumes them."""

    def __init__(self, path=None):
        self._lib = _lib()
        self._h = ctypes.c_void_p()
        if path is None:
            status = self._lib.amdqp_open(ctypes.byref(self._h))
        else:
            status = self._lib.amdqp_open_path(os.fsencode(path), ctypes.byref(self._h))
        _check(status, self._lib)

    @classmethod
    def _adopt(cls, handle):
        """Wraps an amdqp_t* made elsewhere (tests: a fake device)."""
        self = cls.__new__(cls)
        self._lib = _lib()
        self._h = ctypes.c_void_p(handle)
        return self

    def close(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            self._lib.amdqp_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _handle(self):
        if not self._h:
            raise InvalidError("amdqp: the device is closed", _native.ERR_INVALID)
        return self._h

    def fileno(self):
        return self._lib.amdqp_fd(self._handle())

    def version(self):
        v = _native.VersionInfo()
        v.size = ctypes.sizeof(v)
        _check(self._lib.amdqp_get_version(self._handle(), ctypes.byref(v)), self._lib)
        return {name: getattr(v, name) for name, _ in v._fields_ if name not in ("size", "pad")}

    def _grow(self, fetch, ctype, capacity):
        # The count may grow between calls: retry with room for it.
        while True:
            arr = (ctype * capacity)()
            n = _check(fetch(arr, capacity, ctypes.sizeof(ctype)), self._lib)
            if n <= capacity:
                return arr[:n]
            capacity = n + n // 4 + 8

    def devices(self):
        lib, h = self._lib, self._handle()
        rows = self._grow(lambda a, c, s: lib.amdqp_get_gpus(h, a, c, s), _native.GpuInfo, 8)
        return [Gpu(**{f: getattr(r, f) for f in _GPU_FIELDS}) for r in rows]

    gpus = devices

    def queues(self, gpu=0, pid=0):
        lib, h = self._lib, self._handle()
        rows = self._grow(
            lambda a, c, s: lib.amdqp_get_queues(h, gpu, pid, a, c, s), _native.QueueInfo, 64
        )
        return [Queue(**{f: getattr(r, f) for f in _QUEUE_FIELDS}) for r in rows]

    def find_queue(self, pid, ring_va=None, gpu=None, queue=None):
        """By (pid, ring_va) or (pid, gpu, queue); None if there is no such queue."""
        q = _native.QueueInfo()
        if ring_va is not None:
            status = self._lib.amdqp_find_queue_by_ring(
                self._handle(), pid, ring_va, ctypes.byref(q), ctypes.sizeof(q)
            )
        elif gpu is not None and queue is not None:
            status = self._lib.amdqp_find_queue(
                self._handle(), pid, gpu, queue, ctypes.byref(q), ctypes.sizeof(q)
            )
        else:
            raise InvalidError(
                "amdqp: find_queue needs ring_va, or gpu and queue", _native.ERR_INVALID
            )
        if status == _native.ERR_NO_QUEUE:
            return None
        _check(status, self._lib)
        return Queue(**{f: getattr(q, f) for f in _QUEUE_FIELDS})

    def set_priority(self, target, priority):
        """Sets a queue's priority ('high', 'low', 0..15...). Raising it needs CAP_SYS_NICE."""
        prio = parse_priority(priority)
        ref = _to_c_ref(_to_ref(target))
        _check(self._lib.amdqp_set_queue_priority(self._handle(), ctypes.byref(ref), prio),
               self._lib)
        return ref.state

    def _batch(self, targets, suspending, grace_us=0):
        refs = [_to_ref(t) for t in targets]
        if not refs:
            return []
        arr = (_native.Ref * len(refs))(*[_to_c_ref(r) for r in refs])
        size = ctypes.sizeof(_native.Ref)
        if suspending:
            status = self._lib.amdqp_suspend(self._handle(), arr, len(refs), size, grace_us, None)
        else:
            status = self._lib.amdqp_resume(self._handle(), arr, len(refs), size, None)
        _check(status, self._lib)
        out = []
        for ref, c in zip(refs, arr):
            ok = c.status == _native.OK
            code = "ok" if ok else _BY_STATUS.get(c.status, Error).code
            message = "" if ok else _native.text(
                self._lib.amdqp_ref_message(ctypes.byref(c), int(suspending)))
            out.append(Result(ref, ok, code, -c.error, c.state, message))
        return out

    def suspend(self, targets, grace_us=0):
        """Takes queues off the hardware (a hold of this Device). Returns a Result per queue."""
        return self._batch(targets, True, grace_us)

    def resume(self, targets):
        """Drops this Device's holds on the queues. Returns a Result per queue."""
        return self._batch(targets, False)

    def suspend_below(self, priority, gpus=(), grace_us=0):
        """Suspends every queue below priority on gpus (all when empty), except this
        process's. Returns (suspended, skipped)."""
        prio = 16 if priority == 16 else parse_priority(priority)
        ids, n = _gpu_array(gpus)
        stats = _native.BatchStats()
        stats.size = ctypes.sizeof(stats)
        _check(self._lib.amdqp_suspend_below(self._handle(), ids, n, prio, grace_us,
                                             ctypes.byref(stats)), self._lib)
        return stats.done, stats.skipped

    def resume_all(self, gpus=()):
        """Drops every hold of this Device on gpus (all when empty). Returns how many."""
        ids, n = _gpu_array(gpus)
        return _check(self._lib.amdqp_resume_all(self._handle(), ids, n, None), self._lib)

    def subscribe(self, mask=EVENT_MASK_ALL):
        """Starts (mask 0: stops) the event stream; returns its fd for select/poll."""
        _check(self._lib.amdqp_events_subscribe(self._handle(), mask), self._lib)
        return self._lib.amdqp_events_fd(self._handle())

    def read_events(self, timeout=0.0, max_events=64):
        """Events queued now, waiting up to timeout seconds (None: forever) for the first."""
        ms = -1 if timeout is None else int(timeout * 1000)
        arr = (_native.EventRecord * max_events)()
        n = _check(self._lib.amdqp_events_read(self._handle(), arr, max_events,
                                               ctypes.sizeof(_native.EventRecord), ms),
                   self._lib)
        return [
            Event(r.type, EVENT_TYPES.get(r.type, "unknown"), r.timestamp_ns, r.pid, r.gpu_id,
                  r.queue_id, r.error, r.data)
            for r in arr[:n]
        ]

    def events(self, mask=EVENT_MASK_ALL, timeout=None):
        """Yields events as they come; stops after timeout seconds without one
        (None: never)."""
        if self._lib.amdqp_events_fd(self._handle()) < 0:
            self.subscribe(mask)
        while True:
            got = self.read_events(timeout)
            if not got:
                if timeout is not None:
                    return
                continue
            yield from got


_default = None
_default_lock = threading.Lock()


def _device():
    global _default
    with _default_lock:
        if _default is None:
            _default = Device()
        return _default


def list_queues(gpu=0, pid=0):
    """Queues visible to this process, optionally on one GPU / of one process."""
    return _device().queues(gpu, pid)


def devices():
    return _device().devices()


def find_queue(pid, ring_va=None, gpu=None, queue=None):
    return _device().find_queue(pid, ring_va, gpu, queue)


def set_priority(target, priority):
    return _device().set_priority(target, priority)


def suspend(targets, grace_us=0):
    """Suspends queues until resume() or the end of this process."""
    return _device().suspend(targets, grace_us)


def resume(targets):
    return _device().resume(targets)


def suspend_below(priority, gpus=(), grace_us=0):
    return _device().suspend_below(priority, gpus, grace_us)


def resume_all(gpus=()):
    return _device().resume_all(gpus)


def events(mask=EVENT_MASK_ALL, timeout=None):
    """Iterates over events, on a Device of its own that the iterator closes
    when it ends. Opening happens now, so a missing module raises here."""
    dev = Device()
    try:
        dev.subscribe(mask)
    except Exception:
        dev.close()
        raise

    def stream():
        with dev:
            yield from dev.events(mask, timeout)

    return stream()
