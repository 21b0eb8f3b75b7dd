#!/bin/sh
# build_module.sh OUTDIR [KERNEL_ROOT] - builds dimmap.ko with W=1 in OUTDIR against the
# headers of the kernel under KERNEL_ROOT (default: this machine's, scripts/find_kernel.sh's
# release; or a tree unpacked by fetch_kernel.sh) and fails on any compiler warning. The sources of
# runtime/kernel, the shared policy (runtime/policy) and the uapi header are linked into
# OUTDIR, so the module compiles the very same policy source as libdimmap. Exit 77 (skip)
# without kernel headers and image (scripts/setup installs them, as CI does).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kernel=$(dirname "$here")
runtime=$(dirname "$kernel")
out=${1:?usage: build_module.sh OUTDIR [KERNEL_ROOT]}
. "$here/kernel_env.sh"
kernel_env "${2:-}" || exit 77	# no kernel headers here: skipped
rel=$krel
kdir=$kbuild

mkdir -p "$out"
out=$(cd "$out" && pwd)
for f in "$kernel"/Kbuild "$kernel"/*.c "$kernel"/*.h "$runtime"/policy/dimmap_policy.c \
	"$runtime"/policy/dimmap_policy.h "$runtime"/policy/perma_model.c "$runtime"/policy/perma_model.h "$runtime"/include/dimmap/dimmap_uapi.h; do
	ln -sf "$f" "$out/$(basename "$f")"
done
log="$out/build.log"
if ! make -C "$kdir" M="$out" W=1 modules >"$log" 2>&1; then
	cat "$log" >&2
	echo "build_module.sh: building dimmap.ko for $rel failed" >&2
	exit 1
fi
if grep -n 'warning:' "$log" >&2; then
	echo "build_module.sh: dimmap.ko for $rel builds with warnings (W=1)" >&2
	exit 1
fi
echo "$out/dimmap.ko ($rel)"
