"""bwa-mmap against upstream bwa (bwa-mmap thesis 2020, chapter 5).
  bwa-index  upstream `bwa index` and `bwa-mmap index` with the big arrays in memory, on Linux mmap
             and on DI-MMAP (buffer = half the budget), each in a memory cgroup of 3 bytes per base
             (at least 32 MiB); every index is compared byte for byte with bwa's own
  bwa-mem    `bwa mem` and `bwa-mmap mem --placement=mmap` on an index that fits in memory: read
             throughput, and the alignments must be upstream's"""
import filecmp
import glob
import hashlib
import os

from ..experiment import Experiment, Point, mark_disagreements
from ..results import Ratio
from ..runner import InvalidOutput
from ..summary import read_summary
from ..units import format_megabases, format_size

SUFFIXES = ("amb", "ann", "bwt", "pac", "sa")


def fasta_bases(path):
    with open(path) as f:
        return sum(len(line.strip()) for line in f if not line.startswith(">"))


def index_parser(prefix, reference):
    """The run's time, if its five index files equal the reference's; the files are removed."""
    def parse(stdout, stderr, seconds):
        try:
            for s in SUFFIXES:
                if not os.path.exists(f"{prefix}.{s}"):
                    raise InvalidOutput(f"{prefix}.{s} was not written")
                if not filecmp.cmp(f"{prefix}.{s}", f"{reference}.{s}", shallow=False):
                    raise InvalidOutput(f".{s} differs from upstream bwa index's")
            return seconds, {}
        finally:
            for f in glob.glob(prefix + ".*"):
                os.unlink(f)
    return parse


