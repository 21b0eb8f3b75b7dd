#!/usr/bin/env bash
# index_progress.sh - bwa-mmap index reports its long steps while they run: with a line every
# 20 ms (BWA_MMAP_PROGRESS_SECONDS), a 2M-base genome shows the BWT construction and the SA
# sampling with elapsed times, the sampling's percent rising to its end; the index is still
# byte-identical to bwa index's. BWA_MMAP_PROGRESS_SECONDS=0 prints no such line.
source "$(dirname "$0")/lib.sh"
need bwa
make_workdir
cd "$WORK"

"$PY" "$TESTS/make_genome.py" --length 2M --seed 4 --out ref.fa
bwa index -p upstream ref.fa 2> /dev/null
BWA_MMAP_PROGRESS_SECONDS=0.02 "$BWA_MMAP" index --placement=mmap --min-alloc=1M -p ticked ref.fa 2> ticked.log ||
  { cat ticked.log >&2; die "index failed"; }
same_index upstream ticked

grep -qE '^\[bwa-mmap index\] BWT construction: [0-9.]+ s \([0-9.]+ s since the start\)$' ticked.log ||
  { cat ticked.log >&2; die "no progress line for the BWT construction"; }
grep -qE '^\[bwa-mmap index\] BWT construction: done in [0-9.]+ s' ticked.log || die "no end line for the BWT construction"
mapfile -t percents < <(sed -nE 's/^\[bwa-mmap index\] SA sampling: ([0-9]+)% after [0-9.]+ s .*/\1/p' ticked.log)
((${#percents[@]} >= 2)) || { cat ticked.log >&2; die "fewer than 2 SA sampling lines"; }
previous=0
for p in "${percents[@]}"; do
  ((p >= previous && p <= 100)) || die "SA sampling percents not rising within 0-100: ${percents[*]}"
  previous=$p
done
((percents[-1] >= 50)) || die "SA sampling ended its lines at ${percents[-1]}%: ${percents[*]}"
grep -qE '^\[bwa-mmap index\] SA sampling: done in [0-9.]+ s' ticked.log || die "no end line for the SA sampling"
echo "progress: $(grep -c '^\[bwa-mmap index\] BWT construction: [0-9]' ticked.log) BWT lines, SA sampling at ${percents[*]}%"

BWA_MMAP_PROGRESS_SECONDS=0 "$BWA_MMAP" index --placement=mmap --min-alloc=1M -p quiet ref.fa 2> quiet.log
! grep -q 'since the start' quiet.log || die "BWA_MMAP_PROGRESS_SECONDS=0 still printed progress lines"
BWA_MMAP_PROGRESS_SECONDS=soon "$BWA_MMAP" index -p bad ref.fa 2> bad.log && die "accepted BWA_MMAP_PROGRESS_SECONDS=soon"
grep -q BWA_MMAP_PROGRESS_SECONDS bad.log || die "bad interval: the message does not name the variable"
echo "index progress: ok"
