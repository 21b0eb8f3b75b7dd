"""k-mer experiments (kmer/): the LMAT-style database on storage behind Linux mmap or DI-MMAP.
  kmer-lookup     DI-MMAP 2015 Fig. 7: raw lookups/s vs threads, gnu-hash and two-level index
  kmer-classify   DI-MMAP 2015 Figs. 8b/9b: classification bases/s on three read sets"""
import hashlib
import os

from ..experiment import Experiment, Point, mark_disagreements
from ..results import Ratio
from ..runner import InvalidOutput
from ..summary import summary_parser, with_summary
from ..units import format_size, parse_size

INDEXES = ["gnu-hash", "two-level"]
BACKENDS = [("mmap @ budget", "mmap"), ("dimmap @ budget", "dimmap")]


def kmer_budget(ctx, two_level_db, slack):
    """The papers' setting: the DB is several times the memory; here the two-level DB is 4x the
    buffer (the gnu-hash DB, ~3.5x bigger, fits even less, as in the paper). `slack` is the
    process's own memory beside the buffer (k-mers or read batches)."""
    buffer = max(os.path.getsize(two_level_db) // 4 >> 20, 4) << 20
    slack = -(-slack >> 20) << 20  # whole MiB
    budget = ctx.budget(buffer + slack)
    return budget, budget - slack, slack


def backend_flags(backend, buffer, storage):
    flags = [f"--backend={backend}", f"--storage={storage}"]
    # Readahead only wastes an mmap budget on random lookups (as kmer/bench/kmer-bench does).
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


class KmerLookup(Experiment):
    name = "kmer-lookup"
    figure = "DI-MMAP 2015 Fig. 7"
    title = "Raw k-mer lookups, gnu-hash and two-level index"
    about = ("Lookups/s vs threads of the k-mers of simulated reads (the paper's synthetic HC1 set) in "
             "databases of six real genomes (datasets/fetch-genomes ci), gnu-hash and two-level index, Linux "
             "mmap (MADV_RANDOM) vs DI-MMAP in the same budget; the two-level DB is 4x the buffer.")
    metric = "lookup rate"
    unit = "k-mer lookups/s"
    requires = ("dimmap-budget", "kmer")

    def setup(self, ctx):
        reads = ctx.data.simulated_reads("ci", ctx.pick(20000, 1000, 200))
        dbs = {i: ctx.data.kmer_db("ci", i) for i in INDEXES}
        max_kmers = ctx.pick(1000000, 20000, 4000)
        budget, buffer, slack = kmer_budget(ctx, dbs["two-level"], (8 << 20) + 8 * max_kmers)
        sizes = ", ".join(f"{i} {format_size(os.path.getsize(db))}" for i, db in dbs.items())
        return {"reads": reads, "dbs": dbs, "budget_bytes": budget, "buffer_bytes": buffer, "slack_bytes": slack,
                "data_label": f"DB {sizes}", "max_kmers": max_kmers,
                "threads": ctx.threads([1, 4, 16, 64], [4, 16], [4])}

    def points(self, ctx, p):
        kmer = ctx.tools.path("kmer")
        storage = ctx.scratch("kmer")
        for index in INDEXES:
            db = p["dbs"][index]
            for t in p["threads"]:
                for label, backend in BACKENDS:
                    cmd = with_summary([kmer, "lookup", "--db", db, "--reads", p["reads"], "--max-kmers",
                                        str(p["max_kmers"]), "--threads", str(t)] +
                                       backend_flags(backend, p["buffer_bytes"], storage), storage)
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
             "reads), gnu-hash and two-level DB, Linux mmap vs DI-MMAP in the same budget.")
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
        budget, buffer, slack = kmer_budget(ctx, dbs["two-level"], parse_size("24M"))
        sizes = ", ".join(f"{i} {format_size(os.path.getsize(db))}" for i, db in dbs.items())
        return {"reads": reads, "reads_per_set": count, "dbs": dbs, "budget_bytes": budget, "buffer_bytes": buffer,
                "slack_bytes": slack, "data_label": f"DB {sizes}, {count} reads per set",
                "threads": ctx.threads([16, 64], [16], [4])}

    def points(self, ctx, p):
        kmer = ctx.tools.path("kmer")
        storage = ctx.scratch("kmer-classify")
        for t in p["threads"]:
            for k, (set_name, reads) in enumerate(p["reads"].items()):
                for index in INDEXES:
                    for label, backend in BACKENDS:
                        out = os.path.join(storage, f"t{t}-set{k}-{index}-{backend}")
                        cmd = with_summary([kmer, "classify", "--db", p["dbs"][index], "--reads", reads, "--out",
                                            out, "--threads", str(t), "--quiet"] +
                                           backend_flags(backend, p["buffer_bytes"], storage), storage)
                        yield Point(f"{index}, {label}", set_name, cmd, p["budget_bytes"], classify_parser(cmd),
                                    evict=[p["dbs"][index]], panel=f"{t} threads",
                                    data_bytes=os.path.getsize(p["dbs"][index]),
                                    params={"threads": t, "index": index, "classification": out + ".tsv",
                                            "buffer_bytes": p["buffer_bytes"] if backend == "dimmap" else None})

    def ratios(self, p):
        return [Ratio(f"{i}, dimmap @ budget", f"{i}, mmap @ budget", f"dimmap / mmap, {i}", panel=f"{t} threads")
                for t in p["threads"] for i in INDEXES]

    def check(self, result):
        """Both backends must classify every read the same way (byte-identical files)."""
        def digest(run):
            with open(run["params"]["classification"], "rb") as f:
                return hashlib.sha256(f.read()).hexdigest()
        mark_disagreements(result, lambda r: (r["panel"], r["x"], r["params"]["index"]), digest, "classification")


EXPERIMENTS = [KmerLookup, KmerClassify]
