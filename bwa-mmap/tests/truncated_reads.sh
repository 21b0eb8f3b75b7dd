#!/usr/bin/env bash
# truncated_reads.sh - bwa-mmap mem refuses a read file cut anywhere inside a record: FASTQ
# and FASTA cut at every byte of their last two records, gzip streams cut short, and a read
# pair whose second file lost its last record. Each refusal names the file, exits 1, and
# leaves neither a SAM file nor a temporary.
source "$(dirname "$0")/lib.sh"
make_workdir
cd "$WORK"

# The 20K-base genome of bad_input.sh, and four 70-base reads from it.
"$PY" "$TESTS/make_genome.py" --length 20K --seed 3 --out ref.fa
"$BWA_MMAP" index ref.fa 2> index.log || { cat index.log >&2; die "index failed"; }
"$PY" - << 'PY'
seq = "".join(l.strip() for l in open("ref.fa") if not l.startswith(">"))
with open("reads.fq", "w") as fq, open("reads.fa", "w") as fa:
    for i in range(4):
        s = seq[1000 + 4000 * i: 1070 + 4000 * i]
        fq.write(f"@read{i + 1} sample\n{s}\n+\n{'I' * 70}\n")
        fa.write(f">read{i + 1} sample\n{s}\n")
PY

# The whole files align: 4 SAM records each.
for f in reads.fq reads.fa; do
  "$BWA_MMAP" mem -o whole.sam ref.fa "$f" 2> err.txt || { cat err.txt >&2; die "mem refused the whole $f"; }
  [[ $(grep -vc '^@' whole.sam) == 4 ]] || die "$f: expected 4 SAM records"
done

refusals=0
# expect_refusal FILE [MORE ARGS]: mem must exit 1 naming FILE and a record, leaving nothing.
expect_refusal() {
  local file=$1 status=0
  shift
  "$BWA_MMAP" mem -o out.sam ref.fa "$file" "$@" > /dev/null 2> err.txt || status=$?
  [[ $status == 1 ]] || { cat err.txt >&2; die "$file ($(wc -c < "$file") bytes): exit status $status, not 1"; }
  grep -qF -- "'$file'" err.txt || { cat err.txt >&2; die "$file: the message does not name the file"; }
  grep -q "record\|holds [0-9]* reads" err.txt || { cat err.txt >&2; die "$file: the message names no record"; }
  [[ ! -e out.sam ]] || die "$file: left out.sam behind"
  [[ -z $(find . -name '*bwa-mmap-tmp*') ]] || die "$file: left a temporary file"
  refusals=$((refusals + 1))
}

for f in reads.fq reads.fa; do
  mapfile -t cuts < <("$SRC/datasets/truncated-copies" "$f" "cuts-${f##*.}")
  ((${#cuts[@]} > 100)) || die "$f: only ${#cuts[@]} truncated copies"
  for cut in "${cuts[@]}"; do expect_refusal "$cut"; done
done
# The messages for cuts in the last record (158 bytes of FASTQ from byte 474, 85 of FASTA
# from 255): inside the header, after it, inside the sequence, after '+', inside the quality,
# before the final newline.
for cut in cuts-fq/cut-{476,488,520,561,600,631}.fq cuts-fa/cut-{256,269,300,339}.fa; do
  expect_refusal "$cut"
  echo "  $(tail -1 err.txt)"
done

# gzip: 40 reads compressed, the stream cut at several points (the trailer included).
for i in $(seq 10); do cat reads.fq; done | gzip -c > reads.fq.gz
size=$(stat -c %s reads.fq.gz)
for cut in $((size / 4)) $((size / 2)) $((size - 9)) $((size - 1)); do
  head -c "$cut" reads.fq.gz > "cut-$cut.fq.gz"
  expect_refusal "cut-$cut.fq.gz"
done

# A pair whose second file lost its last record (at a record boundary: a valid file alone).
head -n 12 reads.fq > mate2.fq
expect_refusal reads.fq mate2.fq
grep -qF "'reads.fq' holds 4 reads but 'mate2.fq' 3" err.txt || { cat err.txt >&2; die "uneven pair: wrong message"; }

echo "truncated reads: $refusals refusals, each naming the file and the record, nothing left behind"
