#!/usr/bin/env bash
# bench.sh [--quick] [--out DIR]
# bwa-mmap against upstream bwa, measured side by side in one run (runs interleaved, median
# of the repeats). Numbers are indicative: the machine is shared, and page-cache state moves.
#
#  1. Genome fits in RAM (E. coli 536 from bowtie-examples; full mode also a 50M-base
#     synthetic genome): index wall time of `bwa index` vs `bwa-mmap index --placement=mmap`
#     with the default --min-alloc (64M) and with --min-alloc=1M (every big array in a file);
#     `bwa mem -t 2` vs `bwa-mmap mem -t 2 --placement=mmap` throughput (reads/s) on wgsim
#     pairs. Targets: index <= 1.10x, mem >= 0.95x.
#  2. Index bigger than the memory budget (synthetic genome, -a bwtsw; quick: 8M bases under
#     a 32M cgroup, where bwa index peaks near 54M; full: 16M bases under 64M): index time for
#     --placement=mmap and --placement=dimmap (buffer = half the budget), every array of 1M or
#     more placed (--min-alloc=1M); upstream bwa index under the same limit for reference
#     (killed when it does not fit). Each output is checked against bwa's.
#     A FASTA 2x the budget is not measured: bwtsw's BWT under construction (~0.9x the
#     genome's bases in bytes) is accessed at random, so it thrashes once it exceeds the budget
#     (48M bases under 24M: 18% of the BWT built after 13 minutes through mmap).
#     Each placement gets 600 s (full: 3600 s).
source "$(dirname "$0")/../tests/lib.sh"
need bwa wgsim cmp
quick=0
out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    *) die "usage: bench.sh [--quick] [--out DIR]" ;;
  esac
  shift
done
repeats=$((quick ? 1 : 3))
make_workdir
cd "$WORK"
results=${out:+$out/bwa-mmap-bench.tsv}
[[ -n $out ]] && mkdir -p "$out" && printf 'part\tcase\ttool\tseconds\tvalue\n' > "$results"

seconds() {  # seconds CMD...: wall time of CMD (stdout and stderr discarded)
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null 2>&1 || return 1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' 
}
median() { tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a / b }'; }
record() { [[ -z $results ]] || printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$results"; }

# ---- 1. fits in RAM ----
genomes=("ecoli|$(ecoli_fa)")
if [[ $quick == 0 ]]; then
  "$PY" "$TESTS/make_genome.py" --length 50M --contigs 5 --seed 31 --out syn50.fa
  genomes+=("syn50M|syn50.fa")
fi
echo "== index, genome fits in RAM ($repeats run(s) each, median wall seconds)"
for g in "${genomes[@]}"; do
  name=${g%%|*}
  fa=${g#*|}
  t_bwa=() t_def=() t_all=()
  for _ in $(seq "$repeats"); do
    t_bwa+=("$(seconds bwa index -p ref "$fa")")
    t_def+=("$(seconds "$BWA_MMAP" index --placement=mmap -p def "$fa")")
    t_all+=("$(seconds "$BWA_MMAP" index --placement=mmap --min-alloc=1M -p all "$fa")")
  done
  same_index ref def
  same_index ref all
  b=$(echo "${t_bwa[*]}" | median) d=$(echo "${t_def[*]}" | median) a=$(echo "${t_all[*]}" | median)
  printf '%-8s bwa index %7.2f s | bwa-mmap mmap %7.2f s (%sx) | mmap, all arrays placed %7.2f s (%sx)\n' \
    "$name" "$b" "$d" "$(ratio "$d" "$b")" "$a" "$(ratio "$a" "$b")"
  record fits "$name" bwa-index "$b" 1
  record fits "$name" bwa-mmap-index-mmap "$d" "$(ratio "$d" "$b")"
  record fits "$name" bwa-mmap-index-mmap-min1M "$a" "$(ratio "$a" "$b")"
done

pairs=$((quick ? 50000 : 250000))
zcat "$(ecoli_fa)" > ecoli.fa
wgsim -S 5 -N "$pairs" -1 100 -2 100 ecoli.fa r1.fq r2.fq > /dev/null 2>&1
bwa index -p ecoli ecoli.fa 2> /dev/null
echo "== mem -t 2, E. coli index in the page cache, $pairs wgsim pairs"
t_bwa=() t_mm=()
for _ in $(seq "$repeats"); do
  t_bwa+=("$(seconds bwa mem -t 2 -o bwa.sam ecoli r1.fq r2.fq)")
  t_mm+=("$(seconds "$BWA_MMAP" mem --placement=mmap -t 2 -o mm.sam ecoli r1.fq r2.fq)")
done
same_sam bwa.sam mm.sam
b=$(echo "${t_bwa[*]}" | median) m=$(echo "${t_mm[*]}" | median)
reads=$((2 * pairs))
printf 'bwa mem %7.2f s (%.0f reads/s) | bwa-mmap mem mmap %7.2f s (%.0f reads/s): throughput %sx\n' \
  "$b" "$(ratio "$reads" "$b")" "$m" "$(ratio "$reads" "$m")" "$(ratio "$b" "$m")"
record fits ecoli-mem bwa-mem "$b" "$(ratio "$reads" "$b")"
record fits ecoli-mem bwa-mmap-mem-mmap "$m" "$(ratio "$reads" "$m")"

# ---- 2. genome 2x the memory budget ----
budget_mb=$((quick ? 32 : 64))
bases=$((budget_mb / 4))M
limit=$((budget_mb << 20))
echo "== index of $bases bases (bwa index needs more) under a ${budget_mb}M memory cgroup (-a bwtsw)"
"$PY" "$TESTS/make_genome.py" --length "$bases" --contigs 2 --seed 41 --out big.fa
bwa index -a bwtsw -p bigref big.fa 2> /dev/null
need_memory_cgroup
limited() { with_memory_limit "$limit" "$@"; }
cap=$((quick ? 600 : 3600))  # seconds: a placement that thrashes is reported, not waited for
t=$(seconds limited bwa index -a bwtsw -p bigbwa big.fa) && s="$t s" || s="killed (does not fit)"
echo "bwa index under ${budget_mb}M: $s"
for p in mmap dimmap; do
  extra=()
  [[ $p == dimmap ]] && extra=(--buffer "$((budget_mb / 2))M")
  if t=$(seconds timeout "$cap" "$BUDGET" --memory="$limit" -- "$BWA_MMAP" index --placement="$p" "${extra[@]}" --min-alloc=1M -a bwtsw \
    -p "big_$p" big.fa); then
    check=identical
    for s in amb ann bwt pac sa; do cmp -s "bigref.$s" "big_$p.$s" || check="DIFFERENT from bwa index"; done
    printf 'bwa-mmap index --placement=%-6s under %sM: %7.2f s, output %s\n' "$p" "$budget_mb" "$t" "$check"
    record over-budget "$bases" "bwa-mmap-index-$p" "$t" "$check"
  else
    echo "bwa-mmap index --placement=$p under ${budget_mb}M: failed or not done in $cap s"
    record over-budget "$bases" "bwa-mmap-index-$p" NA failed
  fi
done
[[ -z $results ]] || echo "results: $results"
