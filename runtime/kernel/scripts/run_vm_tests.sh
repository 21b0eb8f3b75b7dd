#!/bin/sh
# run_vm_tests.sh - boots the dimmap.ko tests in a qemu VM (TCG) and checks the result.
#
#   run_vm_tests.sh --module=dimmap.ko --bin=DIR --work=DIR [--kernel-root=DIR]
#                   [--bench | --bench-only] [--keep]
#
# --kernel-root: boot the kernel installed under DIR (a tree unpacked by fetch_kernel.sh;
# the module must be built for it) instead of this machine's newest one.
# --bin holds the static programs (dimmap-vmtest, dimmapctl-static, dimmap-api-vmtest
# and, for --bench, lriot-static). The host writes two disk images with a known pattern,
# packs a busybox initramfs with the module, the virtio drivers of the kernel it boots
# and test/vm_init.sh as /init, boots it with a timeout, reads the verdict from the
# serial console, then replays the VM's workload on the host and compares the disk
# images with it: the test passes with zero mismatched pages. --bench adds LRIOT on Linux
# mmap and on dimmap.ko with equal memory (test/vm_bench.sh; DMT_BENCH_OPS operations per
# run, default 8000); --bench-only runs just that.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kernel_dir=$(dirname "$here")
module="" bin="" work="" kroot="" bench=0 bench_only=0 keep=0
for arg in "$@"; do
	case $arg in
	--module=*) module=${arg#*=} ;;
	--bin=*) bin=${arg#*=} ;;
	--work=*) work=${arg#*=} ;;
	--kernel-root=*) kroot=${arg#*=} ;;
	--bench) bench=1 ;;
	--bench-only) bench=1 bench_only=1 ;;
	--keep) keep=1 ;;
	*) echo "run_vm_tests.sh: unknown argument $arg" >&2; exit 2 ;;
	esac
done
[ -n "$module" ] && [ -n "$bin" ] && [ -n "$work" ] || {
	echo "usage: run_vm_tests.sh --module=dimmap.ko --bin=DIR --work=DIR [--kernel-root=DIR] [--bench | --bench-only] [--keep]" >&2
	exit 2
}
# Without qemu or a kernel image the test is skipped (77); scripts/setup installs both.
for tool in qemu-system-x86_64 cpio gzip mke2fs debugfs; do
	command -v $tool >/dev/null || { echo "run_vm_tests.sh: $tool is missing (scripts/setup installs it)" >&2; exit 77; }
done
[ -f "$module" ] || { echo "run_vm_tests.sh: no module at $module (run the kernel_module_build test)" >&2; exit 1; }
. "$here/kernel_env.sh"
kernel_env "$kroot" || exit 77
rel=$krel
vmtest=$bin/dimmap-vmtest

# Workload sizes: each buffer (BUFFER_SIZE) is much smaller than the disks and files.
VDA_PAGES=8192 VDA_SEED=11 VDB_PAGES=2048 VDB_SEED=22
FSA_PAGES=2048 FSA_SEED=33 FSB_PAGES=1024 FSB_SEED=44	# the dimmapfs files
THREADS=4 OPS=4000 WRITE_PCT=30 SHARED=64 BUFFER_SIZE=1M
# --bench: LRIOT on a 128 MiB file with 16 MiB of memory (buffer or cgroup budget).
BENCH_FILE=128M BENCH_BUFFER=16M BENCH_THREADS=8 BENCH_OPS=${DMT_BENCH_OPS:-8000}
plan_a="--pages=$VDA_PAGES --seed=$VDA_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"
plan_b="--pages=$VDB_PAGES --seed=$VDB_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"
plan_c="--pages=$FSA_PAGES --seed=$FSA_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"
plan_d="--pages=$FSB_PAGES --seed=$FSB_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"

rm -rf "$work"
mkdir -p "$work/root/bin" "$work/root/lib/modules" "$work/root/etc" "$work/root/proc" \
	"$work/root/sys" "$work/root/dev" "$work/root/tmp"
cleanup() {
	[ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

# The initramfs.
root=$work/root
cp /bin/busybox "$root/bin/busybox"
cp "$kernel_dir/test/vm_init.sh" "$root/init"
chmod +x "$root/init"
cp "$module" "$root/lib/dimmap.ko"
# The virtio disk drivers and what they need, in load order (from modules.dep: a
# module's dependencies are listed so that the last one loads first).
dep_order() {
	# Built into this kernel (6.12 has virtio_pci built in): nothing to load.
	grep -qE "(^|/)$1\.ko$" "$kmods/modules.builtin" 2>/dev/null && return 0
	line=$(grep -E "(^|/)$1\.ko(\.xz|\.zst)?:" "$kmods/modules.dep") || {
		echo "run_vm_tests.sh: $1 is not in $kmods/modules.dep" >&2
		exit 1
	}
	echo "${line%%:*}"
	for dep in ${line#*:}; do echo "$dep"; done
}
wanted="virtio_pci virtio_blk crc32c_generic ext4"  # ext4 (also ext2) asks the crypto API for crc32c
for m in $wanted; do dep_order $m | awk '{ a[NR] = $0 } END { for (i = NR; i > 0; i--) print a[i] }'; done |
	awk '!seen[$0]++' > "$work/modules.order"
: > "$root/lib/modules/order"
while read -r path; do
	name=$(basename "$path")
	name=${name%%.ko*}
	case $path in
	*.ko) cp "$kmods/$path" "$root/lib/modules/$name.ko" ;;
	*.ko.xz) xz -dc "$kmods/$path" > "$root/lib/modules/$name.ko" ;;
	*.ko.zst) zstd -qdc "$kmods/$path" > "$root/lib/modules/$name.ko" ;;
	esac
	echo "$name" >> "$root/lib/modules/order"
