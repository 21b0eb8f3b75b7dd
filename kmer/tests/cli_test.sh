#!/usr/bin/env bash
# kmer CLI end to end on real genomes (datasets/fetch-genomes --set ci): build both indexes,
# classify on every placement (identical output), gzip input, lookups, real reads, and bad
# input - truncated or foreign DBs, malformed, empty or cut read files, a k mismatch, bad
# --lookup-batch values (clear message naming the file, non-zero exit, no output left).
set -euo pipefail
KMER="${KMER:-$DIMMAP_BUILD_DIR/kmer/kmer}"
SRC="${DIMMAP_SOURCE_DIR:?}"
CACHE="${DIMMAP_DATA_CACHE:-$HOME/.cache/dimmap}"
work="$(mktemp -d "${DIMMAP_TEST_DIR:-/var/tmp}/kmer-cli.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { pass=$((pass + 1)); echo "ok $pass - $*"; }

# expect_error "what" "needle in stderr" cmd... : non-zero exit and the needle in the message.
expect_error() {
  local what="$1" needle="$2"
  shift 2
  if "$@" >"$work/out.txt" 2>"$work/err.txt"; then fail "$what: exit 0"; fi
  grep -qF -- "$needle" "$work/err.txt" || fail "$what: message lacks '$needle': $(cat "$work/err.txt")"
  ok "$what -> $(head -c 160 "$work/err.txt" | tr '\n' ' ')"
}

data="$CACHE/kmer-ci"
list="$("$SRC/datasets/fetch-genomes" "$data" --set ci 2>/dev/null)"
tax="$data/taxonomy"
"$SRC/datasets/simulate-reads" --genomes "$list" --reads 3000 --out "$work/reads" 2>/dev/null
gzip -c "$work/reads.fq" >"$work/reads.fq.gz"

for index in two-level gnu-hash; do
  "$KMER" build --k 18 --taxonomy "$tax" --genomes "$list" --index "$index" --out "$work/$index.db" --quiet 2>/dev/null
  "$KMER" info --db "$work/$index.db" --verify | grep -q "^verify	ok" || fail "info --verify $index"
  ok "build $index"
done
[[ -z "$(ls -A "$work" | grep -E 'tmp|kmer-build' || true)" ]] || fail "build left temporary files: $(ls -A "$work")"

# Every placement and both indexes give the same classification. The dimmap runs take the
# first 400 reads with a 16M buffer (the DBs are 115M and 404M, so pages are evicted):
# user-space faults cost ~0.1 ms each on this machine's disk at queue depth 1.
head -n 1600 "$work/reads.fq" >"$work/reads400.fq"
for index in two-level gnu-hash; do
  for placement in "--placement in-memory" "--backend mmap" "--backend mmap --advise-random" \
                   "--backend dimmap --buffer 16M"; do
    tag="$index-$(echo "$placement" | tr -dc 'a-z0-9')"
    reads="$work/reads.fq" ref="two-level-placementinmemory"
    if [[ "$placement" == *dimmap* ]]; then reads="$work/reads400.fq" ref="in-memory-400"; fi
    "$KMER" classify --db "$work/$index.db" --reads "$reads" --out "$work/$tag" --threads 2 --quiet \
      --storage "$work" $placement >/dev/null
    if [[ "$index$placement" == "two-level--placement in-memory" ]]; then
      "$KMER" classify --db "$work/$index.db" --reads "$work/reads400.fq" --out "$work/in-memory-400" --quiet \
        --placement in-memory >/dev/null
    fi
    cmp -s "$work/$tag.tsv" "$work/$ref.tsv" || fail "$tag.tsv differs"
    cmp -s "$work/$tag.kreport" "$work/$ref.kreport" || fail "$tag.kreport differs"
    ok "classify $index $placement"
  done
done
"$KMER" classify --db "$work/two-level.db" --reads "$work/reads.fq.gz" --out "$work/gz" --quiet >/dev/null
cmp -s "$work/gz.tsv" "$work/two-level-placementinmemory.tsv" || fail "gzip reads classify differently"
ok "gzip reads"

# Sorted lookup batches: tiny ones (many sweeps, reads split across read batches) and one
# huge one give the same bytes on both indexes and thread counts; bad sizes are refused.
for index in two-level gnu-hash; do
  for args in "--lookup-batch 1000 --batch 7 --threads 2" "--lookup-batch 1 --threads 1" "--lookup-batch 1G --threads 3"; do
    "$KMER" classify --db "$work/$index.db" --reads "$work/reads.fq" --out "$work/lb" --quiet $args >/dev/null
    cmp -s "$work/lb.tsv" "$work/two-level-placementinmemory.tsv" || fail "classify $index $args: .tsv differs"
    cmp -s "$work/lb.kreport" "$work/two-level-placementinmemory.kreport" || fail "classify $index $args: .kreport differs"
  done
