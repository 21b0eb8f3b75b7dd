#!/bin/sh
# uffd-zap-cost: both measurements run and print a time per batch; bad options are refused.
set -u
tool=$1
fail() { echo "FAIL: $*"; exit 1; }

out=$("$tool" --pages=4096 --batch=32 --rounds=20) || fail "exit status $? (output: $out)"
echo "$out"
for name in "read faults" "UFFDIO_CONTINUE"; do
  echo "$out" | grep -Eq "^$name +[0-9]+\.[0-9] us per batch of 32" || fail "no time per batch for '$name'"
done
echo "$out" | grep -Eq "^ratio \(UFFDIO_CONTINUE / read faults\): [0-9]+\.[0-9]+x" || fail "no ratio line"

err=$("$tool" --pages=64 --batch=128 2>&1) && fail "--batch larger than --pages was accepted"
echo "$err" | grep -q "larger than --pages" || fail "unclear error for --batch > --pages: $err"
"$tool" --batch=0 >/dev/null 2>&1 && fail "--batch=0 was accepted"
echo "uffd-zap-cost test: ok"
