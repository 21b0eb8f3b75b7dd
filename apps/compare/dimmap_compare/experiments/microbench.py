"""Micro-benchmarks and the HPMMAP experiment (apps/microbench).
  microbench   DI-MMAP 2015 Fig. 6: lookups/s vs threads on a sorted vector, an ordered map and
               an unordered map in files 4x the budget
  hpmmap       HPMMAP 2015 Fig. 8: run time and its variance of a memory-heavy kernel with
               three memory managers, alone and beside a competing load"""
import contextlib
import os
import shlex
import signal
import subprocess
import time

from ..experiment import Experiment, Point, Unavailable, mark_disagreements
from ..results import Ratio
from ..runner import InvalidOutput
from ..summary import read_summary, summary_file, summary_parser, with_summary
from ..tools import ToolMissing
from ..units import format_size, parse_size

STRUCTURES = ["sorted-vector", "ordered-map", "unordered-map"]


def query_parser(cmd):
    """microbench query's summary (one thread count per run): lookups/s; the answers' checksum is
    kept to compare placements."""
    def extra(s):
        run = s["runs"][-1]
        return {"checksum": run["checksum"], "found": run["found"], "entries": s["entries"]}
    return summary_parser(cmd, "microbench query", lambda s: s["runs"][-1]["lookups_per_second"], extra)


