#!/bin/sh
# find_kernel.sh - prints the kernel release to build dimmap.ko for and boot under qemu:
# $DIMMAP_KERNEL_RELEASE if set, else the newest release that has both headers
# (/lib/modules/R/build) and an image (/boot/vmlinuz-R). Exit 1 if there is none.
set -eu
if [ -n "${DIMMAP_KERNEL_RELEASE:-}" ]; then
	echo "$DIMMAP_KERNEL_RELEASE"
	exit 0
fi
found=""
for dir in /lib/modules/*/; do
	rel=$(basename "$dir")
	if [ -f "/lib/modules/$rel/build/Makefile" ] && [ -r "/boot/vmlinuz-$rel" ]; then
		found="$found$rel
"
	fi
done
rel=$(printf '%s' "$found" | sort -V | tail -n 1)
if [ -z "$rel" ]; then
	echo "find_kernel.sh: no kernel with headers in /lib/modules/*/build and an image in" \
		"/boot/vmlinuz-*: install linux-image-amd64 and linux-headers-amd64" >&2
	exit 1
fi
echo "$rel"
