#!/usr/bin/env bash
# bench.sh [--quick] [--out DIR] [dimmap-compare options]
# bwa-mmap against upstream bwa: the dimmap-compare experiments bwa-index and bwa-mem
# (apps/compare), every run in a memory cgroup of its budget (dimmap-budget), repeats
# interleaved, the table printed by dimmap-compare.
#   bwa-index  index time of `bwa index` and `bwa-mmap index` in memory, on mmap and on DI-MMAP
#              in a cgroup of 3 bytes per base; each index compared with bwa's
#   bwa-mem    `bwa mem -t 2` vs `bwa-mmap mem -t 2 --placement=mmap` reads/s, index in memory;
#              the alignments must be bwa's
# --quick: dimmap-compare's quick sizes; --out DIR: its results directory (results.csv, .json,
# .h5 and plots; default results/bwa-mmap). Other options go to dimmap-compare unchanged.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../apps/compare/bench-wrapper.sh"
bench_name=bench.sh
out=results/bwa-mmap
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift ;;
    --out=*) out=${1#*=} ;;
    --build-dir) compare_build_dir=$2; shift ;;
    --build-dir=*) compare_build_dir=${1#*=} ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) compare_args+=("$1") ;;
  esac
  shift
done
compare_args+=(--out="$out")
compare_exec bwa-index bwa-mem
