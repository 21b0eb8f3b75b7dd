#!/usr/bin/python3
"""dimmap-compare end to end on tiny data (needs root for memory cgroups, as CI has):
  1. lriot-read --smoke: every results file is well formed (CSV columns and rows, JSON schema
     and provenance, HDF5 groups and attributes, a real PNG), the table names every
     configuration, and --strict passes (only the absent kernel module may be skipped);
  2. a second experiment into the same directory joins the first in every results file;
  3. a configuration that fails (a wrapper makes `lriot --mode=mmap` exit 3) is reported in the
     table with its message, the others still have results, and --strict turns it into exit 1.
Numbers are not checked: they depend on the machine.

usage: end_to_end_test.py DIMMAP_COMPARE BUILD_DIR WORK_DIR"""
import csv
import json
import os
import shutil
import stat
import subprocess
import sys

import h5py
import matplotlib.image

LRIOT_CONFIGS = ["direct (O_DIRECT)", "mmap, unconstrained", "mmap @ budget", "dimmap 8M", "dimmap 2M",
                 "dimmap.ko (module's buffer)"]
STATUSES = {"ok", "failed", "oom", "timeout", "missing", "skipped", "wrong"}


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(compare, out, data, *args, expect=0):
    cmd = [compare, *args, "--smoke", f"--out={out}", f"--data-dir={data}", "--threads=2", "--seconds=0.5"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        fail(f"{' '.join(cmd)} exited {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr[-3000:]}")
    check("dimmap-compare: [1/1 " in p.stderr, "no progress on stderr")
    return p.stdout


def check_files(out, experiments):
    files = sorted(os.listdir(out))
    check(not [f for f in files if ".tmp" in f], f"temporary files left: {files}")
    with open(os.path.join(out, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    check(rows and list(rows[0]) == ["experiment", "figure", "panel", "config", "x", "repeat", "status", "value",
                                     "metric", "unit", "wall_s", "peak_bytes", "budget_bytes", "buffer_bytes",
                                     "threads", "error", "command"], "results.csv header")
    check(sorted({r["experiment"] for r in rows}) == sorted(experiments), f"CSV experiments {rows[0]}")
    for r in rows:
        check(r["status"] in STATUSES, f"CSV status {r['status']}")
        if r["status"] == "ok":
            check(float(r["value"]) > 0 and float(r["wall_s"]) > 0 and int(r["peak_bytes"]) > 0,
                  f"an ok row without a value, time or peak: {r}")
            check("dimmap-budget --memory=" in r["command"], f"command not shown: {r['command']}")
        else:
            check(r["value"] == "" and r["error"], f"a failed row needs no value and a reason: {r}")
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    check(doc["schema"] == "dimmap-compare/1", "JSON schema")
    check(sorted(doc["experiments"]) == sorted(experiments), "JSON experiments")
    for name in experiments:
        e = doc["experiments"][name]
        prov = e["provenance"]
        check(prov["machine"]["cores"] >= 1 and prov["machine"]["kernel"], "machine in JSON")
        check(len(prov["git"]["commit"]) == 40 or prov["git"]["commit"] == "unknown", "commit in JSON")
        check(prov["versions"]["dimmap"] and prov["versions"]["h5py"], "versions in JSON")
        check(e["params"]["budget_bytes"] > 0 and e["params"]["data_bytes"] > 0, "parameters in JSON")
        check(len(e["summary"]) == len({(r["config"], r["x"]) for r in e["runs"]}), "one summary per point")
        check(os.path.getsize(os.path.join(out, f"{name}.png")) > 1000, f"{name}.png")
        png = matplotlib.image.imread(os.path.join(out, f"{name}.png"))
        check(png.shape[0] > 200 and png.shape[1] > 200, f"{name}.png is {png.shape}")
    with h5py.File(os.path.join(out, "results.h5")) as f:
        check(f.attrs["schema"] == "dimmap-compare/1", "HDF5 schema")
        check(sorted(f.keys()) == sorted(experiments), f"HDF5 groups {list(f.keys())}")
        for name in experiments:
            g = f[name]
            for attr in ("machine.hostname", "machine.cores", "git.commit", "version.dimmap", "version.python",
                         "param.budget_bytes", "param.data_bytes", "title", "figure", "metric", "unit"):
                check(attr in g.attrs, f"HDF5 {name} lacks attribute {attr}")
            n = sum(1 for r in rows if r["experiment"] == name)
            for col in ("config", "x", "status", "value", "wall_s", "command"):
                check(g[f"runs/{col}"].shape == (n,), f"HDF5 {name}/runs/{col} has {g[f'runs/{col}'].shape}, not {n}")
            check(g["summary/value"].shape == (len(doc["experiments"][name]["summary"]),), "HDF5 summary")
    return rows


def main():
    compare, build, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    out, data = os.path.join(work, "out"), os.path.join(work, "data")

    # 1. one experiment, everything well formed
    table = run(compare, out, data, "lriot-read", "--fresh", "--strict")
    check("== lriot-read: LRIOT uniform random 4 KiB reads (DI-MMAP 2015 Fig. 3)" in table, "table title")
    for config in LRIOT_CONFIGS:
        check(config in table, f"table lacks {config}")
    rows = check_files(out, ["lriot-read"])
    check(len(rows) == len(LRIOT_CONFIGS), f"{len(rows)} CSV rows, expected {len(LRIOT_CONFIGS)}")
    check(all(r["status"] == "ok" for r in rows if not r["config"].startswith("dimmap.ko")), "a config failed")

    # 2. a second experiment joins the first
    run(compare, out, data, "dimmap-opt")
    check_files(out, ["lriot-read", "dimmap-opt"])

    # 3. a failing configuration is reported and the others go on
    wrapper = os.path.join(work, "lriot-failing-mmap")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\ncase " $* " in *" --mode=mmap "*) echo "lriot: injected failure" >&2; exit 3;; esac\n'
                f'exec {build}/apps/lriot/lriot "$@"\n')
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC)
    table = run(compare, out, data, "lriot-read", f"--tool=lriot={wrapper}")
    check("FAILED[1]" in table and "failed: exit status 3: lriot: injected failure" in table,
          f"failure not reported:\n{table}")
    rows = check_files(out, ["lriot-read", "dimmap-opt"])
    status = {r["config"]: r["status"] for r in rows if r["experiment"] == "lriot-read"}
    check(status["mmap @ budget"] == "failed" and status["mmap, unconstrained"] == "failed", f"{status}")
    check(status["direct (O_DIRECT)"] == "ok" and status["dimmap 8M"] == "ok", f"others must go on: {status}")
    run(compare, out, data, "lriot-read", f"--tool=lriot={wrapper}", "--strict", expect=1)
    shutil.rmtree(work)
    print("ok: results well formed, experiments merge, failures reported")


if __name__ == "__main__":
    main()
