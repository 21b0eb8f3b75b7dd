#!/usr/bin/env bash
# memory_defaults_test.sh NAME=PATH...  (bwa-mmap, dimmap-run; a tool not given is not checked;
#                                        dimmap-budget makes the cgroup: skipped without it)
# Sizes a user does not give follow the memory the run may use (runtime memory_limit.hpp):
# inside a 48M memory cgroup the DI-MMAP buffer defaults to 42M (7/8: the default engine's
# buffer is page cache) or, on the userfaultfd engine, 24M (half: memory of its own), and
# --min-alloc to 1M, each printed with its reason; --buffer wins over DIMMAP_BUFFER, which wins over the default;
# a buffer asked for beyond the limit draws a warning naming both sizes.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
declare -A tool
for arg in "$@"; do tool[${arg%%=*}]=${arg#*=}; done
budget=${tool[dimmap-budget]:-}
[[ -n $budget ]] || { echo "dimmap-budget is not built: no memory cgroup to run in" >&2; exit 77; }
limit=$((48 << 20))
work=$(mktemp -d "${DIMMAP_TEST_DIR:-${TMPDIR:-/tmp}}/memory-defaults.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

die() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect LOG TEXT: LOG holds TEXT (a fixed string).
expect() { grep -qF -- "$2" "$1" || { cat "$1" >&2; die "$1 lacks '$2'"; }; }
unexpected() { ! grep -qF -- "$2" "$1" || { cat "$1" >&2; die "$1 has '$2'"; }; }

# limited CMD...: CMD in a fresh memory cgroup of $limit.
limited() { "$budget" --memory="$limit" -- "$@"; }
limited true 2> probe.log || { cat probe.log >&2; echo "memory cgroups are not available here" >&2; exit 77; }
checked=0

if [[ -n ${tool[bwa-mmap]:-} ]]; then
  bwa=${tool[bwa-mmap]}
  /usr/bin/python3 "$SRC/bwa-mmap/tests/make_genome.py" --length 200K --contigs 2 --seed 5 --out g.fa
  unset DIMMAP_BUFFER
  limited "$bwa" index --placement=dimmap -p d g.fa 2> default.log || die "bwa-mmap index failed: $(tail -3 default.log)"
  expect default.log "bwa-mmap: DI-MMAP buffer 42M: 7/8 of the memory limit of 48M (cgroup"
  expect default.log "[bwa-mmap index] --min-alloc=1M: 1/32 of the memory limit of 48M (cgroup"
  expect default.log "[bwa-mmap index] DI-MMAP buffer 42M:"
  unexpected default.log "warning"
  DIMMAP_ENGINE=uffd limited "$bwa" index --placement=dimmap -p u g.fa 2> uffd.log || die "bwa-mmap index failed: $(tail -3 uffd.log)"
  expect uffd.log "bwa-mmap: DI-MMAP buffer 24M: half the memory limit of 48M (cgroup"
  expect uffd.log "[bwa-mmap index] DI-MMAP buffer 24M:"

  DIMMAP_BUFFER=8M limited "$bwa" index --placement=dimmap -p e g.fa 2> env.log || die "bwa-mmap index failed"
  expect env.log "bwa-mmap: DI-MMAP buffer 8M: DIMMAP_BUFFER"
  expect env.log "[bwa-mmap index] DI-MMAP buffer 8M:"

  DIMMAP_BUFFER=8M limited "$bwa" index --placement=dimmap --buffer=4M --min-alloc=64K -p o g.fa 2> option.log ||
    die "bwa-mmap index failed"
  expect option.log "[bwa-mmap index] DI-MMAP buffer 4M:"
  expect option.log "arrays of 64K or more"
  unexpected option.log "--min-alloc=1M"
  unexpected option.log "DI-MMAP buffer 8M"

  limited "$bwa" index --placement=dimmap --buffer=64M -p w g.fa 2> over.log || true
  expect over.log "bwa-mmap: warning: --buffer=64M is more than the memory limit of 48M (cgroup"
  for p in d u e o; do
    for s in amb ann bwt pac sa; do cmp "d.$s" "$p.$s" || die "$p.$s differs from d.$s"; done
  done
  checked=$((checked + 1))
fi

if [[ -n ${tool[dimmap-run]:-} ]]; then
  run=${tool[dimmap-run]}
  unset DIMMAP_BUFFER
  limited "$run" --placement=dimmap -- true 2> run.log || die "dimmap-run failed: $(cat run.log)"
  expect run.log "dimmap-run: --min-alloc=1M: 1/32 of the memory limit of 48M (cgroup"
  expect run.log "dimmap-run: buffer 42M: 7/8 of the memory limit of 48M (cgroup"
  DIMMAP_ENGINE=uffd limited "$run" --placement=dimmap -- true 2> run_uffd.log || die "dimmap-run failed: $(cat run_uffd.log)"
  expect run_uffd.log "dimmap-run: buffer 24M: half the memory limit of 48M (cgroup"
  limited "$run" --placement=dimmap --buffer=64M --min-alloc=2M -- true 2> run_over.log || die "dimmap-run failed"
  expect run_over.log "dimmap-run: warning: --buffer=64M is more than the memory limit of 48M"
  unexpected run_over.log "--min-alloc=1M"
  DIMMAP_BUFFER=6M limited "$run" --placement=dimmap -- /usr/bin/env 2> run_env.log > run_env.out ||
    die "dimmap-run failed"
  expect run_env.out "DIMMAP_BUFFER=6291456"
  checked=$((checked + 1))
fi
[[ $checked -gt 0 ]] || { echo "no tool to check" >&2; exit 77; }
echo "memory defaults: $checked tools checked under a 48M cgroup"
