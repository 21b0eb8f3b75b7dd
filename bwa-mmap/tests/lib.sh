# lib.sh - shared helpers for bwa-mmap's test and benchmark scripts (source it).
#
# Environment (set by CTest through dimmap_add_script_test):
#   DIMMAP_BUILD_DIR   the build tree (bwa-mmap binary at bwa-mmap/bwa-mmap, dimmap-budget at
#                      apps/budget/dimmap-budget)
#   DIMMAP_SOURCE_DIR  the source tree (datasets/debian-example, bwa-mmap/tests/...)
set -euo pipefail

SRC=${DIMMAP_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${DIMMAP_BUILD_DIR:-$SRC/build/ci}
BWA_MMAP=${BWA_MMAP:-$BUILD/bwa-mmap/bwa-mmap}
BUDGET=${DIMMAP_BUDGET:-$BUILD/apps/budget/dimmap-budget}
TESTS=$SRC/bwa-mmap/tests
PY=/usr/bin/python3  # Debian's, which has numpy (a pyenv python on PATH may not)

die() {
  echo "FAIL: $*" >&2
  exit 1
}

need() {
  for tool in "$@"; do
    command -v "$tool" > /dev/null || die "'$tool' is not installed (see scripts/packages.txt)"
  done
  [[ -x $BWA_MMAP ]] || die "bwa-mmap is not built at $BWA_MMAP"
}

# fetch_example PACKAGE -> prints the unpacked directory of a Debian example package.
fetch_example() {
  "$SRC/datasets/debian-example" "$1" || die "cannot fetch Debian package $1"
}

# The real genomes and reads the tests use, unpacked once per data cache.
lambda_fa() { echo "$(fetch_example bowtie2-examples)/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz"; }
lambda_reads() { echo "$(fetch_example bowtie2-examples)/usr/share/doc/bowtie2/examples/reads"; }
ecoli_fa() { echo "$(fetch_example bowtie-examples)/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz"; }

# same_index REF_PREFIX TEST_PREFIX: the five files byte for byte.
same_index() {
  local s
  for s in amb ann bwt pac sa; do
    cmp "$1.$s" "$2.$s" || die "$2.$s differs from upstream bwa's $1.$s"
  done
}

# same_sam REF.sam TEST.sam: identical except the @PG line.
same_sam() {
  [[ -s $2 ]] || die "$2 is missing or empty"
  if ! diff <(grep -v '^@PG' "$1") <(grep -v '^@PG' "$2") > "$2.diff"; then
    head -5 "$2.diff" >&2
    die "$2 differs from upstream bwa's $1 ($(wc -l < "$2.diff") diff lines)"
  fi
  rm -f "$2.diff"
  [[ $(grep -c '^@PG.*ID:bwa-mmap' "$2") == 1 ]] || die "$2 lacks bwa-mmap's @PG line"
}

# A scratch directory on real disk (the build tree), removed on exit.
make_workdir() {
  WORK=$(mktemp -d "$BUILD/bwa-mmap/tests/work.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
}

# The comparison cases, shared by the reference builder and the per-placement checks.
# Index cases: name|FASTA (in the reference dir)|bwa index options|DI-MMAP buffer
INDEX_CASES=(
  "lambda_is|lambda.fa|-a is|256K"
  "lambda_bwtsw|lambda.fa|-a bwtsw|256K"
  "lambda_rb2|lambda.fa|-a rb2|256K"
  "ecoli_auto|ecoli.fa.gz||64M"
  "ecoli_bwtsw|ecoli.fa.gz|-a bwtsw -b 2M|32M"
)
# Mem cases: name|index|bwa mem options (no spaces inside one option)|reads|DI-MMAP buffer
# (lambda's index is 84K, so 64K evicts; E. coli's is 8.6M: at 8M a few pages are evicted
# and re-read, while a buffer of half the index makes every seed lookup a fault, ~100x slower)
MEM_CASES=(
  "lambda_pe|lambda_is||reads_1.fq.gz reads_2.fq.gz|64K"
  "lambda_batches|lambda_is|-t 2 -K 300000|reads_1.fq.gz|64K"
  "lambda_long|lambda_is|-x pacbio -t 2|longreads.fq.gz|64K"
  "lambda_edges|lambda_is|-a -M -Y -C|edges.fq|64K"
  "lambda_smart|lambda_rb2|-p -R @RG\tID:g1\tSM:s1 -H @CO\tbwa-mmap-test|interleaved.fq|64K"
  "ecoli_pe|ecoli_auto|-t 2|ecoli_1.fq ecoli_2.fq|8M"
  "ecoli_options|ecoli_bwtsw|-I 250,25 -5 -q -V -A 2 -O 5,7 -h 3,9|ecoli_1.fq ecoli_2.fq|8M"
)

# case_field "a|b|c" N -> the Nth field (1-based)
case_field() { cut -d'|' -f"$2" <<< "$1"; }

# with_memory_limit BYTES CMD...: CMD in a fresh memory cgroup of BYTES (page cache included),
# through dimmap-budget, which prints the peak and any OOM kill on stderr and exits with CMD's
# status (137 after an OOM kill).
with_memory_limit() {
  local limit=$1
  shift
  "$BUDGET" --memory="$limit" -- "$@"
}

# need_memory_cgroup: skip (exit 77) where no memory cgroup can be made here (not root, no
# memory controller) or dimmap-budget is not built (DIMMAP_WITH_APPS=OFF).
need_memory_cgroup() {
  if [[ ! -x $BUDGET ]]; then
    echo "dimmap-budget is not built at $BUDGET" >&2
    exit 77
  fi
  "$BUDGET" --memory=64M --quiet -- true 2> /dev/null || {
    echo "memory cgroups are not available here ($BUDGET cannot make one)" >&2
    exit 77
  }
}
