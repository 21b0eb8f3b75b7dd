#!/usr/bin/env bash
# compare_upstream.sh PLACEMENT REFDIR
# bwa-mmap index and mem on one placement against upstream bwa's outputs in REFDIR (made by
# upstream_reference.sh): every index file byte for byte, every SAM line except @PG.
# --min-alloc=4K routes all of libbwa's big and medium arrays to the placement; dimmap
# buffers are smaller than the data (see lib.sh), so pages are evicted and read back.
# mem's --json summary must count the reads the SAM holds and the stderr line prints.
source "$(dirname "$0")/lib.sh"
need cmp diff
placement=${1:?usage: compare_upstream.sh memory|mmap|dimmap REFDIR}
ref=${2:?usage: compare_upstream.sh PLACEMENT REFDIR}
[[ -s $ref/lambda_is.sa ]] || die "no upstream reference in $ref (the fixture test did not run?)"
make_workdir

flags=(--placement="$placement")
case $placement in
  memory) flags+=(--memory-dir "$WORK") ;;  # a tmpfs would do too; real disk keeps /dev/shm free
  mmap | dimmap) flags+=(--storage "$WORK") ;;
esac

for c in "${INDEX_CASES[@]}"; do
  name=$(case_field "$c" 1)
  read -r -a opts <<< "$(case_field "$c" 3)"
  buf=()
  [[ $placement == dimmap ]] && buf=(--buffer "$(case_field "$c" 4)")
  "$BWA_MMAP" index "${flags[@]}" "${buf[@]}" --min-alloc=4K "${opts[@]}" -p "$WORK/$name" \
    "$ref/$(case_field "$c" 2)" 2> "$WORK/$name.log" || { tail "$WORK/$name.log" >&2; die "index $name"; }
  same_index "$ref/$name" "$WORK/$name"
  grep -q "arrays .* placed on $placement" "$WORK/$name.log" || die "index $name: nothing was placed on $placement"
  echo "index $name: 5 files identical"
done

for c in "${MEM_CASES[@]}"; do
  name=$(case_field "$c" 1)
  read -r -a opts <<< "$(case_field "$c" 3)"
  read -r -a files <<< "$(case_field "$c" 4)"
  buf=()
  [[ $placement == dimmap ]] && buf=(--buffer "$(case_field "$c" 5)")
  # The upstream index (not ours): mem must work on any bwa index.
  "$BWA_MMAP" mem "${flags[@]}" "${buf[@]}" --json "$WORK/$name.json" "${opts[@]}" -o "$WORK/$name.sam" \
    "$ref/$(case_field "$c" 2)" "${files[@]/#/$ref/reads/}" 2> "$WORK/$name.log" ||
    { tail "$WORK/$name.log" >&2; die "mem $name"; }
  same_sam "$ref/$name.sam" "$WORK/$name.sam"
  "$PY" - "$WORK/$name.json" "$WORK/$name.sam" "$WORK/$name.log" "$placement" <<'PY' || die "mem $name: --json summary"
import json, re, sys
s = json.load(open(sys.argv[1]))
primary = sum(1 for l in open(sys.argv[2]) if not l.startswith("@") and not int(l.split("\t")[1]) & 0x900)
printed = re.search(r"\[bwa-mmap mem\] (\d+) reads \((\d+) bp\)", open(sys.argv[3]).read())
assert s["tool"] == "bwa-mmap mem" and s["rate_unit"] == "reads/s" and s["reads"] == primary > 0, (s, primary)
assert not printed or (s["reads"], s["bases"]) == (int(printed.group(1)), int(printed.group(2))), (s, printed)
assert ("dimmap_stats" in s) == (sys.argv[4] == "dimmap"), s
PY
  echo "mem $name: $(grep -vc '^@' "$WORK/$name.sam") records identical"
done
leftovers=$(find "$WORK" -name '*bwa-mmap-tmp*' | wc -l)
[[ $leftovers == 0 ]] || die "$leftovers temporary files left behind"
echo "${#INDEX_CASES[@]} indexes and ${#MEM_CASES[@]} alignments on $placement identical to upstream bwa"
