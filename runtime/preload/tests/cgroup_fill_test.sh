#!/usr/bin/env bash
# cgroup_fill_test.sh MODE PROBE DIMMAP_RUN DIMMAP_BUDGET
# (8 threads fill and check, each its own share, so storage placements have faults in flight)
# What dimmap-run is for: a program that allocates 1 GiB, fills it and checks every word
#   without  in a 256 MiB memory cgroup, plain: must be OOM-killed (exit 137)
#   mmap     the same under dimmap-run --placement=mmap: must finish with the right checksum
#   dimmap   the same under dimmap-run --placement=dimmap (128 MiB buffer): likewise
# The expected checksum comes from the same program run without any limit or preload.
set -u
mode=$1 probe=$2 run=$3 budget=$4
scratch=$(mktemp -d "${DIMMAP_BUILD_DIR:-/var/tmp}/preload-cgroup-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# dimmap-budget is an apps/ tool (named by path): skip where it is not built or cannot make a cgroup.
[[ -x $budget ]] || { echo "skip: $budget is not built" >&2; exit 77; }
"$budget" --memory=64M --quiet -- true 2>/dev/null || { echo "skip: no memory cgroup can be made here" >&2; exit 77; }

case $mode in
  without)
    "$budget" --memory=256M -- "$probe" fill 1G 8 >"$scratch/out"
    rc=$?
    ((rc == 137)) || fail "without dimmap-run the 1 GiB fill should be OOM-killed (137), got exit $rc"
    ;;
  mmap | dimmap)
    expected=$("$probe" fill 1G 8) || fail "the unconstrained reference run failed"
    "$budget" --memory=256M -- "$run" --placement="$mode" --dir="$scratch" --buffer=128M --stats -- \
      "$probe" fill 1G 8 >"$scratch/out"
    rc=$?
    ((rc == 0)) || fail "--placement=$mode in 256 MiB: exit $rc (expected 0)"
    got=$(cat "$scratch/out")
    [[ $got == "$expected" ]] || fail "output '$got' differs from the unconstrained run's '$expected'"
    [[ -z $(find "$scratch" -type f ! -name out) ]] || fail "backing files left in $scratch"
    ;;
  *)
    fail "unknown mode '$mode'"
    ;;
esac
echo "ok: $mode"
