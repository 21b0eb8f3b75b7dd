"""bwa index across placements and genome sizes (bwa-mmap thesis 2020, chapter 5): upstream
`bwa index` and `bwa-mmap index` with the big arrays in memory, on Linux mmap and on DI-MMAP
(buffer = half the budget), each in a memory cgroup of 3 bytes per base (at least 32 MiB).
Every index is compared byte for byte with bwa's own."""
import filecmp
import glob
import os

from ..experiment import Experiment, Point
from ..results import Ratio
from ..runner import InvalidOutput
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


EXPERIMENTS = [BwaIndex]