class Microbench(Experiment):
    name = "microbench"
    figure = "DI-MMAP 2015 Fig. 6"
    title = "Micro-benchmarks: lookups in mapped data structures"
    about = ("Lookups/s vs threads for binary search on a sorted vector, an ordered map (red-black tree) "
             "and an unordered map, each in a file 4x the budget: in memory (a tmpfs copy; the cgroup holds "
             "it and the budget), Linux mmap with twice the budget and with the budget, DI-MMAP with a "
             "buffer of the budget. Every "
             "answer is checked by the kernel and the answers' checksums must agree across placements.")
    metric = "lookup rate"
    unit = "lookups/s"
    y_log = True  # in memory is orders of magnitude above the rest
    requires = ("dimmap-budget", "microbench")

    def setup(self, ctx):
        size = parse_size(ctx.pick("2G", "32M", "16M"))
        slack = parse_size(ctx.pick("32M", "8M", "8M"))  # the query process beside its buffer
        budget = ctx.budget(size // 4 + slack)
        p = {"data_bytes": size, "data_label": f"data {format_size(size)} per structure", "budget_bytes": budget,
             "buffer_bytes": budget - slack, "slack_bytes": slack,
             "threads": ctx.threads([1, 4, 16, 64], [16], [4]), "queries": ctx.pick(20000, 200, 100)}
        p["files"] = {s: ctx.data.microbench_file(s, size) for s in STRUCTURES}
        return p

    def points(self, ctx, p):
        mb = ctx.tools.path("microbench")
        b, buf, slack = p["budget_bytes"], p["buffer_bytes"], p["slack_bytes"]
        storage = ctx.scratch("microbench")
        for s in STRUCTURES:
            path = p["files"][s]
            for t in p["threads"]:
                # Same seed per thread count: every placement answers the same queries.
                base = [mb, "query", f"--file={path}", f"--structure={s}", f"--threads={t}",
                        f"--queries={p['queries']}", f"--seed={1000 + t}", f"--storage={storage}"]
                configs = [("in memory (unconstrained)", ["--placement=in-memory"], p["data_bytes"] + b, None),
                           ("mmap @ 2x budget", ["--backend=mmap"], 2 * buf + slack, None),
                           ("mmap @ budget", ["--backend=mmap"], b, None),
                           # Linux without readahead: the fair baseline for random lookups.
                           ("mmap+MADV_RANDOM @ budget", ["--backend=mmap", "--advise-random"], b, None),
                           ("dimmap @ budget", ["--backend=dimmap", f"--buffer={buf}"], b, buf)]
                for label, flags, budget, buffer in configs:
                    cmd = with_summary(base + flags, storage)
                    yield Point(label, t, cmd, budget, query_parser(cmd), evict=[path], panel=s,
                                data_bytes=None if label.startswith("in memory") else os.path.getsize(path),
                                params={"threads": t, "buffer_bytes": buffer, "structure": s})

    def ratios(self, p):
        return [r for s in STRUCTURES
                for r in (Ratio("dimmap @ budget", "mmap @ budget", "dimmap / mmap @ budget", panel=s),
                          Ratio("dimmap @ budget", "mmap+MADV_RANDOM @ budget", "dimmap / mmap+random @ budget",
                                panel=s))]

    def check(self, result):
        """Placements must give the same answers to the same queries (seed per thread count)."""
        mark_disagreements(result, lambda r: (r["panel"], r["x"]), lambda r: r["extra"]["checksum"],
                           "lookup answers (checksum)")


def random_access_parser(cmd):
    """microbench random-access (cmd from with_summary): the whole process's time, arena set-up
    included; the phases, faults and huge pages of its summary as extra. The kernel verifies
    its updates."""
    path = summary_file(cmd)
    fields = {"init_s": "init_seconds", "update_s": "update_seconds", "total_s": "total_seconds",
              "minflt_init": "minflt_init", "huge_kib": "huge_kib"}

    def parse(stdout, stderr, seconds):
        s = read_summary(path, "microbench random-access")
        if s.get("verified") is not True:
            raise InvalidOutput("the kernel's updates did not verify")
        return seconds, {k: float(s[v]) for k, v in fields.items()}
    return parse


class Hpmmap(Experiment):
    name = "hpmmap"
    figure = "HPMMAP 2015 Fig. 8"
    title = "HPMMAP: run time and variance of a memory-heavy kernel, alone and beside a competing load"
    about = ("Wall time of 'microbench random-access' (random XOR updates on a malloc'd table) with "
             "glibc malloc (default), malloc with transparent huge pages (GLIBC_TUNABLES "
             "glibc.malloc.hugetlb=1) and the HPMMAP arena (dimmap-run --placement=hpmmap: 2 MiB pages "
             "reserved, populated and locked at start), alone and while stress-ng --vm competes for "
             "memory; mean and standard deviation over the runs (the paper's point is the variance).")
    metric = "run time"
    unit = "s"
    x_label = "condition"
    x_log = False
    kind = "bar"
    higher_is_better = False
    statistic = "mean"
    requires = ("dimmap-budget", "microbench", "stress-ng")

    def repeats(self, ctx):
        return max(ctx.repeat, ctx.pick(10, 3, 2))

    def setup(self, ctx):
        size = parse_size(ctx.pick("2G", "128M", "32M"))
        self.load = ctx.pick("--vm 2 --vm-bytes 1G", "--vm 1 --vm-bytes 256M", "--vm 1 --vm-bytes 64M").split()
        return {"data_bytes": size, "data_label": f"table {format_size(size)}",
                "budget_bytes": ctx.budget(2 * size + parse_size("64M")),
                "updates": ctx.pick(1 << 26, 1 << 22, 1 << 20), "threads": ctx.threads([2], [2], [2]),
                "load": "stress-ng " + " ".join(self.load)}

    def points(self, ctx, p):
        size = p["data_bytes"]
        threads = p["threads"][0]
        kernel = [ctx.tools.path("microbench"), "random-access", f"--size={size}", f"--updates={p['updates']}",
                  f"--threads={threads}"]
        try:
            run = ctx.tools.path("dimmap-run")
            hpmmap = [run, "--placement=hpmmap", f"--buffer={size + (16 << 20)}", f"--min-alloc={size // 2}", "--"]
            missing = ""
        except ToolMissing as e:  # the other two managers still run
            hpmmap, missing = [], str(e)
        configs = [("default (malloc)", kernel, {}, ""),
                   ("THP (malloc + huge pages)", kernel, {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}, ""),
                   ("HPMMAP arena", hpmmap + kernel, {}, missing)]
        scratch = ctx.scratch("hpmmap")
        for condition in ("alone", "loaded"):
            for label, cmd, env, skip in configs:
                cmd = with_summary(cmd, scratch)
                yield Point(label, condition, cmd, p["budget_bytes"], random_access_parser(cmd), env=env, skip=skip,
                            skip_status="missing", condition=condition if condition == "loaded" else "",
                            params={"threads": threads})

    def ratios(self, p):
        return [Ratio("HPMMAP arena", "default (malloc)", "HPMMAP / default time"),
                Ratio("THP (malloc + huge pages)", "default (malloc)", "THP / default time")]

    @contextlib.contextmanager
    def condition(self, name, ctx):
        """The competing load: stress-ng outside the budget cgroups, for as long as the points run."""
        proc = subprocess.Popen([ctx.tools.path("stress-ng")] + self.load + ["--quiet"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            time.sleep(2)  # let the load take hold
            if proc.poll() is not None:
                raise Unavailable(f"the competing load (stress-ng {shlex.join(self.load)}) exited with "
                                  f"{proc.returncode}")
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


EXPERIMENTS = [Microbench, Hpmmap]
