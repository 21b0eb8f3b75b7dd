#!/usr/bin/env python3
"""Tests of the dimmap-budget command line: exit statuses, bad input, OOM report, signals.

usage: budget_cli_test.py DIMMAP_BUDGET BUDGET_TEST_HELPER
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BUDGET = sys.argv[1] if len(sys.argv) > 1 else "dimmap-budget"
HELPER = sys.argv[2] if len(sys.argv) > 2 else "budget-test-helper"


def budget(*args, timeout=60):
    return subprocess.run([BUDGET, *args], capture_output=True, text=True, timeout=timeout)


class BudgetCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="budget-cli-", dir=os.environ.get("DIMMAP_TEST_DIR"))
        self.report = os.path.join(self.tmp.name, "report.json")

    def tearDown(self):
        self.tmp.cleanup()

    def read_report(self):
        with open(self.report) as f:
            return json.load(f)

    def test_help(self):
        r = budget("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--memory", r.stdout)

    def test_bad_sizes_are_rejected_before_anything_runs(self):
        for size in ["0", "-5", "12Q", "512K", "", "1.5G"]:
            with self.subTest(size=size):
                r = budget(f"--memory={size}", "--report", self.report, "--", "/bin/true")
                self.assertEqual(r.returncode, 2, r.stderr)  # a usage error, before CMD runs
                self.assertIn("dimmap-budget: ", r.stderr)
                self.assertRegex(r.stderr, r"memory|size|budget")
                self.assertFalse(os.path.exists(self.report), "no report for a run that did not happen")

    def test_memory_is_required(self):
        r = budget("--", "/bin/true")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--memory", r.stderr)

    def test_command_is_required(self):
        r = budget("--memory=64M")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no command given", r.stderr)

    def test_exit_status_passes_through_with_and_without_double_dash(self):
        self.assertEqual(budget("--memory=64M", "--", "/bin/sh", "-c", "exit 3").returncode, 3)
        self.assertEqual(budget("--memory=64M", "/bin/sh", "-c", "exit 4").returncode, 4)

    def test_missing_program(self):
        r = budget("--memory=64M", "--", "/nonexistent/program")
        self.assertEqual(r.returncode, 127)
        self.assertIn("/nonexistent/program", r.stderr)

    def test_oom_kill_is_reported_and_the_cgroup_removed(self):
        r = budget("--memory=48M", "--report", self.report, "--", HELPER, "alloc", "200")
        self.assertEqual(r.returncode, 128 + signal.SIGKILL, r.stderr)
        self.assertIn("OOM killer fired", r.stderr)
        rep = self.read_report()
        self.assertTrue(rep["oom_killed"])
        self.assertEqual(rep["limit_bytes"], 48 << 20)
        self.assertLessEqual(rep["peak_bytes"], 48 << 20)
        self.assertFalse(os.path.exists(rep["cgroup"]))

    def test_success_reports_peak(self):
        r = budget("--memory=128M", "--report", self.report, "--", HELPER, "alloc", "32")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("touched 32 MiB", r.stdout)
        self.assertIn("no OOM kill", r.stderr)
        rep = self.read_report()
        self.assertGreaterEqual(rep["peak_bytes"], 32 << 20)
        self.assertLessEqual(rep["peak_bytes"], 128 << 20)
        self.assertFalse(os.path.exists(rep["cgroup"]))

    def test_sigterm_is_forwarded_and_the_cgroup_removed(self):
        p = subprocess.Popen([BUDGET, "--memory=64M", "--report", self.report, "--", "sleep", "30"],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        start = time.monotonic()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=15)
        self.assertLess(time.monotonic() - start, 10, "sleep must die at once, not after 30 s")
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        rep = self.read_report()
        self.assertEqual(rep["signal"], signal.SIGTERM)
        self.assertFalse(os.path.exists(rep["cgroup"]))


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("dimmap-budget needs root to create cgroups; skipping")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
