"""dimmap-compare EXPERIMENT... [options]: runs experiments, prints the table, writes the
results files and the plots. `dimmap-compare list` names the experiments."""
import argparse
import os
import shlex
import shutil
import sys
import tempfile
import textwrap
import time

from . import VERSION, provenance
from .datasets import DataStore
from .experiment import Context, run_experiment
from .experiments import ALL, BY_NAME
from .plots import plot_experiment
from .results import Document
from .runner import SKIPPED, Runner
from .table import format_all
from .tools import Tools
from .units import parse_list, parse_size
from .writers import write_csv, write_h5, write_json

EPILOG = """experiments (`all` runs every one; `list` describes them):
  """ + "\n  ".join(f"{e.name:14s} {e.figure}: {e.title}" for e in ALL) + """

Every configuration runs as its own process in a fresh memory cgroup (dimmap-budget) of the
experiment's budget, cold (its data evicted from the page cache first). A configuration that
fails is reported in the table and the run goes on. Exit status: 0, or 1 with --strict if any
point has no result; 2 for bad arguments."""


def log(msg):
    print(f"dimmap-compare: {msg}", file=sys.stderr, flush=True)


def checked(parse):
    """An argparse type from one of the units parsers: argparse would report their ValueError as
    "invalid parse_size value"; this reports the parser's own message, which names the value."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return convert


def parse_args(argv, defaults):
    ap = argparse.ArgumentParser(prog="dimmap-compare", description=__doc__, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiments", nargs="+", metavar="EXPERIMENT",
                    help="experiment names, 'all', 'list', or 'report' (table, files and plots again from "
                         "OUT/results.json, nothing run)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small data and short runs (`all` in < 10 min)")
    mode.add_argument("--smoke", action="store_true", help="tiny data, one point per configuration: checks "
                                                           "that everything runs (numbers meaningless)")
    ap.add_argument("--budget", type=checked(parse_size), metavar="SIZE",
                    help="memory budget (cgroup) of every configuration, e.g. 512M [per experiment: data / 4 + slack]")
    ap.add_argument("--threads", type=checked(parse_list), metavar="LIST", help="thread counts, e.g. 4,16,64")
    ap.add_argument("--scale", type=int, metavar="S", help="R-MAT scale of the BFS graph")
    ap.add_argument("--seconds", type=float, metavar="S", help="length (or cap) of each timed run")
    ap.add_argument("--repeat", type=int, metavar="N", help="runs per point, interleaved across configurations "
                                                             "[3; smoke 1]")
    ap.add_argument("--out", default=defaults["out"], metavar="DIR", help="results directory [%(default)s]")
    ap.add_argument("--data-dir", metavar="DIR", help="where default data is made and kept (never removed) "
                                                      "[OUT/data, removed at the end unless --keep-data]")
    ap.add_argument("--keep-data", action="store_true",
                    help="keep OUT/data for the next run instead of removing it at the end")
    ap.add_argument("--build-dir", default=defaults["build_dir"], metavar="DIR",
                    help="CMake build tree with the tools [%(default)s]")
    ap.add_argument("--tool", action="append", default=[], metavar="NAME=PATH",
                    help="use PATH for tool NAME (e.g. lriot=/opt/lriot)")
    ap.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="stop a run after S seconds [600; quick 180; smoke 120]")
    ap.add_argument("--fresh", action="store_true", help="drop earlier results in OUT instead of merging")
    ap.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    ap.add_argument("--strict", action="store_true", help="exit 1 if any point has no result")
    ap.add_argument("--version", action="version", version=f"dimmap-compare {VERSION}")
    args = ap.parse_args(argv)
    if args.experiments in (["list"], ["report"]):
        return args, []
    names = []
    for name in args.experiments:
        if name == "all":
            names += [e.name for e in ALL]
        elif name in BY_NAME:
            names.append(name)
        else:
            ap.error(f"unknown experiment '{name}' (see `dimmap-compare list`)")
    overrides = {}
    for item in args.tool:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            ap.error(f"--tool {item}: expected NAME=PATH")
        overrides[name] = path
    args.tool = overrides
    if args.repeat is not None and args.repeat < 1:
        ap.error("--repeat must be at least 1")
    return args, list(dict.fromkeys(names))


def describe_experiments():
    for e in ALL:
        print(f"{e.name}  ({e.figure})\n  {e.title}")
        print(textwrap.indent(textwrap.fill(e.about, 90), "    "))


def main(argv=None, defaults=None):
    defaults = defaults or {"out": "results", "build_dir": os.environ.get("DIMMAP_BUILD_DIR", "build/ci"),
                            "source_dir": os.getcwd(), "build": {}}
    args, names = parse_args(sys.argv[1:] if argv is None else argv, defaults)
    if args.experiments == ["report"]:
        return report(os.path.abspath(args.out), args.no_plots)
    if not names:
        describe_experiments()
        return 0
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    # Several repeats even in quick mode: one run per point cannot tell a difference from noise.
    repeat = args.repeat or (1 if mode == "smoke" else 3)
    timeout = args.timeout or {"full": 600, "quick": 180, "smoke": 120}[mode]
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    data_dir = os.path.abspath(args.data_dir or os.path.join(out, "data"))
    build = dict(defaults.get("build", {}), build_dir=os.path.abspath(args.build_dir))
    tools = Tools(build["build_dir"], defaults["source_dir"], args.tool)
    scratch = tempfile.mkdtemp(prefix=".scratch-", dir=out)
    command = shlex.join(["dimmap-compare"] + (sys.argv[1:] if argv is None else list(argv)))
    prov = provenance.collect(defaults["source_dir"], out, build, command)
    ctx = Context(mode, tools, Runner(tools, scratch, timeout), DataStore(data_dir, tools, log), scratch, prov,
                  repeat, threads=args.threads, budget=args.budget, seconds=args.seconds, scale=args.scale, log=log)
    doc = Document() if args.fresh else Document.load(os.path.join(out, "results.json"))
    doc.meta = {"last_command": command, "last_date": prov["date"], "dimmap_compare_version": VERSION}
    log(f"{mode} run of {len(names)} experiment(s) -> {out} (data in {data_dir}; "
        f"{prov['machine']['cores']} cores, load {prov['machine']['load_average']})")
    if os.geteuid() != 0:
        log("warning: not root: dimmap-budget may not be allowed to make memory cgroups, and then every run fails")
    start = time.monotonic()
    done = []
    try:
        for i, name in enumerate(names, 1):
            result = run_experiment(BY_NAME[name], ctx, position=f"{i}/{len(names)} ")
            done.append(result)
            doc.put(result)
            save(doc, out, [result], args.no_plots)
    except KeyboardInterrupt:
        log("interrupted: the results so far are saved")
        return 130
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if not args.data_dir and not args.keep_data:
            remove_data(data_dir)
    wall = time.monotonic() - start
    print(format_all(done, wall))
    print(f"\nresults: {out}/results.csv, results.json, results.h5" +
          ("" if args.no_plots else f"; plots: {out}/<experiment>.png"))
    log(f"done in {wall:.0f} s")
    # Skipped points (e.g. no kernel module) are expected; anything else without a result is not.
    missing = sum(1 for r in done for s in r.failures() if s["status"] != SKIPPED)
    missing += sum(1 for r in done if r.unavailable)
    return 1 if args.strict and missing else 0


def remove_data(data_dir):
    """The default data of OUT/data goes at the end (it is made again in minutes; quick data
    is some hundred MiB that nobody asked to keep)."""
    if os.path.isdir(data_dir):
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(data_dir) for f in files)
        shutil.rmtree(data_dir, ignore_errors=True)
        log(f"removed the generated data {data_dir} ({size >> 20} MiB; --keep-data keeps it)")


def report(out, no_plots):
    """The table, results files and plots of OUT/results.json again (e.g. after a plotting change)."""
    path = os.path.join(out, "results.json")
    doc = Document.load(path)
    if not doc.experiments:
        log(f"{path}: no dimmap-compare results")
        return 1
    save(doc, out, list(doc.experiments.values()), no_plots)
    print(format_all(list(doc.experiments.values())))
    return 0


def save(doc, out, plot, no_plots):
    """Rewrites the results files (every experiment in the document) and the plots of `plot`."""
    results = list(doc.experiments.values())
    write_json(os.path.join(out, "results.json"), doc)
    write_csv(os.path.join(out, "results.csv"), results)
    write_h5(os.path.join(out, "results.h5"), doc)
    if no_plots:
        return
    for result in plot:
        try:
            plot_experiment(result, out)
        except Exception as e:  # a plot problem must not lose the measurements
            log(f"{result.name}: plot failed: {e}")
