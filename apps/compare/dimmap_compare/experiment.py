"""What an experiment is (configurations x points, each a command on a memory budget) and the
loop that runs one: repeats interleaved across configurations, every outcome recorded,
progress on stderr."""
import contextlib
import datetime
import os
import sys
import time
import traceback
from dataclasses import dataclass, field

from . import provenance
from .budgets import not_out_of_core_note
from .datasets import DataError
from .results import ExperimentResult
from .runner import MISSING, OK, SKIPPED, WRONG, Run
from .tools import ToolMissing
from .units import format_number, format_size


class Unavailable(Exception):
    """The experiment cannot run here at all (say why); the others still run."""


@dataclass
class Point:
    """One configuration at one x: a command, its budget and how to read its result."""
    config: str
    x: object
    command: list
    budget: int
    parse: object  # parse(stdout, stderr, seconds) -> (value, extra)
    env: dict = field(default_factory=dict)
    evict: list = field(default_factory=list)
    panel: str = ""
    params: dict = field(default_factory=dict)
    skip: str = ""  # not run: the reason is shown in the table (e.g. no kernel module)
    skip_status: str = SKIPPED
    timeout: float = None
    cwd: str = None
    condition: str = ""  # a state of the machine around the run, e.g. "loaded" (see Experiment.condition)
    # The data the run is meant to page through: a budget that holds it all is flagged "not
    # out-of-core". None for references that are unconstrained on purpose (in memory).
    data_bytes: int = None


class Experiment:
    """Subclasses set the class attributes and implement setup() and points()."""
    name = ""
    figure = ""  # the paper figure it reproduces
    title = ""
    about = ""  # what it shows, for --list and the README
    metric = ""
    unit = ""
    x_label = "threads"
    x_unit = ""
    x_log = True
    y_log = False  # for figures whose lines differ by orders of magnitude
    kind = "line"
    higher_is_better = True
    statistic = "median"
    requires = ("dimmap-budget",)

    def setup(self, ctx):
        """Makes or finds the data; returns the parameters (sizes, budget, ...) for the
        results files and the plot title. Raises Unavailable, ToolMissing or DataError."""
        return {}

    def points(self, ctx, params):
        raise NotImplementedError

    def ratios(self, params):
        return []

    def check(self, result):
        """After all runs: cross-checks between runs (e.g. equal answers on every placement);
        marks the runs that fail as 'wrong'."""

    def repeats(self, ctx):
        """Runs per point (variance experiments need several even in quick mode)."""
        return ctx.repeat

    def condition(self, name, ctx):
        """A context manager that holds the machine in condition `name` (e.g. a competing
        load) while consecutive points with that condition run."""
        return contextlib.nullcontext()

    def teardown(self, ctx):
        """Removes temporary data (e.g. tmpfs copies); called even after a failure."""


def new_result(exp, ctx):
    # The machine's load when this experiment starts: the one number that changes during a run.
    prov = dict(ctx.provenance, machine=dict(ctx.provenance["machine"], load_average=provenance.load_average()))
    return ExperimentResult(
        name=exp.name, figure=exp.figure, title=exp.title, about=exp.about, metric=exp.metric, unit=exp.unit,
        x_label=exp.x_label, x_unit=exp.x_unit, x_log=exp.x_log, y_log=exp.y_log, kind=exp.kind,
        higher_is_better=exp.higher_is_better, statistic=exp.statistic, provenance=prov,
        started=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        params={"mode": ctx.mode, "repeat": exp.repeats(ctx)})


def run_experiment(exp, ctx, position=""):
    result = new_result(exp, ctx)
    start = time.monotonic()
    tag = f"[{position}{exp.name}]"
    ctx.log(f"{tag} {exp.title} ({exp.figure})")
    try:
        for tool in exp.requires:
            ctx.tools.path(tool)
        params = exp.setup(ctx)
        # Data just made (hundreds of MiB of k-mer DBs) is still being written back: the first
        # runs would compete with that I/O (a quick kmer-lookup run right after building its
        # DBs gave dimmap / mmap 0.29-0.48, the runs after 0.52-0.69), and eviction cannot drop
        # dirty pages. So the disk is idle and the files clean before anything is timed.
        os.sync()
        result.params.update(params)
        points = list(exp.points(ctx, params))
        result.ratios = exp.ratios(params)
        _run_points(exp, points, ctx, result, tag)
        exp.check(result)
    except (Unavailable, ToolMissing, DataError) as e:
        result.unavailable = str(e)
        ctx.log(f"{tag} not run: {e}")
    except Exception as e:  # a bug in one experiment must not cost the others their run
        result.unavailable = f"internal error: {type(e).__name__}: {e}"
        ctx.log(f"{tag} internal error:\n{traceback.format_exc()}")
    except KeyboardInterrupt:
        result.interrupted = True
        raise
    finally:
        try:
            exp.teardown(ctx)
        finally:
            result.wall_s = round(time.monotonic() - start, 2)
    return result


