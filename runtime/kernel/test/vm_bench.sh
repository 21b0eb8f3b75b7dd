# vm_bench.sh - sourced by the VM's /init (test/vm_init.sh) when the harness runs with
# --bench. LRIOT's random 4 KiB reads and read-modify-writes on one file of an ext2 file
# system on /dev/vdc, through Linux mmap and through dimmap.ko (libdimmap with
# DIMMAP_ENGINE=kmod, which maps /dev/dimmapN), on the same memory: the module's buffer
# is BENCH_BUFFER and both runs sit in a memory cgroup of BENCH_BUFFER plus 4 MiB for
# the process itself, which for mmap is also its page cache. Every run starts cold.
# Prints "BENCH ..." lines; TCG makes absolute rates meaningless, so compare the ratios.

bench_cgroup=/sys/fs/cgroup/dimmap-bench

bench_prepare() {
	mkdir -p /mnt /sys/fs/cgroup
	mke2fs -q /dev/vdc && mount -t ext2 /dev/vdc /mnt || return 1
	lriot --file=/mnt/lriot.dat --create="$BENCH_FILE" --create-only --progress=0 || return 1
	mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control &&
		mkdir -p "$bench_cgroup" || return 1
	echo $(($(echo "$BENCH_BUFFER" | sed 's/M$//') * 1048576 + 4194304)) > "$bench_cgroup/memory.max"
	insmod /lib/dimmap.ko buffer_size="$BENCH_BUFFER"
}

# bench_run MODE PATTERN WRITE_FRACTION: prints the run's IOPS.
bench_run() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sh -c "echo \$\$ > $bench_cgroup/cgroup.procs && exec env DIMMAP_ENGINE=kmod lriot \
		--file=/mnt/lriot.dat --mode=$1 --pattern=$2 --write-fraction=$3 --threads=$BENCH_THREADS \
		--ops=$BENCH_OPS --seed=7 --progress=0 --json" > /tmp/bench.json || return 1
	sed 's/.*"iops": \([0-9.e+]*\).*/\1/' /tmp/bench.json
}

bench_pair() {
	mmap=$(bench_run mmap "$1" "$2") || return 1
	dimmap=$(bench_run dimmap "$1" "$2") || return 1
	echo "BENCH $1 write-fraction=$2: mmap $mmap IOPS, dimmap.ko $dimmap IOPS," \
		"ratio dimmap/mmap $(awk "BEGIN { printf \"%.2f\", $dimmap / $mmap }")"
}

bench_all() {
	echo "BENCH file $BENCH_FILE, buffer and budget $BENCH_BUFFER, $BENCH_THREADS threads," \
		"$BENCH_OPS ops per run (TCG: ratios only)"
	bench_pair uniform 0 && bench_pair uniform 0.5 && bench_pair partitioned 0
}

check bench_prepare bench_prepare
check bench bench_all
dimmapctl stats --buffer=0
check bench_rmmod rmmod dimmap
