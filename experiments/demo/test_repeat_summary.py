#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""repeat_summary.py (scripts/demo-repeat.sh's summary) on synthetic demo
JSON: the median, the all-pass rule, exit codes. ctest:
experiments.demo_repeat_summary."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "repeat_summary.py")


def doc(result, ratio, lo, hi, wall=None):
    d = {"verdict": {"result": result, "percentile": 95, "target": 1.5,
                     "ratio_ci": {"ratio": ratio, "lo": lo, "hi": hi, "n": [400, 400]},
                     "lp_loss": {"both+amdqpd": 0.11},
                     "hp_p95_vs_alone": {"both": 5.2, "both+amdqpd": ratio}}}
    if wall is not None:
        d["wall_s"] = wall
    return d


class RepeatSummary(unittest.TestCase):
    def run_it(self, docs):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for k, d in enumerate(docs):
                p = os.path.join(tmp, f"run-{k}.json")
                with open(p, "w") as f:
                    f.write(d if isinstance(d, str) else json.dumps(d))
                paths.append(p)
            out = os.path.join(tmp, "summary.json")
            r = subprocess.run([sys.executable, SCRIPT, out] + paths, capture_output=True,
                               text=True)
            summary = None
            if os.path.exists(out):
                with open(out) as f:
                    summary = json.load(f)
            return r, summary

    def test_all_pass_and_the_median(self):
        r, s = self.run_it([doc("pass", 1.2, 1.0, 1.4, 300), doc("pass", 0.9, 0.8, 1.1),
                            doc("pass", 1.05, 0.9, 1.3)])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(s["all_pass"])
        self.assertEqual(s["count"], 3)
        self.assertAlmostEqual(s["median_ratio"], 1.05)
        self.assertEqual(s["runs"][0]["wall_s"], 300)
        self.assertEqual(s["runs"][1]["without_amdqpd"], 5.2)
        self.assertIn("3 of 3 passed", r.stdout)
        self.assertIn("goal 1.1x (met)", r.stdout)

    def test_one_inconclusive_run_fails_the_series(self):
        r, s = self.run_it([doc("pass", 1.2, 1.0, 1.4), doc("inconclusive", 1.4, 1.2, 1.6)])
        self.assertEqual(r.returncode, 1)
        self.assertFalse(s["all_pass"])
        self.assertAlmostEqual(s["median_ratio"], 1.3)
        self.assertIn("1 of 2 passed", r.stdout)
        self.assertIn("(not met)", r.stdout)

    def test_a_run_without_a_verdict_is_an_error(self):
        r, s = self.run_it([doc("pass", 1.2, 1.0, 1.4), {"phases": {}}])
        self.assertEqual(r.returncode, 2)
        self.assertIn("run 2: no verdict", r.stderr)
        self.assertIsNone(s)
        r, s = self.run_it(["{not json"])
        self.assertEqual(r.returncode, 2)

    def test_usage(self):
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("Usage", r.stderr)


if __name__ == "__main__":
    unittest.main()
