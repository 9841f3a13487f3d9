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


def doc(result, ratio, lo, hi, wall=None, confine=None):
    d = {"verdict": {"result": result, "percentile": 95, "target": 1.5,
                     "ratio_ci": {"ratio": ratio, "lo": lo, "hi": hi, "n": [400, 400]},
                     "lp_loss": {"both+amdqpd": 0.11},
                     "hp_p95_vs_alone": {"both": 5.2, "both+amdqpd": ratio}}}
    if wall is not None:
        d["wall_s"] = wall
    if confine is not None:
        # (HP P99 ratio, LP loss) of confinement; suspension's and the CU
        # mask's fixed.
        side = {"both+amdqpd": {"hp_p99_vs_alone": 1.2, "lp_loss": 0.11,
                                "hp_p99_ci": [1, 1.4], "hp_p95_vs_alone": 1.1},
                "both+amdqpd-confine": {"hp_p99_vs_alone": confine[0], "lp_loss": confine[1],
                                        "hp_p99_ci": [1, 1.4], "hp_p95_vs_alone": 1.0},
                "both+cu-mask": {"hp_p99_vs_alone": 0.9, "lp_loss": 0.47,
                                 "hp_p99_ci": [0.8, 1], "hp_p95_vs_alone": 0.9}}
        d["verdict"]["confine"] = {"goal": {"hp_p99_vs_alone": 1.1, "lp_loss": 0.05},
                                   "side_by_side": side}
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

    def test_confine_medians_against_the_goal(self):
        r, s = self.run_it([doc("pass", 1.2, 1.0, 1.4, confine=(1.05, 0.04)),
                            doc("pass", 1.1, 1.0, 1.3, confine=(1.3, 0.03)),
                            doc("pass", 1.1, 1.0, 1.3, confine=(1.08, 0.06))])
        self.assertEqual(r.returncode, 0, r.stderr)
        c = s["confine"]
        self.assertEqual(c["runs"], 3)
        self.assertAlmostEqual(c["median"]["both+amdqpd-confine"]["hp_p99_vs_alone"], 1.08)
        self.assertAlmostEqual(c["median"]["both+amdqpd-confine"]["lp_loss"], 0.04)
        self.assertAlmostEqual(c["median"]["both+cu-mask"]["lp_loss"], 0.47)
        self.assertTrue(c["met"])
        self.assertEqual(s["runs"][1]["confine"]["both+amdqpd-confine"]["lp_loss"], 0.03)
        self.assertIn("by the medians: met", r.stdout)
        r, s = self.run_it([doc("pass", 1.2, 1.0, 1.4, confine=(1.2, 0.04))])
        self.assertFalse(s["confine"]["met"])
        self.assertIn("by the medians: not met", r.stdout)

    def test_runs_without_the_confine_phase(self):
        r, s = self.run_it([doc("pass", 1.2, 1.0, 1.4)])
        self.assertIsNone(s["confine"])
        self.assertIsNone(s["runs"][0]["confine"])
        self.assertNotIn("confine goal", r.stdout)

    def test_usage(self):
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("Usage", r.stderr)


if __name__ == "__main__":
    unittest.main()
