#!/bin/bash
# stall_loop.sh - guest script: attach and detach kernel probes in a loop,
# to reproduce the TCG guest stall (issue 19) many times faster than the
# whole VM suite does.
#
#   IOSB_VM_DIAG=1 tools/vm/run.sh --timeout T [--file build/iostackbreak] \
#       tests/vm/stall_loop.sh SECS MODE [ARGS...]
#
# For SECS seconds, over and over:
#   MODE tool ARGS...  `iostackbreak ARGS --duration=1` (attach, trace 1 s,
#                      detach), e.g. `tool --attach=kprobe --no-offcpu`
#   MODE tracefs       without iostackbreak: kprobes and kretprobes on the
#                      functions the tool probes (vfs_read, vfs_write,
#                      ext4_file_read_iter, ...) added, enabled, disabled
#                      and removed through tracefs' kprobe_events
# while a light workload (a read and a write of ext4 and xfs files every
# 0.2 s) runs beside it. Prints "LOOP i MODE ... s" per round and
# "STALL-LOOP: i rounds in S s" at the end; exit status 0 unless a round
# failed. A stall shows as a guest that stops printing (run.sh's timeout,
# and with IOSB_VM_DIAG=1 its vCPU dumps).
set -uo pipefail

secs=${1:?usage: stall_loop.sh SECS MODE [ARGS...]}
mode=${2:?usage: stall_loop.sh SECS MODE [ARGS...]}
shift 2

uptime_s() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }

dd if=/dev/urandom of=/mnt/ext4/loop.dat bs=64k count=16 2>/dev/null
dd if=/dev/urandom of=/mnt/xfs/loop.dat bs=64k count=16 2>/dev/null
(
	while :; do
		cat /mnt/ext4/loop.dat /mnt/xfs/loop.dat >/dev/null
		echo x >>/mnt/ext4/loop.log
		sleep 0.2
	done
) &
work=$!

# Functions the tool's kprobe cells use on this kernel (see --plan).
FUNCS=(vfs_read vfs_write vfs_fsync_range do_sys_openat2 ext4_file_read_iter
	ext4_file_write_iter ext4_sync_file xfs_file_read_iter xfs_file_write_iter
	btrfs_file_read_iter)
kev=/sys/kernel/tracing/kprobe_events
tracefs_round() {
	local f i=0
	for f in "${FUNCS[@]}"; do
		echo "p:iosb/e$i $f" >>"$kev" || return 1
		echo "r:iosb/r$i $f" >>"$kev" || return 1
		i=$((i + 1))
	done
	echo 1 >/sys/kernel/tracing/events/iosb/enable || return 1
	sleep 1
	echo 0 >/sys/kernel/tracing/events/iosb/enable || return 1
	for ((i = 0; i < ${#FUNCS[@]}; i++)); do
		echo "-:iosb/e$i" >>"$kev" || return 1
		echo "-:iosb/r$i" >>"$kev" || return 1
	done
}

t_all=$(uptime_s)
rounds=0 failed=0
while awk -v a="$t_all" -v b="$(uptime_s)" -v s="$secs" 'BEGIN { exit !(b - a < s) }'; do
	t0=$(uptime_s)
	case $mode in
	tool) iostackbreak "$@" --duration=1 >/tmp/loop.out 2>/tmp/loop.err ;;
	tracefs) tracefs_round 2>/tmp/loop.err ;;
	*) echo "stall_loop.sh: unknown MODE '$mode' (tool or tracefs)"; exit 2 ;;
	esac
	rc=$?
	rounds=$((rounds + 1))
	echo "LOOP $rounds $mode rc=$rc $(since "$t0") s"
	if ((rc != 0)); then
		failed=$((failed + 1))
		tail -n 5 /tmp/loop.err
	fi
done
kill "$work" 2>/dev/null
wait 2>/dev/null
echo "STALL-LOOP: $rounds rounds in $(since "$t_all") s, $failed failed"
((failed == 0))
