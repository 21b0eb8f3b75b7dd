# bench-wrapper.sh - sourced by the per-application bench scripts whose measurements are
# dimmap-compare experiments (graph/bench/bfs-bench, bwa-mmap/bench/bench.sh,
# apps/microbench/bench/run-microbench): they keep their names and options, and run the
# experiments through the harness, so that there is one way to budget, run and report them.
#
# A script sets bench_name, translates its own options into compare_args (the options it
# does not know go through unchanged: --repeat, --seconds, --smoke, ...), then calls
# compare_exec EXPERIMENT..., which replaces the shell with dimmap-compare.

compare_args=()
compare_build_dir=""  # a build tree given on the command line (--build-dir and the like)

# compare_refuse OPTION WHY: an option of the old script that the harness has no counterpart for.
compare_refuse() {
  echo "$bench_name: $1 has no counterpart in dimmap-compare ($2)" >&2
  exit 2
}

# compare_exec EXPERIMENT...: dimmap-compare EXPERIMENT... "${compare_args[@]}" from the build
# tree (--build-dir, $DIMMAP_BUILD_DIR, build/release, build/ci), else from PATH.
compare_exec() {
  local root build candidates
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  if [[ -n $compare_build_dir ]]; then
    candidates=("$compare_build_dir")
  else
    candidates=(${DIMMAP_BUILD_DIR:+"$DIMMAP_BUILD_DIR"} "$root/build/release" "$root/build/ci")
  fi
  for build in "${candidates[@]}"; do
    if [[ -x $build/apps/compare/dimmap-compare ]]; then
      exec "$build/apps/compare/dimmap-compare" "$@" --build-dir="$build" "${compare_args[@]}"
    fi
  done
  if [[ -z $compare_build_dir ]] && command -v dimmap-compare >/dev/null; then
    exec dimmap-compare "$@" "${compare_args[@]}"
  fi
  echo "$bench_name: no dimmap-compare in ${candidates[*]} (configure and build: cmake --preset release)" >&2
  exit 2
}
