#!/usr/bin/env bash
# bad_input.sh - every kind of bad input gets a clear message naming the file, a non-zero
# exit, and leaves no output that looks complete (and no temporary files).
source "$(dirname "$0")/lib.sh"
need bwa
make_workdir
cd "$WORK"

checks=0
# expect_failure "WORDS" CMD... : CMD must fail, and its stderr must contain WORDS.
expect_failure() {
  local words=$1
  shift
  local status=0
  "$@" > out.txt 2> err.txt || status=$?
  [[ $status != 0 ]] || die "succeeded on bad input: $*"
  ((status < 128)) || die "crashed (status $status) on bad input: $*"
  grep -qF -- "$words" err.txt || { cat err.txt >&2; die "message lacks '$words': $*"; }
  checks=$((checks + 1))
}
no_index() {  # no file with a final index name for prefix $1, no temporary file at all
  local s
  for s in amb ann bwt pac sa; do [[ ! -e $1.$s ]] || die "left $1.$s behind"; done
  [[ -z $(find . -name '*bwa-mmap-tmp*') ]] || die "left temporary files: $(find . -name '*bwa-mmap-tmp*')"
}

# ---- index: bad FASTA ----
expect_failure "missing.fa" "$BWA_MMAP" index missing.fa
no_index missing.fa
: > empty.fa
expect_failure "is empty" "$BWA_MMAP" index empty.fa
no_index empty.fa
printf '>one\n>two\n\n' > headers.fa
expect_failure "no sequence" "$BWA_MMAP" index headers.fa
no_index headers.fa
printf 'id,sequence\n1,ACGT\n' > table.fa
expect_failure "not a FASTA file" "$BWA_MMAP" index table.fa
no_index table.fa
printf '\x1f\x8b\x08\x00garbage' > broken.fa.gz
expect_failure "broken.fa.gz" "$BWA_MMAP" index broken.fa.gz
no_index broken.fa.gz
printf '>x\nACGTACGTAC\n' > ok.fa
expect_failure "nonexistent-dir" "$BWA_MMAP" index -p nonexistent-dir/idx ok.fa
expect_failure "semi-external" "$BWA_MMAP" index --placement=semi-external ok.fa
expect_failure "-a" "$BWA_MMAP" index -a fast ok.fa
no_index ok.fa

# An index that fails midway (the scratch directory cannot hold the arrays) leaves nothing.
expect_failure "cannot place" "$BWA_MMAP" index --placement=mmap --storage=/nonexistent --min-alloc=4K -p half ok.fa
no_index half

# An interrupted index (SIGTERM) leaves neither final nor temporary files.
"$PY" "$TESTS/make_genome.py" --length 3M --seed 2 --out big.fa
"$BWA_MMAP" index --placement=mmap --min-alloc=4K -a is -p interrupted big.fa 2> interrupted.log &
pid=$!
for _ in $(seq 50); do [[ -e interrupted.bwa-mmap-tmp.$pid.pac ]] && break; sleep 0.1; done
kill -TERM "$pid" 2> /dev/null && interrupted=1 || interrupted=0
wait "$pid" && status=0 || status=$?
if [[ $interrupted == 1 && $status != 0 ]]; then
  no_index interrupted
  checks=$((checks + 1))
fi

# ---- mem: bad reads and bad indexes ----
"$PY" "$TESTS/make_genome.py" --length 20K --seed 3 --out ref.fa
bwa index ref.fa 2> /dev/null
printf '@r1\nACGTACGTACGTACGTACGTAACC\n+\nIIIIIIIIIIIIIIIIIIIIIIII\n' > good.fq
expect_failure "missing.fq" "$BWA_MMAP" mem ref.fa missing.fq
expect_failure "not a FASTQ or FASTA" "$BWA_MMAP" mem ref.fa ref.fa.sa
printf 'read\tACGT\n' > table.txt
expect_failure "table.txt" "$BWA_MMAP" mem ref.fa good.fq table.txt
# A FASTQ whose last record lost the end of its quality line: fail, and no SAM file.
{
  cat good.fq
  printf '@r2\nACGTACGTACGTACGTACGTAACC\n+\nIIII'
} > truncated.fq
expect_failure "truncated" "$BWA_MMAP" mem -o out.sam ref.fa truncated.fq
[[ ! -e out.sam ]] || die "left out.sam behind after a truncated FASTQ"
expect_failure "-O" "$BWA_MMAP" mem -O 1,2,3 ref.fa good.fq

for s in amb ann bwt pac sa; do
  cp ref.fa.$s saved.$s
done
restore() { for s in amb ann bwt pac sa; do cp saved.$s ref.fa.$s; done; }
rm ref.fa.sa
expect_failure "ref.fa.sa': missing" "$BWA_MMAP" mem -o out.sam ref.fa good.fq
restore
truncate -s -8 ref.fa.bwt
expect_failure "ref.fa.bwt" "$BWA_MMAP" mem -o out.sam ref.fa good.fq
restore
truncate -s -1 ref.fa.sa
expect_failure "ref.fa.sa" "$BWA_MMAP" mem ref.fa good.fq
restore
: > ref.fa.ann
expect_failure "ref.fa.ann': empty" "$BWA_MMAP" mem ref.fa good.fq
restore
head -c 20 saved.ann > ref.fa.ann
expect_failure "ref.fa.ann" "$BWA_MMAP" mem ref.fa good.fq
restore
expect_failure "nothing.amb" "$BWA_MMAP" mem nothing good.fq
[[ ! -e out.sam ]] || die "left out.sam behind after a bad index"
[[ -z $(find . -name '*bwa-mmap-tmp*') ]] || die "left temporary files"

# The good case still works after all that: an empty read file gives a header-only SAM.
: > empty.fq
"$BWA_MMAP" mem -o empty.sam ref.fa empty.fq 2> err.txt || die "mem failed on an empty read file"
[[ $(grep -vc '^@' empty.sam) == 0 && $(grep -c '^@SQ' empty.sam) == 1 ]] || die "empty reads: bad SAM"
echo "bad input: $checks refusals, each naming the file; nothing half-written left behind"
