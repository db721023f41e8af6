#!/bin/bash
# guest_iowait.sh - why a read of a delayed device shows its wait outside
# io_wait: null_blk delayed DELAY_NS, N O_DIRECT preads under
# `iostackbreak -T syscall,blk --slower`, with BUSY busy loops beside it,
# and the kernel's own sched trace of the reader (ftrace, mono clock) kept
# for the events whose io_wait is under 80% of the delay.
#
#   IOSB_VM_KERNEL=6.12 IOSB_VM_MODULES=null_blk tools/vm/run.sh \
#       --file build/iostackbreak --file build/iowork --file "$(command -v jq)" \
#       tests/vm/guest_iowait.sh slow|da [N [BUSY [FEATURE]]]
#
# FEATURE, e.g. NO_DELAY_DEQUEUE, is written to sched/features first.
# da: busybox dd's N O_DIRECT reads of the same device under -T syscall -P,
# its io_wait against the kernel's delay accounting (blkio ticks, from the
# zombie's stat) and against the sched trace (each D sleep to its wakeup).
set -u
MODE=${1:-slow} N=${2:-200} BUSY=${3:-1} FEATURE=${4:-} DELAY_NS=2000000
T=/sys/kernel/tracing
[[ -e /sys/kernel/debug/sched ]] || mount -t debugfs none /sys/kernel/debug
[[ -d $T/events ]] || mount -t tracefs none "$T"
[[ -z $FEATURE ]] || echo "$FEATURE" >/sys/kernel/debug/sched/features
echo "guest: $(uname -r), $(nproc) CPUs, features: $(tr ' ' '\n' </sys/kernel/debug/sched/features | grep -i delay | tr '\n' ' ')"
echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
rmmod null_blk 2>/dev/null
modprobe null_blk nr_devices=1 queue_mode=2 irqmode=2 completion_nsec="$DELAY_NS" || exit 1
dev=$(cat /sys/block/nullb0/dev)
busy=()
for ((i = 0; i < BUSY; i++)); do
	(while :; do :; done) &
	busy+=($!)
done
echo 0 >"$T/tracing_on"
echo mono >"$T/trace_clock"
echo 8192 >"$T/buffer_size_kb"
: >"$T/trace"
echo 'prev_comm == "iowork" || next_comm == "iowork"' >"$T/events/sched/sched_switch/filter"
echo 'comm == "iowork"' >"$T/events/sched/sched_wakeup/filter"
echo 'comm == "iowork"' >"$T/events/sched/sched_waking/filter"
for e in sched/sched_switch sched/sched_wakeup sched/sched_waking block/block_rq_issue \
	block/block_rq_complete; do
	echo 1 >"$T/events/$e/enable"
done
echo 1 >"$T/tracing_on"
if [[ $MODE == da ]]; then
	echo 1 >/proc/sys/kernel/task_delayacct
	echo 'comm == "dd"' >"$T/events/sched/sched_waking/filter"
	echo 'prev_comm == "dd" || next_comm == "dd"' >"$T/events/sched/sched_switch/filter"
	echo 'comm == "dd"' >"$T/events/sched/sched_wakeup/filter"
	rm -f /tmp/da.pid /tmp/da.stat
	cat >/tmp/da.sh <<-'EOS'
		sh -c 'dd if=/dev/nullb0 of=/dev/null bs=4096 count="$1" iflag=direct 2>/dev/null &
			echo "$!" >/tmp/da.pid.new && mv /tmp/da.pid.new /tmp/da.pid
			exec sleep 600' da "$1" &
		holder=$!
		while [ ! -s /tmp/da.pid ]; do :; done
		p=$(cat /tmp/da.pid)
		while s=$(cat "/proc/$p/stat"); do
			case "$s" in
			*") Z "*) echo "$s" >/tmp/da.stat; break ;;
			esac
		done
		kill "$holder"
		wait
	EOS
	iostackbreak -T syscall -P --json -- sh /tmp/da.sh "$N" >/tmp/t.json 2>/tmp/t.err
	echo 0 >"$T/tracing_on"
	kill "${busy[@]}" 2>/dev/null
	pid=$(cat /tmp/da.pid)
	ticks=$(awk '{ print $42 }' /tmp/da.stat)
	io=$(grep '^{' /tmp/t.json | tail -n 1 | jq --argjson p "$pid" '.breakdown_by_process[] | select(.pid == $p and .op == "read") | .parts[] | select(.part == "io_wait") | .sum_ns')
	# The sched trace: from each switch-out of dd in D to its next wakeup.
	ft=$(awk -v p="$pid" '
		/sched_switch:/ && $0 ~ ("prev_pid=" p " ") && / prev_state=D / { t = $4 + 0; out = 1 }
		/sched_wakeup:/ && $0 ~ ("pid=" p " ") && out { sum += $4 - t; n++; out = 0 }
		END { printf "%.0f ns over %d sleeps", sum * 1e9, n }' "$T/trace")
	echo "uptime $(cut -d' ' -f1 /proc/uptime) s; dd pid $pid: kernel blkio ${ticks} ticks; ours io_wait ${io} ns; sched trace D->wakeup ${ft}"
	rmmod null_blk
	exit 0
fi
iowork -w pread/D "$N" /dev/nullb0 >/tmp/w.out 2>/tmp/w.err &
wpid=$!
while ! grep -q '^READY' /tmp/w.out 2>/dev/null; do sleep 0.1; done
iostackbreak -p "$wpid" -T syscall,blk -d nullb0 --slower=$((DELAY_NS / 1000))us --json \
	>/tmp/t.json 2>/tmp/t.err &
tpid=$!
while ! grep -q 'Hit Ctrl-C to end' /tmp/t.err; do sleep 0.2; done
kill -USR1 "$wpid"
wait "$wpid"
wait "$tpid"
echo 0 >"$T/tracing_on"
kill "${busy[@]}" 2>/dev/null
cp "$T/trace" /tmp/trace.txt
rmmod null_blk
n=$(jq -s '[.[] | select(.event == "io" and .op == "read")] | length' /tmp/t.json)
bad=$(jq -c -s --argjson d "$DELAY_NS" '[.[] | select(.event == "io" and .op == "read")]
	| to_entries[] | select(.value.parts.io_wait < 0.8 * $d)
	| {i: .key, lat: .value.latency_ns, parts: .value.parts, max: .value.blk.max_ns}' /tmp/t.json)
echo "events: $n of $N; bad: $(grep -c . <<<"$bad")"
echo "median io_wait: $(jq -s '[.[] | select(.event == "io" and .op == "read") | .parts.io_wait] | sort | .[length / 2 | floor]' /tmp/t.json)"
# The i-th read's request is the i-th nullb0 issue: its window in the trace.
grep -n "block_rq_issue: ${dev%:*},${dev#*:} R" /tmp/trace.txt | cut -d: -f1 >/tmp/issues
while read -r ev; do
	[[ -n $ev ]] || continue
	i=$(jq -r .i <<<"$ev")
	echo "BAD $ev"
	from=$(sed -n "$((i + 1))p" /tmp/issues)
	to=$(sed -n "$((i + 2))p" /tmp/issues)
	[[ -n $from ]] || continue
	sed -n "$((from - 3)),$((${to:-$((from + 12))} - 1))p" /tmp/trace.txt | cut -c1-220 | sed 's/^/    /'
done <<<"$bad"
echo "issues in the trace: $(wc -l </tmp/issues)"
