#!/usr/bin/env python3
"""The pagecache engine's buffer yields to a memory-cgroup limit smaller than itself, and not
to other files' page cache in the cgroup.

lriot_yield_test.py LRIOT DIMMAP_BUDGET DIR

Uniform reads of a 128 MiB file, 4 threads, 2 s, in a 48 MiB memory cgroup, each run started
with the file out of the page cache:
  mmap                   the page cache fills the cgroup to its limit (the load reaches it)
  dimmap, 64 MiB buffer  the buffer yields: the cgroup's peak stays below the limit, and the
                         buffer holds fewer pages than its 64 MiB (the engine lends pages back
                         while the cgroup is near its limit)
(The cgroup's peak, not its count of failed charges: a v1 cgroup on Linux 6.18 counted none.)

Then the same cgroup, first filled with the 128 MiB file's pages by `cat`: a 24 MiB buffer over
a 16 MiB file, after a 1 s warm-up, neither misses nor unmaps a page (the kernel reclaims the
other file's clean pages; the buffer lends nothing).
Skips (77) where no memory cgroup can be made.
"""
import json
import os
import subprocess
import sys
import tempfile

MiB = 1 << 20


def run(lriot, budget, path, mode, scratch, env=None, extra=("--seconds=2",), read_first=None):
    report = os.path.join(scratch, f"budget-{mode}.json")
    load = [lriot, f"--file={path}", f"--mode={mode}", "--pattern=uniform", "--threads=4", "--progress=0",
            "--json", *extra]
    if read_first:  # the cgroup reads that file into its page cache before the load starts
        load = ["sh", "-c", 'cat "$0" > /dev/null && exec "$@"', read_first, *load]
    cmd = [budget, "--memory=48M", f"--evict={path}", f"--report={report}", "--quiet", "--", *load]
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if out.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {out.returncode}\n{out.stderr}")
    with open(report) as f:
        return json.loads(out.stdout), json.load(f)


def main():
    lriot, budget, base = sys.argv[1:4]
    if not os.access(budget, os.X_OK):
        print(f"skip: {budget} is not built", file=sys.stderr)
        return 77
    if subprocess.run([budget, "--memory=64M", "--quiet", "--", "true"], capture_output=True).returncode != 0:
        print("skip: no memory cgroup can be made here", file=sys.stderr)
        return 77
    os.makedirs(base, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=base) as scratch:
        path = os.path.join(scratch, "file")
        subprocess.run([lriot, f"--file={path}", "--create=128M", "--create-only", "--progress=0"], check=True)

        _, mmap_report = run(lriot, budget, path, "mmap", scratch)
        if mmap_report["peak_bytes"] < mmap_report["limit_bytes"] - MiB:
            sys.exit(f"FAIL: mmap's reads of a 128M file never came near the 48M limit: {mmap_report}")

        result, report = run(lriot, budget, path, "dimmap", scratch, {"DIMMAP_ENGINE": "pagecache"},
                             ["--buffer=64M", "--seconds=2"])
        stats = result["dimmap_stats"]
        page = result["file_bytes"] // result["pages"]
        if report["oom_killed"] or report["peak_bytes"] >= report["limit_bytes"]:
            sys.exit(f"FAIL: the pagecache engine with a 64M buffer reached the 48M limit: {report}")
        if stats["misses"] < stats["buffer_pages"]:
            sys.exit(f"FAIL: the load missed only {stats['misses']} times, fewer than the buffer's pages: {stats}")
        if stats["resident_pages"] * page >= 48 * MiB:
            sys.exit(f"FAIL: the buffer held {stats['resident_pages']} pages, not fewer than the limit's: {stats}")
        print(f"ok: peak of 48M: mmap {mmap_report['peak_bytes'] / MiB:.1f}M, the engine {report['peak_bytes'] / MiB:.1f}M "
              f"with {stats['resident_pages'] * page / MiB:.1f}M of its 64M buffer held at the end")

        small = os.path.join(scratch, "small")
        subprocess.run([lriot, f"--file={small}", "--create=16M", "--create-only", "--progress=0"], check=True)
        result, report = run(lriot, budget, small, "dimmap", scratch, {"DIMMAP_ENGINE": "pagecache"},
                             ["--buffer=24M", "--warmup=1", "--seconds=1"], read_first=path)
        stats = result["dimmap_stats"]
        if report["oom_killed"] or stats["misses"] or stats["recoveries"] or stats["evictions"]:
            sys.exit(f"FAIL: a 24M buffer over a 16M file, in a 48M cgroup full of another file's pages, missed or "
                     f"unmapped pages after its warm-up: {stats}")
        print(f"ok: in the 48M cgroup full of another file's pages (peak {report['peak_bytes'] / MiB:.1f}M), "
              f"the 16M file stayed in the buffer ({result['ops']} operations, no misses)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
