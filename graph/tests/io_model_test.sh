#!/usr/bin/env bash
# bfs-io-model on a graph small enough to count by hand: a path 0-1-...-7 searched from 0,
# with 16-byte pages (two offsets or four edge entries per page).
#   offsets 0 1 3 5 7 9 11 13 14 -> vertex pages 0-4; entries 0-13 -> edge pages 0-3 (9 pages)
#   level v reads vertex v's offsets (pages v/2 and (8v+15)/16) and its list:
#   level 0: vertex page 0, edge page 0 -> 2 pages; every later level 3 pages; 23 per search.
set -euo pipefail
bin="$1"; model="$2"
work="$(mktemp -d "${DIMMAP_TEST_DIR:-$PWD}/graph-io-model-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for v in 0 1 2 3 4 5 6; do echo "$v $((v + 1))"; done >"$work/path.txt"
"$bin/graph-ingest" --edges="$work/path.txt" --format=text --vertices=8 --out="$work/g" --quiet
"$bin/bfs" --graph="$work/g" --source=0 --levels-out="$work/levels.txt" >/dev/null

run() { "$model" --graph="$work/g" --levels="$work/levels.txt" --page-bytes=16 "$@"; }
pages_per_level() { awk '$1 ~ /^[0-9]+$/ && NF == 5 {printf "%s:%s ", $1, $4}' <<<"$1"; }
out=$(run --buffer=32 --bandwidth=160)
echo "$out"
grep -q "^graph: 8 vertices, 9 pages of 16 B (0.0 MiB), ids as-is" <<<"$out" || fail "graph size"
[[ $(pages_per_level "$out") == "0:2 1:3 2:3 3:3 4:3 5:3 6:3 7:3 " ]] ||
  fail "pages per level"
grep -q "^per search: 23 page reads" <<<"$out" || fail "pages per search"
# Two pages of buffer: the optimum keeps what comes back soonest, so it reads no more than LRU.
lru=$(sed -n 's/.*reads per search LRU \([0-9]*\).*/\1/p' <<<"$out")
best=$(sed -n 's/.*optimal \([0-9]*\).*/\1/p' <<<"$out")
((best <= lru && lru <= 23 && best > 0)) || fail "LRU $lru, optimal $best"
grep -q "at least $(awk -v b="$best" 'BEGIN {printf "%.4f", b * 16 / 160}') s per search" <<<"$out" || fail "time bound"
# --json: the same numbers as the summary the harness reads.
run --buffer=32 --json="$work/model.json" >/dev/null
python3 - "$work/model.json" "$lru" "$best" <<'PY' || fail "--json summary: $(cat "$work/model.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["tool"] == "bfs-io-model" and s["rate"] == s["reads_optimal"] == int(sys.argv[3]), s
assert s["reads_lru"] == int(sys.argv[2]) and s["reads_unbuffered"] == 23 and s["graph_pages"] == 9, s
assert [l["pages"] for l in s["levels"]] == [2, 3, 3, 3, 3, 3, 3, 3], s
PY
# A buffer holding the whole graph reads nothing once warm.
run --buffer=144 | grep -q "reads per search LRU 0 (0.0 MiB), optimal 0 " || fail "whole graph in the buffer"

# Relabelled by falling degree, ids 1-6 come first: new id i holds old vertex 1..6, 0, 7 and
# their lists at offsets 0 2 4 ... 12 13 14; the levels travel with the vertices.
out=$(run --ids=degree)
[[ $(pages_per_level "$out") == "0:2 1:2 2:3 3:2 4:3 5:2 6:3 7:3 " ]] ||
  fail "pages per level, ids by degree: $out"
grep -q "^per search: 20 page reads" <<<"$out" || fail "pages per search, ids by degree"

# Bad input names the file.
head -3 "$work/levels.txt" >"$work/short.txt"
if "$model" --graph="$work/g" --levels="$work/short.txt" 2>"$work/err"; then fail "short levels file accepted"; fi
grep -q "short.txt' has 3 lines, the graph 8 vertices" "$work/err" || fail "error: $(cat "$work/err")"
if "$model" --graph="$work/nowhere" --levels="$work/levels.txt" 2>"$work/err"; then fail "missing graph accepted"; fi
grep -q "cannot read '$work/nowhere/graph.info'" "$work/err" || fail "error: $(cat "$work/err")"
cp -r "$work/g" "$work/no-edges" && rm "$work/no-edges/edge.dat"
if "$model" --graph="$work/no-edges" --levels="$work/levels.txt" 2>"$work/err"; then fail "missing edge.dat accepted"; fi
grep -q "cannot read '$work/no-edges/edge.dat': No such file" "$work/err" || fail "error: $(cat "$work/err")"
sed -i '/^vertices/d' "$work/no-edges/graph.info"
if "$model" --graph="$work/no-edges" --levels="$work/levels.txt" 2>"$work/err"; then fail "no vertex count accepted"; fi
grep -q "no-edges/graph.info' lacks a vertex count" "$work/err" || fail "error: $(cat "$work/err")"
if run --buffer=lots 2>"$work/err"; then fail "bad size accepted"; fi
grep -q "\-\-buffer: 'lots' is not a size" "$work/err" || fail "error: $(cat "$work/err")"
echo "io model: ok"
