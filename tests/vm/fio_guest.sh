#!/bin/bash
# fio_guest.sh - runs a guest script that drives fio (tests/vm/guest_blk.sh,
# guest_aio.sh) in a qemu guest on Debian's stock kernel, with
# build/iostackbreak, guest_lib.sh and the host's fio and jq (with their
# libraries) copied in, and checks its closing "GUEST RESULT" line.
#
#   tests/vm/fio_guest.sh [--file FILE]... GUEST_SCRIPT [ARGS...]   # as root
#
# --file: more files for the guest (tools/vm/run.sh); IOSB_VM_KERNEL=6.12
# for 6.12.
#
# IOSB_VM_TIMEOUT: the guest's time limit in seconds (default 600).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=tests/vm/fio_guest.sh
[[ $# -ge 1 ]] || { echo "usage: $prog GUEST_SCRIPT [ARGS...]" >&2; exit 2; }
[[ -x $root/build/iostackbreak ]] || { echo "$prog: build/iostackbreak missing: run 'make all' first" >&2; exit 2; }
files=(--file "$root/tests/vm/guest_lib.sh" --file "$root/build/iostackbreak")
for t in fio jq; do
	p=$(command -v "$t") || { echo "$prog: $t not found on the host: apt-get install $t" >&2; exit 2; }
	files+=(--file "$p")
done
log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm-fio.XXXXXX")
trap 'rm -f "$log"' EXIT
"$root/tools/vm/run.sh" --timeout "${IOSB_VM_TIMEOUT:-600}" "${files[@]}" "$@" | tee "$log"
rc=${PIPESTATUS[0]}
line=$(sed -n 's/^GUEST RESULT: //p' "$log" | tail -n 1)
echo "${line:-no result from the guest}"
# Under CI every check can run: a skip fails the run too.
((rc == 0)) && [[ $line == *" 0 failed, "* ]] && { [[ -z ${CI:-} ]] || [[ $line == *" 0 skipped" ]]; }
