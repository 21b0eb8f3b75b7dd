#!/usr/bin/env bash
# read_formats.sh - kmer classify reads the same reads alike from every format htslib gives:
# FASTQ plain, gzip and bgzip, FASTA, SAM, unaligned BAM and CRAM (samtools import), aligned
# and sorted BAM and CRAM (bwa mem | samtools sort; the CRAM decoded with --reference), under
# other batch sizes and threads too; pairs from two files, interleaved FASTQ and an unaligned
# paired BAM agree. Truncated and corrupt BAM/CRAM files, mismatched mates and a CRAM without
# its reference are refused, naming the file, with nothing left behind.
set -euo pipefail
KMER="${KMER:-$DIMMAP_BUILD_DIR/kmer/kmer}"
work="$(mktemp -d "${DIMMAP_TEST_DIR:-/var/tmp}/kmer-formats.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/two_species_taxonomy.sh"
pass=0
ok() { pass=$((pass + 1)); echo "ok $pass - $*"; }
for tool in samtools bwa; do command -v $tool > /dev/null || fail "$tool is needed (Debian: apt-get install $tool)"; done
cd "$work"

# Two 30 kb genomes under a four-node taxonomy; 600 reads of 100 bases from both, a third of
# them reverse complemented, a few with N and lower case; and pairs (the two ends of 250-base
# fragments, mate 2 reverse complemented) named p<i>/1 and p<i>/2.
two_species_taxonomy tax
python3 - << 'PY'
import random
rng = random.Random(11)
comp = str.maketrans("ACGTNacgtn", "TGCANtgcan")
rc = lambda s: s.translate(comp)[::-1]
genomes = {name: "".join(rng.choice("ACGT") for _ in range(30000)) for name in ("a", "b")}
for name, seq in genomes.items():
    with open(f"{name}.fa", "w") as f:
        f.write(f">{name}\n" + "".join(seq[i:i + 60] + "\n" for i in range(0, len(seq), 60)))
def mutate(s):
    s = list(s)
    for _ in range(rng.randrange(3)):
        s[rng.randrange(len(s))] = rng.choice("ACGTN")
    return "".join(s)
with open("reads.fq", "w") as fq, open("reads.fa", "w") as fa:
    for i in range(600):
        g = genomes["ab"[i % 2]]
        p = rng.randrange(len(g) - 100)
        s = mutate(g[p:p + 100])
        if i % 3 == 0: s = rc(s)
        if i % 50 == 0: s = s[:40].lower() + s[40:]
        if i % 7 == 0: s = "".join(rng.choice("ACGT") for _ in range(100))  # unclassified
        q = "".join(chr(33 + rng.randrange(10, 40)) for _ in s)
        fq.write(f"@r{i} sample x\n{s}\n+\n{q}\n")
        fa.write(f">r{i} sample x\n{s}\n")
with open("r1.fq", "w") as r1, open("r2.fq", "w") as r2, open("pairs.fq", "w") as il:
    for i in range(300):
        g = genomes["ab"[i % 2]]
        p = rng.randrange(len(g) - 250)
        m1, m2 = mutate(g[p:p + 100]), rc(mutate(g[p + 150:p + 250]))
        r1.write(f"@p{i}/1\n{m1}\n+\n{'I' * 100}\n")
        r2.write(f"@p{i}/2\n{m2}\n+\n{'I' * 100}\n")
        il.write(f"@p{i}/1\n{m1}\n+\n{'I' * 100}\n@p{i}/2\n{m2}\n+\n{'I' * 100}\n")
PY
printf '%s\t100\n%s\t200\n' "$work/a.fa" "$work/b.fa" > genomes.tsv
"$KMER" build --k 18 --taxonomy tax --genomes genomes.tsv --out ref.db --quiet 2> build.log ||
  { cat build.log >&2; fail "kmer build"; }
cat a.fa b.fa > ref.fa
samtools faidx ref.fa

# The same reads in every format. samtools import upper-cases the bases (classification
# ignores case) and keeps the name up to the first blank, as kmer does.
gzip -c reads.fq > reads.fq.gz
samtools import -0 reads.fq -o reads.bam 2> /dev/null
samtools view -h -o reads.sam reads.bam
samtools view -C -o reads.cram reads.bam
samtools fastq -0 reads.bgzf.fq.gz reads.bam 2> /dev/null  # BGZF-compressed FASTQ
[[ $(head -c 16 reads.bgzf.fq.gz | od -An -tx1 | tr -d ' \n') == 1f8b0804*4243* ]] || fail "samtools fastq wrote no BGZF"
bwa index ref.fa 2> /dev/null
bwa mem ref.fa reads.fq 2> /dev/null | samtools sort -o aligned.bam - 2> /dev/null
samtools view -C -T ref.fa -o aligned.cram aligned.bam
(($(samtools view -c -f 16 aligned.bam) > 100)) || fail "too few reverse-strand alignments to test"

classify() {  # classify OUT READS [options...]
  local out="$1" reads="$2"
  shift 2
  "$KMER" classify --db ref.db --reads "$reads" --out "$out" --quiet "$@" > /dev/null 2> err.txt ||
    { cat err.txt >&2; fail "classify $reads $*"; }
}
classify fq reads.fq
(($(awk -F'\t' 'NR > 1 && $2 != 0' fq.tsv | wc -l) > 400)) || fail "too few reads classified: the test proves little"
for f in reads.fq.gz reads.bgzf.fq.gz reads.fa reads.sam reads.bam reads.cram; do
  classify out "$f"
  cmp -s out.tsv fq.tsv && cmp -s out.kreport fq.kreport || fail "$f classifies differently from reads.fq"
  ok "$f: same output as FASTQ"
