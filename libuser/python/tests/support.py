# SPDX-License-Identifier: MIT
"""What the tests need from their environment (set by ctest, see
libuser/python/CMakeLists.txt)."""
import os
import subprocess
import sys
import unittest


def run_python(code, **env):
    """Runs code in a fresh interpreter with env on top of ours."""
    full = dict(os.environ)
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=60)


def require_env(name):
    value = os.environ.get(name)
    if not value:
        raise unittest.SkipTest("$%s is not set (run through ctest)" % name)
    return value
