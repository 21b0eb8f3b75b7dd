#!/bin/sh
# dkms.sh install | remove | check [KERNEL_ROOT]
#   install  copies dimmap.ko's sources to /usr/src/dimmap-VERSION and has DKMS add, build
#            and install it for the running kernel (root and that kernel's headers needed);
#            DKMS then rebuilds it on every kernel upgrade (AUTOINSTALL).
#   remove   removes every DKMS build and the sources.
#   check    builds the module with DKMS in a private tree (nothing is installed) against
#            the kernel under KERNEL_ROOT (default this machine's, or a tree unpacked by
#            fetch_kernel.sh) and checks the result is a module for that release.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
command -v dkms >/dev/null || { echo "dkms.sh: dkms is not installed (apt-get install dkms)" >&2; exit 77; }
case ${1:-} in
install)
	[ "$(id -u)" = 0 ] || { echo "dkms.sh: install needs root" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	version=$("$here/dkms_source.sh" "$tmp/src")
	dkms remove "dimmap/$version" --all >/dev/null 2>&1 || true
	rm -rf "/usr/src/dimmap-$version"
	cp -r "$tmp/src" "/usr/src/dimmap-$version"
	dkms add "dimmap/$version"
	if ! dkms build "dimmap/$version" || ! dkms install "dimmap/$version"; then
		echo "dkms.sh: building for the running kernel $(uname -r) failed; are its headers" \
			"installed (linux-headers-$(uname -r))?" >&2
		exit 1
	fi
	echo "dkms.sh: dimmap $version installed for $(uname -r); load it with: modprobe dimmap"
	;;
remove)
	[ "$(id -u)" = 0 ] || { echo "dkms.sh: remove needs root" >&2; exit 1; }
	for dir in /usr/src/dimmap-*; do
		[ -f "$dir/dkms.conf" ] || continue
		version=${dir#/usr/src/dimmap-}
		dkms remove "dimmap/$version" --all || true
		rm -rf "$dir"
	done
	;;
check)
	. "$here/kernel_env.sh"
	kernel_env "${2:-}" || exit 77
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/src" "$tmp/tree"
	version=$("$here/dkms_source.sh" "$tmp/src/staging")
	mv "$tmp/src/staging" "$tmp/src/dimmap-$version"
	if ! dkms build -m dimmap -v "$version" -k "$krel" --kernelsourcedir "$kbuild" \
		--dkmstree "$tmp/tree" --sourcetree "$tmp/src" >"$tmp/dkms.log" 2>&1; then
		cat "$tmp/dkms.log" "$tmp/tree/dimmap/$version/build/make.log" >&2 2>/dev/null || true
		echo "dkms.sh: dkms build for $krel failed" >&2
		exit 1
	fi
	ko=$tmp/tree/dimmap/$version/$krel/x86_64/module/dimmap.ko
	magic=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	if [ "$magic" != "$krel" ]; then
		echo "dkms.sh: DKMS built no module for $krel (vermagic '${magic:-none}')" >&2
		exit 1
	fi
	echo "dkms.sh: dkms build of dimmap $version for $krel: OK"
	;;
*)
	echo "usage: dkms.sh install | remove | check [KERNEL_ROOT]" >&2
	exit 2
	;;
esac