done
classify out reads.bam --threads 1 --batch 7 --lookup-batch 1000
cmp -s out.tsv fq.tsv || fail "BAM with small batches differs"
classify out reads.cram --threads 2 --batch 100
cmp -s out.tsv fq.tsv || fail "CRAM with 2 threads differs"
ok "BAM and CRAM: same output across batch sizes and threads"
# Aligned, coordinate-sorted: same classifications, in another order.
for f in aligned.bam aligned.cram; do
  classify out "$f" --reference ref.fa
  cmp -s <(tail -n +2 out.tsv | sort) <(tail -n +2 fq.tsv | sort) && cmp -s out.kreport fq.kreport ||
    fail "$f classifies differently from reads.fq"
  ok "$f (aligned, sorted, reverse strands turned back): same classifications"
done

# Pairs: two files, interleaved FASTQ, an unaligned paired BAM and gzip mates agree.
samtools import -1 r1.fq -2 r2.fq -o pairs.bam 2> /dev/null
gzip -c r2.fq > r2.fq.gz
classify pairs r1.fq --mates r2.fq
[[ $(wc -l < pairs.tsv) == 301 && $(sed -n 2p pairs.tsv | cut -f1) == p0 ]] || fail "pairs: $(head -3 pairs.tsv)"
for args in "r1.fq --mates r2.fq.gz" "pairs.fq --interleaved" "pairs.bam --interleaved"; do
  classify out $args
  cmp -s out.tsv pairs.tsv || fail "pairs from $args differ from r1.fq + r2.fq"
done
# A pair's classification rests on both mates: more pairs classified than mates 1 alone.
classify mate1 r1.fq
((\
  $(awk -F'\t' 'NR > 1 && $3 == "1.0000"' pairs.tsv | wc -l) > 0 &&
  $(awk -F'\t' 'NR > 1 && $2 != 0' pairs.tsv | wc -l) >= $(awk -F'\t' 'NR > 1 && $2 != 0' mate1.tsv | wc -l))) ||
  fail "pairs classify worse than single mates"
ok "pairs: two files, gzip mate file, interleaved FASTQ and paired BAM agree"

# expect_refusal WHAT REGEX READS [options...]: non-zero exit, the file and REGEX in the
# message, no output left.
expect_refusal() {
  local what="$1" needle="$2" reads="$3"
  shift 3
  local status=0
  "$KMER" classify --db ref.db --reads "$reads" --out bad --quiet "$@" > /dev/null 2> err.txt || status=$?
  ((status != 0 && status < 128)) || { cat err.txt >&2; fail "$what: exit status $status"; }
  grep -qF -- "$reads" err.txt || { cat err.txt >&2; fail "$what: the message does not name $reads"; }
  grep -qE -- "$needle" err.txt || { cat err.txt >&2; fail "$what: the message lacks '$needle'"; }
  [[ -z $(ls | grep '^bad\.') ]] || fail "$what: left $(ls | grep '^bad\.')"
}
head -n 400 r2.fq > r2.short.fq
expect_refusal "a short mate file" "no mate for its record 'p100/1'" r1.fq --mates r2.short.fq
expect_refusal "unpaired reads as interleaved" "is not the mate of 'r0'" reads.fq --interleaved
# Cut BAM and CRAM files: every 419th byte, and at each BGZF block end of the BAM (a cut
# there decompresses cleanly: only the missing end-of-file marker tells).
size=$(stat -c %s reads.bam)
cuts=()
for ((n = 1; n < size; n += 419)); do cuts+=("$n"); done
cuts+=($(python3 -c "
import struct, sys
data, pos = open('reads.bam', 'rb').read(), 0
while pos < len(data) - 28:
    pos += struct.unpack('<H', data[pos + 16:pos + 18])[0] + 1
    print(pos)"))
for n in "${cuts[@]}"; do
  head -c "$n" reads.bam > cut.bam
  expect_refusal "BAM cut at $n of $size bytes" "truncated|cut short" cut.bam
done
echo "  e.g. $(cat err.txt)"
ok "BAM cut at ${#cuts[@]} places: each refused, naming the file"
size=$(stat -c %s reads.cram)
for ((n = 1; n < size; n += 331)); do
  head -c "$n" reads.cram > cut.cram
  expect_refusal "CRAM cut at $n of $size bytes" "" cut.cram
done
ok "CRAM cut every 331 bytes: each refused, naming the file"
# A corrupt last BGZF block (before the 28-byte end-of-file block): its CRC check fails.
python3 -c "
data = bytearray(open('reads.bam', 'rb').read())
for i in range(len(data) - 200, len(data) - 136): data[i] ^= 0x5a
open('corrupt.bam', 'wb').write(data)"
expect_refusal "corrupt BAM" "corrupt or truncated data after record" corrupt.bam
echo "  e.g. $(cat err.txt | tail -1)"
ok "corrupt BAM refused, naming the file and the last good record"
expect_refusal "aligned CRAM without its reference" "reference" aligned.cram --reference missing.fa
ok "aligned CRAM with a missing reference refused"
echo "read formats: $pass checks passed"
