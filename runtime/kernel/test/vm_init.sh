#!/bin/busybox sh
# /init of the dimmap.ko test VM (packed by scripts/run_vm_tests.sh). Runs every check,
# prints "DMT-PASS name" / "DMT-FAIL name" lines and a final "DMT-VERDICT PASS|FAIL" on
# the serial console, then powers off. The host reads the verdict and checks the disks.
# Settings come from /etc/dmt.conf (written by the host harness).
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
. /etc/dmt.conf

failed=0
check() {
	name=$1
	shift
	echo "DMT-RUN $name: $*"
	if "$@"; then
		echo "DMT-PASS $name"
	else
		echo "DMT-FAIL $name"
		failed=1
	fi
}

finish() {
	if [ "$failed" = 0 ]; then echo "DMT-VERDICT PASS"; else echo "DMT-VERDICT FAIL"; fi
	sync
	poweroff -f
}

# MemAvailable, plus the free pages parked on the per-CPU lists: from 6.7 on those lists
# grow with bursts of frees (auto-tuned pcp high), and MemAvailable does not count them.
mem_available_kb() {
	pcp=$(awk '$1 == "count:" { n += $2 } END { print n + 0 }' /proc/zoneinfo)
	awk -v pcp="$pcp" '/^MemAvailable:/ { print $2 + pcp * 4 }' /proc/meminfo
}

# Loads the module and checks that its buffers took (at least) the memory they should.
load_dimmap() {
	before=$(mem_available_kb)
	insmod /lib/dimmap.ko "$@" || return 1
	after=$(mem_available_kb)
	echo "MemAvailable: $before kB before insmod, $after kB after"
}

# Loads and unloads a large buffer; the memory must come back (no leaked pages).
check_no_leak() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	before=$(mem_available_kb)
	insmod /lib/dimmap.ko buffer_size=96M || return 1
	loaded=$(mem_available_kb)
	rmmod dimmap || return 1
	echo 3 > /proc/sys/vm/drop_caches
	after=$(mem_available_kb)
	echo "MemAvailable: $before kB, $loaded kB with a 96 MiB buffer, $after kB after rmmod"
	[ $((before - loaded)) -ge 90000 ] && [ $((before - after)) -le 8192 ]
}

kernel_log_clean() {
	if dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|general protection|refcount_t|corruption|Bad page'; then
		return 1
	fi
	return 0
}

plan_a="--pages=$VDA_PAGES --seed=$VDA_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"
plan_b="--pages=$VDB_PAGES --seed=$VDB_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"
plan_c="--pages=$FSA_PAGES --seed=$FSA_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"
plan_d="--pages=$FSB_PAGES --seed=$FSB_SEED --shared=$SHARED --threads=$THREADS --ops=$OPS --write-pct=$WRITE_PCT"

# Wait for the disks, then run the checks.
while read -r m; do
	insmod /lib/modules/$m.ko || echo "DMT-FAIL insmod $m"
done < /lib/modules/order
i=0
while [ ! -b /dev/vdb ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -b /dev/vda ] && [ -b /dev/vdb ] || { echo "DMT-FAIL disks: no /dev/vda or /dev/vdb"; dmesg | tail -n 30; failed=1; finish; }

# The checks of the module: every one must pass.
module_checks() {
	check api_without_module dimmap-api-vmtest --expect-missing
	check insmod load_dimmap buffer_size="$BUFFER_SIZE" buffers=2 hot_percent=75 evict_batch=16
	check dimmapctl_version dimmapctl version
	check ioctls dimmap-vmtest ioctls --blockdev=/dev/vdb --buffers=2
	check file_link dimmap-vmtest filelink --dir=/tmp --buffer=1
	check write_errors dimmap-vmtest writeerrors --dir=/tmp --buffer=1

	dev=$(dimmapctl link --buffer=0 /dev/vda)
	check link_vda test "$dev" = /dev/dimmap0
	check workload_vda dimmap-vmtest independent --dev="$dev" --quiet-buffer=1 $plan_a
	dimmapctl list
	dimmapctl stats "$dev"
	check sync_vda dimmapctl sync "$dev"
	check unlink_vda dimmapctl unlink "$dev"
	check verify_vda_in_vm dimmap-vmtest verify --image=/dev/vda $plan_a

	dev=$(dimmapctl link --buffer=1 /dev/vdb)
	check link_vdb test -c "$dev"
	check workload_vdb dimmap-vmtest independent --dev="$dev" --quiet-buffer=0 --procs=2 $plan_b
	check unlink_vdb dimmapctl unlink "$dev"
	check verify_vdb_in_vm dimmap-vmtest verify --image=/dev/vdb $plan_b

	check libdimmap_kmod dimmap-api-vmtest --dir=/tmp
	check rmmod rmmod dimmap
	check no_leak check_no_leak

	# PerMA latency model: D = 2 ms per page read, far above a read under TCG, so the
	# lower bound can only hold if the module adds the delay.
	check insmod_perma insmod /lib/dimmap.ko buffer_size=4M perma=2000000,0,0,0,0
	dev=$(dimmapctl link /dev/vdb)
	check perma_latency dimmap-vmtest latency --dev="$dev" --pages=50 --min-ns=2000000
	check unlink_perma dimmapctl unlink "$dev"
	check rmmod_perma rmmod dimmap
	check perma_bad_spec sh -c '! insmod /lib/dimmap.ko perma=warp9 2>/dev/null'
}

