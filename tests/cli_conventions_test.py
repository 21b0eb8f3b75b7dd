#!/usr/bin/python3
"""Every command-line tool keeps the same conventions (README: Conventions):

  exit 2  usage errors: an unknown option, a bad value (negative threads, a malformed size),
          a missing argument; the message starts with the tool's name and names the value
  exit 1  runtime/input errors: an empty or degenerate input is an error naming the file
  and a failed run leaves no output behind (no empty directory, no half-written file).

usage: cli_conventions_test.py NAME=PATH...   (the built tools; a tool not given is not checked)
"""
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = dict(arg.split("=", 1) for arg in sys.argv[1:] if "=" in arg)


class Conventions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory(prefix="cli-conventions-", dir=os.environ.get("DIMMAP_TEST_DIR"))
        cls.work = cls.scratch.name
        cls.empty = cls.path("empty.dat")
        open(cls.empty, "w").close()

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.work, name)

    def tool(self, name):
        if name not in TOOLS:
            self.skipTest(f"{name} not built")
        return TOOLS[name]

    def expect(self, status, words, name, *args, display=None, no_output=()):
        """Runs tool `name`; its exit status must be `status` and its stderr must hold every one
        of `words` (always the tool's name), and none of the paths in no_output may exist."""
        cmd = [self.tool(name), *args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.work)
        shown = f"{display or name} {' '.join(args)}"
        self.assertEqual(r.returncode, status, f"{shown}: exit {r.returncode}, expected {status}\n{r.stderr}")
        for w in [f"{display or name}: ", *words]:
            self.assertIn(w, r.stderr, f"{shown}: message lacks '{w}'")
        for p in no_output:
            self.assertFalse(os.path.exists(p), f"{shown}: left {p} behind after failing")
        return r

    def usage(self, words, name, *args, **kw):
        return self.expect(2, words, name, *args, **kw)

    def failure(self, words, name, *args, **kw):
        return self.expect(1, words, name, *args, **kw)

    # ---- graph ----
    def test_rmat_gen(self):
        out = self.path("rmat.bin")
        self.usage(["-2"], "rmat-gen", "--scale=4", f"--out={out}", "--threads=-2", no_output=[out])
        self.usage(["0"], "rmat-gen", "--scale=4", f"--out={out}", "--threads=0", no_output=[out])
        self.usage(["--bogus"], "rmat-gen", "--scale=4", f"--out={out}", "--bogus", no_output=[out])
        self.usage(["--scale", "required"], "rmat-gen", f"--out={out}")

    def test_graph_ingest(self):
        edges = self.path("edges.txt")
        with open(edges, "w") as f:
            f.write("0 1\n1 2\n")
        out = self.path("graph")
        self.usage(["-2"], "graph-ingest", f"--edges={edges}", f"--out={out}", "--threads=-2", no_output=[out])
        self.usage(["12Q"], "graph-ingest", f"--edges={edges}", f"--out={out}", "--memory=12Q", no_output=[out])
        self.usage(["--bogus"], "graph-ingest", f"--edges={edges}", f"--out={out}", "--bogus", no_output=[out])
        self.usage(["--edges", "required"], "graph-ingest", f"--out={out}")
        self.failure([self.empty, "no edges"], "graph-ingest", f"--edges={self.empty}", "--format=bin", f"--out={out}",
                     no_output=[out])
        loops = self.path("loops.txt")
        with open(loops, "w") as f:
            f.write("3 3\n")
        self.failure([loops, "no edges"], "graph-ingest", f"--edges={loops}", f"--out={out}", no_output=[out])

    def test_bfs(self):
        graph = self.path("no-graph")
        os.makedirs(graph, exist_ok=True)
        self.usage(["-3"], "bfs", f"--graph={graph}", "--threads=-3")
        self.usage(["--bogus"], "bfs", f"--graph={graph}", "--bogus")
        self.usage(["12Q"], "bfs", f"--graph={graph}", "--backend=dimmap", "--buffer=12Q")
        self.failure([graph], "bfs", f"--graph={graph}")  # an empty directory is no graph

    # ---- kmer ----
    def kmer_inputs(self):
        tax = self.path("taxonomy")
        os.makedirs(tax, exist_ok=True)
        with open(os.path.join(tax, "nodes.dmp"), "w") as n, open(os.path.join(tax, "names.dmp"), "w") as m:
            for taxid, parent, rank in [(1, 1, "no rank"), (2, 1, "species")]:
                n.write(f"{taxid}\t|\t{parent}\t|\t{rank}\t|\t\t|\t0\t|\t0\t|\t11\t|\t0\t|\t0\t|\t0\t|\t0\t|\t0\t|\t\t|\n")
                m.write(f"{taxid}\t|\ttaxon {taxid}\t|\t\t|\tscientific name\t|\n")
        genome = self.path("genome.fa")
        with open(genome, "w") as f:
            f.write(">g\n" + "ACGTTGCAAGCTTCGATCGGATCCATGCATGCAAGCTTGGCACTGGCCGTCGTTTTACAACG" + "\n")
        tiny = self.path("tiny.fa")
        with open(tiny, "w") as f:
            f.write(">t\nACGT\n")
        lists = {}
        for name, fasta in [("genomes.tsv", genome), ("tiny.tsv", tiny)]:
            lists[name] = self.path(name)
            with open(lists[name], "w") as f:
                f.write(f"{fasta}\t2\n")
        return tax, lists

    def test_kmer(self):
        tax, lists = self.kmer_inputs()
        db = self.path("k.db")
        build = ["build", "--k", "8", "--taxonomy", tax, "--genomes", lists["genomes.tsv"], "--out", db, "--quiet"]
        self.usage(["-1"], "kmer", *build, "--threads=-1", no_output=[db])
        self.usage(["12Q"], "kmer", *build, "--memory=12Q", no_output=[db])
        self.usage(["--bogus"], "kmer", *build, "--bogus", no_output=[db])
        self.usage(["subcommand"], "kmer")
        # A genome shorter than k: no k-mers, so no DB.
        tiny_db = self.path("tiny.db")
        self.failure([lists["tiny.tsv"], "no 31-mers"], "kmer", "build", "--k", "31", "--taxonomy", tax, "--genomes",
                     lists["tiny.tsv"], "--out", tiny_db, "--quiet", display="kmer build", no_output=[tiny_db])
        subprocess.run([self.tool("kmer"), *build], check=True, capture_output=True)
        out = self.path("cls")
        classify = ["classify", "--db", db, "--out", out, "--quiet"]
        self.usage(["-1"], "kmer", *classify, "--reads", self.empty, "--threads=-1")
        self.usage(["'-2'"], "kmer", "lookup", "--db", db, "--kmers", self.empty, "--threads=1,-2")
        self.failure([self.empty], "kmer", *classify, "--reads", self.empty, display="kmer classify",
                     no_output=[out + ".tsv", out + ".kreport"])

    # ---- bwa-mmap ----
    def test_bwa_mmap(self):
        self.usage(["subcommand"], "bwa-mmap")
        fasta = self.path("ref.fa")
        with open(fasta, "w") as f:
            f.write(">r\n" + "ACGTTGCAAGCTTCGATCGGATCCATGCATGCAAGCTTGGCACTGGCCGTCGTTTTACAACG" * 4 + "\n")
        self.usage(["-3"], "bwa-mmap", "mem", "-t", "-3", fasta, self.empty)
        self.usage(["--bogus"], "bwa-mmap", "index", "--bogus", fasta)
        self.usage(["12Q"], "bwa-mmap", "index", "-b", "12Q", fasta)
        empty_fa = self.path("empty.fa")
        open(empty_fa, "w").close()
        self.failure([empty_fa], "bwa-mmap", "index", empty_fa,
                     no_output=[empty_fa + "." + s for s in ("amb", "ann", "bwt", "pac", "sa")])

    # ---- apps ----
    def test_lriot(self):
        target = self.path("lriot.dat")
        self.usage(["-2"], "lriot", f"--file={target}", "--threads=-2", "--ops=10")
        self.usage(["0"], "lriot", f"--file={target}", "--procs=0", "--ops=10")
        self.usage(["12Q"], "lriot", f"--file={target}", "--create=12Q", "--create-only", no_output=[target])
        self.usage(["--bogus"], "lriot", f"--file={target}", "--bogus")
        self.usage(["--file", "required"], "lriot", "--ops=10")
        self.failure([self.empty], "lriot", f"--file={self.empty}", "--ops=10")

    def test_microbench(self):
        self.usage(["-2"], "microbench", "random-access", "--size=1M", "--threads=-2", display="microbench")
        self.usage(["12Q"], "microbench", "random-access", "--size=12Q", display="microbench")
        out = self.path("mb.bin")
        self.usage(["b-tree"], "microbench", "build", "--structure=b-tree", f"--out={out}", no_output=[out])
        self.usage(["--bogus"], "microbench", "build", f"--out={out}", "--bogus", no_output=[out])
        self.usage(["-1"], "microbench", "query", f"--file={self.empty}", "--threads=2,-1")
        self.failure([self.empty], "microbench", "query", f"--file={self.empty}")

    def test_dimmap_budget(self):
        self.usage(["12Q"], "dimmap-budget", "--memory=12Q", "--", "/bin/true")
        self.usage(["--bogus"], "dimmap-budget", "--memory=64M", "--bogus", "--", "/bin/true")
        self.usage(["--memory", "required"], "dimmap-budget", "--", "/bin/true")
        self.usage(["no command"], "dimmap-budget", "--memory=64M")

    def test_dimmap_run(self):
        self.usage(["--bogus"], "dimmap-run", "--bogus", "--", "/bin/true")
        self.usage(["12Q"], "dimmap-run", "--placement=dimmap", "--buffer=12Q", "--", "/bin/true")
        self.usage(["no command"], "dimmap-run", "--placement=memory")

    def test_dimmapctl(self):
        self.usage(["subcommand"], "dimmapctl")
        self.usage(["--bogus"], "dimmapctl", "list", "--bogus")
        self.usage(["device", "required"], "dimmapctl", "unlink")

    def test_uffd_zap_cost(self):
        self.usage(["--bogus"], "uffd-zap-cost", "--bogus")
        self.usage(["-5"], "uffd-zap-cost", "--batch=-5")

    def test_dimmap_compare(self):
        self.usage(["-2"], "dimmap-compare", "bfs", "--threads=-2")
        r = self.usage(["12Q"], "dimmap-compare", "bfs", "--budget=12Q")
        self.assertNotIn("parse_size", r.stderr, "internal names must not show")
        self.usage(["--bogus"], "dimmap-compare", "bfs", "--bogus")
        self.usage(["nosuch"], "dimmap-compare", "nosuch")
        results = self.path("compare-results")
        os.makedirs(results, exist_ok=True)
        open(os.path.join(results, "results.json"), "w").close()
        self.failure([os.path.join(results, "results.json")], "dimmap-compare", "report", f"--out={results}",
                     "--no-plots")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