done < "$work/modules.order"
cp "$vmtest" "$root/bin/dimmap-vmtest"
cp "$bin/dimmapctl-static" "$root/bin/dimmapctl"
cp "$bin/dimmap-api-vmtest" "$root/bin/dimmap-api-vmtest"
cat > "$root/etc/dmt.conf" <<EOF
VDA_PAGES=$VDA_PAGES VDA_SEED=$VDA_SEED VDB_PAGES=$VDB_PAGES VDB_SEED=$VDB_SEED
THREADS=$THREADS OPS=$OPS WRITE_PCT=$WRITE_PCT SHARED=$SHARED BUFFER_SIZE=$BUFFER_SIZE
FSA_PAGES=$FSA_PAGES FSA_SEED=$FSA_SEED FSB_PAGES=$FSB_PAGES FSB_SEED=$FSB_SEED
OVERLAY_DISK=$([ "$bench" = 1 ] && echo vdd || echo vdc)
EOF
drives=""
if [ "$bench" = 1 ]; then
	[ -x "$bin/lriot-static" ] || { echo "run_vm_tests.sh: --bench needs $bin/lriot-static (apps/lriot)" >&2; exit 1; }
	cp "$bin/lriot-static" "$root/bin/lriot"
	cp "$kernel_dir/test/vm_bench.sh" "$root/bench.sh"
	cat >> "$root/etc/dmt.conf" <<EOF
BENCH_FILE=$BENCH_FILE BENCH_BUFFER=$BENCH_BUFFER BENCH_THREADS=$BENCH_THREADS BENCH_OPS=$BENCH_OPS
BENCH_ONLY=$bench_only
EOF
	truncate -s 192M "$work/vdc.img"
	drives="-drive file=$work/vdc.img,format=raw,if=virtio"
fi
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$work/initramfs.gz"

# The disks: a known pattern that the VM rewrites in part. The last disk is the
# directory the VM mounts dimmapfs over: an ext2 file system with two pattern files.
"$vmtest" mkimage --image="$work/vda.img" --pages=$VDA_PAGES --seed=$VDA_SEED
"$vmtest" mkimage --image="$work/vdb.img" --pages=$VDB_PAGES --seed=$VDB_SEED
mkdir -p "$work/fs/sub"
"$vmtest" mkimage --image="$work/fs/a.img" --pages=$FSA_PAGES --seed=$FSA_SEED
"$vmtest" mkimage --image="$work/fs/sub/b.img" --pages=$FSB_PAGES --seed=$FSB_SEED
echo "not a whole page" > "$work/fs/small.txt"
mke2fs -q -t ext2 -b 4096 -d "$work/fs" "$work/fs.img" 32M

# Boot. KVM is not available here (and hangs on this host): TCG only, stopped after 14
# minutes (CTest allows 15; a VM that loses the host to other work runs several times
# slower). A task blocked for 120 s (a deadlock) panics the VM, which then exits at once.
# The soft-lockup and RCU stall detectors stay quiet: on a busy host TCG starves vCPUs, and
# they would report the host rather than the module.
console=$work/console.log
status=0
# shellcheck disable=SC2086
timeout 840 qemu-system-x86_64 -nographic -no-reboot -m 512M -smp 2 \
	-kernel "$kimage" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0 panic=-1 oops=panic hung_task_panic=1 nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 loglevel=4 rdinit=/init" \
	-drive "file=$work/vda.img,format=raw,if=virtio" \
	-drive "file=$work/vdb.img,format=raw,if=virtio" $drives \
	-drive "file=$work/fs.img,format=raw,if=virtio" \
	</dev/null >"$console" 2>&1 || status=$?
tr -d '\r' < "$console" | grep -E '^(DMT-|workload|verify|buffer|ioctl|file link|libdimmap|without|MemAvailable|FAIL|mismatch|/dev/dimmap|dimmap.ko|LRIOT|BENCH|latency)' || true
if [ "$status" != 0 ]; then
	echo "run_vm_tests.sh: qemu exited with status $status (124 = timeout); console:" >&2
	tail -n 80 "$console" >&2
	exit 1
fi
if ! tr -d '\r' < "$console" | grep -q '^DMT-VERDICT PASS'; then
	echo "run_vm_tests.sh: the VM did not report DMT-VERDICT PASS; console:" >&2
	tail -n 120 "$console" >&2
	exit 1
fi

# The disk images must hold exactly what replaying the workload predicts.
if [ "$bench_only" = 1 ]; then
	echo "run_vm_tests.sh: benchmark done (kernel $rel)"
	exit 0
fi
"$vmtest" verify --image="$work/vda.img" $plan_a
"$vmtest" verify --image="$work/vdb.img" $plan_b
# The dimmapfs files, as the VM left them in the ext2 image.
debugfs -R "dump /a.img $work/fs-a.img" "$work/fs.img" 2>/dev/null
debugfs -R "dump /sub/b.img $work/fs-b.img" "$work/fs.img" 2>/dev/null
"$vmtest" verify --image="$work/fs-a.img" $plan_c
"$vmtest" verify --image="$work/fs-b.img" $plan_d
echo "run_vm_tests.sh: PASS (kernel $rel)"
