# SPDX-License-Identifier: MIT
import os
import unittest

import amdqp
from support import run_python


class NoDevice(unittest.TestCase):
    def setUp(self):
        os.environ["AMDQP_DEVICE"] = "/nonexistent/amdqp"
        amdqp._default = None

    def tearDown(self):
        del os.environ["AMDQP_DEVICE"]
        amdqp._default = None

    def assert_no_module(self, fn, *args):
        with self.assertRaises(amdqp.NoModuleError) as cm:
            fn(*args)
        e = cm.exception
        self.assertIsInstance(e, amdqp.Error)
        self.assertEqual(e.code, "no_module")
        self.assertIn("amdqp: /nonexistent/amdqp not found", str(e))
        self.assertIn("modprobe amdqp", str(e))
        return e

    def test_list_queues_names_the_module(self):
        e = self.assert_no_module(amdqp.list_queues)
        self.assertEqual(e.errno, 2)  # ENOENT

    def test_every_call_that_needs_the_device(self):
        self.assert_no_module(amdqp.devices)
        self.assert_no_module(amdqp.set_priority, (1, 1, 1), "low")
        self.assert_no_module(amdqp.suspend, [(1, 1, 1)])
        self.assert_no_module(amdqp.resume, [(1, 1, 1)])
        self.assert_no_module(amdqp.suspend_below, 8)
        self.assert_no_module(amdqp.events)
        self.assert_no_module(amdqp.Device)
        self.assert_no_module(amdqp.Device, "/nonexistent/amdqp")


class Library(unittest.TestCase):
    def test_missing_library_is_an_amdqp_error(self):
        r = run_python(
            "import amdqp\n"
            "try:\n"
            "    amdqp.list_queues()\n"
            "except amdqp.LibraryNotFoundError as e:\n"
            "    print(e)\n",
            AMDQP_LIBRARY="/nonexistent/libamdqp.so.0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("amdqp: cannot load libamdqp", r.stdout)
        self.assertIn("AMDQP_LIBRARY", r.stdout)

    def test_versions_agree(self):
        expected = os.environ.get("AMDQP_VERSION_EXPECTED")
        if expected:
            self.assertEqual(amdqp.__version__, expected)
        self.assertEqual(amdqp.library_version(), amdqp.__version__)


if __name__ == "__main__":
    unittest.main()
