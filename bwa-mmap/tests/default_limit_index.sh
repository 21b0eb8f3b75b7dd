#!/usr/bin/env bash
# default_limit_index.sh [GENOME_BASES] [LIMIT_BYTES]
# bwa-mmap index with default flags fits the memory it is given: in a memory cgroup far
# smaller than the index (23M bases in 48M by default) it reads the limit, lowers --min-alloc
# so that every array that would not fit beside the heap goes to a file, picks bwtsw over IS
# (whose random-access arrays would not fit), says so, finishes, and writes files
# byte-identical to upstream `bwa index` (IS) run without a limit. (With the fixed 64M
# threshold of old, the same run was OOM-killed; with IS it was still in the BWT after 12 min.)
source "$(dirname "$0")/lib.sh"
need bwa cmp
bases=${1:-23M}
limit=${2:-$((48 << 20))}
need_memory_cgroup
make_workdir
cd "$WORK"

"$PY" "$TESTS/make_genome.py" --length "$bases" --contigs 2 --seed 21 --out genome.fa
bwa index -p upstream genome.fa 2> upstream.log || die "bwa index failed without a limit"

status=0
start=$SECONDS
with_memory_limit "$limit" "$BWA_MMAP" index --placement=mmap -p mapped genome.fa 2> mapped.log || status=$?
[[ $status == 0 ]] || { tail -5 mapped.log >&2; die "bwa-mmap index with default flags failed under $limit bytes (exit $status)"; }
grep 'bwa-mmap index\|dimmap-budget' mapped.log >&2

# The threshold and the algorithm come from the cgroup's limit, printed with their reasons
# (IS's arrays, 10 bytes per base, would not fit: bwtsw, which writes the same files).
limit_text=$((limit >> 20))M
grep -q -- "--min-alloc=[0-9.]*[KM]: 1/32 of the memory limit of $limit_text (cgroup" mapped.log ||
  die "bwa-mmap index did not print a --min-alloc chosen from the $limit_text cgroup limit"
grep -q -- "-a bwtsw: the IS algorithm would keep about .* more than the memory limit of $limit_text" mapped.log ||
  die "bwa-mmap index did not choose bwtsw for a genome whose IS arrays exceed $limit_text"
same_index upstream mapped
echo "index of $bases bases with default flags under $limit bytes: identical to bwa index ($((SECONDS - start)) s)"
