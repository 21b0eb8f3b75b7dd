#!/usr/bin/env bash
# memory-limit.sh SIZE -- CMD ARGS...
# Runs CMD in a memory cgroup of SIZE (e.g. 256M) and passes on its exit status (128+N if
# signal N killed it, so an OOM kill is 137). Uses dimmap-budget (apps/budget) when it is
# built; otherwise makes a cgroup v1 itself (/sys/fs/cgroup/memory, root) and removes it
# afterwards. Reports the cgroup's peak usage and OOM kills on stderr.
set -u
if (($# < 3)) || [[ $2 != -- ]]; then
  echo "usage: memory-limit.sh SIZE -- CMD ARGS..." >&2
  exit 2
fi
size=$1
shift 2

budget="${DIMMAP_BUILD_DIR:-}/apps/budget/dimmap-budget"
if [[ -n ${DIMMAP_BUILD_DIR:-} && -x $budget ]]; then
  exec "$budget" --memory="$size" -- "$@"
fi

root=/sys/fs/cgroup/memory
if [[ ! -w $root/cgroup.procs ]]; then
  echo "memory-limit.sh: no writable cgroup v1 memory controller at $root (needs root)" >&2
  exit 77
fi
bytes=$(numfmt --from=iec "$size") || { echo "memory-limit.sh: bad size '$size'" >&2; exit 2; }
cg=$root/dimmap-limit-$$-$RANDOM
mkdir "$cg" || exit 2
child=0
cleanup() {
  ((child > 0)) && kill -KILL "$child" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    rmdir "$cg" 2>/dev/null && return
    sleep 0.2
  done
  echo "memory-limit.sh: could not remove $cg" >&2
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "$bytes" >"$cg/memory.limit_in_bytes"
[[ -w $cg/memory.memsw.limit_in_bytes ]] && echo "$bytes" >"$cg/memory.memsw.limit_in_bytes" 2>/dev/null
# The child joins the cgroup before it execs CMD, so everything CMD allocates is charged.
bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' memory-limit "$cg" "$@" &
child=$!
wait "$child"
status=$?
child=0
oom=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control")
echo "memory-limit.sh: limit $size, peak $(numfmt --to=iec "$(cat "$cg/memory.max_usage_in_bytes")"), oom_kill ${oom:-?}, exit $status" >&2
exit "$status"
