"""BFS experiments (graph/): the level-asynchronous BFS with its five files placed in memory,
on Linux mmap or on DI-MMAP, every search validated (Graph500 rules, untimed).
  bfs-semi    DI-MMAP 2015 Fig. 10: semi-external (graph on storage, algorithmic data in memory)
  bfs-full    DI-MMAP 2015 Fig. 12: fully external, TEPS vs threads
  bfs-sweep   DI-MMAP 2015 Figs. 11/13: fully external as the budget shrinks, hot FIFO 75/50/0 %
  bfs-perma   PerMA 2012 Fig. 9: fully external on modelled NVRAM generations
Equal budgets are measured, much as graph/bench/bfs-bench does: calibration runs of the dimmap
configuration give the process's memory beside its buffer (the median of several, +10%; see
budgets.py), and every configuration gets the buffer plus that."""
import os
import subprocess

from . import perma
from ..calibration import buffer_for, calibrate_overhead
from ..experiment import Experiment, Point, Unavailable
from ..results import Ratio
from ..runner import InvalidOutput
from ..summary import read_summary, summary_parser, with_summary
from ..units import format_size

def bfs_parser(cmd):
    """The summary's harmonic-mean TEPS; a search that fails validation is no result."""
    def value(s):
        if not s.get("validated"):
            raise InvalidOutput("the searches were not validated")
        if not s.get("all_valid"):
            raise InvalidOutput("validation did not pass")
        return s["harmonic_mean_teps"]
    return summary_parser(cmd, "bfs", value,
                          lambda s: {"mean_time_s": s["mean_seconds"], "visited": s["visited_first"]})


class BfsBase(Experiment):
    metric = "TEPS"
    unit = "traversed edges/s"
    requires = ("dimmap-budget", "bfs", "rmat-gen", "graph-ingest")

    @staticmethod
    def scale(ctx):
        # Quick: scale 17 (graph ~16 MiB), big enough that the buffer, not the process's own few
        # MiB, is most of each budget, and that the budget stays below the data.
        return ctx.scale(22, 17, 12)

    def graph_params(self, ctx, graph_dir=None):
        scale = self.scale(ctx)
        graph = graph_dir or ctx.data.graph(scale)
        info = ctx.data.graph_info(graph)
        vertices = int(info["vertices"])
        graph_bytes = sum(os.path.getsize(os.path.join(graph, f)) for f in ("vertex.dat", "edge.dat"))
        threads = max(self.thread_list(ctx))
        # Algorithmic data: progress 8 B + cache 1 B per vertex + the visitor queue (~4 B per vertex).
        algo_bytes = vertices * 13 + 8 * 4096 * threads + 64 * 4096
        return {"graph": graph, "scale": scale, "vertices": vertices, "undirected_edges": int(info["undirected_edges"]),
                "graph_bytes": graph_bytes, "algo_bytes": algo_bytes, "roots": ctx.pick(8, 2, 1),
                "threads": self.thread_list(ctx),
                "data_label": f"R-MAT scale {scale}: graph {format_size(graph_bytes)} + "
                              f"algorithmic {format_size(algo_bytes)}"}

    def thread_list(self, ctx):
        return ctx.threads([16, 64], [16], [4])

    def bfs_cmd(self, ctx, p, threads, storage, flags, validate=True):
        cmd = [ctx.tools.path("bfs"), f"--graph={p['graph']}", f"--roots={p['roots']}", "--seed=1",
               f"--threads={threads}", f"--storage={storage}"] + flags + (["--validate"] if validate else [])
        return with_summary(cmd, storage)

    def overhead(self, ctx, p, flags, buffer, storage, env=None, key=""):
        """The memory the dimmap configuration needs beside its buffer, from calibration runs
        with the points' roots (data 4x the buffer, so the buffer fills) under a generous limit:
        the median of the runs' footprints minus the buffer's part of them, plus 10% (at least
        2 MiB). The footprint is the process's own resident memory (anonymous and shared: heap,
        stacks, a memfd buffer's pages; footprint.py; a buffer in the page cache is not in it):
        the cgroup's
        peak would add whatever page cache the run happened to leave, which a generous limit
        lets pile up and which differed 2x between identical runs. With the scratch files on
        tmpfs (bfs-perma) the footprint is the cgroup's peak instead: the algorithmic files the
        run writes there are charged to it and cannot be reclaimed, and no page cache of reads
        inflates it (a run of 2 roots peaked ~1 MiB above one of 1 root there). How it was
        derived goes into p["budget_derivation"] and p["calibration"]."""
        generous = 4 * (buffer + p["algo_bytes"]) + (256 << 20)
        cmd = self.bfs_cmd(ctx, p, max(p["threads"]), storage, flags + [f"--buffer={buffer}"])
        on_tmpfs = bool(p.get("storage", "").startswith("tmpfs"))
        overhead, text, derivation = calibrate_overhead(ctx, self.name, cmd, bfs_parser(cmd), buffer, generous,
                                                        evict=self.graph_files(p), env=env, key=key,
                                                        cgroup_peak=on_tmpfs)
        p.setdefault("budget_derivation", {})[key] = text
        p.setdefault("calibration", {})[key] = derivation
        return overhead

    def equal_budget(self, ctx, p, flags, buffer, storage, env=None):
        """Sets p's buffer and budget: the budget is the buffer plus the measured overhead, or
        with --budget the buffer is what the budget leaves."""
        overhead = self.overhead(ctx, p, flags, buffer, storage, env)
        buffer = buffer_for(ctx, buffer, overhead)
        p.update(buffer_bytes=buffer, budget_bytes=buffer + overhead, overhead_bytes=overhead)

    @staticmethod
    def graph_files(p):
        return [os.path.join(p["graph"], f) for f in ("vertex.dat", "edge.dat")]

    def point(self, p, config, x, cmd, budget, env=None, panel="", data_bytes=None, **params):
        """data_bytes: what the run pages through (None for the unconstrained references)."""
        return Point(config, x, cmd, budget, bfs_parser(cmd), env=env or {}, evict=self.graph_files(p), panel=panel,
                     params=params, data_bytes=data_bytes)


