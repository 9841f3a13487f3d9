# SPDX-License-Identifier: MIT
"""The hint API: tell the policy where high-priority work starts and ends.

    with amdqp.busy():
        y = model(x)

It never raises and never prints: without libamdqp, without the hint
functions in it, without /dev/amdqp or a daemon, it does nothing.
"""
import contextlib

from . import _native

_functions = {}


def _call(name):
    try:
        fn = _functions.get(name)
        if fn is None:
            fn = getattr(_native.load(), name, None)
            if fn is None:
                return False
            _functions[name] = fn
        return fn() == 0
    except Exception:  # noqa: BLE001 - a hint must never break the caller
        return False


def busy_begin():
    """Marks the start of high-priority work. True if the hint was recorded."""
    return _call("amdqp_busy_begin")


def busy_end():
    """Marks its end. True if the hint was recorded."""
    return _call("amdqp_busy_end")


class busy(contextlib.ContextDecorator):
    """Context manager (and decorator) around busy_begin()/busy_end().

    Exceptions of the body go through unchanged; the hint itself raises none.
    """

    def __enter__(self):
        busy_begin()
        return self

    def __exit__(self, exc_type, exc, tb):
        busy_end()
        return False