done
ok "classify with lookup batches of 1, 1000 and 1G k-mers"
for bad in 0 -1 abc 3G 99999999999; do
  expect_error "--lookup-batch=$bad" "is not a number of k-mers" \
    "$KMER" classify --db "$work/two-level.db" --reads "$work/reads.fq" --out "$work/badlb" --lookup-batch="$bad"
done
# The batch chosen from the memory limit: under a small cgroup (dimmap-budget) it follows the
# limit (the 60M DB fits in neither), leaves the DI-MMAP buffer alone, an explicit
# --lookup-batch wins, and the output stays the same bytes.
budget="$DIMMAP_BUILD_DIR/apps/budget/dimmap-budget"
if [[ -x "$budget" ]] && "$budget" --memory=64M --quiet -- true 2>/dev/null; then
  batch_under() {  # LIMIT ARGS... -> the k-mers of the batch printed
    local limit="$1"
    shift
    "$budget" --memory="$limit" --quiet -- "$KMER" classify --db "$work/two-level.db" --reads "$work/reads.fq" \
      --out "$work/lim" --threads 2 --storage "$work" --quiet "$@" 2>"$work/lim.err" >/dev/null ||
      fail "classify under $limit $*: $(cat "$work/lim.err")"
    cmp -s "$work/lim.tsv" "$work/two-level-placementinmemory.tsv" || fail "classify under $limit $*: .tsv differs"
    sed -n 's/^kmer classify: batch: \([0-9]*\) k-mers .*/\1/p' "$work/lim.err"
  }
  small=$(batch_under 64M)
  grep -q "from the memory limit of 64M" "$work/lim.err" || fail "no batch line naming the limit: $(cat "$work/lim.err")"
  large=$(batch_under 112M)
  [[ -n "$small" && -n "$large" && "$large" -gt "$small" ]] || fail "batch $small under 64M, $large under 112M"
  (( small * 24 < 64 * 1048576 / 2 )) || fail "batch of $small k-mers is more than half of 64M"
  dimmap_batch=$(batch_under 96M --backend dimmap --buffer 48M)
  grep -q "less the DI-MMAP buffer of 48M" "$work/lim.err" || fail "dimmap batch ignores the buffer: $(cat "$work/lim.err")"
  [[ "$dimmap_batch" -eq $(( (96 - 48 - 16 - 4 - 1) * 1048576 * 3 / 4 / 24 )) ]] || fail "dimmap batch $dimmap_batch under 96M, buffer 48M"
  explicit=$(batch_under 64M --lookup-batch 3000)
  [[ "$explicit" -eq 3000 ]] && grep -q "from --lookup-batch" "$work/lim.err" || fail "--lookup-batch 3000 under 64M: $explicit"
  ok "batch from the memory limit: $small k-mers under 64M, $large under 112M, $dimmap_batch on dimmap (48M buffer) under 96M"
else
  echo "skip: batch from the memory limit (no dimmap-budget or no memory cgroup here)"
fi
[[ "$(head -1 "$work/gz.tsv")" == $'read_id\ttaxid\tscore\tmatch_type' ]] || fail "tsv header"
[[ "$(wc -l <"$work/gz.tsv")" -eq 3001 ]] || fail "tsv has $(wc -l <"$work/gz.tsv") lines"

# Genus-level accuracy against the simulation's truth, lineages read from nodes.dmp.
python3 - "$work/reads.truth.tsv" "$work/gz.tsv" "$tax/nodes.dmp" <<'PY'
import sys
parent, rank = {}, {}
for line in open(sys.argv[3]):
    f = [x.strip() for x in line.split("|")]
    parent[int(f[0])], rank[int(f[0])] = int(f[1]), f[2]
def genus(t):
    while t in parent and t != parent[t]:
        if rank[t] == "genus":
            return t
        t = parent[t]
    return 0
