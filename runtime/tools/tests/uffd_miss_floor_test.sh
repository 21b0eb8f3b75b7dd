#!/bin/sh
# uffd-miss-floor: serves misses of a file 8x its buffer and prints their rate and CPU cost;
# every miss's data must be the file's: on a file of bytes 0x01 the sum of the bytes read that
# it prints must equal the number of reads.
set -u
tool=$1
work=$2
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work"
file=$work/floor.dat
head -c 4194304 /dev/zero | tr '\000' '\001' > "$file"
out=$("$tool" "$file" --resident=512K --seconds=0.3) || fail "exit status $? (output: $out)"
echo "$out"
echo "$out" | grep -Eq "^uffd-miss-floor: [0-9.]+K misses/s \([0-9]+% of [0-9]+ reads\), [0-9.]+ us of CPU per miss" ||
  fail "no rate line"
reads=$(echo "$out" | sed -n 's/.*% of \([0-9]*\) reads.*/\1/p')
sum=$(echo "$out" | sed -n 's/.*sum of the bytes read \([0-9]*\))$/\1/p')
[ "$sum" = "$reads" ] || fail "the bytes read through the mapping are not the file's (sum $sum, $reads reads)"
misses=$(echo "$out" | sed -n 's/.*(\([0-9]*\)% of.*/\1/p')
[ "$misses" -ge 50 ] || fail "only $misses% of reads missed on a file 8x the buffer"

# --json: the same run's numbers as the summary the harness reads (rate = misses/s).
"$tool" "$file" --resident=512K --seconds=0.2 --json="$work/floor.json" >/dev/null || fail "--json run failed"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["tool"] == "uffd-miss-floor" and s["rate_unit"] == "misses/s", s
assert s["rate"] > 0 and s["misses"] <= s["reads"] and s["byte_sum"] == s["reads"], s
assert abs(s["rate"] - s["misses"] / s["wall_seconds"]) <= 1e-6 * s["rate"], s
' "$work/floor.json" || fail "--json summary wrong: $(cat "$work/floor.json")"
rm -f "$work/floor.json"

err=$("$tool" "$file" --resident=4M 2>&1) && fail "a file smaller than 4x --resident was accepted"
echo "$err" | grep -q "at least 4x --resident" || fail "unclear error: $err"
"$tool" "$work/none" >/dev/null 2>&1 && fail "a missing file was accepted"
rm -f "$file"
echo "uffd-miss-floor test: ok"
