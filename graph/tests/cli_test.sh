#!/usr/bin/env bash
# End-to-end CLI test: rmat-gen -> graph-ingest -> bfs on every placement, compared with
# Boost.Graph levels; thread-independent generation; HDF5; error messages and exit codes.
set -euo pipefail
bin="$1"   # directory with rmat-gen, graph-ingest, bfs, graph-bfs-reference
work="$(mktemp -d "${DIMMAP_TEST_DIR:-$PWD}/graph-cli-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_error() {  # expect_error "message part" cmd...
  local want="$1"; shift
  if "$@" >"$work/out" 2>"$work/err"; then fail "expected failure: $*"; fi
  grep -qF -- "$want" "$work/err" || { cat "$work/err" >&2; fail "error for '$*' lacks '$want'"; }
}

# 1. The generator's output does not depend on the thread count.
"$bin/rmat-gen" --scale=12 --seed=3 --threads=1 --out="$work/a.bin" --quiet
"$bin/rmat-gen" --scale=12 --seed=3 --threads=2 --out="$work/b.bin" --quiet
cmp "$work/a.bin" "$work/b.bin" || fail "rmat-gen output depends on --threads"
[[ $(stat -c %s "$work/a.bin") -eq $((16 * 4096 * 16)) ]] || fail "wrong edge count"
"$bin/rmat-gen" --scale=12 --seed=3 --variant=ssca --out="$work/ssca.bin" --quiet
cmp -s "$work/a.bin" "$work/ssca.bin" && fail "ssca variant equals graph500"

# 2. Ingest and BFS on every placement: levels equal Boost's, Graph500 validation passes.
"$bin/graph-ingest" --edges="$work/a.bin" --vertices=4096 --out="$work/g" --quiet
root=$("$bin/bfs" --graph="$work/g" --roots=1 --seed=9 | sed -n 's/^root \([0-9]*\):.*/\1/p')
"$bin/graph-bfs-reference" "$work/a.bin" 4096 "$root" "$work/ref.txt"
mkdir -p "$work/storage"
for args in "--placement=in-memory" "--placement=in-memory --memory-dir=/dev/shm --threads=3" \
            "--placement=semi-external --backend=mmap" "--placement=full-external --backend=mmap" \
            "--placement=semi-external --backend=dimmap --buffer=1M" \
            "--placement=full-external --backend=dimmap --buffer=1M --threads=16" \
            "--placement=in-memory --place-progress=dimmap --place-edge=mmap --buffer=1M"; do
  # shellcheck disable=SC2086
  "$bin/bfs" --graph="$work/g" --source="$root" --validate --storage="$work/storage" $args \
    --levels-out="$work/levels.txt" --parents-out="$work/parents.txt" >"$work/out" || fail "bfs $args"
  grep -q "validation: passed" "$work/out" || fail "validation with $args"
  cmp "$work/levels.txt" "$work/ref.txt" || fail "levels differ from Boost with $args"
  [[ $(wc -l <"$work/parents.txt") -eq 4096 ]] || fail "parents file length with $args"
  [[ $(sed -n "$((root + 1))p" "$work/parents.txt") -eq $root ]] || fail "source is not its own parent"
done
[[ -z "$(ls -A "$work/storage")" ]] || fail "scratch files left in --storage"
"$bin/bfs" --graph="$work/g" --roots=5 --validate >"$work/out"
[[ $(grep -c '^root ' "$work/out") -eq 5 ]] || fail "--roots=5 did not run 5 searches"
grep -q "harmonic mean TEPS" "$work/out" || fail "no TEPS line"
# --json: one object whose numbers are the printed ones (TEPS printed to 4 digits).
"$bin/bfs" --graph="$work/g" --roots=3 --validate --placement=full-external --backend=dimmap --buffer=1M \
  --storage="$work/storage" --json="$work/bfs.json" >"$work/out" || fail "bfs --json"