class BwaIndex(Experiment):
    name = "bwa-index"
    figure = "bwa-mmap thesis 2020 ch. 5"
    title = "bwa index across placements and genome sizes"
    about = ("Wall time of building a bwa index (-a bwtsw, block = budget / 16) with upstream bwa and with "
             "bwa-mmap's arrays in memory, on Linux mmap and on DI-MMAP (buffer = half the budget), each in a "
             "memory cgroup of 3 bytes per base (at least 32 MiB); real genomes (phage lambda, E. coli K-12) "
             "and, in full runs, synthetic ones of 64 and 256 Mb (bwa-mmap/tests/make_genome.py). Placements that do not fit show OOM; every index built is "
             "checked byte for byte against upstream bwa's.")
    metric = "index time"
    unit = "s"
    x_label = "genome"
    x_log = False
    kind = "bar"
    higher_is_better = False
    requires = ("dimmap-budget", "bwa-mmap", "bwa")

    def setup(self, ctx):
        listing, _ = ctx.data.genomes("ci")
        genomes = {}
        with open(listing) as f:
            paths = {os.path.basename(l.split("\t")[0]): l.split("\t")[0] for l in f if l.strip()}
        genomes["phage lambda"] = paths["lambda.fa"]
        if ctx.mode != "smoke":
            genomes["E. coli K-12"] = paths["ecoli_mg1655.fa"]
        for length in ctx.pick(["64M", "256M"], [], []):
            genomes[f"synthetic {length}"] = ctx.data.synthetic_genome(length)
        refs = {}
        for label, fa in genomes.items():
            bases = fasta_bases(fa)
            # 3 bytes per base: a bwtsw build of E. coli touches ~12 MiB at once beside its workspace.
            budget = ctx.budget(max(3 * bases, 32 << 20) >> 20 << 20)
            block = max(budget // 16, 1 << 20)
            refs[label] = {"fasta": fa, "bases": bases, "budget": budget, "block": block,
                           "reference": ctx.data.bwa_reference(fa, ["-a", "bwtsw", "-b", str(block)])}
        sizes = ", ".join(f"{l} {format_megabases(v['bases'])}" for l, v in refs.items())
        budgets = ", ".join(format_size(v["budget"]) for v in refs.values())
        return {"genomes": refs, "data_label": f"genomes: {sizes}", "budget_label": f"budget {budgets}"}

    def points(self, ctx, p):
        bwa, bwa_mmap = ctx.tools.path("bwa"), ctx.tools.path("bwa-mmap")
        work = ctx.scratch("bwa-index")
        for i, (label, g) in enumerate(p["genomes"].items()):
            x = f"{label} ({format_megabases(g['bases'])})"
            b, block = g["budget"], g["block"]
            common = ["-a", "bwtsw", "-b", str(block)]
            configs = [("bwa index (upstream)", [bwa, "index"], None),
                       ("bwa-mmap, memory", [bwa_mmap, "index", "--placement=memory"], None),
                       ("bwa-mmap, mmap", [bwa_mmap, "index", "--placement=mmap", "--min-alloc=2M"], None),
                       ("bwa-mmap, dimmap", [bwa_mmap, "index", "--placement=dimmap", f"--buffer={b // 2}",
                                             "--min-alloc=2M"], b // 2)]
            for n, (config, cmd, buffer) in enumerate(configs):
                prefix = os.path.join(work, f"genome{i}-config{n}")
                yield Point(config, x, cmd + common + ["-p", prefix, g["fasta"]], b,
                            index_parser(prefix, g["reference"]), evict=[g["fasta"]], cwd=work,
                            params={"buffer_bytes": buffer, "bases": g["bases"], "block": block})

    def ratios(self, p):
        return [Ratio("bwa-mmap, dimmap", "bwa-mmap, mmap", "dimmap / mmap time")]


def sam_digest(path):
    """SHA-256 of a SAM file without its @PG lines (which name the program): equal digests, equal
    alignments. The file is removed."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for line in f:
                if not line.startswith(b"@PG"):
                    digest.update(line)
    except OSError:
        raise InvalidOutput(f"{os.path.basename(path)} was not written") from None
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return digest.hexdigest()


def mem_parser(sam, reads, summary=None):
    """Reads/s of the whole run (index load included, the same measure for both programs) and the
    digest of its alignments; bwa-mmap's --json summary must count every read."""
    def parse(stdout, stderr, seconds):
        extra = {"sam_sha256": sam_digest(sam)}
        if summary:
            s = read_summary(summary, "bwa-mmap mem")
            if s.get("reads") != reads:
                raise InvalidOutput(f"aligned {s.get('reads')} reads of {reads}")
            extra.update(align_reads_per_s=s["rate"], load_s=s.get("load_seconds"))
        return reads / seconds, extra
    return parse


class BwaMem(Experiment):
    name = "bwa-mem"
    figure = "bwa-mmap thesis 2020 ch. 5"
    title = "bwa mem throughput, index in memory"
    about = ("Reads/s of the whole run (index load included) of upstream `bwa mem` and `bwa-mmap mem "
             "--placement=mmap` on wgsim read pairs of E. coli K-12, the index fitting in memory (its files "
             "stay in the page cache): what mapping the index costs when memory is not short. The "
             "alignments of both must be the same (SAM without @PG lines).")
    metric = "throughput"
    unit = "reads/s"
    x_log = False
    kind = "bar"
    requires = ("dimmap-budget", "bwa-mmap", "bwa", "wgsim")

    def setup(self, ctx):
        listing, _ = ctx.data.genomes("ci")
        with open(listing) as f:
            paths = {os.path.basename(l.split("\t")[0]): l.split("\t")[0] for l in f if l.strip()}
        fasta = paths["ecoli_mg1655.fa"]
        pairs = ctx.pick(250000, 50000, 5000)
        r1, r2 = ctx.data.wgsim_pairs(fasta, pairs)
        return {"fasta": fasta, "pairs": pairs, "reads_1": r1, "reads_2": r2,
                "index": ctx.data.bwa_reference(fasta, []), "threads": ctx.threads([2], [2], [2]),
                # Not a constraint: the index and the batches of reads fit many times over.
                "budget_bytes": ctx.budget(1 << 30),
                "data_label": f"E. coli K-12 ({format_megabases(fasta_bases(fasta))}), {pairs} wgsim pairs"}

    def points(self, ctx, p):
        work = ctx.scratch("bwa-mem")
        reads = 2 * p["pairs"]
        for t in p["threads"]:
            sam = os.path.join(work, f"upstream-{t}.sam")
            yield Point("bwa mem (upstream)", t, [ctx.tools.path("bwa"), "mem", "-t", str(t), "-o", sam, p["index"],
                                                  p["reads_1"], p["reads_2"]], p["budget_bytes"],
                        mem_parser(sam, reads), cwd=work, params={"threads": t})
            sam = os.path.join(work, f"mmap-{t}.sam")
            summary = os.path.join(work, f"mmap-{t}.json")
            yield Point("bwa-mmap mem, mmap", t, [ctx.tools.path("bwa-mmap"), "mem", "--placement=mmap", "-t", str(t),
                                                  "-o", sam, f"--json={summary}", p["index"], p["reads_1"],
                                                  p["reads_2"]], p["budget_bytes"],
                        mem_parser(sam, reads, summary), cwd=work, params={"threads": t})

    def ratios(self, p):
        return [Ratio("bwa-mmap mem, mmap", "bwa mem (upstream)", "bwa-mmap / bwa throughput")]

    def check(self, result):
        mark_disagreements(result, lambda r: r["x"], lambda r: r["extra"]["sam_sha256"], "alignments (SAM)")


EXPERIMENTS = [BwaIndex, BwaMem]
