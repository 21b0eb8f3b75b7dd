#!/usr/bin/env bash
# compare_upstream.sh PLACEMENT REFDIR
# bwa-mmap index and mem on one placement against upstream bwa's outputs in REFDIR (made by
# upstream_reference.sh): every index file byte for byte, every SAM line except @PG.
# --min-alloc=4K routes all of libbwa's big and medium arrays to the placement; dimmap
# buffers are smaller than the data (see lib.sh), so pages are evicted and read back.
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
  "$BWA_MMAP" mem "${flags[@]}" "${buf[@]}" "${opts[@]}" -o "$WORK/$name.sam" "$ref/$(case_field "$c" 2)" \
    "${files[@]/#/$ref/reads/}" 2> "$WORK/$name.log" || { tail "$WORK/$name.log" >&2; die "mem $name"; }
  same_sam "$ref/$name.sam" "$WORK/$name.sam"
  echo "mem $name: $(grep -vc '^@' "$WORK/$name.sam") records identical"
done
leftovers=$(find "$WORK" -name '*bwa-mmap-tmp*' | wc -l)
[[ $leftovers == 0 ]] || die "$leftovers temporary files left behind"
echo "${#INDEX_CASES[@]} indexes and ${#MEM_CASES[@]} alignments on $placement identical to upstream bwa"
