#!/usr/bin/env python3
"""Tests of the lriot command line: bad input gets a clear message and a non-zero exit, and
good runs print results (text and JSON) that match what was asked.

usage: lriot_cli_test.py LRIOT DATA_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

LRIOT = sys.argv[1] if len(sys.argv) > 1 else "lriot"
DATA_DIR = sys.argv[2] if len(sys.argv) > 2 else None
PAGE = 4096


def lriot(*args, timeout=120):
    return subprocess.run([LRIOT, *args], capture_output=True, text=True, timeout=timeout)


class LriotCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(DATA_DIR, exist_ok=True) if DATA_DIR else None
        cls.tmp = tempfile.TemporaryDirectory(prefix="lriot-cli-", dir=DATA_DIR)
        cls.file = os.path.join(cls.tmp.name, "f.dat")
        r = lriot(f"--file={cls.file}", "--create=8M", "--create-only")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def expect_error(self, words, *args, status=1):
        """Bad input: exit 1 (2 for a bad option value), a message with `words`, no result."""
        r = lriot(*args)
        self.assertEqual(r.returncode, status, f"{args}: {r.stderr}")
        self.assertIn(words, r.stderr, f"{args}: {r.stderr}")
        self.assertEqual(r.stdout, "", "no result for a failed run")

    def expect_usage_error(self, words, *args):
        self.expect_error(words, *args, status=2)

    def test_help(self):
        r = lriot("--help")
        self.assertEqual(r.returncode, 0)
        for flag in ["--mode", "--procs", "--threads", "--pattern", "--write-fraction", "--ops", "--seconds",
                     "--warmup", "--buffer", "--create", "--json"]:
            self.assertIn(flag, r.stdout)

    def test_bad_numbers(self):
        f = f"--file={self.file}"
        self.expect_usage_error("unknown mode 'fast'", f, "--mode=fast", "--ops=10")
        self.expect_usage_error("unknown pattern", f, "--pattern=zipf", "--ops=10")
        self.expect_usage_error("--procs: Value 0 not in range", f, "--procs=0", "--ops=10")
        self.expect_usage_error("--threads: Value 0 not in range", f, "--threads=0", "--ops=10")
        self.expect_usage_error("-1", f, "--threads=-1", "--ops=10")
        self.expect_usage_error("--seconds", f, "--seconds=-1")
        self.expect_usage_error("--write-fraction", f, "--write-fraction=1.5", "--ops=10")
        self.expect_usage_error("--ops or --seconds", f, "--seconds=0")
        self.expect_usage_error("--warmup needs a run bounded by --seconds", f, "--warmup=2", "--ops=10")
        self.expect_usage_error("--warmup must be a number >= 0", f, "--warmup=-1")
        self.expect_usage_error("16 pages", f, "--mode=dimmap", "--buffer=8K", "--ops=10")
        self.expect_usage_error("--buffer: size '0' must be larger than 0", f, "--mode=dimmap", "--buffer=0",
                                "--ops=10")
        self.expect_usage_error("must start with a digit", f, "--mode=dimmap", "--buffer=-1M", "--ops=10")

    def test_bad_files(self):
        missing = os.path.join(self.tmp.name, "missing.dat")
        self.expect_error("cannot open --file", f"--file={missing}", "--ops=10")
        small = os.path.join(self.tmp.name, "small.dat")
        with open(small, "w") as f:
            f.write("tiny")
        self.expect_error("smaller than one 4 KiB page", f"--file={small}", "--ops=10")
        zeros = os.path.join(self.tmp.name, "zeros.dat")
        with open(zeros, "wb") as f:
            f.write(bytes(2 * PAGE))
        self.expect_error("does not hold the LRIOT pattern", f"--file={zeros}", "--ops=10", "--verify")

    def test_bad_create_sizes_leave_no_file(self):
        target = os.path.join(self.tmp.name, "new.dat")
        for size in ["0", "-1G", "5000", "12Q"]:
            with self.subTest(size=size):
                self.expect_usage_error("--create" if size in ("-1G", "12Q", "0") else "multiple of 4 KiB",
                                        f"--file={target}", f"--create={size}", "--create-only")
                self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith("new.dat")], [])

    def test_create_makes_exactly_the_requested_size(self):
        target = os.path.join(self.tmp.name, "sized.dat")
        r = lriot(f"--file={target}", "--create=12K", "--create-only")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.path.getsize(target), 3 * PAGE)
        with open(target, "rb") as f:
            page1 = f.read(2 * PAGE)[PAGE:]
        self.assertEqual(int.from_bytes(page1[:8], "little"), 0x4C52494F54000000 ^ 1)

    def test_json_result_matches_the_request(self):
        r = lriot(f"--file={self.file}", "--mode=direct", "--pattern=uniform", "--procs=2", "--threads=3",
                  "--ops=1000", "--write-fraction=0.5", "--verify", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        self.assertEqual(res["mode"], "direct")
        self.assertEqual(res["pattern"], "uniform")
        self.assertEqual(res["procs"], 2)
        self.assertEqual(res["threads"], 3)
        self.assertEqual(res["ops"], 1000)
        self.assertEqual(res["reads"] + res["writes"], 1000)
        self.assertEqual(res["pages"], 8 << 20 >> 12)
        self.assertTrue(res["verify"]["ok"])
        self.assertEqual(res["verify"]["counter_delta"], res["writes"])
        self.assertGreater(res["iops"], 0)

    def test_every_mode_verifies_with_writes(self):
        for mode in ["direct", "stdio", "mmap", "dimmap"]:
            with self.subTest(mode=mode):
                r = lriot(f"--file={self.file}", f"--mode={mode}", "--threads=4", "--ops=3000",
                          "--write-fraction=0.2", "--buffer=512K", "--verify")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("verify: ok", r.stdout)
                self.assertIn("IOPS", r.stdout)
                if mode in ("mmap", "dimmap"):
                    self.assertIn("final msync", r.stdout)
                if mode == "dimmap":
                    self.assertIn("dimmap: buffer 512K", r.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
