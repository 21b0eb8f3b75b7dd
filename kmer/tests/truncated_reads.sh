#!/usr/bin/env bash
# truncated_reads.sh - kmer classify refuses a read file cut anywhere inside a record: FASTQ
# and FASTA cut at every byte of their last two records. Each refusal exits non-zero, names
# the file and the record, and leaves no .tsv or .kreport behind.
set -euo pipefail
KMER="${KMER:-$DIMMAP_BUILD_DIR/kmer/kmer}"
SRC="${DIMMAP_SOURCE_DIR:?}"
work="$(mktemp -d "${DIMMAP_TEST_DIR:-/var/tmp}/kmer-truncated.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/two_species_taxonomy.sh"
cd "$work"

# A two-genome reference under a four-node taxonomy, and four 70-base reads from genome A.
two_species_taxonomy tax
python3 - << 'PY'
import random
rng = random.Random(7)
genomes = {name: "".join(rng.choice("ACGT") for _ in range(20000)) for name in ("a", "b")}
for name, seq in genomes.items():
    with open(f"{name}.fa", "w") as f:
        f.write(f">{name}\n" + "".join(seq[i:i + 60] + "\n" for i in range(0, len(seq), 60)))
with open("reads.fq", "w") as fq, open("reads.fa", "w") as fa:
    for i in range(4):
        s = genomes["a"][1000 + 4000 * i: 1070 + 4000 * i]
        fq.write(f"@read{i + 1} sample\n{s}\n+\n{'I' * 70}\n")
        fa.write(f">read{i + 1} sample\n{s}\n")
PY
printf '%s\t100\n%s\t200\n' "$work/a.fa" "$work/b.fa" > genomes.tsv
"$KMER" build --k 18 --taxonomy tax --genomes genomes.tsv --out ref.db --quiet 2> build.log ||
  { cat build.log >&2; fail "kmer build"; }

# The whole files classify all four reads as Alpha.
for f in reads.fq reads.fa; do
  "$KMER" classify --db ref.db --reads "$f" --out whole --quiet > /dev/null 2> err.txt || { cat err.txt >&2; fail "whole $f refused"; }
  [[ $(awk -F'\t' 'NR > 1 && $2 == 100' whole.tsv | wc -l) == 4 ]] || fail "$f: not 4 reads of taxon 100: $(cat whole.tsv)"
done

refusals=0
for f in reads.fq reads.fa; do
  mapfile -t cuts < <("$SRC/datasets/truncated-copies" "$f" "cuts-${f##*.}")
  ((${#cuts[@]} > 100)) || fail "$f: only ${#cuts[@]} truncated copies"
  for cut in "${cuts[@]}"; do
    status=0
    "$KMER" classify --db ref.db --reads "$cut" --out out --quiet > /dev/null 2> err.txt || status=$?
    ((status != 0 && status < 128)) || { cat err.txt >&2; fail "$cut: exit status $status"; }
    grep -qF -- "$cut" err.txt || { cat err.txt >&2; fail "$cut: the message does not name the file"; }
    grep -q "record '\|quality" err.txt || { cat err.txt >&2; fail "$cut: the message names no record"; }
    [[ -z $(ls | grep '^out\.') ]] || fail "$cut: left $(ls | grep '^out\.')"
    refusals=$((refusals + 1))
  done
  echo "  e.g. $(cat err.txt)"
done
echo "truncated reads: $refusals refusals by kmer classify, each naming the file, nothing left behind"
