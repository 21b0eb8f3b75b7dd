#!/usr/bin/env bash
# cli_errors_test.sh MICROBENCH: bad input gets a clear message and a non-zero exit.
set -u
mb=$1
scratch=$(mktemp -d "${DIMMAP_BUILD_DIR:-/var/tmp}/microbench-cli-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0
expect_error() {  # MESSAGE ARGS...: must exit non-zero and say MESSAGE on stderr
  local message=$1
  shift
  if "$mb" "$@" >"$scratch/out" 2>"$scratch/err"; then
    echo "FAIL: microbench $* succeeded" >&2
    failures=$((failures + 1))
  elif ! grep -qF -- "$message" "$scratch/err"; then
    echo "FAIL: microbench $*: expected '$message' in: $(cat "$scratch/err")" >&2
    failures=$((failures + 1))
  fi
}
expect_error "unknown structure 'b-tree'" build --structure=b-tree --size=1M --out="$scratch/x"
expect_error "--size" build --size=lots --out="$scratch/x"
expect_error "too small" build --size=4K --out="$scratch/x"
expect_error "$scratch/missing/x" build --size=1M --out="$scratch/missing/x"
expect_error "cannot open '$scratch/nothing'" query --file="$scratch/nothing"
echo "not a structure" >"$scratch/text"
expect_error "'$scratch/text' is too short" query --file="$scratch/text"
head -c 8192 /dev/zero >"$scratch/zeros"
expect_error "bad magic" query --file="$scratch/zeros"
"$mb" build --size=1M --out="$scratch/v.bin" >/dev/null 2>&1 || { echo "FAIL: build" >&2; exit 1; }
expect_error "'0' is not a thread count" query --file="$scratch/v.bin" --threads=1,0
expect_error "not a thread count" query --file="$scratch/v.bin" --threads=two
expect_error "unknown --placement 'disk'" query --file="$scratch/v.bin" --placement=disk
expect_error "holds a sorted-vector, not a ordered-map" query --file="$scratch/v.bin" --structure=ordered-map
expect_error "--backend" query --file="$scratch/v.bin" --backend=tape
expect_error "smaller than the minimum" query --file="$scratch/v.bin" --backend=dimmap --buffer=4K
expect_error "--size" random-access --size=-1G
[[ -z $(find "$scratch" -name '*.partial-*') ]] || { echo "FAIL: partial files left" >&2; failures=$((failures + 1)); }
((failures == 0)) && echo "ok: all bad input refused"
exit $((failures > 0))
