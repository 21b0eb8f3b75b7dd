#!/usr/bin/env bash
# hpmmap_kernel_test.sh MICROBENCH DIMMAP_RUN
# The HPMMAP promise at application level: the same unmodified random-access kernel takes a
# page fault per page when it first touches its malloc'd table, and none under
# dimmap-run --placement=hpmmap (the arena was reserved, populated and locked at start).
set -u
mb=$1 run=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

plain=$("$mb" random-access --size=64M --updates=1000000 --threads=2) || fail "plain run"
arena=$("$run" --placement=hpmmap --buffer=80M --min-alloc=32M -- "$mb" random-access --size=64M --updates=1000000 \
  --threads=2) || fail "hpmmap run"
echo "plain:  $plain"
echo "hpmmap: $arena"
[[ $(field verified "$plain") == 1 && $(field verified "$arena") == 1 ]] || fail "updates not verified"
p=$(field minflt_init "$plain") a=$(field minflt_init "$arena")
((p >= 16)) || fail "plain malloc should fault while first touching 64 MiB (got $p)"
((a <= 8)) || fail "hpmmap arena memory faulted $a times during first touch"
((a * 4 < p)) || fail "hpmmap ($a faults) not clearly below plain malloc ($p)"
# --json: the same numbers as the summary the harness reads.
summary=$(mktemp "${TMPDIR:-/tmp}/hpmmap-kernel-XXXXXX.json")
trap 'rm -f "$summary"' EXIT
"$mb" random-access --size=16M --updates=100000 --threads=2 --json="$summary" >/dev/null || fail "--json run"
python3 - "$summary" <<'PY' || fail "--json summary: $(cat "$summary")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["tool"] == "microbench random-access" and s["verified"] is True, s
assert s["bytes"] == 16 << 20 and s["updates"] == 100000 and s["threads"] == 2, s
assert abs(s["rate"] - s["updates"] / s["update_seconds"]) <= 1e-6 * s["rate"], s
assert s["minflt_init"] >= 16 and s["total_seconds"] >= s["update_seconds"], s
PY
echo "ok: first-touch faults plain $p, hpmmap $a"
