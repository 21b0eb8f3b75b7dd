#!/usr/bin/env bash
# upstream_reference.sh REFDIR
# The independent reference for the comparison tests: fetches real genomes and reads from
# Debian example packages (lambda phage and reads from bowtie2-examples, E. coli 536 from
# bowtie-examples), simulates E. coli read pairs with wgsim (fixed seed), makes reads at the
# very ends of the lambda genome, and runs upstream `bwa index` and `bwa mem` on every case
# of lib.sh. The per-placement tests (compare_upstream.sh) compare bwa-mmap against these.
source "$(dirname "$0")/lib.sh"
need bwa wgsim awk
ref=${1:?usage: upstream_reference.sh REFDIR}
rm -rf "$ref"
mkdir -p "$ref/reads"

zcat "$(lambda_fa)" > "$ref/lambda.fa"
cp "$(ecoli_fa)" "$ref/ecoli.fa.gz"
reads=$(lambda_reads)
for f in reads_1.fq.gz reads_2.fq.gz longreads.fq.gz; do ln -s "$reads/$f" "$ref/reads/$f"; done
# Smart pairing input: the two mates of each pair one after the other.
paste -d'\n' <(zcat "$reads/reads_1.fq.gz" | paste - - - -) <(zcat "$reads/reads_2.fq.gz" | paste - - - -) |
  tr '\t' '\n' > "$ref/reads/interleaved.fq"
# Reads at the ends of the genome: the suffix-array walks that reach the text's start.
awk 'NR > 1 { s = s $0 } END {
  n = length(s)
  for (i = 1; i <= 40; i++) for (L = 30; L <= 100; L += 35) {
    r = substr(s, i, L); q = r; gsub(/./, "I", q)
    printf "@start_%d_%d\n%s\n+\n%s\n", i, L, r, q
    r = substr(s, n - L - i + 2, L)
    printf "@end_%d_%d\n%s\n+\n%s\n", i, L, r, q
  }
}' "$ref/lambda.fa" > "$ref/reads/edges.fq"
zcat "$ref/ecoli.fa.gz" > "$ref/ecoli.fa"
wgsim -S 11 -N 15000 -1 100 -2 100 -e 0.01 "$ref/ecoli.fa" "$ref/reads/ecoli_1.fq" "$ref/reads/ecoli_2.fq" > /dev/null
rm "$ref/ecoli.fa"

for c in "${INDEX_CASES[@]}"; do
  read -r -a opts <<< "$(case_field "$c" 3)"
  bwa index "${opts[@]}" -p "$ref/$(case_field "$c" 1)" "$ref/$(case_field "$c" 2)" 2> /dev/null ||
    die "bwa index failed for $c"
done
for c in "${MEM_CASES[@]}"; do
  read -r -a opts <<< "$(case_field "$c" 3)"
  read -r -a files <<< "$(case_field "$c" 4)"
  bwa mem "${opts[@]}" "$ref/$(case_field "$c" 2)" "${files[@]/#/$ref/reads/}" > "$ref/$(case_field "$c" 1).sam" \
    2> /dev/null || die "bwa mem failed for $c"
done
echo "upstream reference: ${#INDEX_CASES[@]} indexes and ${#MEM_CASES[@]} alignments in $ref"