python3 - "$work/bfs.json" "$work/out" <<'PY' || fail "bfs --json summary disagrees with the printed numbers"
import json, re, sys
s = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
teps = float(re.search(r"harmonic mean TEPS (\S+)", out).group(1))
faults = int(re.search(r"all ranks: faults (\d+)", out).group(1))
assert s["tool"] == "bfs" and s["rate_unit"] == "TEPS", s
assert s["searches"] == len(re.findall(r"^root ", out, re.M)) == 3, s["searches"]
assert abs(s["rate"] - teps) <= 1e-3 * teps and s["rate"] == s["harmonic_mean_teps"], (s["rate"], teps)
assert s["validated"] and s["all_valid"] and s["vertices"] == 4096 and s["wall_seconds"] > 0, s
assert s["placement"] == "full-external" and s["backend"] == "dimmap", s
assert s["dimmap_stats"]["faults"] == faults > 0, (s["dimmap_stats"], faults)
PY
"$bin/bfs" --graph="$work/g" --roots=1 --json="$work/mem.json" >/dev/null || fail "bfs --json in memory"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert "dimmap_stats" not in s and s["rate"] > 0, s' \
  "$work/mem.json" || fail "in-memory bfs --json has DI-MMAP counters or no rate"
expect_error "cannot write the JSON summary '$work/none/s.json'" "$bin/bfs" --graph="$work/g" --roots=1 --json="$work/none/s.json"

# 3. Text and HDF5 inputs give the same graph.
"$bin/rmat-gen" --scale=10 --out="$work/s.bin" --quiet
"$bin/rmat-gen" --scale=10 --out="$work/s.txt" --quiet
"$bin/graph-ingest" --edges="$work/s.bin" --out="$work/sb" --quiet
"$bin/graph-ingest" --edges="$work/s.txt" --out="$work/st" --quiet
cmp "$work/sb/edge.dat" "$work/st/edge.dat" || fail "text ingest differs"
if "$bin/rmat-gen" --scale=10 --out="$work/s.h5" --quiet 2>"$work/err"; then
  "$bin/graph-ingest" --edges="$work/s.h5" --out="$work/sh" --quiet
  cmp "$work/sb/edge.dat" "$work/sh/edge.dat" || fail "HDF5 ingest differs"
  if command -v h5dump >/dev/null; then h5dump -H "$work/s.h5" | grep -q 'DATASPACE  SIMPLE { ( 16384, 2 )' || fail "HDF5 shape"; fi
else
  grep -q "no HDF5 support" "$work/err" || fail "HDF5 failed for another reason"
fi
# Out of core: a small --memory gives the same files.
"$bin/graph-ingest" --edges="$work/a.bin" --vertices=4096 --memory=256K --out="$work/g2" --quiet
cmp "$work/g/edge.dat" "$work/g2/edge.dat" && cmp "$work/g/vertex.dat" "$work/g2/vertex.dat" || fail "out-of-core differs"

# 4. Errors: clear message naming the file, non-zero exit, no graph left behind.
head -c 24 "$work/a.bin" >"$work/odd.bin"
expect_error "odd.bin' is 24 bytes, not a whole number of 16-byte edges" "$bin/graph-ingest" --edges="$work/odd.bin" --out="$work/bad1"
[[ ! -e "$work/bad1" ]] || fail "output directory left behind for bad input"
printf '0 1\n2 three\n' >"$work/bad.txt"
expect_error "bad.txt' line 2: non-numeric vertex id" "$bin/graph-ingest" --edges="$work/bad.txt" --out="$work/bad2"
expect_error "beyond --vertices=100" "$bin/graph-ingest" --edges="$work/a.bin" --vertices=100 --out="$work/bad3"
[[ ! -e "$work/bad3" ]] || fail "output directory left behind for out-of-range ids"
: >"$work/none.bin"
expect_error "none.bin': no edges" "$bin/graph-ingest" --edges="$work/none.bin" --out="$work/bad4"
[[ ! -e "$work/bad4" ]] || fail "output directory left behind for an empty edge list"
expect_error "is not a graph directory" "$bin/bfs" --graph="$work/storage"
expect_error "--source 5000 is not a vertex" "$bin/bfs" --graph="$work/g" --source=5000
expect_error "placement" "$bin/bfs" --graph="$work/g" --placement=sideways
expect_error "scale" "$bin/rmat-gen" --scale=40 --out="$work/x.bin"
[[ ! -e "$work/x.bin" ]] || fail "rmat-gen left output after an error"
echo "cli test passed"
