#!/usr/bin/env bash
# cli_errors_test.sh MICROBENCH: bad input gets a clear message and exit 1, bad options exit 2;
# query --json writes the numbers the TSV prints.
set -u
mb=$1
scratch=$(mktemp -d "${DIMMAP_BUILD_DIR:-/var/tmp}/microbench-cli-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0
expect_error() {  # STATUS MESSAGE ARGS...: must exit STATUS (2 usage, 1 bad input) and say MESSAGE on stderr
  local status=$1 message=$2
  shift 2
  "$mb" "$@" >"$scratch/out" 2>"$scratch/err"
  local got=$?
  if ((got != status)); then
    echo "FAIL: microbench $*: exit $got, expected $status: $(cat "$scratch/err")" >&2
    failures=$((failures + 1))
  elif ! grep -qF -- "$message" "$scratch/err"; then
    echo "FAIL: microbench $*: expected '$message' in: $(cat "$scratch/err")" >&2
    failures=$((failures + 1))
  fi
}
expect_error 2 "b-tree not in" build --structure=b-tree --size=1M --out="$scratch/x"
expect_error 2 "--size: size 'lots'" build --size=lots --out="$scratch/x"
expect_error 1 "too small" build --size=4K --out="$scratch/x"
expect_error 1 "$scratch/missing/x" build --size=1M --out="$scratch/missing/x"
expect_error 1 "cannot open '$scratch/nothing'" query --file="$scratch/nothing"
echo "not a structure" >"$scratch/text"
expect_error 1 "'$scratch/text' is too short" query --file="$scratch/text"
head -c 8192 /dev/zero >"$scratch/zeros"
expect_error 1 "bad magic" query --file="$scratch/zeros"
"$mb" build --size=1M --out="$scratch/v.bin" >/dev/null 2>&1 || { echo "FAIL: build" >&2; exit 1; }
expect_error 2 "'0' is not a thread count" query --file="$scratch/v.bin" --threads=1,0
expect_error 2 "'two' is not a thread count" query --file="$scratch/v.bin" --threads=two
expect_error 2 "--placement: 'disk' is not in-memory" query --file="$scratch/v.bin" --placement=disk
expect_error 1 "holds a sorted-vector, not a ordered-map" query --file="$scratch/v.bin" --structure=ordered-map
expect_error 2 "--backend" query --file="$scratch/v.bin" --backend=tape
expect_error 1 "smaller than the minimum" query --file="$scratch/v.bin" --backend=dimmap --buffer=4K
expect_error 2 "--size: size '-1G'" random-access --size=-1G
expect_error 2 "microbench: --threads: Value -2 not in range" random-access --threads=-2
expect_error 1 "cannot write the JSON summary '$scratch/missing/s.json'" query --file="$scratch/v.bin" \
  --json="$scratch/missing/s.json"
if "$mb" query --file="$scratch/v.bin" --placement=full-external --backend=dimmap --buffer=256K --storage="$scratch" \
  --threads=1,2 --queries=2000 --json="$scratch/q.json" >"$scratch/q.tsv" 2>"$scratch/q.err"; then
  python3 - "$scratch/q.json" "$scratch/q.tsv" <<'PY' || failures=$((failures + 1))
import csv, json, sys
s = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
try:
    assert s["tool"] == "microbench query" and s["structure"] == "sorted-vector" and len(s["runs"]) == len(rows) == 2, s
    for run, row in zip(s["runs"], rows):
        assert run["threads"] == int(row["threads"]) and run["queries"] == int(row["queries"]) == 2000, (run, row)
        assert run["found"] == int(row["found"]) and run["checksum"] == row["checksum"] and run["wrong"] == 0, (run, row)
        assert s["entries"] == int(row["entries"]), (s, row)
    assert s["queries"] == 4000 and abs(s["rate"] - s["queries"] / s["seconds"]) <= 1e-6 * s["rate"], s
    assert s["dimmap_stats"]["faults"] > 0 and s["wall_seconds"] >= s["seconds"], s
except AssertionError as e:
    sys.exit(f"FAIL: query --json disagrees with the TSV: {e}")
PY
else
  echo "FAIL: query --json: $(cat "$scratch/q.err")" >&2
  failures=$((failures + 1))
fi
[[ -z $(find "$scratch" -name '*.tmp.*') ]] || { echo "FAIL: partial files left" >&2; failures=$((failures + 1)); }
((failures == 0)) && echo "ok: all bad input refused"
exit $((failures > 0))
