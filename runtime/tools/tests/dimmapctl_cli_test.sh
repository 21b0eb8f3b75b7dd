#!/bin/sh
# dimmapctl_cli_test.sh DIMMAPCTL - the command line without the module: usage, names,
# and clear errors. (With the module, dimmapctl runs inside the qemu tests.)
set -u
ctl=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0
expect() { # expect STATUS TEXT -- CMD...: exit status and a piece of its output
	want_status=$1 want_text=$2
	shift 3
	"$@" >"$out" 2>&1
	status=$?
	if [ "$status" != "$want_status" ] || ! grep -q -- "$want_text" "$out"; then
		echo "FAIL: $* -> status $status (want $want_status), output:" >&2
		cat "$out" >&2
		fails=$((fails + 1))
	fi
}
expect 0 "link" -- "$ctl" --help
expect 0 "needs CAP_SYS_ADMIN" -- "$ctl" link --help
expect 2 "dimmapctl: A subcommand is required" -- "$ctl"
expect 2 "dimmapctl: The following argument was not expected: --bogus" -- "$ctl" list --bogus
expect 1 "not a dimmap device" -- "$ctl" unlink /dev/vda
expect 1 "not a dimmap device" -- "$ctl" sync dimmap256
if [ ! -e /dev/dimmap_ctl ]; then
	expect 1 "is dimmap.ko loaded" -- "$ctl" version
	expect 1 "is dimmap.ko loaded" -- "$ctl" list
	expect 1 "is dimmap.ko loaded" -- "$ctl" stats 0
fi
[ "$fails" = 0 ] && echo "dimmapctl CLI: all checks passed"
exit $((fails != 0))
