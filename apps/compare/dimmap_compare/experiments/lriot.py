"""LRIOT experiments: random 4 KiB I/O through O_DIRECT, Linux mmap and DI-MMAP.
  lriot-read, lriot-write   DI-MMAP 2015 Figs. 3 and 4 (IOPS vs threads)
  dimmap-opt                DI-MMAP 2015 Fig. 5 (bulk vs single-page eviction)
  hot-fifo                  PerMA 2012 Fig. 8 (share of the buffer for the hot-page FIFO)
  perma-lriot               PerMA 2012 Fig. 6 (NVRAM generations modelled on a tmpfs file)"""
import os

from . import perma
from ..experiment import Experiment, Point, Unavailable
from ..results import Ratio
from ..summary import parse_summary
from ..units import format_size, parse_size

KMOD_CONTROL = "/dev/dimmap_ctl"


def parse_lriot(stdout, stderr, seconds):
    """lriot --json (the summary on stdout): IOPS (write runs include the final msync); the buffer
    counters as extra."""
    r = parse_summary(stdout, "lriot", "lriot's output")
    extra = {k: r[k] for k in ("ops", "reads", "writes", "seconds", "sync_seconds", "run_iops") if k in r}
    if "dimmap_stats" in r:
        extra["dimmap_stats"] = r["dimmap_stats"]
    return float(r["rate"]), extra


def kmod_skip_reason():
    if os.path.exists(KMOD_CONTROL):
        return ""
    return f"dimmap.ko not loaded ({KMOD_CONTROL} absent); runtime/kernel benchmarks it in qemu"


