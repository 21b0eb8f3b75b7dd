#!/usr/bin/env bash
# mpirun -np 2 kmer classify splits the reads across ranks; the merged PREFIX.tsv and
# PREFIX.kreport must equal the single-process run's, byte for byte.
set -euo pipefail
KMER="${KMER:-$DIMMAP_BUILD_DIR/kmer/kmer}"
SRC="${DIMMAP_SOURCE_DIR:?}"
CACHE="${DIMMAP_DATA_CACHE:-$HOME/.cache/dimmap}"
command -v mpirun >/dev/null || { echo "mpirun not installed (Debian openmpi-bin)"; exit 77; }
work="$(mktemp -d "${DIMMAP_TEST_DIR:-/var/tmp}/kmer-mpi.XXXXXX")"
trap 'rm -rf "$work"' EXIT
list="$("$SRC/datasets/fetch-genomes" "$CACHE/kmer-ci" --set ci 2>/dev/null)"
"$SRC/datasets/simulate-reads" --genomes "$list" --reads 2500 --out "$work/reads" --seed 5 2>/dev/null
"$KMER" build --taxonomy "$CACHE/kmer-ci/taxonomy" --genomes "$list" --out "$work/db" --quiet 2>/dev/null
"$KMER" classify --db "$work/db" --reads "$work/reads.fq" --out "$work/one" --threads 1 --quiet >/dev/null
root=()
[[ $(id -u) -eq 0 ]] && root=(--allow-run-as-root)
for np in 2 3; do
  # Batches of 300 reads go round robin, so every rank gets several and the last is partial;
  # with 3 ranks, sorted lookup batches of 7000 k-mers (~84 reads) end inside the batches.
  lookup=()
  [[ $np -eq 3 ]] && lookup=(--lookup-batch 7000)
  mpirun "${root[@]}" --oversubscribe -np "$np" "$KMER" classify --db "$work/db" --reads "$work/reads.fq" \
    --out "$work/mpi$np" --threads 1 --batch 300 "${lookup[@]}" --quiet >"$work/mpi$np.txt"
  cmp "$work/one.tsv" "$work/mpi$np.tsv" || { echo "FAIL: tsv differs with $np ranks"; exit 1; }
  cmp "$work/one.kreport" "$work/mpi$np.kreport" || { echo "FAIL: kreport differs with $np ranks"; exit 1; }
  grep -q "^reads	2500" "$work/mpi$np.txt" || { echo "FAIL: summary"; cat "$work/mpi$np.txt"; exit 1; }
  grep -q "^ranks	$np" "$work/mpi$np.txt" || { echo "FAIL: did not run as $np ranks"; cat "$work/mpi$np.txt"; exit 1; }
  [[ -z "$(ls "$work" | grep rank || true)" ]] || { echo "FAIL: rank files left"; exit 1; }
  echo "ok - $np ranks equal 1 process"
done
echo "2 passed, 0 failed"
