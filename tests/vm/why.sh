#!/bin/bash
# why.sh - why calls waited, and the pages they added, in the VM
# (guest_why.sh): the lock, journal and cache checks of
# tests/integration/test_why.py with the calls split at the ext4 layer,
# traced with --attach=fentry and --attach=kprobe (make vm-why).
#
#   make all && tests/vm/why.sh [lock] [journal] [cache]   # as root
#
# Copies build/iostackbreak, build/iowork, the host's jq and mkfs.ext4 into
# the guest. IOSB_VM_KERNEL=6.12 boots Debian 12's 6.12 kernel instead of
# its 6.1. Prints the guest's "P passed, F failed, K known to fail"; exit
# status 1 if any check failed or the guest did not finish.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=tests/vm/why.sh
for f in build/iostackbreak build/iowork; do
	[[ -x $root/$f ]] || { echo "$prog: $root/$f missing: run 'make all' first" >&2; exit 2; }
done
files=(--file "$root/build/iostackbreak" --file "$root/build/iowork")
for t in jq mkfs.ext4; do
	p=$(command -v "$t") || { echo "$prog: $t not found on the host: run scripts/install-test-deps.sh" >&2; exit 2; }
	files+=(--file "$p")
done
log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm-why.XXXXXX")
trap 'rm -f "$log"' EXIT
"$root/tools/vm/run.sh" --timeout "${IOSB_VM_TIMEOUT:-420}" "${files[@]}" \
	"$root/tests/vm/guest_why.sh" "$@" | tee "$log"
rc=${PIPESTATUS[0]}
line=$(sed -n 's/^GUEST RESULT: //p' "$log" | tail -n 1)
echo "${line:-no result from the guest}"
((rc == 0)) && [[ $line == *" 0 failed"* ]]
