#!/bin/sh
# dkms_source.sh DEST - writes dimmap.ko's DKMS source tree into DEST: Kbuild, the module's
# sources, the shared policy (runtime/policy), the uapi header and dkms.conf with the
# project's version. `make dkms-install` puts it in /usr/src/dimmap-VERSION; prints VERSION.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kernel=$(dirname "$here")
runtime=$(dirname "$kernel")
dest=${1:?usage: dkms_source.sh DEST}
version=$(sed -n 's/^project(dimmap VERSION \([0-9.]*\).*/\1/p' "$(dirname "$runtime")/CMakeLists.txt")
[ -n "$version" ] || { echo "dkms_source.sh: no project version in CMakeLists.txt" >&2; exit 1; }
mkdir -p "$dest"
cp "$kernel"/Kbuild "$kernel"/*.c "$kernel"/*.h "$runtime"/policy/dimmap_policy.c \
	"$runtime"/policy/dimmap_policy.h "$runtime"/policy/perma_model.c \
	"$runtime"/policy/perma_model.h "$runtime"/include/dimmap/dimmap_uapi.h "$dest/"
sed "s/@PROJECT_VERSION@/$version/" "$kernel/dkms.conf.in" > "$dest/dkms.conf"
echo "$version"
