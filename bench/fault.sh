#!/bin/bash
# fault.sh - the fault layer's cost: per fault, and what tracing faults
# adds to minor faults, which are far more frequent than major ones
# (bench/guest_fault.sh), in a qemu guest: the host's kernel lets no fentry
# or kprobe attach, which the fault layer needs.
#
#   make all && bench/fault.sh [ROUNDS]   # as root
#
# IOSB_VM_KERNEL=6.12 for Debian's 6.12. Writes
# bench/results/fault-YYYY-MM-DD[-6.12].md (the guest's table and rounds)
# and prints it. The guest is emulated (TCG): its figures are many times a
# real CPU's; the share of a minor fault's time is the point.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=bench/fault.sh
for b in iostackbreak faultwork; do
	[[ -x $root/build/$b ]] || { echo "$prog: run 'make all' first" >&2; exit 2; }
done
files=(--file "$root/build/iostackbreak" --file "$root/build/faultwork")
p=$(command -v jq) || { echo "$prog: jq not found: apt-get install jq" >&2; exit 2; }
files+=(--file "$p")
log=$(mktemp "${TMPDIR:-/tmp}/iosb-bench-fault.XXXXXX")
trap 'rm -f "$log"' EXIT
"$root/tools/vm/run.sh" --timeout 1800 "${files[@]}" "$root/bench/guest_fault.sh" "$@" | tee "$log"
grep -q '^GUEST RESULT: done' "$log" || { echo "$prog: the guest did not finish" >&2; exit 1; }
out=$root/bench/results/fault-$(date -u +%F)${IOSB_VM_KERNEL:+-$IOSB_VM_KERNEL}.md
{
	echo "# fault layer: cost per fault, and on minor faults ($(date -u +%F))"
	echo
	echo "bench/fault.sh $*: Debian's ${IOSB_VM_KERNEL:-6.1} cloud kernel in a 1-vCPU TCG" \
		"guest on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')."
	echo
	# The guest's table and its rounds, as it printed them.
	sed -n '/^| faults/,/^GUEST RESULT/p' "$log" | grep -v '^GUEST RESULT'
} >"$out"
cat "$out"