class BfsSemi(BfsBase):
    name = "bfs-semi"
    figure = "DI-MMAP 2015 Fig. 10"
    title = "Semi-external BFS: graph on storage, algorithmic data in memory"
    about = ("TEPS of the BFS with vertex and edge files on storage (4x the DI-MMAP buffer) and the three "
             "algorithmic files in anonymous memory: Linux mmap, mmap with a MADV_DONTNEED helper thread "
             "(every second), DI-MMAP, all in the same cgroup (the buffer plus the process memory measured "
             "in calibration runs), and all "
             "five files in memory without a budget for reference (anonymous memory, and tmpfs).")
    x_log = False
    y_log = True  # in memory is orders of magnitude above the rest
    kind = "bar"

    def setup(self, ctx):
        p = self.graph_params(ctx)
        self.storage = ctx.scratch("bfs-storage")
        flags = ["--placement=semi-external", "--memory-dir=anonymous", "--backend=dimmap"]
        self.equal_budget(ctx, p, flags, max(p["graph_bytes"] // 4, 1 << 20), self.storage)
        self.io_model(ctx, p)
        return p

    def io_model(self, ctx, p):
        """What the semi-external searches must read whatever the backend: the first root's
        levels through graph/bench/bfs-io-model (page sweeps per level; LRU and optimal
        replacement in a buffer of the points' size), in p["io_model"] and a table note. A
        model that cannot run (no numpy) is a note, not a failure: the runs still count."""
        model = os.path.join(ctx.tools.source_dir, "graph", "bench", "bfs-io-model")
        levels = os.path.join(self.storage, "levels.txt")
        summary = os.path.join(self.storage, "io-model.json")
        try:
            subprocess.run([ctx.tools.path("bfs"), f"--graph={p['graph']}", "--roots=1", "--seed=1",
                            f"--threads={max(p['threads'])}", f"--levels-out={levels}"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            subprocess.run(["/usr/bin/python3", model, f"--graph={p['graph']}", f"--levels={levels}",
                            f"--buffer={p['buffer_bytes']}", f"--json={summary}"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            m = read_summary(summary, "bfs-io-model")
        except (subprocess.CalledProcessError, OSError, InvalidOutput) as e:
            why = (getattr(e, "stderr", "") or str(e)).strip().splitlines()[-1:] or ["failed"]
            p.setdefault("notes", []).append(f"I/O model skipped: {why[0]}")
            return
        finally:
            if os.path.exists(levels):
                os.unlink(levels)
        page = m["page_bytes"]
        p["io_model"] = {k: m[k] for k in ("graph_pages", "buffer_pages", "reads_unbuffered", "reads_lru",
                                          "reads_optimal", "page_bytes")}
        p.setdefault("notes", []).append(
            f"I/O model (first root, bfs-io-model): {format_size(m['reads_unbuffered'] * page)} of page reads per "
            f"search unbuffered ({m['reads_unbuffered'] / m['graph_pages']:.2f}x the graph); with the buffer "
            f"LRU {format_size(m['reads_lru'] * page)}, optimal {format_size(m['reads_optimal'] * page)}")

    def points(self, ctx, p):
        semi = ["--placement=semi-external", "--memory-dir=anonymous"]
        b, buf = p["budget_bytes"], p["buffer_bytes"]
        unconstrained = p["graph_bytes"] + p["algo_bytes"] + b
        configs = [("mmap", semi + ["--backend=mmap"], b, None),
                   ("mmap + DONTNEED helper", semi + ["--backend=mmap", "--dontneed-interval=1"], b, None),
                   ("dimmap", semi + ["--backend=dimmap", f"--buffer={buf}"], b, buf),
                   ("in memory (unconstrained)", ["--placement=in-memory", "--memory-dir=anonymous"], unconstrained,
                    None),
                   # The files on tmpfs instead (shared-memory pages, no huge pages): the cgroup is
                   # charged the tmpfs copy and the page cache of the files copied, so twice the data.
                   ("in memory on tmpfs (unconstrained)", ["--placement=in-memory", "--memory-dir=/dev/shm"],
                    unconstrained + p["graph_bytes"] + p["algo_bytes"], None)]
        for t in p["threads"]:
            for label, flags, budget, buffer in configs:
                data = None if label.startswith("in memory") else p["graph_bytes"]
                yield self.point(p, label, t, self.bfs_cmd(ctx, p, t, self.storage, flags), budget, threads=t,
                                 buffer_bytes=buffer, data_bytes=data)

    def ratios(self, p):
        return [Ratio("dimmap", "in memory (unconstrained)", "dimmap / in memory"),
                Ratio("dimmap", "mmap", "dimmap / mmap"),
                Ratio("mmap + DONTNEED helper", "mmap", "mmap + helper / mmap")]


class BfsFull(BfsBase):
    name = "bfs-full"
    figure = "DI-MMAP 2015 Fig. 12"
    title = "Fully external BFS: all five files on storage"
    about = ("TEPS vs threads with all five files on storage (4x the DI-MMAP buffer): Linux mmap vs "
             "DI-MMAP (hot FIFO 75%) in the same cgroup (the buffer plus the process memory measured in "
             "calibration runs).")

    def thread_list(self, ctx):
        return ctx.threads([2, 8, 32, 128], [4, 16], [4])

    def setup(self, ctx):
        p = self.graph_params(ctx)
        self.storage = ctx.scratch("bfs-storage")
        flags = ["--placement=full-external", "--backend=dimmap"]
        self.equal_budget(ctx, p, flags, max((p["graph_bytes"] + p["algo_bytes"]) // 4, 1 << 20), self.storage)
        return p

    def points(self, ctx, p):
        full = ["--placement=full-external"]
        data = p["graph_bytes"] + p["algo_bytes"]
        for t in p["threads"]:
            yield self.point(p, "mmap", t, self.bfs_cmd(ctx, p, t, self.storage, full + ["--backend=mmap"]),
                             p["budget_bytes"], threads=t, data_bytes=data)
            yield self.point(p, "dimmap", t, self.bfs_cmd(ctx, p, t, self.storage, full + [
                "--backend=dimmap", f"--buffer={p['buffer_bytes']}"]), p["budget_bytes"], threads=t,
                buffer_bytes=p["buffer_bytes"], data_bytes=data)

    def ratios(self, p):
        return [Ratio("dimmap", "mmap", "dimmap / mmap")]


class BfsSweep(BfsBase):
    name = "bfs-sweep"
    figure = "DI-MMAP 2015 Figs. 11, 13"
    title = "BFS as the memory budget shrinks: semi-external, and fully external with hot FIFO 75/50/0 %"
    about = ("TEPS vs memory budget. Semi-external (Fig. 11): DI-MMAP (hot FIFO 75%) vs Linux mmap. Fully "
             "external (Fig. 13): DI-MMAP with 75, 50 and 0% of its buffer for the hot-page FIFO vs Linux "
             "mmap. The buffer starts at a quarter of the placed data (full runs: half) and halves; each "
             "cgroup is the buffer plus the process's own memory, measured in calibration runs per panel.")
    x_label = "memory budget"
    x_unit = "MiB"
    x_log = True
    # panel -> (placement flags, which data goes to storage, hot-FIFO shares)
    PANELS = {"semi-external (Fig. 11)": (["--placement=semi-external", "--memory-dir=anonymous"], "graph", (0.75,)),
              "fully external (Fig. 13)": (["--placement=full-external"], "all", (0.75, 0.5, 0.0))}

    def setup(self, ctx):
        p = self.graph_params(ctx)
        self.storage = ctx.scratch("bfs-storage")
        steps = ctx.pick(4, 2, 1)
        p["sweeps"] = {}
        for panel, (flags, placed, _) in self.PANELS.items():
            data = p["graph_bytes"] + (p["algo_bytes"] if placed == "all" else 0)
            overhead = self.overhead(ctx, p, flags + ["--backend=dimmap"], max(data // 4, 1 << 20), self.storage,
                                     key=panel.split()[0])
            # The buffer starts at a quarter (full: half) of the data, or at what --budget leaves,
            # and halves each step; the process's own memory stays.
            top = ctx.budget_override - overhead if ctx.budget_override else data // ctx.pick(2, 4, 4)
            budgets = [(top >> i) + overhead for i in range(steps) if (top >> i) >= (1 << 20)]
            if not budgets:
                if ctx.budget_override:
                    raise Unavailable(f"--budget leaves no buffer: the process needs {format_size(overhead)} beside it")
                raise Unavailable(f"the graph ({format_size(data)}) is too small for a sweep of buffers of 1M and up")
            p["sweeps"][panel] = {"overhead_bytes": overhead, "budgets": budgets, "data_bytes": data}
        p["budget_label"] = "budget = buffer + process memory measured per panel (" + ", ".join(
            f"{panel.split()[0]} {format_size(v['overhead_bytes'])}" for panel, v in p["sweeps"].items()) + ")"
        return p

    def points(self, ctx, p):
        t = max(p["threads"])
        for panel, (flags, _, shares) in self.PANELS.items():
            sweep = p["sweeps"][panel]
            # Quick runs keep the two ends of the hot-FIFO range (what the ratio compares).
            shares = shares if ctx.mode == "full" else tuple(h for h in shares if h in (0.75, 0.0))
            for budget in sweep["budgets"]:
                buf = budget - sweep["overhead_bytes"]
                x = round(budget / (1 << 20), 1)
                for hot in shares:
                    cmd = self.bfs_cmd(ctx, p, t, self.storage, flags + ["--backend=dimmap", f"--buffer={buf}",
                                                                         f"--hot-fraction={hot}"])
                    yield self.point(p, f"dimmap, hot FIFO {hot:.0%}", x, cmd, budget, panel=panel, threads=t,
                                     buffer_bytes=buf, hot_fraction=hot, data_bytes=sweep["data_bytes"])
                yield self.point(p, "mmap", x, self.bfs_cmd(ctx, p, t, self.storage, flags + ["--backend=mmap"]),
                                 budget, panel=panel, threads=t, data_bytes=sweep["data_bytes"])

    def ratios(self, p):
        full = "fully external (Fig. 13)"
        return [Ratio("dimmap, hot FIFO 75%", "mmap", "dimmap (hot 75%) / mmap", panel=panel) for panel in self.PANELS] + \
               [Ratio("dimmap, hot FIFO 75%", "dimmap, hot FIFO 0%", "hot 75% / no hot FIFO", panel=full)]


class BfsPerma(perma.OnTmpfs, BfsBase):
    name = "bfs-perma"
    figure = "PerMA 2012 Fig. 9"
    title = "Fully external BFS on modelled NVRAM generations (PerMA)"
    about = ("TEPS of the fully external BFS with the graph and algorithmic files on tmpfs behind a DI-MMAP "
             "buffer (a quarter of the data, hot FIFO 75%) whose page transfers follow the PerMA model of "
             "each NVRAM generation (lcurr ... lnxt3, sim-opt), the same without a model, and all in memory; "
             "8x as many threads as cores (full runs also 1x).")
    x_log = False
    y_log = True  # in memory is orders of magnitude above the rest
    kind = "bar"

    def thread_list(self, ctx):
        cores = os.cpu_count() or 1
        return ctx.threads([cores, 8 * cores], [8 * cores], [4])

    def setup(self, ctx):
        graph = self.make_tmpfs("bfs-perma").copy(ctx.data.graph(self.scale(ctx)))
        p = self.graph_params(ctx, graph_dir=graph)
        p["storage"] = "tmpfs (/dev/shm)"
        self.storage = os.path.join(self.tmpfs.dir, "storage")
        os.makedirs(self.storage)
        flags = ["--placement=full-external", "--backend=dimmap", "--hot-fraction=0.75"]
        self.equal_budget(ctx, p, flags, max((p["graph_bytes"] + p["algo_bytes"]) // 4, 1 << 20), self.storage)
        return p

    def points(self, ctx, p):
        full = ["--placement=full-external", "--backend=dimmap", f"--buffer={p['buffer_bytes']}",
                "--hot-fraction=0.75"]
        for t in p["threads"]:
            for gen, env in perma.configs():
                # No out-of-core check: the modelled device is tmpfs whose pages the run writes are
                # charged to its cgroup, so every budget holds the data by construction; what
                # pages is the buffer, a quarter of the data, and no mmap runs beside it.
                point = self.point(p, gen, t, self.bfs_cmd(ctx, p, t, self.storage, full), p["budget_bytes"], env=env,
                                   threads=t, buffer_bytes=p["buffer_bytes"])
                point.evict = []  # the tmpfs files are the device
                yield point
            point = self.point(p, "in memory (unconstrained)", t,
                               self.bfs_cmd(ctx, p, t, self.storage, ["--placement=in-memory", "--memory-dir=anonymous"]),
                               p["graph_bytes"] + p["algo_bytes"] + p["budget_bytes"], threads=t)
            point.evict = []
            yield point

    def ratios(self, p):
        return perma.ratios() + [Ratio("lcurr", "in memory (unconstrained)", "lcurr / in memory")]


EXPERIMENTS = [BfsSemi, BfsFull, BfsSweep, BfsPerma]