def _run_points(exp, points, ctx, result, tag):
    repeats = exp.repeats(ctx)
    # The counter counts the runs that will be made: skipped points are recorded, not run.
    total = sum(1 for p in points if not p.skip) * repeats
    done = 0
    for p in points:
        note = not_out_of_core_note(p.budget, p.data_bytes)
        if note and not p.skip:
            ctx.log(f"{tag} warning: {p.config}, {result.x_label} {p.x}: {note}")
    with contextlib.ExitStack() as held:
        current = None
        for repeat in range(repeats):  # interleaved: a drift in the machine's load hits every config
            for p in points:
                if p.skip:
                    if repeat == 0:
                        result.add_run(p, 0, Run(p.skip_status, error=p.skip))
                    continue
                done += 1
                if any(r["status"] == MISSING and r["config"] == p.config and r["x"] == p.x for r in result.runs):
                    continue  # a missing tool stays missing
                if p.condition != current:
                    held.close()
                    if p.condition:
                        ctx.log(f"{tag} condition: {p.condition}")
                        held.enter_context(exp.condition(p.condition, ctx))
                    current = p.condition
                run = ctx.runner.run(p.command, p.budget, p.parse, env=p.env, evict=p.evict, timeout=p.timeout,
                                     cwd=p.cwd)
                result.add_run(p, repeat, run)
                _report(ctx, tag, f"{done}/{total}", result, p, run)


def _report(ctx, tag, count, result, p, run):
    what = f"{p.panel + ': ' if p.panel else ''}{p.config}, {result.x_label} {p.x}"
    outcome = f"{format_number(run.value)} {result.unit}" if run.status == OK else f"{run.status.upper()}: {run.error}"
    peak = f", peak {format_size(run.peak_bytes)} of {format_size(p.budget)}" if run.peak_bytes else ""
    secs = f" ({run.wall_s:.1f} s{peak})" if run.wall_s is not None else ""
    ctx.log(f"{tag} {count} {what}: {outcome}{secs}")


def mark_disagreements(result, key, value, what):
    """Cross-check: successful runs with the same key(run) must have the same value(run), e.g.
    the checksum of their answers on different placements. Runs that differ from the first
    one of their key are marked 'wrong' and lose their value."""
    first = {}
    for run in result.runs:
        if run["status"] != OK:
            continue
        v = value(run)
        ref_config, ref_value = first.setdefault(key(run), (run["config"], v))
        if v != ref_value:
            run.update(status=WRONG, value=None, error=f"{what} differ from {ref_config}'s")


class Context:
    """Everything an experiment needs from the run: mode and overrides, tools, the runner, the
    data store, a scratch directory, and the provenance to stamp on results."""

    def __init__(self, mode, tools, runner, data, scratch_dir, provenance, repeat, threads=None, budget=None,
                 seconds=None, scale=None, log=None):
        self.mode = mode  # full, quick or smoke
        self.tools = tools
        self.runner = runner
        self.data = data
        self.scratch_dir = scratch_dir
        self.provenance = provenance
        self.repeat = repeat
        self.threads_override = threads
        self.budget_override = budget
        self.seconds_override = seconds
        self.scale_override = scale
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))

    def pick(self, full, quick, smoke=None):
        """The preset value for this mode (smoke falls back to quick)."""
        if self.mode == "full":
            return full
        if self.mode == "smoke" and smoke is not None:
            return smoke
        return quick

    def threads(self, full, quick, smoke=None):
        return self.threads_override or self.pick(full, quick, smoke)

    def budget(self, default_bytes):
        return self.budget_override or default_bytes

    def seconds(self, full, quick, smoke=None):
        return self.seconds_override or self.pick(full, quick, smoke)

    def scale(self, full, quick, smoke=None):
        return self.scale_override or self.pick(full, quick, smoke)

    def scratch(self, name):
        path = os.path.join(self.scratch_dir, name)
        os.makedirs(path, exist_ok=True)
        return path
