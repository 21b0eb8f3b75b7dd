"""Unmodified programs from Debian on DI-MMAP through dimmap-run --files (the overlay of
runtime/preload): the same binary reads its database through the Linux page cache or through
a DI-MMAP buffer, in the same memory cgroup.
  overlay-kraken2  reads/s of kraken2 --memory-mapping classifying simulated reads
  overlay-lmdb     random key lookups/s in an LMDB database (lmdb-lookup, the system liblmdb)
Each budget is the buffer plus the overlay process's own memory, measured in calibration runs
(the median footprint + 10%, as the BFS experiments do); the plain run gets the same budget."""
import hashlib
import os
import re

from ..calibration import buffer_for, calibrate_overhead
from ..experiment import Experiment, Point, mark_disagreements
from ..results import Ratio
from ..runner import InvalidOutput
from ..units import format_size

LINUX = "Linux page cache @ budget"
DIMMAP = "DI-MMAP (dimmap-run --files) @ budget"


def file_bytes(directory):
    return sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory)
               if os.path.isfile(os.path.join(directory, f)))


def overlay_cmd(ctx, files, buffer, cmd):
    return [ctx.tools.path("dimmap-run"), f"--files={files}", f"--buffer={buffer}", "--stats", "--"] + cmd


def preload_stats(stderr):
    """The preload's counters (its 'stats placement=...' line), for the results files."""
    m = re.search(r"stats placement=\S+ (.*)", stderr)
    if not m:
        return {}
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))}


