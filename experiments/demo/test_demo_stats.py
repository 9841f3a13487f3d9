#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The demo verdict's statistics (demo.py): percentiles, the bootstrap
interval of a percentile ratio, pooling of runs, the ABBA run order and the
verdict rule, with fixed seeds; and main()'s verdict path end to end on
synthetic phases (no VM). ctest: experiments.demo_stats."""
import collections
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
import tomllib
import unittest
from contextlib import redirect_stdout

_spec = importlib.util.spec_from_file_location(
    "demo", os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.py"))
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)


class Percentile(unittest.TestCase):
    def test_nearest_rank(self):
        vals = list(range(1, 101))  # 1..100
        self.assertEqual(demo.pct(vals, 50), 51)
        self.assertEqual(demo.pct(vals, 95), 95)
        self.assertEqual(demo.pct(vals, 99), 99)
        self.assertEqual(demo.pct(vals, 100), 100)
        self.assertEqual(demo.pct([7], 99), 7)


class Resample(unittest.TestCase):
    def test_order_statistic_draw_matches_brute_force(self):
        # The Beta shortcut must give the law of "resample n with
        # replacement, sort, take the percentile".
        vals = sorted(random.Random(1).sample(range(1000), 40))
        q, draws = 90, 20000
        fast, slow = random.Random(2), random.Random(3)
        a = collections.Counter(demo.resample_pct(vals, q, fast) for _ in range(draws))
        b = collections.Counter(demo.pct(sorted(slow.choices(vals, k=len(vals))), q)
                                for _ in range(draws))
        tv = sum(abs(a[v] - b[v]) for v in set(a) | set(b)) / (2 * draws)
        self.assertLess(tv, 0.03, f"total variation {tv:.3f}")
        self.assertGreater(len(a), 3)  # it does vary


class Bootstrap(unittest.TestCase):
    def setUp(self):
        rng = random.Random(7)
        self.alone = [rng.lognormvariate(3.0, 0.3) for _ in range(400)]
        self.same = [rng.lognormvariate(3.0, 0.3) for _ in range(400)]
        self.slow = [2 * v for v in (rng.lognormvariate(3.0, 0.3) for _ in range(400))]

    def test_fixed_seed_is_reproducible(self):
        a = demo.bootstrap_ratio(self.same, self.alone, 95, 500, seed=5)
        b = demo.bootstrap_ratio(self.same, self.alone, 95, 500, seed=5)
        self.assertEqual(a, b)
        c = demo.bootstrap_ratio(self.same, self.alone, 95, 500, seed=6)
        self.assertNotEqual((a["lo"], a["hi"]), (c["lo"], c["hi"]))

    def test_interval_holds_the_point_and_the_truth(self):
        ci = demo.bootstrap_ratio(self.same, self.alone, 95)
        self.assertLessEqual(ci["lo"], ci["ratio"])
        self.assertLessEqual(ci["ratio"], ci["hi"])
        self.assertLess(ci["lo"], 1.0)
        self.assertGreater(ci["hi"], 1.0)
        self.assertLess(ci["hi"], 1.3)  # 400 requests pin a P95 down
        self.assertEqual(ci["n"], [400, 400])
        self.assertEqual((ci["resamples"], ci["seed"], ci["percentile"]), (2000, 28, 95))

    def test_doubled_latency_is_told_apart(self):
        ci = demo.bootstrap_ratio(self.slow, self.alone, 95)
        self.assertGreater(ci["lo"], 1.5)
        self.assertLess(ci["lo"], 2.0)
        self.assertGreater(ci["hi"], 2.0)

    def test_p99_interval_wider_than_p95(self):
        p95 = demo.bootstrap_ratio(self.same, self.alone, 95)
        p99 = demo.bootstrap_ratio(self.same, self.alone, 99)
        self.assertGreater(p99["hi"] - p99["lo"], p95["hi"] - p95["lo"])


class Pooling(unittest.TestCase):
    def test_pool_concatenates_and_sorts(self):
        self.assertEqual(demo.pool([[3, 1], [2], []]), [1, 2, 3])
        self.assertEqual(demo.pool(iter([[5], [4, 6]])), [4, 5, 6])


class Rule(unittest.TestCase):
    def test_edges(self):
        self.assertEqual(demo.verdict_on_interval(0.9, 1.5, 1.5), "pass")
        self.assertEqual(demo.verdict_on_interval(1.2, 1.51, 1.5), "inconclusive")
        self.assertEqual(demo.verdict_on_interval(1.5, 1.9, 1.5), "inconclusive")
        self.assertEqual(demo.verdict_on_interval(1.51, 1.9, 1.5), "fail")


class Order(unittest.TestCase):
    NAMES = ["hp-alone", "lp-alone", "both", "both+amdqpd", "both+cu-mask"]

    def test_abba_rounds(self):
        self.assertEqual(demo.schedule(self.NAMES, 2),
                         ["hp-alone", "both+amdqpd", "both+amdqpd", "hp-alone",
                          "lp-alone", "both", "both+cu-mask",
                          "hp-alone", "both+amdqpd", "both+amdqpd", "hp-alone"])
        o = demo.schedule(self.NAMES, 3)
        self.assertEqual(o.count("hp-alone"), 6)
        self.assertEqual(o.count("both+amdqpd"), 6)
        self.assertEqual(o.count("both"), 1)

    def test_three_compared_phases(self):
        names = self.NAMES + ["both+amdqpd-confine"]
        o = demo.schedule(names, 2)
        self.assertEqual(o[:6], ["hp-alone", "both+amdqpd", "both+amdqpd-confine",
                                 "both+amdqpd-confine", "both+amdqpd", "hp-alone"])
        self.assertEqual(o[6:9], ["lp-alone", "both", "both+cu-mask"])
        self.assertEqual(o[9:], o[:6])

    def test_one_phase(self):
        self.assertEqual(demo.schedule(["lp-alone"], 2), ["lp-alone"])
        self.assertEqual(demo.schedule(["hp-alone"], 1), ["hp-alone", "hp-alone"])


class MainVerdict(unittest.TestCase):
    """main() on synthetic phases: each run of a phase draws latencies from
    a lognormal scaled by the phase's factor (and the run's drift)."""

    def run_main(self, factor, drift=(1.0,), confine=(1.05, 9.6), argv=()):
        calls = []
        rng = random.Random(11)
        scale = {"hp-alone": 1.0, "both": 5.0, "both+amdqpd": factor,
                 "both+amdqpd-confine": confine[0]}

        def fake_phase(args, name, seconds, hp=True, lp=True, **kw):
            self.args = args
            d = drift[len(calls) % len(drift)]
            calls.append((name, seconds))
            out = {"sched_updates": 1}
            if hp:
                n = int(seconds * args.rate)
                lat = sorted(rng.lognormvariate(10, 0.3) * scale.get(name, 1.0) * d
                             for _ in range(n))
                out["hp"] = demo.hp_stats(lat, 5)
                out["_lat"] = lat
            if lp:
                out["lp"] = {"it_per_s": 10.0 if not hp else
                             confine[1] if name == "both+amdqpd-confine" else 8.8}
            return out

        saved = demo.run_phase, demo.setup, sys.argv
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "demo.json")
            demo.run_phase, demo.setup = fake_phase, lambda args: None
            sys.argv = ["demo.py", "--json", path, *argv]
            try:
                with redirect_stdout(io.StringIO()) as out:
                    rc = demo.main()
            finally:
                demo.run_phase, demo.setup, sys.argv = saved
            with open(path) as f:
                doc = json.load(f)
        return rc, doc, calls, out.getvalue()

    def test_pass_pooled_and_fields(self):
        rc, doc, calls, text = self.run_main(1.05, drift=(1.0, 1.3, 0.9))
        self.assertEqual(rc, 0, text)
        self.assertEqual(len(calls), 17)
        self.assertEqual(calls.count(("hp-alone", 20.0)), 4)
        self.assertEqual(calls.count(("both+amdqpd", 20.0)), 4)
        self.assertEqual(calls.count(("both+amdqpd-confine", 20.0)), 4)
        self.assertEqual(calls.count(("both", 10.0)), 1)
        ph = doc["phases"]
        for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms", "n", "warmup_requests"):
            self.assertIn(k, ph["hp-alone"]["hp"])
        self.assertEqual(ph["hp-alone"]["hp"]["n"], 400)
        self.assertEqual(ph["both+amdqpd"]["hp"]["n"], 400)
        self.assertEqual(len(ph["hp-alone"]["hp"]["runs_p99_ms"]), 4)
        self.assertEqual(ph["hp-alone"]["runs"], 4)
        self.assertEqual(ph["both"]["hp"]["n"], 50)
        v = doc["verdict"]
        for k in ("hp_p99_vs_alone", "lp_loss", "lp_loss_bound", "pass"):
            self.assertIn(k, v)
        self.assertTrue(v["pass"])
        self.assertEqual(v["result"], "pass")
        self.assertLessEqual(v["ratio_ci"]["hi"], 1.5)
        self.assertEqual(v["ratio_ci"]["n"], [400, 400])
        self.assertEqual(len(doc["runs"]), 17)
        self.assertIn("PASS:", text)
        cv = v["confine"]
        self.assertEqual(cv["cu_demand"], 0.5)
        self.assertEqual(set(cv["side_by_side"]),
                         {"both+amdqpd", "both+amdqpd-confine", "both+cu-mask"})
        self.assertAlmostEqual(cv["side_by_side"]["both+amdqpd-confine"]["lp_loss"], 0.04)
        self.assertAlmostEqual(cv["side_by_side"]["both+amdqpd"]["lp_loss"], 0.12)
        self.assertTrue(cv["met"])
        self.assertIn("MET (", text)

    def test_confine_goal_not_met(self):
        # A slower P99 or a heavier loss each miss the goal; suspension's
        # verdict (the exit status) does not change with it.
        for confine in ((2.0, 9.6), (1.0, 9.0)):
            rc, doc, _, text = self.run_main(1.05, confine=confine)
            self.assertEqual(rc, 0, text)
            self.assertFalse(doc["verdict"]["confine"]["met"])
            self.assertIn("NOT MET", text)

    def test_confine_demand_option(self):
        rc, doc, _, text = self.run_main(1.05, argv=["--confine-demand", "0.25"])
        self.assertEqual(doc["verdict"]["confine"]["cu_demand"], 0.25)
        self.assertEqual(doc["workload"]["confine_demand"], 0.25)
        self.assertIn("cu_demand high = 0.25", text)
        # amdqpd's config for the phase: the demo's policy plus the demand.
        cfg = tomllib.loads(self.args.confine_config)
        self.assertEqual(cfg["policy"]["cu_demand"], {"high": 0.25})
        plain = tomllib.loads(self.args.daemon_config)
        self.assertNotIn("cu_demand", plain["policy"])
        del cfg["policy"]["cu_demand"]
        self.assertEqual(cfg, plain)

if __name__ == "__main__":
    unittest.main(verbosity=2)
