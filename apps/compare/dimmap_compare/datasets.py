"""The default data of the experiments, made or fetched once and reused: LRIOT files, R-MAT
graphs, genomes, reads and k-mer databases, micro-benchmark structures, bwa references.
Everything comes from the project's own tools and datasets/ scripts; nothing is downloaded
except Debian example packages (datasets/debian-example)."""
import gzip
import importlib.util
import os
import shutil
import subprocess
import tempfile

from .tools import ToolMissing
from .units import format_size


class DataError(Exception):
    """Data could not be made: names what and why."""


class DataStore:
    def __init__(self, root, tools, log):
        self.root = os.path.abspath(root)
        self.tools = tools
        self.log = log
        os.makedirs(self.root, exist_ok=True)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def _run(self, what, cmd, **kw):
        try:
            return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
        except subprocess.CalledProcessError as e:
            tail = " | ".join(e.stderr.strip().splitlines()[-3:])
            raise DataError(f"{what}: {os.path.basename(cmd[0])} failed ({e.returncode}): {tail}") from None
        except OSError as e:
            raise DataError(f"{what}: cannot run {cmd[0]}: {e}") from None

    # ---- LRIOT ----
    def lriot_file(self, nbytes, directory=None):
        """A file of LRIOT's verifiable pattern (written with O_DIRECT, so it starts cold)."""
        directory = directory or self.path("lriot")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"lriot-{format_size(nbytes)}.dat")
        if os.path.exists(path) and os.path.getsize(path) == nbytes:
            return path
        self.log(f"data: writing {path} ({format_size(nbytes)})")
        self._run(f"LRIOT file {path}", [self.tools.path("lriot"), f"--file={path}", f"--create={nbytes}",
                                         "--create-only", "--progress=0"])
        return path

    # ---- graphs ----
    def graph(self, scale):
        """An R-MAT (Graph500) graph of 2^scale vertices, edge factor 16, as graph-ingest's CSR."""
        out = self.path("graphs", f"rmat-{scale}")
        if os.path.exists(os.path.join(out, "graph.info")):
            return out
        self.log(f"data: R-MAT graph of scale {scale} -> {out}")
        for tool in ("rmat-gen", "graph-ingest"):
            self.tools.path(tool)  # ToolMissing before any work
        bin_dir = os.path.dirname(self.tools.path("rmat-gen"))
        self._run(f"graph of scale {scale}", [self.tools.dataset_script("make-graph"), f"--scale={scale}",
                                              f"--bin={bin_dir}", f"--out={out}"])
        return out

    @staticmethod
    def graph_info(graph_dir):
        info = {}
        with open(os.path.join(graph_dir, "graph.info")) as f:
            for line in f:
                k, _, v = line.strip().partition(" ")
                info[k] = v
        return info

    # ---- genomes, reads, k-mer databases ----
    def genomes(self, gset="ci"):
        """(genomes.tsv, taxonomy dir) of a genome set of datasets/genomes-catalog.tsv."""
        out = self.path("genomes")
        listing = os.path.join(out, f"{gset}.tsv")
        if not os.path.exists(listing):
            self.log(f"data: fetching the '{gset}' genomes (Debian example packages) -> {out}")
        self._run(f"genomes '{gset}'", [self.tools.dataset_script("fetch-genomes"), out, "--set", gset,
                                        "--list", listing])
        return listing, os.path.join(out, "taxonomy")

    def simulated_reads(self, gset, count, seed=3):
        listing, _ = self.genomes(gset)
        prefix = self.path("reads", f"sim-{gset}-{count}")
        if not os.path.exists(prefix + ".fq"):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
            self.log(f"data: simulating {count} reads -> {prefix}.fq")
            self._run("simulated reads", [self.tools.dataset_script("simulate-reads"), "--genomes", listing,
                                          "--reads", str(count), "--out", prefix, "--seed", str(seed)])
        return prefix + ".fq"

    def real_reads(self):
        """{name: path} of the real read sets datasets/fetch-reads provides."""
        out = self._run("real reads", [self.tools.dataset_script("fetch-reads")]).stdout
        return dict(line.split("\t", 1) for line in out.strip().splitlines() if "\t" in line)

    def reads_subset(self, name, path, count):
        """The first `count` FASTQ records of a (gzipped) read file, as plain FASTQ."""
        out = self.path("reads", f"{name}-{count}.fq")
        if os.path.exists(out):
            return out
        os.makedirs(os.path.dirname(out), exist_ok=True)
        opener = gzip.open if path.endswith(".gz") else open
        tmp = f"{out}.tmp.{os.getpid()}"
        with opener(path, "rt") as src, open(tmp, "w") as dst:
            for i, line in enumerate(src):
                if i >= 4 * count:
                    break
                dst.write(line)
        os.replace(tmp, out)
        return out

    def kmer_db(self, gset, index):
        listing, taxonomy = self.genomes(gset)
        db = self.path("kmer", f"{gset}.{index}.db")
        if not os.path.exists(db):
            os.makedirs(os.path.dirname(db), exist_ok=True)
            self.log(f"data: building the {index} k-mer DB of the '{gset}' genomes -> {db}")
            self._run(f"k-mer DB {db}", [self.tools.path("kmer"), "build", "--taxonomy", taxonomy, "--genomes",
                                         listing, "--index", index, "--out", db, "--quiet"])
        return db

    def kraken2_db(self, gset):
        """A Kraken 2 DB of a genome set (kraken2-build, offline, by kmer/bench/kraken2_db.py:
        custom library with kraken:taxid headers, no masking); only the files kraken2 reads
        (hash.k2d, opts.k2d, taxo.k2d) are in the returned directory."""
        listing, taxonomy = self.genomes(gset)
        db = self.path("kraken2", gset)
        if all(os.path.exists(os.path.join(db, f)) for f in ("hash.k2d", "opts.k2d", "taxo.k2d")):
            return db
        for tool in ("kraken2-build", "kraken2"):
            if not shutil.which(tool):
                raise ToolMissing(tool, "not on PATH (Debian kraken2)")
        builder = os.path.join(self.tools.source_dir, "kmer", "bench", "kraken2_db.py")
        if not os.path.exists(builder):
            raise DataError(f"Kraken 2 DB: {builder} is missing")
        spec = importlib.util.spec_from_file_location("kraken2_db", builder)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        work = self.path("kraken2", f"{gset}.build")
        self.log(f"data: building the Kraken 2 DB of the '{gset}' genomes (kraken2-build, minutes) -> {db}")
        try:
            module.build(listing, taxonomy, work)
        except (OSError, subprocess.CalledProcessError) as e:
            raise DataError(f"Kraken 2 DB of '{gset}': {e}") from None
        os.makedirs(db, exist_ok=True)
        for f in ("hash.k2d", "opts.k2d", "taxo.k2d"):
            os.replace(os.path.join(work, f), os.path.join(db, f))
        shutil.rmtree(work, ignore_errors=True)
        return db

    # ---- LMDB ----
    def lmdb_db(self, records, value_size=1000):
        """An LMDB database of `records` records of `value_size` bytes (lmdb-lookup build)."""
        db = self.path("lmdb", f"records-{records}-{value_size}")
        if not os.path.exists(os.path.join(db, "data.mdb")):
            self.log(f"data: LMDB database of {records} records of {value_size} bytes -> {db}")
            tmp = f"{db}.tmp.{os.getpid()}"
            os.makedirs(os.path.dirname(db), exist_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
            self._run(f"LMDB database {db}", [self.tools.path("lmdb-lookup"), "build", tmp, "--records", str(records),
                                              "--value-size", str(value_size)])
            os.replace(tmp, db)
        return db

    # ---- micro-benchmarks ----
    def microbench_file(self, structure, nbytes):
        path = self.path("microbench", f"{structure}-{format_size(nbytes)}.bin")
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.log(f"data: building {structure} of {format_size(nbytes)} -> {path}")
            self._run(f"{structure} file", [self.tools.path("microbench"), "build", f"--structure={structure}",
                                            f"--size={nbytes}", f"--out={path}"])
        return path

    # ---- bwa ----
    def synthetic_genome(self, length):
        """A seeded random genome of `length` bases (e.g. '16M'), by bwa-mmap's make_genome.py."""
        out = self.path("bwa", f"synthetic-{length}.fa")
        if not os.path.exists(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
            script = os.path.join(self.tools.source_dir, "bwa-mmap", "tests", "make_genome.py")
            self.log(f"data: synthetic genome of {length} bases -> {out}")
            # Debian's python3: the script needs numpy from python3-numpy.
            self._run(f"synthetic genome {length}", ["/usr/bin/python3", script, "--length", length, "--contigs", "2",
                                                     "--seed", "41", "--out", out])
        return out

    def wgsim_pairs(self, fasta, pairs, seed=5):
        """(reads_1.fq, reads_2.fq): `pairs` 100-base read pairs simulated from fasta by wgsim, made once."""
        prefix = self.path("bwa", f"wgsim-{os.path.splitext(os.path.basename(fasta))[0]}-{pairs}-s{seed}")
        r1, r2 = prefix + "_1.fq", prefix + "_2.fq"
        if not os.path.exists(r2):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
            self.log(f"data: {pairs} wgsim read pairs of {fasta} -> {prefix}_[12].fq")
            self._run("wgsim reads", [self.tools.path("wgsim"), "-S", str(seed), "-N", str(pairs), "-1", "100", "-2",
                                      "100", fasta, r1 + ".tmp", r2 + ".tmp"])
            os.replace(r1 + ".tmp", r1)
            os.replace(r2 + ".tmp", r2)
        return r1, r2

    def bwa_reference(self, fasta, options):
        """Upstream `bwa index OPTIONS` of fasta (no budget), made once: what every index is checked against."""
        name = os.path.splitext(os.path.basename(fasta))[0] + "".join(options).replace("-", "_")
        prefix = self.path("bwa", "reference", name)
        if not os.path.exists(prefix + ".sa"):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
            self.log(f"data: reference index (upstream bwa index) of {fasta} -> {prefix}")
            self._run(f"bwa index of {fasta}", [self.tools.path("bwa"), "index"] + options + ["-p", prefix, fasta])
        return prefix


class TmpfsCopy:
    """A private directory on tmpfs (/dev/shm) for data that must sit in memory, e.g. the
    'device' of the PerMA model. Removed by cleanup()."""

    def __init__(self, prefix, base="/dev/shm"):
        if not os.path.isdir(base):
            raise DataError(f"{base} is missing: the experiment needs a tmpfs")
        self.dir = tempfile.mkdtemp(prefix=f"dimmap-compare-{prefix}-", dir=base)

    def copy(self, src):
        dst = os.path.join(self.dir, os.path.basename(src))
        if os.path.isdir(src):
            shutil.copytree(src, dst)
        else:
            shutil.copyfile(src, dst)
        return dst

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


__all__ = ["DataStore", "DataError", "TmpfsCopy", "ToolMissing"]
