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
echo "ok: first-touch faults plain $p, hpmmap $a"
