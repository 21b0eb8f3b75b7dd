#!/usr/bin/env bash
# in_cgroup.sh DIMMAP_BUDGET MEMORY CMD [ARGS...]
# Runs CMD in a memory cgroup of MEMORY bytes (dimmap-budget) and exits with its status; skips
# (77) where dimmap-budget is not built or cannot make a cgroup.
set -u
budget=$1 memory=$2
shift 2
[[ -x $budget ]] || { echo "skip: $budget is not built" >&2; exit 77; }
"$budget" --memory=64M --quiet -- true 2>/dev/null || { echo "skip: no memory cgroup can be made here" >&2; exit 77; }
exec "$budget" --memory="$memory" -- "$@"