class OverlayBase(Experiment):
    x_log = False
    requires = ("dimmap-budget", "dimmap-run")

    data_per_buffer = 8  # the data is this many times the buffer (several times the budget)

    def equal_budget(self, ctx, p, files, cmd, parse, data_bytes, evict):
        """Sets p's buffer (the data / data_per_buffer) and budget from calibration runs of the
        overlay under a generous limit; --budget fixes the budget and the buffer is what it leaves."""
        buffer = max(data_bytes // self.data_per_buffer >> 20, 2) << 20
        generous = 2 * data_bytes + (256 << 20)
        overhead, text, derivation = calibrate_overhead(ctx, self.name, overlay_cmd(ctx, files, buffer, cmd), parse,
                                                        buffer, generous, evict=evict)
        buffer = buffer_for(ctx, buffer, overhead)
        p.update(buffer_bytes=buffer, budget_bytes=buffer + overhead, overhead_bytes=overhead,
                 budget_derivation={"": text}, calibration={"": derivation},
                 budget_label=f"budget {format_size(buffer + overhead)} (buffer {format_size(buffer)})")

    def ratios(self, p):
        return [Ratio(DIMMAP, LINUX, "DI-MMAP / Linux")]


def kraken2_processed(stderr):
    """(reads, seconds) of kraken2's summary line 'N sequences (M Mbp) processed in Ts': its
    classification time, DB opening excluded (as kmer classify's own seconds)."""
    m = re.search(r"(\d+) sequences \(([\d.]+) Mbp\) processed in ([\d.]+)s", stderr)
    if not m or float(m.group(3)) <= 0:
        raise InvalidOutput("kraken2 printed no 'sequences ... processed in' summary")
    return int(m.group(1)), float(m.group(3))


def parse_kraken2(out_file):
    """reads/s from kraken2's summary; the digest of its per-read output is kept to compare the
    two sides."""
    def parse(stdout, stderr, seconds):
        reads, secs = kraken2_processed(stderr)
        with open(out_file, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        return reads / secs, {"reads": reads, "seconds": secs, "output_sha256": digest, **preload_stats(stderr)}
    return parse


class OverlayKraken2(OverlayBase):
    name = "overlay-kraken2"
    figure = "dimmap-run --files"
    title = "kraken2 --memory-mapping, unmodified, on Linux vs DI-MMAP"
    about = ("Reads/s of Debian's kraken2 --memory-mapping classifying simulated reads against a Kraken 2 DB "
             "of the 'ci' genomes (full: the 21-genome set), its DB directory read through the Linux page cache "
             "or through a DI-MMAP buffer of 1/4 of the DB (dimmap-run --files) in the same memory cgroup; "
             "per-read outputs must be identical.")
    metric = "classification speed"
    unit = "reads/s"
    requires = ("dimmap-budget", "dimmap-run", "kraken2")
    # Every read's k-mers probe the whole hash table: with 1/8 of it (2 MiB of the 'ci' DB)
    # Linux thrashed its mapped pages until the OOM killer ended it; the kmer experiments' 4x.
    data_per_buffer = 4

    def setup(self, ctx):
        gset = ctx.pick("full", "ci", "ci")
        db = ctx.data.kraken2_db(gset)
        # Linux thrashes at this budget: 500 reads of the 'ci' DB took it 130-160 s (3-4 reads/s)
        # and 5000 did not finish in 180 s, where DI-MMAP classified them in 7-10 s.
        count = ctx.pick(20000, 200, 100)
        reads = ctx.data.simulated_reads(gset, count)
        data = file_bytes(db)
        p = {"db": db, "reads": reads, "reads_count": count, "data_bytes": data,
             "threads": ctx.threads([1, 2], [2], [2]),
             "data_label": f"Kraken 2 DB of '{gset}' {format_size(data)}, {count} reads"}
        out = os.path.join(ctx.scratch(self.name), "calibration.out")
        self.equal_budget(ctx, p, db, self.cmd(p, max(p["threads"]), out), parse_kraken2(out), data,
                          self.evict(p))
        return p

    @staticmethod
    def cmd(p, threads, out):
        return ["kraken2", "--db", p["db"], "--memory-mapping", "--threads", str(threads), "--output", out,
                p["reads"]]

    @staticmethod
    def evict(p):
        return [os.path.join(p["db"], f) for f in ("hash.k2d", "opts.k2d", "taxo.k2d")]

    def points(self, ctx, p):
        work = ctx.scratch(self.name)
        for t in p["threads"]:
            for config in (LINUX, DIMMAP):
                out = os.path.join(work, f"t{t}-{'dimmap' if config == DIMMAP else 'linux'}.out")
                cmd = self.cmd(p, t, out)
                if config == DIMMAP:
                    cmd = overlay_cmd(ctx, p["db"], p["buffer_bytes"], cmd)
                yield Point(config, t, cmd, p["budget_bytes"], parse_kraken2(out), evict=self.evict(p),
                            data_bytes=p["data_bytes"], timeout=ctx.pick(3600, 600, 300),
                            params={"threads": t, "buffer_bytes": p["buffer_bytes"] if config == DIMMAP else None})

    def check(self, result):
        """Both sides must classify every read the same way (byte-identical kraken2 output)."""
        mark_disagreements(result, lambda r: r["x"], lambda r: r["extra"]["output_sha256"], "kraken2 outputs")


def parse_lookup(stdout, stderr, seconds):
    """lmdb-lookup: lookups/s from stderr; counts and checksum (stdout) to compare the sides."""
    kv = dict(l.split("\t", 1) for l in stdout.strip().splitlines() if "\t" in l)
    m = re.search(r"([\d.]+) lookups/s", stderr)
    if not m or kv.get("wrong") != "0" or kv.get("found") != kv.get("lookups"):
        raise InvalidOutput(f"lmdb-lookup: no rate or wrong values ({kv})")
    return float(m.group(1)), {"lookups": int(kv["lookups"]), "checksum": kv["checksum"], **preload_stats(stderr)}


class OverlayLmdb(OverlayBase):
    name = "overlay-lmdb"
    figure = "dimmap-run --files"
    title = "LMDB random lookups, unmodified liblmdb, on Linux vs DI-MMAP"
    about = ("Random key lookups/s (lmdb-lookup: the system liblmdb, MDB_RDONLY, MDB_NORDAHEAD) in an LMDB "
             "database of 1000-byte values 8x the DI-MMAP buffer, read through the Linux page cache or through "
             "the buffer (dimmap-run --files) in the same memory cgroup; the values' checksums must agree.")
    metric = "lookup rate"
    unit = "lookups/s"
    x_label = "database"
    kind = "bar"
    requires = ("dimmap-budget", "dimmap-run", "lmdb-lookup")

    def setup(self, ctx):
        records = ctx.pick(1000000, 100000, 30000)
        db = ctx.data.lmdb_db(records)
        data = os.path.getsize(os.path.join(db, "data.mdb"))
        lookups = ctx.pick(200000, 20000, 2000)
        p = {"db": db, "records": records, "lookups": lookups, "data_bytes": data,
             "data_label": f"LMDB {records} records, {format_size(data)}, {lookups} lookups"}
        self.equal_budget(ctx, p, db, self.cmd(ctx, p), parse_lookup, data, self.evict(p))
        return p

    @staticmethod
    def cmd(ctx, p):
        return [ctx.tools.path("lmdb-lookup"), "lookup", p["db"], "--lookups", str(p["lookups"]), "--seed", "7"]

    @staticmethod
    def evict(p):
        return [os.path.join(p["db"], "data.mdb")]

    def points(self, ctx, p):
        x = f"{p['records']} records ({format_size(p['data_bytes'])})"
        for config in (LINUX, DIMMAP):
            cmd = self.cmd(ctx, p)
            if config == DIMMAP:
                cmd = overlay_cmd(ctx, p["db"], p["buffer_bytes"], cmd)
            yield Point(config, x, cmd, p["budget_bytes"], parse_lookup, evict=self.evict(p),
                        data_bytes=p["data_bytes"],
                        params={"buffer_bytes": p["buffer_bytes"] if config == DIMMAP else None})

    def check(self, result):
        """The same keys are looked up on both sides: the values' checksums must agree."""
        mark_disagreements(result, lambda r: r["x"], lambda r: r["extra"]["checksum"], "lookup checksums")


EXPERIMENTS = [OverlayKraken2, OverlayLmdb]