truth = {l.split("\t")[0]: int(l.split("\t")[1]) for l in list(open(sys.argv[1]))[1:]}
got = {l.split("\t")[0]: int(l.split("\t")[1]) for l in list(open(sys.argv[2]))[1:]}
right = sum(1 for r, t in truth.items() if genus(got[r]) and genus(got[r]) == genus(t))
wrong = sum(1 for r, t in truth.items() if genus(got[r]) and genus(got[r]) != genus(t))
print(f"genus: {right} right, {wrong} wrong of {len(truth)}")
sys.exit(0 if right >= 0.95 * len(truth) and wrong <= 0.01 * len(truth) else 1)
PY
ok "genus-level accuracy on simulated reads"

# The kreport's clade counts add up: root + unclassified = all reads.
awk -F'\t' '$4=="U"{u=$2} $4=="R"{r=$2} END{exit !(u+r==3000)}' "$work/gz.kreport" || fail "kreport totals"
ok "kreport totals"

# classify --json: the summary's numbers are the printed ones; on dimmap it has the buffer's counters.
"$KMER" classify --db "$work/two-level.db" --reads "$work/reads400.fq" --out "$work/js" --threads 2 --quiet \
  --backend dimmap --buffer 16M --storage "$work" --json "$work/classify.json" >"$work/classify.out" 2>"$work/classify.err"
python3 - "$work/classify.json" "$work/classify.out" "$work/classify.err" "$work/js.tsv" <<'PY' ||
import json, re, sys
s = json.load(open(sys.argv[1]))
printed = dict(l.split("\t", 1) for l in open(sys.argv[2]).read().split("\n") if "\t" in l)
faults = int(re.search(r"dimmap buffer: faults (\d+)", open(sys.argv[3]).read()).group(1))
tsv_rows = sum(1 for _ in open(sys.argv[4])) - 1
assert s["tool"] == "kmer classify" and s["rate_unit"] == "reads/s", s
assert s["reads"] == 400 == tsv_rows == int(printed["reads"]), (s["reads"], tsv_rows, printed["reads"])
assert s["classified"] == int(printed["classified"]) and s["bases"] == int(printed["bases"]), (s, printed)
assert abs(s["rate"] - float(printed["reads_per_second"])) <= 0.1 + 1e-3 * s["rate"], (s["rate"], printed)
assert s["wall_seconds"] >= s["seconds"] > 0 and s["ranks"] == 1, s
assert s["dimmap_stats"]["faults"] == faults > 0, (s["dimmap_stats"], faults)
PY
  fail "classify --json disagrees with the printed summary"
ok "classify --json matches the printed summary"

# Lookup benchmark: same hit rate for both indexes and placements.
for index in two-level gnu-hash; do
  "$KMER" lookup --db "$work/$index.db" --reads "$work/reads400.fq" --threads 1,2 --csv "$work/lookup.csv" >/dev/null
  "$KMER" lookup --db "$work/$index.db" --reads "$work/reads400.fq" --threads 4 --backend dimmap --buffer 16M \
    --storage "$work" --csv "$work/lookup.csv" >/dev/null
done
[[ "$(tail -n +2 "$work/lookup.csv" | cut -d, -f6 | sort -u | wc -l)" -eq 1 ]] || fail "hit counts differ"
[[ "$(tail -n +2 "$work/lookup.csv" | wc -l)" -eq 6 ]] || fail "lookup rows"
ok "lookup benchmark rows agree"
"$KMER" lookup --db "$work/two-level.db" --reads "$work/reads400.fq" --threads 1,2 --backend dimmap --buffer 16M \
  --storage "$work" --csv "$work/lookup-json.csv" --json "$work/lookup.json" >/dev/null
python3 - "$work/lookup.json" "$work/lookup-json.csv" <<'PY' || fail "lookup --json disagrees with its CSV rows"
import csv, json, sys
s = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert s["tool"] == "kmer lookup" and s["index"] == "two-level" and len(s["runs"]) == len(rows) == 2, s
for run, row in zip(s["runs"], rows):
    assert run["threads"] == int(row["threads"]) and run["lookups"] == int(row["lookups"]), (run, row)
    assert run["hits"] == int(row["hits"]) and run["dimmap_stats"]["faults"] > 0, (run, row)
assert s["lookups"] == sum(int(r["lookups"]) for r in rows), s
assert abs(s["rate"] - s["lookups"] / s["seconds"]) <= 1e-6 * s["rate"] and "dimmap_stats" in s, s
PY
ok "lookup --json matches its CSV rows"
printf 'ACGTACGTACGTACGTAC\n# comment\nACGTACGTACGTACGTACGTA\n' >"$work/k21.txt"
expect_error "k-mers of another k" "k21.txt:3" "$KMER" lookup --db "$work/two-level.db" --kmers "$work/k21.txt"

