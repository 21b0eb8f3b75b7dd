#!/bin/sh
# checkpatch.sh - runs the kernel's checkpatch.pl --no-tree -f on dimmap.ko's sources and
# the uapi header; fails on any error or warning. checkpatch.pl is not in the headers
# package: it comes from Debian's linux-source-X.Y tarball, unpacked once into a cache
# under ${TMPDIR:-/tmp} (about 30 s the first time). Exit 77 if no tarball is installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kernel=$(dirname "$here")
runtime=$(dirname "$kernel")
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "checkpatch.sh: no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.1)" >&2
	exit 77
fi
name=$(basename "$tarball" .tar.xz)
cache=${TMPDIR:-/tmp}/dimmap-checkpatch-$name
if [ ! -x "$cache/scripts/checkpatch.pl" ]; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/dimmap-checkpatch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	tar -xJf "$tarball" -C "$tmp" "$name/scripts/checkpatch.pl" "$name/scripts/spelling.txt" \
		"$name/scripts/const_structs.checkpatch"
	mkdir -p "$(dirname "$cache")"
	rm -rf "$cache"
	mv "$tmp/$name" "$cache"
fi
checkpatch="$cache/scripts/checkpatch.pl --no-tree -f --terse --show-types --no-summary"
status=0
# shellcheck disable=SC2086
for f in "$kernel"/*.c "$kernel"/dimmap_kmod.h "$kernel"/dimmap_overlay.h "$runtime"/include/dimmap/dimmap_uapi.h "$runtime"/policy/*.[ch]; do
	$checkpatch "$f" || status=1
done
# A compat header for out-of-tree builds has to compare kernel versions.
# shellcheck disable=SC2086
$checkpatch --ignore LINUX_VERSION_CODE "$kernel"/dimmap_compat.h || status=1
if [ "$status" = 0 ]; then
	echo "checkpatch.sh: dimmap.ko sources and dimmap_uapi.h are clean ($name)"
fi
exit $status
