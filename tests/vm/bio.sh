#!/bin/bash
# bio.sh - the bio layer on stacked devices in the VM (guest_bio.sh):
# dm-linear, then dm-delay, over the guest's raw disk vdd; dm-crypt and
# dm-flakey over null_blk; md RAID1 over two null_blk.
#
#   make all && tests/vm/bio.sh [N [DELAY_MS]]   # as root, under the VM lock
#
# Copies build/iostackbreak, build/iowork, the host's jq and dmsetup (with
# their libraries) and mdadm into the guest and loads dm-delay (and dm-mod),
# dm-crypt with xts (AES is built in), dm-flakey, null_blk and raid1.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=tests/vm/bio.sh
for f in build/iostackbreak build/iowork; do
	[[ -x $root/$f ]] || { echo "$prog: $root/$f missing: run 'make all' first" >&2; exit 2; }
done
files=(--file "$root/tests/vm/guest_lib.sh" --file "$root/build/iostackbreak" --file "$root/build/iowork")
for t in jq dmsetup mdadm; do
	p=$(command -v "$t") || { echo "$prog: $t not found on the host: apt-get install $t" >&2; exit 2; }
	files+=(--file "$p")
done
log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm-bio.XXXXXX")
trap 'rm -f "$log"' EXIT
IOSB_VM_MODULES="${IOSB_VM_MODULES:-} dm-delay dm-crypt xts dm-flakey null_blk raid1" "$root/tools/vm/run.sh" \
	--timeout "${IOSB_VM_TIMEOUT:-420}" "${files[@]}" "$root/tests/vm/guest_bio.sh" "$@" | tee "$log"
rc=${PIPESTATUS[0]}
line=$(sed -n 's/^GUEST RESULT: //p' "$log" | tail -n 1)
echo "${line:-no result from the guest}"
# Under CI every check can run: a skip fails the run too.
((rc == 0)) && [[ $line == *" 0 failed, "* ]] && { [[ -z ${CI:-} ]] || [[ $line == *" 0 skipped" ]]; }