class LriotBase(Experiment):
    """Shared sizes: a file 4x the buffer, the buffer plus a slack for the process as the
    budget of every configuration (mmap gets the same cgroup as the dimmap buffer). The slack
    is what a DI-MMAP process needs beside a full buffer: ~6 MiB with a 32 MiB buffer and
    16 writing threads; a 128 MiB buffer written by 64 threads peaks at 144.5 MiB (the engine's
    staging for writebacks and read-ahead, 12.5 MiB, plus the threads), so it was OOM-killed in
    128+16 MiB more often than not. A bigger slack would only hand Linux mmap more cache than
    DI-MMAP has."""
    metric = "IOPS"
    unit = "4 KiB operations/s"
    x_label = "threads"
    requires = ("dimmap-budget", "lriot")

    def sizes(self, ctx, file_full="4G", file_quick="128M", file_smoke="32M"):
        file_bytes = parse_size(ctx.pick(file_full, file_quick, file_smoke))
        slack = parse_size(ctx.pick("64M", "20M", "8M"))
        budget = ctx.budget(file_bytes // 4 + slack)
        buffer = budget - slack
        if buffer < (1 << 20):
            raise Unavailable(f"budget {format_size(budget)} leaves no room for a buffer beside the "
                              f"{format_size(slack)} the process needs")
        return {"data_bytes": file_bytes, "budget_bytes": budget, "buffer_bytes": buffer, "slack_bytes": slack,
                "page_bytes": 4096}

    def lriot_cmd(self, ctx, path, mode, threads, flags):
        return [ctx.tools.path("lriot"), f"--file={path}", f"--mode={mode}", f"--threads={threads}", "--json",
                "--progress=0"] + flags

    def point(self, ctx, config, threads, path, mode, budget, flags, env=None, buffer=None, skip="", panel="",
              out_of_core=True):
        """out_of_core: the budget is meant to hold less than the file (false for the
        unconstrained reference), so a budget that holds it all is flagged."""
        cmd = self.lriot_cmd(ctx, path, mode, threads, flags + ([f"--buffer={buffer}"] if buffer else []))
        params = {"mode": mode, "threads": threads, "buffer_bytes": buffer, "env": env or {}}
        return Point(config, threads, cmd, budget, parse_lriot, env=env or {}, evict=[path], params=params,
                     skip=skip, panel=panel, data_bytes=os.path.getsize(path) if out_of_core else None)


class LriotUniform(LriotBase):
    """Figs. 3/4: unique pages (no page is fetched twice), so the numbers measure how each
    path handles a stream of misses under memory pressure, not caching."""
    write_fraction = 0.0
    x_log = True

    def setup(self, ctx):
        p = self.sizes(ctx)
        p["threads"] = ctx.threads([1, 4, 16, 64, 256], [4, 16], [4])
        pages = p["data_bytes"] // 4096
        p["ops"] = pages // 2  # half the file: every page at most once
        p["seconds_cap"] = ctx.seconds(30, 2, 1)
        p["write_fraction"] = self.write_fraction
        p["pattern"] = "uniform"
        p["file"] = ctx.data.lriot_file(p["data_bytes"])
        return p

    def points(self, ctx, p):
        path, b, buf = p["file"], p["budget_bytes"], p["buffer_bytes"]
        flags = ["--pattern=uniform", f"--write-fraction={self.write_fraction}", f"--ops={p['ops']}",
                 f"--seconds={p['seconds_cap']}"]
        small = max(buf // 4, 1 << 20)
        unconstrained = p["data_bytes"] + b
        kmod = kmod_skip_reason()
        for t in p["threads"]:
            yield self.point(ctx, "direct (O_DIRECT)", t, path, "direct", b, flags)
            yield self.point(ctx, "mmap, unconstrained", t, path, "mmap", unconstrained, flags, out_of_core=False)
            yield self.point(ctx, "mmap @ budget", t, path, "mmap", b, flags)
            yield self.point(ctx, f"dimmap {format_size(buf)}", t, path, "dimmap", b, flags, buffer=buf)
            yield self.point(ctx, f"dimmap {format_size(small)}", t, path, "dimmap", b, flags, buffer=small)
            # The module's buffers are sized when it is loaded (dimmapctl info shows them).
            yield self.point(ctx, "dimmap.ko (module's buffer)", t, path, "dimmap", b, flags,
                             env={"DIMMAP_ENGINE": "kmod"}, skip=kmod)

    def ratios(self, p):
        buf = format_size(p["buffer_bytes"])
        return [Ratio(f"dimmap {buf}", "mmap @ budget", f"dimmap {buf} / mmap @ budget"),
                Ratio(f"dimmap {buf}", "direct (O_DIRECT)", f"dimmap {buf} / direct"),
                Ratio(f"dimmap {buf}", "mmap, unconstrained", f"dimmap {buf} / mmap unconstrained")]


class LriotRead(LriotUniform):
    name = "lriot-read"
    figure = "DI-MMAP 2015 Fig. 3"
    title = "LRIOT uniform random 4 KiB reads"
    about = ("IOPS vs threads for O_DIRECT, Linux mmap with the whole file in memory ('unconstrained', "
             "the cgroup holds file + budget), Linux mmap in the budget, DI-MMAP with a buffer of the budget "
             "and of a quarter of it, and the dimmap.ko engine when the module is loaded. Each run reads "
             "half the file's pages, each at most once, starting cold.")
    write_fraction = 0.0


class LriotWrite(LriotUniform):
    name = "lriot-write"
    figure = "DI-MMAP 2015 Fig. 4"
    title = "LRIOT uniform random 4 KiB read-modify-writes (+ final msync)"
    about = ("As lriot-read with every operation a read-modify-write of a page; IOPS include the final "
             "msync/fdatasync, so dirty pages left in a cache are paid for.")
    write_fraction = 1.0


class DimmapOptimizations(LriotBase):
    name = "dimmap-opt"
    figure = "DI-MMAP 2015 Fig. 5"
    title = "DI-MMAP optimizations: bulk vs single-page eviction, uniform reads"
    about = ("DI-MMAP read IOPS vs threads with pages leaving the buffer in batches of 64 (bulk unmaps "
             "of up to four batches, the default) and one at a time (DIMMAP_EVICT_BATCH=1, a TLB flush "
             "per page). The paper's other lines (raw device vs file system, static vs dynamic page "
             "allocation) have no switch in this runtime.")
    x_log = True

    def setup(self, ctx):
        p = self.sizes(ctx)
        p["threads"] = ctx.threads([1, 4, 16, 64, 256], [4, 16], [4])
        p["ops"] = p["data_bytes"] // 4096 // 2
        p["seconds_cap"] = ctx.seconds(30, 2, 1)
        p["file"] = ctx.data.lriot_file(p["data_bytes"])
        return p

    def points(self, ctx, p):
        flags = ["--pattern=uniform", "--write-fraction=0", f"--ops={p['ops']}", f"--seconds={p['seconds_cap']}"]
        for t in p["threads"]:
            for label, batch in (("bulk eviction (64 pages)", 64), ("single-page eviction", 1)):
                yield self.point(ctx, label, t, p["file"], "dimmap", p["budget_bytes"], flags,
                                 env={"DIMMAP_EVICT_BATCH": batch}, buffer=p["buffer_bytes"])

    def ratios(self, p):
        return [Ratio("single-page eviction", "bulk eviction (64 pages)", "single-page / bulk eviction")]


class HotFifo(LriotBase):
    name = "hot-fifo"
    figure = "PerMA 2012 Fig. 8"
    title = "Hot-page FIFO share, partitioned 95/10 access, 10% writes"
    about = ("DI-MMAP IOPS vs threads when 95% of operations go to 10% of the file (1.6x the buffer) and "
             "10% are writes, with 0/25/50/75% of the buffer given to the hot-page FIFO; Linux mmap in the "
             "same budget for reference. Runs are timed, so hot pages are reused.")
    x_log = True
    SHARES = (0.0, 0.25, 0.5, 0.75)

    def setup(self, ctx):
        p = self.sizes(ctx)
        # The buffer is 1/16 of the file: the hot tenth does not fit, so who stays matters.
        p["buffer_bytes"] = max(p["data_bytes"] // 16, 1 << 20) if not ctx.budget_override else p["buffer_bytes"]
        p["budget_bytes"] = p["buffer_bytes"] + p["slack_bytes"]
        p["threads"] = ctx.threads([16, 64, 256], [16], [4])
        p["seconds"] = ctx.seconds(20, 1, 1)
        p["file"] = ctx.data.lriot_file(p["data_bytes"])
        return p

    def points(self, ctx, p):
        flags = ["--pattern=partitioned", "--partition-ops=0.95", "--partition-space=0.1", "--write-fraction=0.1",
                 f"--seconds={p['seconds']}"]
        for t in p["threads"]:
            for share in self.SHARES:
                yield self.point(ctx, f"hot FIFO {share:.0%}", t, p["file"], "dimmap", p["budget_bytes"],
                                 flags + [f"--hot-fraction={share}"], buffer=p["buffer_bytes"])
            yield self.point(ctx, "mmap @ budget", t, p["file"], "mmap", p["budget_bytes"], flags)

    def ratios(self, p):
        return [Ratio("hot FIFO 75%", "hot FIFO 0%", "hot 75% / no hot FIFO"),
                Ratio("hot FIFO 75%", "mmap @ budget", "dimmap (hot 75%) / mmap @ budget")]


class PermaLriot(perma.OnTmpfs, LriotBase):
    name = "perma-lriot"
    figure = "PerMA 2012 Fig. 6"
    title = "Modelled NVRAM generations (PerMA), uniform random I/O, 10% writes"
    about = ("DI-MMAP IOPS on a file in tmpfs whose every page transfer is delayed by the PerMA model "
             "(DIMMAP_PERMA = lcurr, lnxt1, lnxt2, lnxt3, sim-opt), plus the same run without a model; "
             "primary FIFO only (no hot FIFO), as in the paper; 1x and 8x as many threads as cores.")
    kind = "bar"
    x_log = False

    def setup(self, ctx):
        file_bytes = parse_size(ctx.pick("2G", "64M", "32M"))
        slack = parse_size(ctx.pick("64M", "20M", "8M"))
        cores = os.cpu_count() or 1
        p = {"data_bytes": file_bytes, "slack_bytes": slack, "page_bytes": 4096,
             "buffer_bytes": (ctx.budget_override - slack) if ctx.budget_override else file_bytes // 8,
             "threads": ctx.threads([cores, 8 * cores], [8 * cores], [4]),
             "seconds": ctx.seconds(15, 1, 1), "storage": "tmpfs (/dev/shm)"}
        p["budget_bytes"] = p["buffer_bytes"] + slack
        p["file"] = ctx.data.lriot_file(file_bytes, directory=self.make_tmpfs("perma").dir)
        return p

    def points(self, ctx, p):
        flags = ["--pattern=uniform", "--write-fraction=0.1", f"--seconds={p['seconds']}", "--hot-fraction=0"]
        for t in p["threads"]:
            for gen, env in perma.configs():
                point = self.point(ctx, gen, t, p["file"], "dimmap", p["budget_bytes"], flags, env=env,
                                   buffer=p["buffer_bytes"])
                point.evict = []  # tmpfs pages are the device itself
                yield point

    def ratios(self, p):
        return perma.ratios()


EXPERIMENTS = [LriotRead, LriotWrite, DimmapOptimizations, HotFifo, PermaLriot]
