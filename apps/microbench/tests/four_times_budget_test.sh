#!/usr/bin/env bash
# four_times_budget_test.sh MICROBENCH DIMMAP_BUDGET
# A data set 4x the memory budget: each structure is built once (128 MiB file, no limit), then
# queried read-only with 8 threads within a 32 MiB budget: mmap inside a 64 MiB memory cgroup
# (32 MiB for the process itself, the rest for the page cache), dimmap with a 32 MiB buffer in
# the same cgroup. Few queries: mmap manages only tens of lookups/s at this budget. Every answer is checked on the fly (exit 1 on a
# wrong one), and the checksum of the answers must equal the in-memory run's.
set -u
mb=$1 budget=$2
scratch=$(mktemp -d "${DIMMAP_BUILD_DIR:-/var/tmp}/microbench-4x-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$budget" --memory=64M --quiet -- true 2>/dev/null || { echo "skip: no memory cgroup can be made here" >&2; exit 77; }
queries=1000
checksum_of() { awk -F'\t' 'NR == 2 {print $9}' "$1"; }

for s in sorted-vector ordered-map unordered-map; do
  file="$scratch/$s.bin"
  "$mb" build --structure="$s" --size=128M --out="$file" >/dev/null 2>"$scratch/build.err" ||
    fail "build $s: $(cat "$scratch/build.err")"
  "$mb" query --file="$file" --placement=in-memory --threads=8 --queries=$queries >"$scratch/mem.tsv" ||
    fail "$s in memory"
  want=$(checksum_of "$scratch/mem.tsv")
  # Cold start for the mmap run: drop this file's pages from the page cache (no global drop).
  python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$file"
  for backend in mmap dimmap; do
    "$budget" --memory=64M -- "$mb" query --file="$file" --backend=$backend --buffer=32M --threads=8 --queries=$queries \
      >"$scratch/$backend.tsv" 2>"$scratch/$backend.err"
    rc=$?
    ((rc == 0)) || fail "$s on $backend with a 32 MiB budget: exit $rc: $(cat "$scratch/$backend.err")"
    got=$(checksum_of "$scratch/$backend.tsv")
    [[ $got == "$want" ]] || fail "$s on $backend: checksum $got, in memory $want"
    echo "ok: $s on $backend, $(awk -F'\t' 'NR == 2 {print $7}' "$scratch/$backend.tsv") lookups/s" \
      "(in memory $(awk -F'\t' 'NR == 2 {print $7}' "$scratch/mem.tsv"))"
  done
  rm -f "$file"
done
