#!/bin/bash
# run.sh - the VM suite: tests/vm/guest_layers.sh in a qemu guest booting
# Debian's cloud kernel (fentry and kprobes work there, not on our hosts).
#
#   make all && tests/vm/run.sh [N [NF]]     # or: make vm
#
# Builds nothing: expects build/iostackbreak, build/iowork and
# build/compat32 (make vm builds them), and
# jq on the host (scripts/install-test-deps.sh). Copies them into the guest with
# tools/vm/run.sh, streams the guest's output, then prints "P passed,
# F failed" (counting the guest's PASS/FAIL lines). N (calls per phase,
# default 200) and NF (fsyncs per fsync phase, default 20) are passed on to
# the guest script. Exit status: the guest's (0 only if every check passed;
# 124 timeout, 125 boot failure, see tools/vm/run.sh).
#
# A guest that stalls is not run again: the suite fails, and the stall is
# explained. Every run sets up tools/vm/run.sh's IOSB_VM_DIAG=quiet (qemu's
# monitor, the guest's kallsyms); if the guest reports a soft lockup or an
# RCU stall, or times out, every vCPU's RIP and stack are dumped and kept,
# with the console log, in a directory this script names. Clean runs leave
# nothing behind.
#
# Environment: IOSB_VM_TIMEOUT (guest timeout in seconds, default 600 (the suite took 383-427 s with fuse and aio in it): on a
# busy 2-core host under TCG the suite was still at its breakdown checks
# after 300 s, 2026-11-24), IOSB_VM_DIAG (default quiet; 0 for none, 1 for
# a loglevel=7 console), and tools/vm/run.sh's own (IOSB_VM_KEEP=1,
# IOSB_VM_CACHE, IOSB_VM_DIAG_DIR, ...). With
# IOSB_VM_FLAVOUR=amd64 the guest boots Debian's generic kernel, which has
# f2fs: the f2fs module and the host's mkfs.f2fs (f2fs-tools) go in, and the
# guest tests f2fs like the other file systems (the cloud kernel has none).
# IOSB_VM_KERNEL=6.12 boots Debian 12's 6.12 kernel instead of its 6.1 (make
# vm-6.12). IOSB_VM_FLAVOUR=cloud-arm64 boots Debian's arm64 cloud kernel
# under qemu-system-aarch64 with the cross build of build-arm64/ (make
# vm-arm64).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=tests/vm/run.sh

# An arm64 guest (IOSB_VM_FLAVOUR=cloud-arm64, make vm-arm64) runs the
# cross build in build-arm64/ and Debian's arm64 jq.
build=build target="make vm"
[[ ${IOSB_VM_FLAVOUR:-} != *-arm64 ]] || build=build-arm64 target="make vm-arm64"
for f in $build/iostackbreak $build/iowork $build/compat32; do
	[[ -x $root/$f ]] || { echo "$prog: $root/$f missing: run '$target' (it builds it)" >&2; exit 2; }
done
if [[ $build == build-arm64 ]]; then
	jq=${IOSB_VM_CACHE:-/var/cache/iostackbreak-vm}/userland-arm64/usr/bin/jq
	mkfs_ext4=${IOSB_VM_CACHE:-/var/cache/iostackbreak-vm}/userland-arm64/sbin/mkfs.ext4
	bindfs=${IOSB_VM_CACHE:-/var/cache/iostackbreak-vm}/userland-arm64/usr/bin/bindfs
	IOSB_VM_FLAVOUR=cloud-arm64 "$root/tools/vm/fetch-kernel.sh" || exit 2
else
	jq=$(command -v jq) || { echo "$prog: jq not found on the host: run scripts/install-test-deps.sh (or apt-get install jq)" >&2; exit 2; }
	mkfs_ext4=$(command -v mkfs.ext4) || { echo "$prog: mkfs.ext4 not found on the host: apt-get install e2fsprogs" >&2; exit 2; }
	bindfs=$(command -v bindfs) || { echo "$prog: bindfs not found on the host: run scripts/install-test-deps.sh (or apt-get install bindfs)" >&2; exit 2; }
fi

