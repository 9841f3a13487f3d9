# SPDX-License-Identifier: MIT
import unittest

import amdqp
from support import run_python

HINT_CODE = """
import amdqp
assert amdqp.busy_begin() in (True, False)
assert amdqp.busy_end() in (True, False)
with amdqp.busy():
    pass
@amdqp.busy()
def work():
    return 42
assert work() == 42
print("done")
"""


class Hint(unittest.TestCase):
    def test_calls_return_and_nest(self):
        self.assertIn(amdqp.busy_begin(), (True, False))
        self.assertIn(amdqp.busy_begin(), (True, False))
        self.assertIn(amdqp.busy_end(), (True, False))
        self.assertIn(amdqp.busy_end(), (True, False))
        with amdqp.busy() as b:
            self.assertIsInstance(b, amdqp.busy)

    def test_body_exceptions_pass_through(self):
        with self.assertRaises(KeyError):
            with amdqp.busy():
                raise KeyError("model failed")

    def test_never_raises_without_the_library(self):
        r = run_python(HINT_CODE, AMDQP_LIBRARY="/nonexistent/libamdqp.so.0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "done")
        self.assertEqual(r.stderr, "")

    def test_never_raises_with_a_library_lacking_the_api(self):
        # Loads, but has neither the C API nor the hint functions.
        r = run_python(HINT_CODE, AMDQP_LIBRARY="libc.so.6")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "done")
        self.assertEqual(r.stderr, "")

    def test_never_raises_without_the_device(self):
        r = run_python(HINT_CODE, AMDQP_DEVICE="/nonexistent/amdqp")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "done")


if __name__ == "__main__":
    unittest.main()
