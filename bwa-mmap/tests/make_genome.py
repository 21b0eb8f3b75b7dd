#!/usr/bin/python3
"""make_genome.py - a synthetic reference genome for bwa-mmap tests and benchmarks.

Uniformly random bases (seeded, so the same arguments give the same file), split into
contigs, with a few runs of N (bwa records them as ambiguous "holes") and a repeated
segment per contig (so some reads map to two places). Written as FASTA, 60 bases a line.

    make_genome.py --length 50M --contigs 4 --seed 7 --out genome.fa
"""
import argparse
import os
import sys

import numpy as np


def parse_length(text):
    units = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}
    text = text.strip().upper()
    suffix = text[-1] if text and text[-1] in "KMG" else ""
    number = text[: len(text) - len(suffix)]
    if not number.isdigit() or int(number) <= 0:
        raise argparse.ArgumentTypeError(f"not a positive length: {text!r} (e.g. 5000, 20M)")
    return int(number) * units[suffix]


def contig_bases(rng, length):
    seq = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, size=length)]
    if length >= 20000:
        # A repeat: copy 2 kb from the first quarter into the last quarter.
        src = int(rng.integers(0, length // 4))
        dst = int(rng.integers(3 * length // 4, length - 2000))
        seq[dst : dst + 2000] = seq[src : src + 2000]
        # A run of N somewhere in the middle.
        start = int(rng.integers(length // 3, 2 * length // 3))
        seq[start : start + 50] = ord("N")
    return seq


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=parse_length, required=True, help="total bases (K/M/G = 10^3/6/9)")
    ap.add_argument("--contigs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.contigs < 1 or args.contigs > args.length:
        ap.error("--contigs must be between 1 and --length")
    rng = np.random.default_rng(args.seed)
    tmp = args.out + ".tmp"
    per = args.length // args.contigs
    with open(tmp, "wb") as out:
        for i in range(args.contigs):
            n = per if i < args.contigs - 1 else args.length - per * (args.contigs - 1)
            out.write(f">synthetic_{i + 1} seed={args.seed} length={n}\n".encode())
            seq = contig_bases(rng, n)
            width = 60
            full = n // width
            if full:
                lines = seq[: full * width].reshape(full, width)
                block = np.hstack([lines, np.full((full, 1), ord("\n"), dtype=np.uint8)])
                out.write(block.tobytes())
            if n % width:
                out.write(seq[full * width :].tobytes() + b"\n")
    os.replace(tmp, args.out)


if __name__ == "__main__":
    sys.exit(main())
