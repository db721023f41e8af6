#!/bin/bash
# aio.sh - the aio layer's cost per request beside the io_uring layer's,
# on the same fio job (bench/guest_aio.sh), in a qemu guest: the host's
# kernel lets no fentry or kprobe attach, which the aio layer needs.
#
#   make all && bench/aio.sh [ROUNDS [SECONDS [IODEPTH]]]   # as root
#
# IOSB_VM_KERNEL=6.12 for Debian's 6.12. Writes
# bench/results/aio-YYYY-MM-DD[-6.12].md (the guest's table, its rounds
# and the machine) and prints it. The guest is emulated (TCG): its
# figures are many times a real CPU's; the two layers' ratio is the point.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=bench/aio.sh
[[ -x $root/build/iostackbreak ]] || { echo "$prog: run 'make all' first" >&2; exit 2; }
files=(--file "$root/build/iostackbreak")
for t in fio jq; do
	p=$(command -v "$t") || { echo "$prog: $t not found: apt-get install $t" >&2; exit 2; }
	files+=(--file "$p")
done
log=$(mktemp "${TMPDIR:-/tmp}/iosb-bench-aio.XXXXXX")
trap 'rm -f "$log"' EXIT
IOSB_VM_MODULES=null_blk "$root/tools/vm/run.sh" --timeout 1800 "${files[@]}" \
	"$root/bench/guest_aio.sh" "$@" | tee "$log"
grep -q '^GUEST RESULT: done' "$log" || { echo "$prog: the guest did not finish" >&2; exit 1; }
out=$root/bench/results/aio-$(date -u +%F)${IOSB_VM_KERNEL:+-$IOSB_VM_KERNEL}.md
{
	echo "# aio and io_uring layers: cost per request ($(date -u +%F))"
	echo
	echo "bench/aio.sh $*: fio 4 KiB O_DIRECT random reads on null_blk, Debian's" \
		"${IOSB_VM_KERNEL:-6.1} cloud kernel in a 1-vCPU TCG guest on" \
		"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')."
	echo
	sed -n '/^| engine/,/^GUEST RESULT/p' "$log" | grep '^|'
	echo
	echo "Rounds:"
	echo
	grep '^round ' "$log" | sed 's/^/    /'
} >"$out"
cat "$out"