# dimmapfs: DIR = an ext2 disk the host filled (a.img, sub/b.img with known patterns, a
# small file not a page multiple); the workloads' results are checked again on the host.
overlay_workloads() {
	dimmap-vmtest workload --dev=/mnt/a.img $plan_c &
	a=$!
	dimmap-vmtest workload --dev=/mnt/sub/b.img $plan_d
	b=$?
	wait $a && [ $b = 0 ]
}

# The holder keeps its mapping until the pipe on its stdin closes, and the unmount is
# tried only once it says the file is mapped: a fixed sleep loses that race when a
# loaded host starves the VM.
overlay_busy() {
	rm -f /tmp/hold.fifo /tmp/hold.out
	mkfifo /tmp/hold.fifo
	dimmap-vmtest hold --dev=/mnt/sub/b.img --until-eof < /tmp/hold.fifo > /tmp/hold.out &
	holder=$!
	exec 3> /tmp/hold.fifo
	i=0
	while ! grep -q mapped /tmp/hold.out && kill -0 $holder 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	! umount /mnt 2>/dev/null
	busy=$?
	exec 3>&-
	wait $holder && grep -q mapped /tmp/hold.out && [ $busy = 0 ]
}

# Names, modes and sizes of every file and directory ("total" block counts aside).
list_tree() {
	(cd "$1" && ls -lR | awk '$1 != "total" { print $1, $5, $NF }')
}

same_tree() {
	[ "$(list_tree /mnt)" = "$(list_tree /src)" ] || { list_tree /mnt; list_tree /src; return 1; }
}

same_files() {
	cmp /mnt/a.img /src/a.img && cmp /mnt/sub/b.img /src/sub/b.img &&
		[ "$(md5sum < /mnt/small.txt)" = "$(md5sum < /src/small.txt)" ]
}

overlay_checks() {
	mkdir -p /src /mnt
	check overlay_insmod insmod /lib/dimmap.ko buffer_size="$BUFFER_SIZE" buffers=2
	check overlay_source_disk mount -t ext2 /dev/$OVERLAY_DISK /src
	check overlay_no_source sh -c '! mount -t dimmapfs none /mnt 2>/dev/null'
	check overlay_bad_source sh -c '! mount -t dimmapfs -o source=/nonexistent none /mnt 2>/dev/null'
	check overlay_bad_buffer sh -c '! mount -t dimmapfs -o source=/src,buffer=7 none /mnt 2>/dev/null'
	check overlay_mount mount -t dimmapfs -o source=/src,buffer=1 none /mnt
	check overlay_tree same_tree
	check overlay_read same_files
	check overlay_small_mmap dimmap-vmtest hold --dev=/mnt/small.txt --seconds=0
	check overlay_workloads overlay_workloads
	check overlay_links sh -c 'dimmapctl list | grep -E "^dimmapfs.*/src/sub/b.img.*buffer 1"'
	check overlay_busy overlay_busy
	check overlay_umount umount /mnt
	check overlay_remount dimmapctl mount --buffer=0 /src /mnt
	check overlay_read_after same_files
	check overlay_verify_a dimmap-vmtest verify --image=/mnt/a.img $plan_c
	check overlay_verify_b dimmap-vmtest verify --image=/mnt/sub/b.img $plan_d
	check overlay_umount_again umount /mnt
	check overlay_source_umount umount /src
	check overlay_rmmod rmmod dimmap
}

[ "${BENCH_ONLY:-0}" = 1 ] || module_checks
[ "${BENCH_ONLY:-0}" = 1 ] || overlay_checks
[ -f /bench.sh ] && . /bench.sh
check kernel_log kernel_log_clean
[ "$failed" = 0 ] || dmesg | tail -n 60
finish
