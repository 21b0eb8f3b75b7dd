#!/bin/sh
# fetch_kernel.sh SERIES CACHE - makes a Debian kernel of SERIES (e.g. 6.12: the newest
# linux-image-SERIES.*-amd64 in bookworm-backports) available for building and booting
# without installing it: the image, its modules and its headers are downloaded with a
# private apt sources list and state directory (the machine's apt configuration is not
# touched), unpacked with dpkg -x into CACHE/SERIES/root, made relocatable (the headers'
# Makefile names the common headers by absolute path) and given a modules.dep (depmod -b).
# Prints the root. An existing tree is reused. $DIMMAP_KERNEL_SUITE overrides the suite,
# $DIMMAP_KERNEL_MIRROR the mirror. Exit 77 (skip) when the packages cannot be fetched.
set -eu
series=${1:?usage: fetch_kernel.sh SERIES CACHE}
cache=${2:?usage: fetch_kernel.sh SERIES CACHE}
suite=${DIMMAP_KERNEL_SUITE:-bookworm-backports}
mirror=${DIMMAP_KERNEL_MIRROR:-http://deb.debian.org/debian}
dest=$cache/$series
root=$dest/root
if [ -f "$dest/ready" ]; then
	echo "$root"
	exit 0
fi
for tool in apt-get apt-cache dpkg depmod; do
	command -v $tool >/dev/null || { echo "fetch_kernel.sh: $tool is missing" >&2; exit 77; }
done
rm -rf "$dest"
mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial" "$dest/debs" "$root"
echo "deb $mirror $suite main" > "$dest/apt/sources.list"
apt_opts="-o Dir::Etc::sourcelist=$dest/apt/sources.list -o Dir::Etc::sourceparts=-
	-o Dir::State::Lists=$dest/apt/lists -o Dir::Cache=$dest/apt/cache -o Debug::NoLocking=1
	-o APT::Sandbox::User=root"
# shellcheck disable=SC2086
if ! apt-get -q $apt_opts update >"$dest/apt.log" 2>&1; then
	cat "$dest/apt.log" >&2
	echo "fetch_kernel.sh: cannot read the package lists of $suite from $mirror" >&2
	exit 77
fi
# The newest release of the series, generic flavour (not cloud or rt).
# shellcheck disable=SC2086
image=$(apt-cache $apt_opts pkgnames linux-image-"$series". 2>/dev/null |
	grep -E "^linux-image-$series\.[0-9]+\+[a-z0-9.]+-amd64$" | sort -V | tail -n 1)
if [ -z "$image" ]; then
	echo "fetch_kernel.sh: no linux-image-$series.*-amd64 in $suite" >&2
	exit 77
fi
rel=${image#linux-image-}
abi=${rel%-amd64}
# shellcheck disable=SC2086
if ! (cd "$dest/debs" && apt-get -q $apt_opts download "$image" "linux-headers-$rel" \
	"linux-headers-$abi-common" "linux-kbuild-$abi" >>"$dest/apt.log" 2>&1); then
	cat "$dest/apt.log" >&2
	echo "fetch_kernel.sh: downloading $image and its headers failed" >&2
	exit 77
fi
for deb in "$dest"/debs/*.deb; do
	dpkg -x "$deb" "$root"
done
headers=$root/usr/src/linux-headers-$rel
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$headers/Makefile"
depmod -b "$root" "$rel"
rm -rf "$dest/debs" "$dest/apt"
touch "$dest/ready"
echo "$root"