expect_error "DB built with another k" "built with k = 18, not the expected k = 21" \
  "$KMER" classify --k 21 --db "$work/two-level.db" --reads "$work/reads.fq" --out "$work/badk"
[[ ! -e "$work/badk.tsv" ]] || fail "output left after a k mismatch"

# Real reads: the gasic honey bee sample is dominated by deformed wing virus.
gasic="$("$SRC/datasets/debian-example" gasic-examples 2>/dev/null)/usr/share/doc/gasic/examples/reads/SRR059298_subset.fastq.gz"
"$KMER" classify --db "$work/two-level.db" --reads "$gasic" --out "$work/gasic" --quiet >/dev/null
awk -F'\t' '$5==198112 && $2 > 50000 {found=1} END{exit !found}' "$work/gasic.kreport" || fail "gasic: no DWV"
ok "real reads (gasic SRR059298): deformed wing virus found"

# Bad DBs.
head -c 100000 "$work/two-level.db" >"$work/trunc.db"
expect_error "truncated DB" "trunc.db" "$KMER" classify --db "$work/trunc.db" --reads "$work/reads.fq" --out "$work/bad1"
grep -q truncated "$work/err.txt" || fail "truncated: $(cat "$work/err.txt")"
printf 'NOTADB..%.0s' {1..1000} >"$work/magic.db"
expect_error "wrong magic" "wrong magic" "$KMER" classify --db "$work/magic.db" --reads "$work/reads.fq" --out "$work/bad2"
[[ ! -e "$work/bad1.tsv" && ! -e "$work/bad2.tsv" && ! -e "$work/bad1.kreport" ]] || fail "output left after bad DB"

# Bad reads: nothing may be written.
printf '@r1\nACGTACGTACGTACGTACGTACGT\n@r2\nACGT\n+\nIIII\n' >"$work/noplus.fq"
expect_error "FASTQ without '+'" "noplus.fq:3" "$KMER" classify --db "$work/two-level.db" --reads "$work/noplus.fq" --out "$work/bad3"
printf '@r1\nACGTACGTACGTACGTACGTACGT\n+\nIIII\n' >"$work/unequal.fq"
expect_error "unequal sequence/quality" "unequal.fq:4" "$KMER" classify --db "$work/two-level.db" --reads "$work/unequal.fq" --out "$work/bad4"
: >"$work/empty.fq"
expect_error "empty reads file" "empty.fq: empty file" "$KMER" classify --db "$work/two-level.db" --reads "$work/empty.fq" --out "$work/bad5"
head -c 20000 "$work/reads.fq.gz" >"$work/cut.fq.gz"
expect_error "truncated gzip" "cut.fq.gz" "$KMER" classify --db "$work/two-level.db" --reads "$work/cut.fq.gz" --out "$work/bad6"
for n in 3 4 5 6; do
  [[ -z "$(ls "$work" | grep "^bad$n")" ]] || fail "bad$n left output: $(ls "$work" | grep "^bad$n")"
done
ok "no output left after bad reads"
# Non-ACGT bases are skipped, not fatal.
printf '>n\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\n>iupac\nRYKMSWRYKMSWRYKMSWRYKMSW\n' >"$work/n.fa"
"$KMER" classify --db "$work/two-level.db" --reads "$work/n.fa" --out "$work/n" --quiet >/dev/null
[[ "$(cut -f2,4 "$work/n.tsv" | tail -n +2 | sort -u)" == $'0\tReadTooShort' ]] || fail "non-ACGT reads"
ok "reads of only non-ACGT bases are unclassified (ReadTooShort)"

# Bad genome lists: nothing written.
printf '%s\t562\n%s/nope.fa\t562\n' "$data/genomes/lambda.fa" "$data" >"$work/missing.tsv"
expect_error "genome list with a missing file" "missing.tsv:2" "$KMER" build --taxonomy "$tax" --genomes "$work/missing.tsv" --out "$work/bad7.db"
printf '%s\t999999999\n' "$data/genomes/lambda.fa" >"$work/unknown.tsv"
expect_error "genome list with an unknown taxid" "unknown.tsv:1: taxid 999999999 is not in the taxonomy" \
  "$KMER" build --taxonomy "$tax" --genomes "$work/unknown.tsv" --out "$work/bad8.db"
[[ -z "$(ls -A "$work" | grep -E '^bad[78]|kmer-build' || true)" ]] || fail "bad build left files"
ok "no DB or temporary left after bad genome lists"
echo "$pass passed, 0 failed"
