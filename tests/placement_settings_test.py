#!/usr/bin/python3
"""Every tool takes its placement settings from the runtime (dimmap/placement_plan.hpp):

  * a flag wins over its DIMMAP_* variable, which wins over the default;
  * a bad value, given by flag or by variable, is a usage error (exit 2) that names the flag or
    the variable, reported before any data is opened (the data paths here do not exist, so
    an error about them would mean the tool looked at its data first);
  * --help shows the same words for the shared settings in every tool.

usage: placement_settings_test.py NAME=PATH...   (the built tools; a tool not given is not checked)
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

TOOLS = dict(arg.split("=", 1) for arg in sys.argv[1:] if "=" in arg)
MISSING = "/nonexistent-dimmap-data"

# Each command with its data at MISSING; the settings under test are added at the end.
COMMANDS = {
    "bfs": ["bfs", "--graph", MISSING, "--backend=dimmap"],
    "kmer classify": ["kmer", "classify", "--db", MISSING, "--reads", MISSING + ".fq", "--out", MISSING + "/out",
                      "--backend=dimmap"],
    "kmer lookup": ["kmer", "lookup", "--db", MISSING, "--kmers", MISSING + ".txt", "--backend=dimmap"],
    "bwa-mmap mem": ["bwa-mmap", "mem", "--backend=dimmap", MISSING, MISSING + ".fq"],
    "bwa-mmap index": ["bwa-mmap", "index", "--placement=dimmap", MISSING + ".fa"],
    "microbench query": ["microbench", "query", "--file", MISSING, "--backend=dimmap"],
    "microbench build": ["microbench", "build", "--out", MISSING + "/x", "--size=1M", "--backend=dimmap"],
    "lriot": ["lriot", "--file", MISSING, "--mode=dimmap"],
    "dimmap-run": ["dimmap-run", "--placement=dimmap", "--", MISSING + "/cmd"],
}


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIMMAP_") or k == "DIMMAP_TEST_TMP"}
    env.update(extra)
    return env


class Settings(unittest.TestCase):
    def run_tool(self, name, extra_args=(), **env):
        cmd = COMMANDS[name]
        if cmd[0] not in TOOLS:
            self.skipTest(f"{cmd[0]} not built")
        args = [TOOLS[cmd[0]], *cmd[1:]]
        at = args.index("--") if "--" in args else len(args)
        args[at:at] = list(extra_args)
        return subprocess.run(args, capture_output=True, text=True, timeout=60, env=clean_env(**env))

    def expect_usage(self, name, word, extra_args=(), **env):
        r = self.run_tool(name, extra_args, **env)
        shown = f"{name} {' '.join(extra_args)} {env}"
        self.assertEqual(r.returncode, 2, f"{shown}: exit {r.returncode}, expected 2\n{r.stderr}")
        self.assertIn(word, r.stderr, f"{shown}: the message does not name {word}")
        self.assertNotIn(MISSING, r.stderr, f"{shown}: looked at its data before checking the settings")

    def test_bad_buffer_flag_before_data(self):
        for name in COMMANDS:
            with self.subTest(name):
                self.expect_usage(name, "--buffer", ["--buffer=12Q"])

    def test_bad_buffer_variable_before_data(self):
        for name in COMMANDS:
            with self.subTest(name):
                self.expect_usage(name, "DIMMAP_BUFFER", DIMMAP_BUFFER="lots")

    def test_bad_backend_variable_before_data(self):
        for name in ["bfs", "kmer classify", "microbench query", "bwa-mmap mem"]:
            with self.subTest(name):
                r = self.run_tool(name, DIMMAP_BACKEND="tape")
                # The command line's --backend=dimmap wins over the bad variable ...
                self.assertNotIn("DIMMAP_BACKEND", r.stderr)
        if "bfs" in TOOLS:
            # ... and a bad variable that no flag overrides is refused, naming it.
            r = subprocess.run([TOOLS["bfs"], "--graph", MISSING], capture_output=True, text=True, timeout=60,
                               env=clean_env(DIMMAP_BACKEND="tape"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("DIMMAP_BACKEND", r.stderr)
            self.assertNotIn(MISSING, r.stderr)

    def test_flag_wins_over_bad_variable(self):
        for name in COMMANDS:
            with self.subTest(name):
                r = self.run_tool(name, ["--buffer=8M"], DIMMAP_BUFFER="lots")
                self.assertNotIn("DIMMAP_BUFFER", r.stderr, f"{name}: a bad DIMMAP_BUFFER was read despite --buffer")
                self.assertNotEqual(r.returncode, 0, f"{name} ran on missing data")

    def test_placement_variable_is_checked(self):
        self.expect_usage("bfs", "DIMMAP_PLACEMENT", DIMMAP_PLACEMENT="sideways")
        self.expect_usage("kmer classify", "DIMMAP_HOT_FRACTION", DIMMAP_HOT_FRACTION="1.5")
        self.expect_usage("microbench query", "--hot-fraction", ["--hot-fraction=2"])

    def test_alias_that_contradicts_backend(self):
        self.expect_usage("bwa-mmap index", "--backend", ["--backend=mmap"])

    def test_same_help_words(self):
        helps = {}
        for name, cmd in COMMANDS.items():
            if cmd[0] not in TOOLS:
                continue
            sub = [c for c in cmd[1:2] if not c.startswith("-")] if cmd[0] in ("kmer", "bwa-mmap", "microbench") else []
            r = subprocess.run([TOOLS[cmd[0]], *sub, "--help"], capture_output=True, text=True, timeout=60, env=clean_env())
            self.assertEqual(r.returncode, 0, f"{name} --help: {r.stderr}")
            text = re.sub(r"\s+", " ", r.stdout)
            m = re.search(r"--buffer [A-Z:]+ (.*?\{DIMMAP_BUFFER\})", text)
            self.assertIsNotNone(m, f"{name} --help has no --buffer with its variable:\n{r.stdout}")
            helps[name] = m.group(1)
        self.assertGreaterEqual(len(helps), 2)
        self.assertEqual(len(set(helps.values())), 1, f"--buffer is described differently: {helps}")


class Precedence(unittest.TestCase):
    """The buffer size a run really uses: flag, else DIMMAP_BUFFER, else the default."""

    @classmethod
    def setUpClass(cls):
        if "microbench" not in TOOLS:
            raise unittest.SkipTest("microbench not built")
        cls.scratch = tempfile.TemporaryDirectory(prefix="placement-settings-", dir=os.environ.get("DIMMAP_TEST_TMP"))
        cls.file = os.path.join(cls.scratch.name, "sorted.bin")
        subprocess.run([TOOLS["microbench"], "build", "--structure=sorted-vector", "--size=2M", "--out", cls.file],
                       check=True, capture_output=True, env=clean_env())

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def query(self, *args, **env):
        r = subprocess.run([TOOLS["microbench"], "query", "--file", self.file, "--threads=1", "--queries=1000", *args],
                           capture_output=True, text=True, timeout=120, env=clean_env(**env))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout + r.stderr

    def test_order(self):
        self.assertIn("buffer 12M", self.query(DIMMAP_BACKEND="dimmap", DIMMAP_BUFFER="12M"))
        out = self.query("--buffer=8M", DIMMAP_BACKEND="dimmap", DIMMAP_BUFFER="12M")
        self.assertIn("buffer 8M", out)
        self.assertNotIn("buffer 12M", out)
        out = self.query("--backend=mmap", DIMMAP_BACKEND="dimmap", DIMMAP_BUFFER="12M")
        self.assertNotIn("dimmap(", out)
        self.assertIn("7/8 of the memory limit", self.query(DIMMAP_BACKEND="dimmap"))
        self.assertIn("half the memory limit", self.query(DIMMAP_BACKEND="dimmap", DIMMAP_ENGINE="uffd"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
