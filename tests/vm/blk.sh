#!/bin/bash
# blk.sh - the block layer exact on Debian's stock kernel (guest_blk.sh):
# fio's three loads on the guest's raw disk vdd, with the default programs
# and with the programs keyed by request, none missed.
#
#   make all && tests/vm/blk.sh [SECONDS]   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak and the host's fio and jq (with their
# libraries) into the guest.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=tests/vm/blk.sh
[[ -x $root/build/iostackbreak ]] || { echo "$prog: build/iostackbreak missing: run 'make all' first" >&2; exit 2; }
files=(--file "$root/tests/vm/guest_lib.sh" --file "$root/build/iostackbreak")
for t in fio jq; do
	p=$(command -v "$t") || { echo "$prog: $t not found on the host: apt-get install $t" >&2; exit 2; }
	files+=(--file "$p")
done
log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm-blk.XXXXXX")
trap 'rm -f "$log"' EXIT
"$root/tools/vm/run.sh" --timeout "${IOSB_VM_TIMEOUT:-600}" "${files[@]}" \
	"$root/tests/vm/guest_blk.sh" "$@" | tee "$log"
rc=${PIPESTATUS[0]}
line=$(sed -n 's/^GUEST RESULT: //p' "$log" | tail -n 1)
echo "${line:-no result from the guest}"
# Under CI every check can run: a skip fails the run too.
((rc == 0)) && [[ $line == *" 0 failed, "* ]] && { [[ -z ${CI:-} ]] || [[ $line == *" 0 skipped" ]]; }
