# kernel_env.sh - sourced by the kernel scripts. kernel_env ROOT sets, for the kernel
# installed under ROOT (/ for this machine's own, or a tree unpacked by fetch_kernel.sh):
#   krel    its release      kimage  its bzImage       kbuild  its headers (Kbuild dir)
#   kmods   its /lib/modules/RELEASE (modules.dep and the driver modules)
# Returns 1 with a message when ROOT holds no kernel with headers and an image.
kernel_env() {
	kroot=${1%/}
	if [ -z "$kroot" ]; then
		krel=$("$(dirname "$0")/find_kernel.sh") || return 1
		kbuild=/lib/modules/$krel/build
	else
		krel=$(ls "$kroot/lib/modules" 2>/dev/null | sort -V | tail -n 1)
		kbuild=$kroot/usr/src/linux-headers-$krel
	fi
	kimage=$kroot/boot/vmlinuz-$krel
	kmods=$kroot/lib/modules/$krel
	if [ -z "$krel" ] || [ ! -f "$kbuild/Makefile" ] || [ ! -r "$kimage" ]; then
		echo "kernel_env: no kernel with headers and an image under ${kroot:-/}" >&2
		return 1
	fi
}
