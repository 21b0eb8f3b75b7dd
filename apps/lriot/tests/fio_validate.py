#!/usr/bin/env python3
"""Validates LRIOT's direct-I/O numbers against fio on the same file.

Both make 4 KiB O_DIRECT random reads from the same number of synchronous threads (so the
same queue depth), alternately, several times each. Other load on a shared machine only ever
lowers a rate, so the best run of each tool is its best estimate: the two bests must agree
within a loose factor. Prints the ratio. When one tool's own runs differ by more than
--max-spread (the device's rate changed under the test: other programs' I/O), the bests say
nothing about each other and the test is skipped (exit 77) with the numbers.

usage: fio_validate.py LRIOT DATA_DIR [--threads=16] [--seconds=2] [--size=256M]
                       [--min-ratio=0.6] [--max-ratio=1.6]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run_fio(path, threads, seconds):
    cmd = ["fio", "--name=lriot-check", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
           "--ioengine=psync", f"--numjobs={threads}", "--thread", "--group_reporting", "--time_based",
           f"--runtime={seconds}", "--output-format=json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    # fio may print notes before the JSON document.
    return json.loads(out[out.index("{"):])["jobs"][0]["read"]["iops"]


def run_lriot(lriot, path, threads, seconds):
    cmd = [lriot, f"--file={path}", "--mode=direct", "--pattern=uniform", f"--threads={threads}",
           f"--seconds={seconds}", "--json", "--progress=0"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["iops"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lriot")
    ap.add_argument("data_dir")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--size", default="256M")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--min-ratio", type=float, default=0.6)
    ap.add_argument("--max-ratio", type=float, default=1.6)
    ap.add_argument("--max-spread", type=float, default=3.0)
    args = ap.parse_args()
    if shutil.which("fio") is None:
        print("fio is not installed (Debian package fio, in scripts/packages.txt)")
        return 77
    os.makedirs(args.data_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fio-validate-", dir=args.data_dir) as tmp:
        path = os.path.join(tmp, "lriot.dat")
        subprocess.run([args.lriot, f"--file={path}", f"--create={args.size}", "--create-only", "--progress=0"],
                       check=True)
        fio, lriot = [], []
        for _ in range(args.rounds):
            fio.append(run_fio(path, args.threads, args.seconds))
            lriot.append(run_lriot(args.lriot, path, args.threads, args.seconds))
    ratio = max(lriot) / max(fio)
    print(f"O_DIRECT 4 KiB random reads, {args.threads} threads, {args.size} file, {args.seconds} s runs")
    print(f"  fio   IOPS: {', '.join(f'{x:.0f}' for x in fio)}")
    print(f"  LRIOT IOPS: {', '.join(f'{x:.0f}' for x in lriot)}")
    print(f"  best LRIOT / best fio = {ratio:.3f} (accepted {args.min_ratio} .. {args.max_ratio}; indicative on a shared machine)")
    spread = max(max(fio) / max(min(fio), 1), max(lriot) / max(min(lriot), 1))
    if spread > args.max_spread:
        print(f"SKIPPED: one tool's runs differ {spread:.1f}x among themselves (more than {args.max_spread}x): "
              "the device's rate changed during the test, so the two cannot be compared now")
        return 77
    if not args.min_ratio <= ratio <= args.max_ratio:
        print("FAIL: LRIOT's direct-I/O rate disagrees with fio's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
