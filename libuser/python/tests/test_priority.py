# SPDX-License-Identifier: MIT
import unittest

import amdqp
from support import run_python


class Priority(unittest.TestCase):
    def test_words_and_numbers(self):
        self.assertEqual(amdqp.parse_priority("high"), 12)
        self.assertEqual(amdqp.parse_priority("NORMAL"), 7)
        self.assertEqual(amdqp.parse_priority("low"), 2)
        self.assertEqual(amdqp.parse_priority("0"), 0)
        self.assertEqual(amdqp.parse_priority("15"), 15)
        self.assertEqual(amdqp.parse_priority(9), 9)

    def test_rejects(self):
        for bad in ("16", "-1", "urgent", "", " 3", 16, -1, 2.5, None, True):
            with self.assertRaises(amdqp.InvalidError, msg=repr(bad)):
                amdqp.parse_priority(bad)
        with self.assertRaises(ValueError) as cm:
            amdqp.parse_priority("urgent")
        self.assertIn("'urgent'", str(cm.exception))
        self.assertIn("0..15", str(cm.exception))

    def test_names(self):
        self.assertEqual(amdqp.priority_name(12), "high")
        self.assertEqual(amdqp.priority_name(7), "normal")
        self.assertEqual(amdqp.priority_name(2), "low")
        self.assertEqual(amdqp.priority_name(5), "5")
        for p in range(16):
            self.assertEqual(amdqp.parse_priority(amdqp.priority_name(p)), p)

    def test_without_the_library(self):
        r = run_python(
            "import amdqp\n"
            "assert amdqp.parse_priority('high') == 12\n"
            "assert amdqp.parse_priority('3') == 3\n"
            "try:\n"
            "    amdqp.parse_priority('x')\n"
            "except amdqp.InvalidError as e:\n"
            "    print(e)\n",
            AMDQP_LIBRARY="/nonexistent/libamdqp.so.0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bad priority 'x'", r.stdout)


if __name__ == "__main__":
    unittest.main()
