#!/usr/bin/env bash
# cgroup_index.sh [GENOME_BASES] [LIMIT_BYTES]
# A genome whose index does not fit a memory cgroup: upstream `bwa index` is killed under the
# limit, `bwa-mmap index --placement=mmap` finishes under the same limit, and its files are
# byte-identical to `bwa index` run without a limit.
#
# Genome: synthetic (make_genome.py, random bases, fixed seed), 8M bases by default. Both
# indexers use -a bwtsw, the low-memory algorithm bwa picks for large genomes; bwa index peaks
# near 54M here (its 10M-block workspace dominates at this size). Under a 32M limit bwa is
# OOM-killed; bwa-mmap places every array of 1M or more in files (--min-alloc=1M) and
# finishes, paging its workspace through the page cache (minutes, not seconds: the workspace
# is accessed at random; with a genome much bigger than the workspace, as for real genomes,
# the placed arrays are mostly streamed).
source "$(dirname "$0")/lib.sh"
need bwa cmp
bases=${1:-8M}
limit=${2:-$((32 << 20))}
make_workdir
cd "$WORK"
need_memory_cgroup
run_limited() { with_memory_limit "$limit" "$@"; }

"$PY" "$TESTS/make_genome.py" --length "$bases" --contigs 2 --seed 21 --out genome.fa
bwa index -a bwtsw -p upstream genome.fa 2> upstream.log || die "bwa index failed without a limit"

status=0
run_limited bwa index -a bwtsw -p limited genome.fa 2> limited.log || status=$?
tail -1 limited.log >&2
[[ $status -ge 128 ]] || die "bwa index was not killed under $limit bytes (exit $status): choose a bigger genome"

run_limited "$BWA_MMAP" index --placement=mmap --min-alloc=1M -a bwtsw -p mapped genome.fa 2> mapped.log ||
  { tail -5 mapped.log >&2; die "bwa-mmap index failed under $limit bytes"; }
grep 'bwa-mmap index\|dimmap-budget' mapped.log >&2
same_index upstream mapped
echo "index of $bases bases: bwa index killed under $limit bytes; bwa-mmap index (mmap) finished under it, identical files"