log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm-suite.XXXXXX")
diagdir=${IOSB_VM_DIAG_DIR:-}
own_diagdir=0
# The stall diagnosis reads x86 registers (tools/vm/stall-dump.py).
[[ $build == build ]] || export IOSB_VM_DIAG=${IOSB_VM_DIAG:-0}
if [[ -z $diagdir && ${IOSB_VM_DIAG:-quiet} != 0 ]]; then
	diagdir=$(mktemp -d "${TMPDIR:-/tmp}/iosb-vm-diag.XXXXXX")
	own_diagdir=1
fi
trap 'rm -f "$log"' EXIT
start=$(date +%s.%N)

modules="null_blk fuse" # a device with a known delay (delayed_device_run); bindfs
# A disk that fails commands on demand (requeue_run); Debian's arm64 cloud
# kernel has no scsi_debug.
if [[ $build == build ]]; then modules+=" sd_mod scsi_debug"; fi
files=(--file "$root/tests/vm/guest_lib.sh" --file "$root/$build/iostackbreak" --file "$root/$build/iowork"
	--file "$root/$build/compat32"
	--file "$jq" --file "$mkfs_ext4" --file "$bindfs")
if [[ ${IOSB_VM_FLAVOUR:-} == amd64 ]]; then
	mkfs_f2fs=$(command -v mkfs.f2fs) ||
		{ echo "$prog: mkfs.f2fs not found on the host: apt-get install f2fs-tools" >&2; exit 2; }
	modules+=" f2fs"
	files+=(--file "$mkfs_f2fs")
fi
run_guest() {
	IOSB_VM_MODULES="${IOSB_VM_MODULES:-} $modules" IOSB_VM_DIAG="${IOSB_VM_DIAG:-quiet}" \
		IOSB_VM_DIAG_DIR="$diagdir" "$root/tools/vm/run.sh" \
		--timeout "${IOSB_VM_TIMEOUT:-600}" "${files[@]}" \
		"$root/tests/vm/guest_layers.sh" "$@" | tee "$log"
	rc=${PIPESTATUS[0]}
}
run_guest "$@"
if grep -Eq 'soft lockup|rcu: INFO|detected stall|kthread starved|timer wakeup didn' "$log"; then
	echo "$prog: THE GUEST STALLED (see above); not rerun. Where each vCPU was: $diagdir/stall-dump.txt; console: $diagdir/console.log. Please add them to issue 19." >&2
elif grep -Eq 'Oops|Kernel panic|BUG: kernel' "$log"; then
	# Under thread=multi, qemu 7.2 runs stale patched text (tests/vm/README.md).
	echo "$prog: THE GUEST KERNEL FAULTED (see above); not rerun. Console: $diagdir/console.log (accel ${IOSB_VM_ACCEL:-default}). Please add it to issue 19." >&2
elif ((rc == 124)); then
	echo "$prog: the guest timed out without reporting a stall (slow host, or a silent stall: $diagdir/stall-dump.txt says where each vCPU was)" >&2
elif ((own_diagdir)); then
	rm -rf "$diagdir"
fi
# The guest's own tally is authoritative: console lines can be mangled by
# kernel messages, so counting PASS lines here is only the fallback.
passed=$(sed -n 's/^GUEST RESULT: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/^GUEST RESULT: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$log" | tail -n 1)
skipped=$(sed -n 's/^GUEST RESULT: .*, \([0-9]*\) skipped.*/\1/p' "$log" | tail -n 1)
[[ -n $passed ]] || passed=$(grep -c '^PASS ' "$log")
[[ -n $failed ]] || failed=$(grep -c '^FAIL ' "$log")
[[ -n $skipped ]] || skipped=$(grep -c '^SKIP ' "$log")
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
echo "$prog: guest exit status $rc, suite took $secs s" >&2
if ((rc == 0 && (failed > 0 || passed == 0))); then
	# The guest said success but its checks disagree (or none ran).
	rc=1
fi
if ((rc == 0 && skipped > 0)) && [[ -n ${CI:-} ]]; then
	# CI's machines can run every check: a skip is a set-up fault there.
	echo "$prog: $skipped checks skipped under CI" >&2
	rc=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit "$rc"
