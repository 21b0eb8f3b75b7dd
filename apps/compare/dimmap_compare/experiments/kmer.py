"""k-mer experiments (kmer/): the LMAT-style database on storage behind Linux mmap or DI-MMAP.
  kmer-lookup     DI-MMAP 2015 Fig. 7: raw lookups/s vs threads, gnu-hash and two-level index
  kmer-classify   DI-MMAP 2015 Figs. 8b/9b: classification bases/s on three read sets, and
                  Debian's kraken2 --memory-mapping on the same reads and genomes as reference"""
import hashlib
import os

from ..datasets import DataError
from ..calibration import buffer_for, calibrate_overhead
from ..experiment import Experiment, Point, mark_disagreements
from ..results import Ratio
from ..runner import FAILED, MISSING, InvalidOutput
from ..summary import summary_parser, with_summary
from ..tools import ToolMissing
from ..units import format_size
from .overlay import kraken2_processed

INDEXES = ["gnu-hash", "two-level"]
BACKENDS = [("mmap @ budget", "mmap"), ("dimmap @ budget", "dimmap")]
KRAKEN2 = "kraken2 --memory-mapping @ budget"
KRAKEN2_FILES = ("hash.k2d", "opts.k2d", "taxo.k2d")


def kmer_buffer(two_level_db):
    """The papers' setting: the DB is several times the memory; here the two-level DB is 4x the
    buffer (the gnu-hash DB, ~3.5x bigger, fits even less, as in the paper)."""
    return max(os.path.getsize(two_level_db) // 4 >> 20, 4) << 20


def equal_budget(ctx, name, p, db, calibration_cmd, parse):
    """Sets p's buffer and budget: the budget is the buffer plus what the DI-MMAP run
    (calibration_cmd, given the buffer) needs beside it, measured in calibration runs as the BFS
    experiments do; with --budget the buffer is what the budget leaves."""
    buffer = kmer_buffer(db)
    cmd = calibration_cmd(buffer)
    overhead, text, derivation = calibrate_overhead(ctx, name, cmd, parse(cmd), buffer,
                                                    2 * os.path.getsize(db) + (256 << 20), evict=[db])
    buffer = buffer_for(ctx, buffer, overhead)
    p.update(buffer_bytes=buffer, budget_bytes=buffer + overhead, overhead_bytes=overhead,
             budget_derivation={"": text}, calibration={"": derivation})


def backend_flags(backend, buffer, storage):
    flags = [f"--backend={backend}", f"--storage={storage}"]
    # Readahead only wastes an mmap budget on random lookups.
    return flags + ([f"--buffer={buffer}"] if backend == "dimmap" else ["--advise-random"])


def lookup_parser(cmd):
    """kmer lookup's summary (one thread count per run): lookups/s and the hits to compare."""
    def extra(s):
        run = s["runs"][-1]
        return {"hit_rate": run["hit_rate"], "lookups": run["lookups"], "hits": run["hits"]}
    return summary_parser(cmd, "kmer lookup", lambda s: s["runs"][-1]["lookups_per_second"], extra)


def classify_parser(cmd):
    """kmer classify's summary: bases/s of classification (DB open apart)."""
    def value(s):
        if s["seconds"] <= 0 or s["reads"] == 0:
            raise InvalidOutput("no reads classified")
        return s["bases"] / s["seconds"]
    return summary_parser(cmd, "kmer classify", value,
                          lambda s: {"reads": s["reads"], "classified": s["classified"], "seconds": s["seconds"],
                                     "reads_per_s": s["reads_per_second"]})


def fastq_bases(path):
    """(reads, bases) of a plain FASTQ file: kraken2 reports Mbp rounded to 0.01, too coarse for
    the few reads of a quick run, so its bases/s divides these by its own seconds."""
    reads = bases = 0
    with open(path) as f:
        for i, line in enumerate(f):
            if i % 4 == 1:
                reads += 1
                bases += len(line.rstrip("\n"))
    return reads, bases


def kraken2_parser(out_file, reads, bases):
    """kraken2's bases/s (its own classification seconds, DB opening excluded, as kmer
    classify's); it must have classified every read."""
    def parse(stdout, stderr, seconds):
        done, secs = kraken2_processed(stderr)
        if done != reads:
            raise InvalidOutput(f"kraken2 processed {done} of {reads} reads")
        return bases / secs, {"reads": done, "seconds": secs, "reads_per_s": done / secs,
                              "classification": out_file}
    return parse


class KmerLookup(Experiment):
    name = "kmer-lookup"
    figure = "DI-MMAP 2015 Fig. 7"
    title = "Raw k-mer lookups, gnu-hash and two-level index"
    about = ("Lookups/s vs threads of the k-mers of simulated reads (the paper's synthetic HC1 set) in "
             "databases of six real genomes (datasets/fetch-genomes ci), gnu-hash and two-level index, Linux "
             "mmap (MADV_RANDOM) vs DI-MMAP in the same budget (the buffer plus the process memory measured "
             "in calibration runs); the two-level DB is 4x the buffer.")
    metric = "lookup rate"
    unit = "k-mer lookups/s"
    requires = ("dimmap-budget", "kmer")

    def setup(self, ctx):
        reads = ctx.data.simulated_reads("ci", ctx.pick(20000, 1000, 200))
        dbs = {i: ctx.data.kmer_db("ci", i) for i in INDEXES}
        max_kmers = ctx.pick(1000000, 20000, 4000)
        sizes = ", ".join(f"{i} {format_size(os.path.getsize(db))}" for i, db in dbs.items())
        p = {"reads": reads, "dbs": dbs, "data_label": f"DB {sizes}", "max_kmers": max_kmers,
             "threads": ctx.threads([1, 4, 16, 64], [4, 16], [4])}
        db = dbs["two-level"]
        equal_budget(ctx, self.name, p, db,
                     lambda buffer: self.lookup_cmd(ctx, p, db, max(p["threads"]), "dimmap", buffer), lookup_parser)
        return p

    @staticmethod
    def lookup_cmd(ctx, p, db, threads, backend, buffer):
        storage = ctx.scratch("kmer")
        return with_summary([ctx.tools.path("kmer"), "lookup", "--db", db, "--reads", p["reads"], "--max-kmers",
                             str(p["max_kmers"]), "--threads", str(threads)] +
                            backend_flags(backend, buffer, storage), storage)

    def points(self, ctx, p):
        for index in INDEXES:
            db = p["dbs"][index]
            for t in p["threads"]:
                for label, backend in BACKENDS:
                    cmd = self.lookup_cmd(ctx, p, db, t, backend, p["buffer_bytes"])
                    yield Point(label, t, cmd, p["budget_bytes"], lookup_parser(cmd), evict=[db], panel=index,
                                data_bytes=os.path.getsize(db),
                                params={"threads": t, "index": index,
                                        "buffer_bytes": p["buffer_bytes"] if backend == "dimmap" else None})

    def ratios(self, p):
        return [Ratio("dimmap @ budget", "mmap @ budget", "dimmap / mmap", panel=i) for i in INDEXES]

    def check(self, result):
        """The same k-mers are looked up in every run of an index: the hits must agree."""
        mark_disagreements(result, lambda r: r["panel"], lambda r: (r["extra"]["lookups"], r["extra"]["hits"]),
                           "lookups and hits")


class KmerClassify(Experiment):
    name = "kmer-classify"
    figure = "DI-MMAP 2015 Figs. 8b, 9b"
    title = "k-mer classification of three read sets"
    about = ("Classification speed (input bases/s, DB opening excluded) of kmer classify on simulated reads "
             "of the six genomes and two real read sets (gasic SRR059298, honey bee sample; bowtie2 lambda "
             "reads), gnu-hash and two-level DB, Linux mmap vs DI-MMAP in the same budget (the buffer plus the "
             "process memory measured in calibration runs); as reference, Debian's "
             "kraken2 --memory-mapping with a Kraken 2 DB of the same genomes, same reads, same budget (not run "
             "where kraken2 is not installed).")
    metric = "classification speed"
    unit = "bases/s"
    x_label = "read set"
    x_log = False
    kind = "bar"
    requires = ("dimmap-budget", "kmer")

    def setup(self, ctx):
        count = ctx.pick(5000, 100, 50)
        reads = {"simulated": ctx.data.simulated_reads("ci", count)}
        real = ctx.data.real_reads()
        for name, short in (("gasic-srr059298", "gasic SRR059298"), ("bowtie2-lambda-1", "bowtie2 lambda")):
            if name in real:
                reads[short] = ctx.data.reads_subset(name, real[name], count)
        dbs = {i: ctx.data.kmer_db("ci", i) for i in INDEXES}
        sizes = ", ".join(f"{i} {format_size(os.path.getsize(db))}" for i, db in dbs.items())
        p = {"reads": reads, "reads_per_set": count, "dbs": dbs, "data_label": f"DB {sizes}, {count} reads per set",
             "threads": ctx.threads([16, 64], [16], [4]), "kraken2_db": None, "kraken2_skip": ""}
        # Calibrated on the first read set. kmer classify sizes its lookup batches from the memory
        # it has: under the calibration's generous limit every read fits one batch, so the
        # measured memory is the most the run can need.
        db, first = dbs["two-level"], next(iter(reads.values()))
        out = os.path.join(ctx.scratch("kmer-classify"), "calibration")
        equal_budget(ctx, self.name, p, db,
                     lambda buffer: self.classify_cmd(ctx, db, first, max(p["threads"]), "dimmap", buffer, out),
                     classify_parser)
        # The reference is optional: without kraken2 (or its DB) its points say why, the rest runs.
        try:
            ctx.tools.path("kraken2")  # its DB may be there from a machine that had it
            p["kraken2_db"] = ctx.data.kraken2_db("ci")
            p["data_label"] += f", Kraken 2 DB {format_size(self.kraken2_bytes(p))}"
            p["read_bases"] = {name: fastq_bases(path) for name, path in reads.items()}
        except ToolMissing as e:
            p["kraken2_skip"], p["kraken2_status"] = str(e), MISSING
        except DataError as e:
            p["kraken2_skip"], p["kraken2_status"] = str(e), FAILED
        return p

    @staticmethod
    def kraken2_files(p):
        return [os.path.join(p["kraken2_db"], f) for f in KRAKEN2_FILES]

    def kraken2_bytes(self, p):
        return sum(os.path.getsize(f) for f in self.kraken2_files(p))

    def kraken2_point(self, p, t, set_name, reads, out):
        cmd = ["kraken2", "--db", p["kraken2_db"] or "(none)", "--memory-mapping", "--threads", str(t),
               "--output", out, reads]
        params = {"threads": t, "index": "kraken2", "classification": out, "buffer_bytes": None}
        if not p["kraken2_db"]:
            return Point(KRAKEN2, set_name, cmd, p["budget_bytes"], None, panel=f"{t} threads", params=params,
                         skip=p["kraken2_skip"], skip_status=p["kraken2_status"])
        n, bases = p["read_bases"][set_name]
        return Point(KRAKEN2, set_name, cmd, p["budget_bytes"], kraken2_parser(out, n, bases),
                     evict=self.kraken2_files(p), panel=f"{t} threads", data_bytes=self.kraken2_bytes(p),
                     params=params)

    @staticmethod
    def classify_cmd(ctx, db, reads, threads, backend, buffer, out):
        storage = ctx.scratch("kmer-classify")
        return with_summary([ctx.tools.path("kmer"), "classify", "--db", db, "--reads", reads, "--out", out,
                             "--threads", str(threads), "--quiet"] + backend_flags(backend, buffer, storage), storage)

    def points(self, ctx, p):
        storage = ctx.scratch("kmer-classify")
        for t in p["threads"]:
            for k, (set_name, reads) in enumerate(p["reads"].items()):
                for index in INDEXES:
                    for label, backend in BACKENDS:
                        out = os.path.join(storage, f"t{t}-set{k}-{index}-{backend}")
                        cmd = self.classify_cmd(ctx, p["dbs"][index], reads, t, backend, p["buffer_bytes"], out)
                        yield Point(f"{index}, {label}", set_name, cmd, p["budget_bytes"], classify_parser(cmd),
                                    evict=[p["dbs"][index]], panel=f"{t} threads",
                                    data_bytes=os.path.getsize(p["dbs"][index]),
                                    params={"threads": t, "index": index, "classification": out + ".tsv",
                                            "buffer_bytes": p["buffer_bytes"] if backend == "dimmap" else None})
                out = os.path.join(storage, f"t{t}-set{k}-kraken2.out")
                yield self.kraken2_point(p, t, set_name, reads, out)

    def ratios(self, p):
        return ([Ratio(f"{i}, dimmap @ budget", f"{i}, mmap @ budget", f"dimmap / mmap, {i}", panel=f"{t} threads")
                 for t in p["threads"] for i in INDEXES] +
                [Ratio(f"two-level, {label}", KRAKEN2, f"two-level {backend} / kraken2", panel=f"{t} threads")
                 for t in p["threads"] for label, backend in BACKENDS])

    def check(self, result):
        """Both backends must classify every read the same way (byte-identical files; Kraken 2's
        output, of another format, is its own group)."""
        def digest(run):
            with open(run["params"]["classification"], "rb") as f:
                return hashlib.sha256(f.read()).hexdigest()
        mark_disagreements(result, lambda r: (r["panel"], r["x"], r["params"]["index"]), digest, "classification")


EXPERIMENTS = [KmerLookup, KmerClassify]
