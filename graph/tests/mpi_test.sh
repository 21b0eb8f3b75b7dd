#!/usr/bin/env bash
# Distributed BFS: mpirun -np 2 and 4 give the same levels as the single-process run and
# pass Graph500 validation, in memory and fully external on dimmap with per-rank storage.
set -euo pipefail
bin="$1"
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
work="$(mktemp -d "${DIMMAP_TEST_DIR:-$PWD}/graph-mpi-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)

"$bin/rmat-gen" --scale=13 --variant=ssca --seed=5 --out="$work/e.bin" --quiet
"$bin/graph-ingest" --edges="$work/e.bin" --vertices=8192 --out="$work/g" --quiet
"$bin/bfs" --graph="$work/g" --roots=3 --seed=2 --validate --levels-out="$work/single.txt" >"$work/single.out"
sources=$(sed -n 's/^root \([0-9]*\):.*/\1/p' "$work/single.out" | tr '\n' ' ')
teps_roots=$(grep -c '^root ' "$work/single.out")
[[ $teps_roots -eq 3 ]] || fail "single run"
for np in 2 4; do
  mkdir -p "$work/st-$np"
  for args in "--placement=in-memory --threads=2" \
              "--placement=full-external --backend=dimmap --buffer=1M --storage=$work/st-$np/r%r --threads=4"; do
    for r in $(seq 0 $((np - 1))); do mkdir -p "$work/st-$np/r$r"; done
    # shellcheck disable=SC2086
    "${mpi[@]}" -np "$np" "$bin/bfs" --graph="$work/g" --roots=3 --seed=2 --validate $args \
      --levels-out="$work/mpi.txt" >"$work/mpi.out" 2>"$work/mpi.err" || { cat "$work/mpi.err" >&2; fail "np=$np $args"; }
    grep -q "ranks=$np" "$work/mpi.out" || fail "np=$np did not run $np ranks"
    grep -q "validation: passed" "$work/mpi.out" || fail "np=$np validation ($args)"
    cmp "$work/single.txt" "$work/mpi.txt" || fail "np=$np levels differ from the single-process run ($args)"
    [[ "$(sed -n 's/^root \([0-9]*\):.*/\1/p' "$work/mpi.out" | tr '\n' ' ')" == "$sources" ]] || fail "np=$np roots differ"
    # Per-level counts of every root match the single run.
    diff <(grep -A1 '^root ' "$work/single.out" | grep 'per level') <(grep -A1 '^root ' "$work/mpi.out" | grep 'per level') \
      || fail "np=$np per-level counts differ"
  done
done
echo "mpi test passed"
