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
#   MODE tracefs-hot   without iostackbreak, patching HOT code: for 1 s a
#                      round, over and over, the scheduler's, timer's and
#                      irq's tracepoints enabled and disabled one by one
#                      (each flips a static key: its jump labels in
#                      try_to_wake_up, __schedule, ... are rewritten with
#                      text_poke_bp while both vCPUs run them), then kprobes
#                      at the entry of hot functions (ftrace rewrites their
#                      first bytes, as fentry does) enabled and disabled;
#                      a wakeup-heavy workload runs on both vCPUs: two
#                      shells ping-ponging a line through two fifos, a
#                      shell opening a file in a loop, and a short sleep
#                      loop (timer wakeups)
# while a light workload (a read and a write of ext4 and xfs files every
# 0.2 s) runs beside it. Prints "LOOP i MODE ... s" per round (with
# tracefs-hot, the number of enable/disable cycles in it) and
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

# tracefs-hot: tracepoints on hot paths, and hot functions whose first
# bytes ftrace patches for an entry kprobe (__x64_sys_openat: where a 6.1
# guest's vCPU1 spun while fentry attached, tests/vm/README.md).
tr=/sys/kernel/tracing
HOT_EVENTS=(sched/sched_wakeup sched/sched_waking sched/sched_switch
	timer/hrtimer_start timer/hrtimer_expire_entry irq/irq_handler_entry)
HOT_FUNCS=(try_to_wake_up pipe_read pipe_write ksys_read ksys_write
	__x64_sys_openat do_nanosleep)
hot_events=() hot_kprobes=0 hot_pids=()
hot_setup() {
	local e f i=0
	for e in "${HOT_EVENTS[@]}"; do
		[[ -e $tr/events/$e/enable ]] && hot_events+=("$tr/events/$e/enable")
	done
	for f in "${HOT_FUNCS[@]}"; do
		echo "p:iosbhot/h$i $f" >>"$kev" 2>/dev/null && i=$((i + 1))
	done
	hot_kprobes=$i
	echo "HOT: ${#hot_events[@]} tracepoints, $hot_kprobes of ${#HOT_FUNCS[@]} kprobes"
	((${#hot_events[@]} + hot_kprobes > 0)) || return 1
	# The workload: each line through the fifos is two cross-task
	# wakeups (bash reads a pipe a byte a syscall: many more).
	mkfifo /tmp/ping /tmp/pong || return 1
	(exec 3</tmp/ping 4>/tmp/pong; while read -r x <&3; do echo "$x" >&4; done) &
	hot_pids+=($!)
	(exec 4>/tmp/ping 3</tmp/pong; echo 0 >&4
		while read -r x <&3; do echo $((x + 1)) >&4; done) &
	hot_pids+=($!)
	(while :; do : </mnt/ext4/loop.dat; done) &
	hot_pids+=($!)
	(while :; do sleep 0.01; done) &
	hot_pids+=($!)
}
# One cycle: every hot tracepoint on, then off, one at a time; the hot
# kprobes on and off together (one ftrace update for all of them).
hot_cycle() {
	local e
	for e in "${hot_events[@]}"; do echo 1 >"$e" || return 1; done
	for e in "${hot_events[@]}"; do echo 0 >"$e" || return 1; done
	if ((hot_kprobes)); then
		echo 1 >"$tr/events/iosbhot/enable" || return 1
		echo 0 >"$tr/events/iosbhot/enable" || return 1
	fi
}
cycles=0
hot_round() {
	local t0
	t0=$(uptime_s)
	cycles=0
	while awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { exit !(b - a < 1) }'; do
		hot_cycle || return 1
		cycles=$((cycles + 1))
	done
}
if [[ $mode == tracefs-hot ]]; then
	hot_setup || { echo "stall_loop.sh: no hot tracepoint or kprobe could be set up"; exit 2; }
fi
total_cycles=0

t_all=$(uptime_s)
rounds=0 failed=0
while awk -v a="$t_all" -v b="$(uptime_s)" -v s="$secs" 'BEGIN { exit !(b - a < s) }'; do
	t0=$(uptime_s)
	case $mode in
	tool) iostackbreak "$@" --duration=1 >/tmp/loop.out 2>/tmp/loop.err ;;
	tracefs) tracefs_round 2>/tmp/loop.err ;;
	tracefs-hot) hot_round 2>/tmp/loop.err ;;
	*) echo "stall_loop.sh: unknown MODE '$mode' (tool, tracefs or tracefs-hot)"; exit 2 ;;
	esac
	rc=$?
	rounds=$((rounds + 1))
	extra=''
	if [[ $mode == tracefs-hot ]]; then
		total_cycles=$((total_cycles + cycles))
		extra=" cycles=$cycles"
	fi
	echo "LOOP $rounds $mode rc=$rc$extra $(since "$t0") s"
	if ((rc != 0)); then
		failed=$((failed + 1))
		tail -n 5 /tmp/loop.err
	fi
done
kill "$work" "${hot_pids[@]}" 2>/dev/null
wait 2>/dev/null
extra=''
[[ $mode == tracefs-hot ]] && extra=", $total_cycles enable/disable cycles"
echo "STALL-LOOP: $rounds rounds in $(since "$t_all") s, $failed failed$extra"
((failed == 0))
