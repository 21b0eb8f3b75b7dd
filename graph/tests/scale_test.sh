#!/usr/bin/env bash
# Larger end-to-end run (label slow): an R-MAT graph ingested out of core, then BFS with
# the data 4x the DI-MMAP buffer, semi- and fully external, checked against Boost.Graph.
set -euo pipefail
bin="$1" scale="${2:-16}"
work="$(mktemp -d "${DIMMAP_TEST_DIR:-$PWD}/graph-scale-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
n=$((1 << scale))
"$bin/rmat-gen" --scale="$scale" --variant=ssca --seed=21 --out="$work/e.bin" --quiet
"$bin/graph-ingest" --edges="$work/e.bin" --vertices="$n" --memory=4M --out="$work/g" 2>"$work/ingest.log"
grep -q "sorted runs" "$work/ingest.log" || fail "ingest did not go out of core"
data=$(( $(stat -c %s "$work/g/edge.dat") + $(stat -c %s "$work/g/vertex.dat") + 13 * n ))
buffer="$(( data / 4 / 1024 ))K"
root=$("$bin/bfs" --graph="$work/g" --roots=1 --seed=4 | sed -n 's/^root \([0-9]*\):.*/\1/p')
"$bin/graph-bfs-reference" "$work/e.bin" "$n" "$root" "$work/ref.txt"
mkdir -p "$work/st"
for args in "--placement=semi-external --backend=dimmap" "--placement=full-external --backend=dimmap" \
            "--placement=full-external --backend=mmap"; do
  # shellcheck disable=SC2086
  "$bin/bfs" --graph="$work/g" --source="$root" --validate --threads=16 --buffer="$buffer" --storage="$work/st" \
    $args --levels-out="$work/levels.txt" >"$work/out" 2>&1 || { cat "$work/out" >&2; fail "bfs $args"; }
  cmp "$work/levels.txt" "$work/ref.txt" || fail "levels differ from Boost with $args (buffer $buffer)"
done
echo "scale $scale test passed (buffer $buffer for $((data >> 20)) MiB of data)"
