#!/usr/bin/env bash
# with_memory_limit.sh SIZE_BYTES CMD [ARGS...]
# Runs CMD in a fresh cgroup-v1 memory cgroup limited to SIZE_BYTES (page cache included, as
# the kernel charges it), nested under this process's own memory cgroup, then removes the
# cgroup. Exits with CMD's status (128+signal if killed). On stderr: the cgroup's peak usage
# and whether the OOM killer acted. Exit 77 if memory cgroups v1 are not available (not root,
# or no /sys/fs/cgroup/memory).
# (Stands in for apps/budget's dimmap-budget until that lands.)
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $(basename "$0") SIZE_BYTES CMD [ARGS...]" >&2
  exit 2
fi
limit=$1
shift
root=/sys/fs/cgroup/memory
own=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
if [[ ! -w $root$own || $(id -u) != 0 ]]; then
  echo "with_memory_limit: no writable cgroup-v1 memory controller at $root$own" >&2
  exit 77
fi
cg="$root$own/bwa-mmap-test-$$"
mkdir "$cg" || exit 77
cleanup() {
  # The command's processes are gone once it has exited; rmdir fails while any remain.
  for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cg" 2>/dev/null && return; sleep 0.2; done
  echo "with_memory_limit: could not remove $cg" >&2
}
trap cleanup EXIT
echo 1 > "$cg/memory.use_hierarchy" 2>/dev/null || true
echo "$limit" > "$cg/memory.limit_in_bytes"
# No swap on these machines, but make sure the limit cannot be dodged through it.
echo "$limit" > "$cg/memory.memsw.limit_in_bytes" 2>/dev/null || true
(
  echo "$BASHPID" > "$cg/cgroup.procs"
  exec "$@"
)
status=$?
peak=$(cat "$cg/memory.max_usage_in_bytes")
oom_kills=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control")
echo "with_memory_limit: limit $limit, peak $peak bytes, exit $status, oom_kill ${oom_kills:-?}" >&2
exit $status
