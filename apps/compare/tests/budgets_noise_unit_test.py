#!/usr/bin/python3
"""Unit tests of what makes a comparison trustworthy: budgets derived from several calibrations
(reproducible, recorded), the "not out-of-core" flag of a budget that holds the whole data set,
ratios whose repeats overlap marked "within noise", the progress counter, and the runner's
measurement of the process's own memory."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dimmap_compare import budgets, units  # noqa: E402
from dimmap_compare.experiment import Experiment, Point, _run_points  # noqa: E402
from dimmap_compare.experiments.bfs import BfsFull  # noqa: E402
from dimmap_compare.plots import VALUE_FORMAT, ratio_lines  # noqa: E402
from dimmap_compare.results import ExperimentResult, Ratio, ratio_point  # noqa: E402
from dimmap_compare.runner import OK, Run, Runner  # noqa: E402
from dimmap_compare.table import format_experiment  # noqa: E402
from dimmap_compare.tools import Tools  # noqa: E402

M = 1 << 20


def result_with(runs):
    """runs: (config, x, value, budget, data_bytes) tuples, all ok."""
    r = ExperimentResult(name="t", figure="Fig. 0", title="test", about="", metric="TEPS", unit="edges/s",
                         x_label="threads", params={"repeat": 3})
    for i, (config, x, value, budget, data) in enumerate(runs):
        r.add_run(Point(config, x, ["true"], budget, None, data_bytes=data), i, Run(OK, value=value, wall_s=1.0))
    return r


class BudgetDerivation(unittest.TestCase):
    def test_median_of_calibrations_ignores_one_outlier(self):
        # The runs that gave 22.6M and 11.7M peaks: one outlier among three no longer decides the budget.
        first, d1 = budgets.derive_overhead([int(11.7 * M), int(22.6 * M), int(12.0 * M)], int(4.4 * M))
        second, d2 = budgets.derive_overhead([int(12.1 * M), int(11.8 * M), int(23.0 * M)], int(4.4 * M))
        self.assertLess(abs(first - second) / first, 0.05)
        self.assertEqual(d1["median_bytes"], int(12.0 * M))
        self.assertEqual(d1["calibrations"], 3)
        self.assertEqual(d1["footprints_bytes"], sorted(d1["footprints_bytes"]))
        self.assertGreater(d1["spread"], 0.9)  # the outlier is recorded, not hidden

    def test_overhead_is_median_minus_buffer_plus_margin(self):
        overhead, d = budgets.derive_overhead([30 * M, 20 * M, 25 * M], 16 * M, peaks=[60 * M, 40 * M])
        self.assertEqual(d["margin_bytes"], int(25 * M * 0.10))
        self.assertEqual(overhead, 25 * M - 16 * M + int(25 * M * 0.10))
        self.assertEqual(d["cgroup_peaks_bytes"], [40 * M, 60 * M])
        self.assertIn("median own resident memory of 3 calibration run(s)", d["rule"])
        text = budgets.describe_derivation(d)
        self.assertIn("20M-30M over 3 calibration(s)", text)
        self.assertIn("buffer 16M", text)

    def test_a_page_cache_buffer_is_not_taken_out_of_the_footprint(self):
        # The pagecache engine: 3M of heap, the 16M buffer in the data file's page cache.
        overhead, d = budgets.derive_overhead([3 * M, 3 * M, 3 * M], 16 * M, shared=[0, 0, 0])
        self.assertEqual(overhead, 3 * M + 2 * M)
        self.assertEqual(d["buffer_counted_bytes"], 0)
        self.assertIn("0 of the 16M buffer", budgets.describe_derivation(d))
        # The userfaultfd engine: the buffer is a memfd, shared memory inside the footprint.
        overhead, d = budgets.derive_overhead([19 * M, 19 * M, 20 * M], 16 * M, shared=[16 * M, 16 * M, 15 * M])
        self.assertEqual(overhead, 19 * M - 16 * M + 2 * M)
        self.assertIn("buffer 16M", budgets.describe_derivation(d))

    def test_small_footprints_get_at_least_two_mebibytes(self):
        overhead, d = budgets.derive_overhead([2 * M], 2 * M)
        self.assertEqual((overhead, d["margin_bytes"]), (2 * M, 2 * M))

    def test_no_measurement_is_an_error(self):
        for footprints in ([], [None, 0]):
            with self.assertRaises(budgets.CalibrationError):
                budgets.derive_overhead(footprints, M)


class FakeRunner:
    """Gives each calibration run the next footprint; counts the runs."""

    def __init__(self, rss):
        self.rss = list(rss)
        self.commands = []

    def run(self, cmd, budget, parse, **kw):
        self.commands.append(cmd)
        self.measured = kw.get("measure_footprint", False)
        return Run(OK, value=1.0, wall_s=0.1, footprint_bytes=self.rss.pop(0), peak_bytes=100 * M)


class FakeContext:
    def __init__(self, mode, runner):
        self.mode, self.runner, self.messages, self.repeat = mode, runner, [], 1
        self.tools = Tools("/nonexistent", "/nonexistent", {"bfs": "/bin/true"})

    def pick(self, full, quick, smoke=None):
        return {"full": full, "quick": quick}.get(self.mode, quick if smoke is None else smoke)

    def log(self, msg):
        self.messages.append(msg)


class BfsCalibration(unittest.TestCase):
    def test_quick_calibrates_three_times_and_records_how(self):
        runner = FakeRunner([9 * M, 30 * M, 10 * M])
        ctx = FakeContext("quick", runner)
        p = {"graph": "/g", "roots": 2, "threads": [4, 16], "algo_bytes": M}
        overhead = BfsFull().overhead(ctx, p, ["--backend=dimmap"], 4 * M, "/s")
        self.assertEqual(len(runner.commands), 3)
        self.assertTrue(runner.measured)
        self.assertTrue(all("--threads=16" in c and f"--buffer={4 * M}" in c for c in runner.commands))
        self.assertEqual(overhead, 10 * M - 4 * M + 2 * M)  # median footprint, not the 100M cgroup peak
        self.assertEqual(p["calibration"][""]["footprints_bytes"], [9 * M, 10 * M, 30 * M])
        self.assertIn("median 10M", p["budget_derivation"][""])
        self.assertTrue(any("calibration" in m for m in ctx.messages))

    def test_tmpfs_storage_counts_the_cgroup_peak(self):
        runner = FakeRunner([9 * M])
        p = {"graph": "/g", "roots": 1, "threads": [4], "algo_bytes": M, "storage": "tmpfs (/dev/shm)"}
        overhead = BfsFull().overhead(FakeContext("smoke", runner), p, [], 4 * M, "/s", key="x")
        self.assertEqual(overhead, 100 * M - 4 * M + 10 * M)
        self.assertEqual(p["calibration"]["x"]["source"], "cgroup peak")


class OutOfCore(unittest.TestCase):
    def test_budget_holding_the_data_is_flagged(self):
        self.assertTrue(budgets.holds_data(int(23.7 * M), int(17.6 * M)))
        self.assertFalse(budgets.holds_data(int(12.7 * M), int(17.6 * M)))
        self.assertFalse(budgets.holds_data(512 * M, None))  # unconstrained references are not checked
        self.assertIn("holds all 17.6M", budgets.not_out_of_core_note(int(23.7 * M), int(17.6 * M)))
        self.assertEqual(budgets.not_out_of_core_note(int(12.7 * M), int(17.6 * M)), "")

    def test_table_and_ratio_show_the_flag(self):
        big, data = int(23.7 * M), int(17.6 * M)
        r = result_with([("dimmap", 4, 1.0, big, data), ("mmap", 4, 6.0, big, data),
                         ("in memory", 4, 9.0, 10 * big, None)])
        r.ratios = [Ratio("dimmap", "mmap", "dimmap / mmap")]
        s = {x["config"]: x for x in r.summary()}
        self.assertTrue(s["mmap"]["not_out_of_core"])
        self.assertFalse(s["in memory"]["not_out_of_core"])
        text = format_experiment(r)
        self.assertIn("6\u2020", text)
        self.assertIn("not out-of-core: the budget 23.7M holds all 17.6M of the data (2 point(s))", text)
        self.assertIn("0.17x @ 4 (not out-of-core)", text)

    def test_out_of_core_points_are_not_flagged(self):
        r = result_with([("mmap", 4, 6.0, int(12.7 * M), int(17.6 * M))])
        self.assertNotIn("\u2020", format_experiment(r))


class Noise(unittest.TestCase):
    def summary(self, values):
        return {"value": sorted(values)[len(values) // 2], "ok": len(values), "min": min(values), "max": max(values)}

    def test_overlapping_runs_are_within_noise(self):
        p = ratio_point(4, self.summary([10.0, 12.0, 14.0]), self.summary([11.0, 13.0, 15.0]))
        self.assertTrue(p.within_noise)
        self.assertAlmostEqual(p.low, 10 / 15)
        self.assertAlmostEqual(p.high, 14 / 11)
        self.assertAlmostEqual(p.value, 12 / 13)

    def test_separate_runs_are_not(self):
        p = ratio_point(4, self.summary([20.0, 21.0, 22.0]), self.summary([10.0, 11.0, 12.0]))
        self.assertFalse(p.within_noise)
        self.assertGreater(p.low, 1.0)

    def test_touching_ranges_count_as_overlap(self):
        self.assertTrue(ratio_point(1, self.summary([5.0, 6.0]), self.summary([6.0, 7.0])).within_noise)

    def test_single_runs_have_no_verdict(self):
        p = ratio_point(4, self.summary([10.0]), self.summary([11.0, 12.0]))
        self.assertIsNone(p.within_noise)
        self.assertIsNone(p.low)

    def test_table_and_plot_mark_within_noise_and_spread(self):
        r = result_with([("single-page", 4, v, 40 * M, 160 * M) for v in (2.0, 2.3, 2.6)] +
                        [("bulk", 4, v, 40 * M, 160 * M) for v in (1.0, 2.1, 2.5)] +
                        [("single-page", 16, v, 40 * M, 160 * M) for v in (3.0, 3.1, 3.2)] +
                        [("bulk", 16, v, 40 * M, 160 * M) for v in (1.0, 1.1, 1.2)])
        r.ratios = [Ratio("single-page", "bulk", "single-page / bulk")]
        text = format_experiment(r)
        self.assertIn("2.3 (2-2.6)", text)  # median (min-max) in the cell
        self.assertIn("1.10x [0.80-2.60] @ 4 (within noise)", text)
        self.assertIn("2.82x [2.50-3.20] @ 16\n", text)
        self.assertIn("3.1 (3-3.2)", text)
        self.assertNotIn("@ 16 (within noise)", text)
        self.assertIn("within noise: the runs of one side overlap", text)
        [line] = ratio_lines(r)
        self.assertIn("@ 4 (within noise)", line)


class Progress(unittest.TestCase):
    def test_counter_counts_only_runs_that_are_made(self):
        class Exp(Experiment):
            name = "t"

            def repeats(self, ctx):
                return 3

        runner = FakeRunner([M] * 6)
        ctx = FakeContext("quick", runner)
        points = [Point("a", 1, ["true"], M, None), Point("skipped", 1, ["true"], M, None, skip="no module"),
                  Point("b", 1, ["true"], M, None)]
        r = ExperimentResult(name="t", figure="", title="", about="", metric="", unit="", x_label="threads")
        _run_points(Exp(), points, ctx, r, "[t]")
        counts = [m.split()[1] for m in ctx.messages]
        self.assertEqual(counts, ["1/6", "2/6", "3/6", "4/6", "5/6", "6/6"])
        self.assertEqual([run["repeat"] for run in r.runs if run["config"] == "a"], [0, 1, 2])
        self.assertEqual(sum(run["status"] == "skipped" for run in r.runs), 1)

    def test_point_holding_its_data_is_warned_about(self):
        runner = FakeRunner([M])
        ctx = FakeContext("smoke", runner)
        r = ExperimentResult(name="t", figure="", title="", about="", metric="", unit="", x_label="threads")
        _run_points(Experiment(), [Point("mmap", 4, ["true"], 64 * M, None, data_bytes=32 * M)], ctx, r, "[t]")
        self.assertTrue(any("warning: mmap, threads 4: not out-of-core" in m for m in ctx.messages), ctx.messages)


class Cosmetics(unittest.TestCase):
    def test_small_genomes_are_not_zero(self):
        self.assertEqual(units.format_megabases(48502), "0.05 Mb")
        self.assertEqual(units.format_megabases(4641652), "4.6 Mb")
        self.assertEqual(units.format_megabases(5000), "0.005 Mb")

    def test_axis_values_are_not_milli(self):
        self.assertEqual(VALUE_FORMAT(0.5, 0), "0.5")
        self.assertEqual(VALUE_FORMAT(12e6, 0), "12M")
        self.assertEqual(VALUE_FORMAT(0, 0), "0")

    def test_table_header_carries_the_x_unit(self):
        r = result_with([("mmap", 12.7, 1.0, 13 * M, 17 * M)])
        r.x_label, r.x_unit = "memory budget", "MiB"
        self.assertIn("configuration \\ memory budget [MiB]", format_experiment(r))


# A stand-in for dimmap-budget that runs the command (no cgroup, no report).
FAKE_BUDGET = """#!/bin/sh
while [ "$1" != "--" ]; do shift; done; shift
exec "$@"
"""


def runner_without_cgroup(d):
    """A Runner whose dimmap-budget (written into directory d) only runs the command."""
    fake = os.path.join(d, "fake-budget")
    with open(fake, "w") as f:
        f.write(FAKE_BUDGET)
    os.chmod(fake, 0o755)
    return Runner(Tools(d, d, {"dimmap-budget": fake}), d, 30)


class Footprint(unittest.TestCase):
    def test_runner_measures_the_command_own_memory(self):
        with tempfile.TemporaryDirectory() as d:
            runner = runner_without_cgroup(d)
            # 64 MiB of anonymous memory, every page written, held long enough to be sampled.
            touch = "import time; b = bytearray(64 << 20); time.sleep(0.3); print(len(b))"
            run = runner.run([sys.executable, "-c", touch], 1 << 30, lambda out, err, s: (float(out), {}),
                             measure_footprint=True)
            self.assertEqual(run.status, OK, run.error)
            self.assertGreater(run.footprint_bytes, 64 * M)
            self.assertLess(run.footprint_bytes, 256 * M)
            # The small command's own memory, not that of this (bigger) test process.
            small = runner.run(["sleep", "0.2"], 1 << 30, lambda out, err, s: (1.0, {}), measure_footprint=True)
            self.assertLess(small.footprint_bytes, 16 * M)
            self.assertEqual(os.listdir(d), ["fake-budget"])  # the footprint file is removed
            self.assertIsNone(runner.run(["true"], 1 << 30, lambda *a: (1.0, {})).footprint_bytes)

    def test_runner_measures_shared_memory_apart(self):
        with tempfile.TemporaryDirectory() as d:
            runner = runner_without_cgroup(d)
            # 32 MiB of a shared anonymous mapping (shmem, as a memfd buffer), every page written.
            share = ("import mmap, time; m = mmap.mmap(-1, 32 << 20); "
                     "[m.__setitem__(i, 1) for i in range(0, 32 << 20, 4096)]; time.sleep(0.3); print(1)")
            run = runner.run([sys.executable, "-c", share], 1 << 30, lambda out, err, s: (float(out), {}),
                             measure_footprint=True)
            self.assertEqual(run.status, OK, run.error)
            self.assertGreaterEqual(run.footprint_shared_bytes, 32 * M)
            self.assertGreaterEqual(run.footprint_bytes, run.footprint_shared_bytes)

    def test_a_launcher_is_measured_with_the_program_it_starts(self):
        """dimmap-run forks the program it runs: the memory is the child's, not the launcher's."""
        with tempfile.TemporaryDirectory() as d:
            runner = runner_without_cgroup(d)
            touch = "import time; b = bytearray(64 << 20); time.sleep(0.3); print(len(b))"
            launcher = ["sh", "-c", f"{sys.executable} -c '{touch}'; exit $?"]
            run = runner.run(launcher, 1 << 30, lambda out, err, s: (float(out), {}), measure_footprint=True)
            self.assertEqual(run.status, OK, run.error)
            self.assertGreater(run.footprint_bytes, 64 * M)


if __name__ == "__main__":
    unittest.main()
