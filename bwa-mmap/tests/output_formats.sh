#!/usr/bin/env bash
# output_formats.sh REFDIR - bwa-mmap mem -o writes SAM, BAM or CRAM by the extension or
# --output-fmt, through htslib. `samtools view` of the BAM equals upstream bwa's SAM (REFDIR,
# made by upstream_reference.sh) in every line but @PG; so does the CRAM's, decoded with the
# reference FASTA, except what CRAM itself adds or moves: M5 and UR on the @SQ lines, and an
# RG tag, which htslib puts last when it decodes a record. A truncated read file still leaves
# no BAM behind; CRAM without a reference FASTA is refused before the index is loaded.
source "$(dirname "$0")/lib.sh"
need samtools diff
ref=${1:?usage: output_formats.sh REFDIR}
[[ -s $ref/lambda_is.sa ]] || die "no upstream reference in $ref (the fixture test did not run?)"
make_workdir
cd "$WORK"
cp "$ref/lambda.fa" lambda.fa
zcat "$ref/ecoli.fa.gz" > ecoli.fa  # CRAM wants a plain or bgzip FASTA

# view FILE FASTA: the records (and header) as SAM, without @PG lines.
view() { samtools view -h --no-PG -T "$2" "$1" | grep -v '^@PG'; }
# cram_view FILE FASTA: view, with the @SQ lines' M5/UR dropped and RG tags moved last.
cram_view() { view "$1" "$2" | sed -E '/^@SQ/s/\t(M5|UR):[^\t]*//g; s/(\tRG:Z:[^\t]*)(\t.*)$/\2\1/'; }
upstream_rg_last() { grep -v '^@PG' "$1" | sed -E 's/(\tRG:Z:[^\t]*)(\t.*)$/\2\1/'; }

for c in "${MEM_CASES[@]}"; do
  name=$(case_field "$c" 1)
  index=$(case_field "$c" 2)
  read -r -a opts <<< "$(case_field "$c" 3)"
  read -r -a files <<< "$(case_field "$c" 4)"
  fa=lambda.fa
  [[ $index == ecoli* ]] && fa=ecoli.fa
  for ext in bam cram; do
    "$BWA_MMAP" mem --placement=memory --memory-dir "$WORK" "${opts[@]}" --reference "$fa" -o "$name.$ext" \
      "$ref/$index" "${files[@]/#/$ref/reads/}" 2> "$name.log" || { tail "$name.log" >&2; die "mem $name -o $name.$ext"; }
    [[ $(samtools view -H "$name.$ext" | grep -c '^@PG.*ID:bwa-mmap') == 1 ]] || die "$name.$ext lacks bwa-mmap's @PG line"
  done
  [[ $(head -c 4 "$name.bam" | od -An -tx1 | tr -d ' \n') == 1f8b0804 ]] || die "$name.bam is not BGZF"
  [[ $(head -c 4 "$name.cram") == CRAM ]] || die "$name.cram is not CRAM"
  diff <(grep -v '^@PG' "$ref/$name.sam") <(view "$name.bam" "$fa") > diff.txt ||
    { head -4 diff.txt >&2; die "$name.bam differs from upstream bwa's SAM ($(wc -l < diff.txt) diff lines)"; }
  diff <(upstream_rg_last "$ref/$name.sam") <(cram_view "$name.cram" "$fa") > diff.txt ||
    { head -4 diff.txt >&2; die "$name.cram differs from upstream bwa's SAM ($(wc -l < diff.txt) diff lines)"; }
  echo "mem $name: BAM and CRAM hold upstream's $(grep -vc '^@' "$ref/$name.sam") records"
done

# --output-fmt beats the extension, and writes to standard output too.
"$BWA_MMAP" mem --output-fmt bam -o pe.sam "$ref/lambda_is" "$ref/reads/reads_1.fq.gz" 2> /dev/null
[[ $(head -c 4 pe.sam | od -An -tx1 | tr -d ' \n') == 1f8b0804 ]] || die "--output-fmt bam -o pe.sam wrote no BAM"
"$BWA_MMAP" mem --output-fmt BAM "$ref/lambda_is" "$ref/reads/reads_1.fq.gz" 2> /dev/null > stdout.bam
cmp -s <(samtools view stdout.bam) <(samtools view pe.sam) || die "BAM on standard output differs"
"$BWA_MMAP" mem --output-fmt sam -o sam.bam "$ref/lambda_is" "$ref/reads/reads_1.fq.gz" 2> /dev/null
[[ $(head -c 3 sam.bam) == "@SQ" ]] || die "--output-fmt sam -o sam.bam wrote no SAM"
echo "--output-fmt: bam to a .sam name and to standard output, sam to a .bam name"

# CRAM's reference: the index prefix when it is the FASTA; else --reference is needed, and a
# missing one is refused before the index loads, with no file left.
"$BWA_MMAP" index lambda.fa 2> /dev/null
"$BWA_MMAP" mem -o own.cram lambda.fa "$ref/reads/reads_1.fq.gz" 2> /dev/null || die "CRAM with the index prefix as reference"
cmp -s <(samtools view -T lambda.fa own.cram | cut -f1-11) <(samtools view pe.sam | cut -f1-11) ||
  die "own.cram holds other records than pe.sam"
status=0
"$BWA_MMAP" mem -o no.cram "$ref/lambda_is" "$ref/reads/reads_1.fq.gz" 2> err.txt || status=$?
[[ $status == 1 ]] && grep -q -- "--reference" err.txt || { cat err.txt >&2; die "CRAM without a reference: status $status"; }
! grep -q "mapped in" err.txt || die "CRAM without a reference: the index was loaded first"
[[ ! -e no.cram && -z $(find . -name '*bwa-mmap-tmp*') ]] || die "CRAM without a reference left a file"
echo "CRAM: the index's FASTA as reference; without one: $(tail -1 err.txt)"

# A truncated read file: refused, no BAM and no temporary left (reads_watch.cpp).
zcat "$ref/reads/reads_1.fq.gz" > whole.fq
head -c 100000 whole.fq > cut.fq
status=0
"$BWA_MMAP" mem -o cut.bam "$ref/lambda_is" cut.fq 2> err.txt || status=$?
[[ $status == 1 ]] && grep -qF "'cut.fq'" err.txt && grep -q "no BAM file written" err.txt ||
  { cat err.txt >&2; die "truncated reads with BAM output: status $status"; }
[[ ! -e cut.bam && -z $(find . -name '*bwa-mmap-tmp*') ]] || die "truncated reads left a BAM file"
echo "truncated reads: $(tail -1 err.txt)"
echo "${#MEM_CASES[@]} alignments as BAM and CRAM identical to upstream bwa's SAM"
