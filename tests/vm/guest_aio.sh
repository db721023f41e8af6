#!/bin/bash
# guest_aio.sh - the aio layer (Linux native AIO) on a stock kernel, in the
# guest of tests/vm/aio.sh (iostackbreak, fio and jq in PATH; the raw disk
# vdd, ext4 on vda at /mnt/ext4). Its truths are fio's JSON and
# /proc/diskstats.
#
#   1. --plan --check -T aio: one line, fentry on io_submit_one,
#      aio_complete and aio_fsync_work (--attach=kprobe: kprobes).
#   2. fio ioengine=libaio direct=1 bs=4k randread and randwrite at iodepth
#      1, 8 and 32, on vdd and on a file on /mnt/ext4, under
#      `iostackbreak -T aio,blk --json -- fio ...`: aio requests == fio's
#      total_ios; their block requests (tied to them) == total_ios, 4 KiB
#      each; on vdd the blk layer's count == total_ios == vdd's diskstats
#      delta; each op's parts add up to its total; nothing dropped. At
#      iodepth 1, the request's p50/p90/p99 within fio's lat (+7%); on
#      a null_blk device of 1 ms (2b) within 10% of fio's: the async
#      part's of fio's clat (both start when io_submit returned), the
#      whole request's of fio's lat. At 8
#      and 32 fio's clat also holds the time a completed event waits to be
#      reaped (fio reaps in batches): there the tool's p50 must not exceed
#      fio's lat p50 (+10% for the two histograms' buckets), as a
#      request's own time lies inside fio's lat of it.
#   3. A buffered libaio read of a file in the page cache: every request
#      completes inline, inside io_submit, with no block request, and the
#      text report says so.
#   4. IOCB_CMD_FDSYNC (aiowork: fio's libaio engine syncs with
#      fdatasync(2)): 100 O_DIRECT writes and fdsyncs on vdd: counts ==
#      aiowork's; their flushes == the blk layer's flushes == vdd's
#      diskstats flush delta; a worker ran each (worker > 0). IOCB_CMD_FSYNC
#      and IOCB_CMD_POLL on an ext4 file: counts, polls and buffered
#      writes inline.
#   5. -p PID (fio --thread, started once the tool is attached): counts as
#      in 2.
#   6. --attach=kprobe: counts as in 2 at iodepth 8.
# Prints PASS/FAIL lines and "GUEST RESULT: P passed, F failed, S skipped".
set -uo pipefail

SECS=${1:-2}
. guest_lib.sh
# within NAME GOT WANT PCT: |GOT - WANT| <= PCT% of WANT
within() {
	if [[ $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ && $3 -gt 0 ]] &&
		(((${2} - ${3}) * 100 <= $4 * ${3} && (${3} - ${2}) * 100 <= $4 * ${3})); then
		pass "$1 ($2 ns, fio $3 ns)"
	else
		fail "$1" "got ${2:-nothing} ns, fio ${3:-nothing} ns (${4}%)"
	fi
}
# at_most NAME GOT WANT PCT: GOT <= WANT + PCT%. A request lies inside
# fio's lat of it; PCT allows for the two histograms' buckets.
at_most() {
	if [[ $2 =~ ^[0-9]+$ && $3 =~ ^[0-9]+$ ]] && (($2 * 100 <= $3 * (100 + $4))); then
		pass "$1 ($2 ns, fio $3 ns)"
	else
		fail "$1" "got ${2:-nothing} ns, fio ${3:-none} ns (+$4%)"
	fi
}
# fio_pct DDIR KIND P: fio's P-th percentile of KIND (slat, clat, lat) of
# DDIR (read, write) in ns, its first job's; nothing where it has none.
fio_pct() { jq -r ".jobs[0].$1.$2_ns.percentile[\"$3.000000\"] // empty" /tmp/fio.json; }
cell() { # REPORT LAYER OP FIELD
	jq -r --arg l "$2" --arg o "$3" --arg f "$4" \
		'[.cells[] | select(.layer == $l and .op == $o) | .[$f]] | add // 0' <<<"$1"
}
part() { # REPORT OP PART FIELD: a part's figure in aio_breakdown
	jq -r --arg o "$2" --arg p "$3" --arg f "$4" '[.aio_breakdown[] | select(.op == $o) |
		.parts[] | select(.part == $p) | .[$f]] | add // 0' <<<"$1"
}
aio() { # REPORT OP FIELD
	jq -r --arg o "$2" --arg f "$3" '[.aio_breakdown[] | select(.op == $o) | .[$f]] | add // 0' <<<"$1"
}
# parts_add_up NAME REPORT OP: the parts' sums == the op's total.
parts_add_up() {
	local s
	s=$(jq -r --arg o "$3" '.aio_breakdown[] | select(.op == $o) |
		"\([.parts[].sum_ns] | add) \(.total_ns)"' <<<"$2")
	[[ -n $s && ${s% *} == "${s#* }" ]] && pass "$1: parts add up ($s)" ||
		fail "$1: parts add up" "${s:-no $3 in aio_breakdown}"
}
# check_requests NAME OP: the aio requests of OP in $rep, counted +
# missed, are fio's total_ios; sets ios, n and missed.
check_requests() {
	ios=$(jq "[.jobs[].$2.total_ios] | add" /tmp/fio.json)
	n=$(cell "$rep" aio "$2" count)
	# An event BPF did not see (a program does not run nested in itself,
	# an interrupt's completion during ours) is counted when its iocb
	# comes back: counted + missed = fio's.
	missed=$(jq '.dropped_by_reason.aio_completion_missed' <<<"$rep")
	check_count "$1: aio $2 requests $n + missed $missed = fio total_ios" "$((n + missed))" "$ios"
}

# 1. The plan.
plan_lines aio 'io_submit_one,aio_complete,aio_fsync_work'

# run_fio NAME [TOOL OPTIONS --] FIO ARGS: the tool runs fio; its last
# report in $rep, fio's JSON in /tmp/fio.json.
run_fio() {
	local name=$1 topts=()
	shift
	while [[ $1 != -- ]]; do
		topts+=("$1")
		shift
	done
	shift
	rm -f /tmp/aio.json /tmp/aio.err /tmp/fio.json
	timeout 900 iostackbreak -T aio,blk --json "${topts[@]}" -- \
		fio --name=a --output-format=json --output=/tmp/fio.json "$@" >/tmp/aio.json 2>/tmp/aio.err
	trc=$?
	rep=$(grep '^{' /tmp/aio.json | tail -n 1)
	if ((trc)) || [[ -z $rep || ! -s /tmp/fio.json ]]; then
		fail "$name" "the tool exited $trc: $(tail -n 3 /tmp/aio.err)"
		return 1
	fi
	return 0
}

# check_run NAME OP DEV DEPTH: the checks of 2 on the last run.
check_run() {
	local name=$1 op=$2 dev=$3 depth=$4 ios
	check_requests "$name" "$op"
	check_count "$name: their block requests" "$(aio "$rep" "$op" blk_requests)" "$n"
	check_count "$name: their bytes / 4096" "$(($(aio "$rep" "$op" blk_bytes) / 4096))" "$n"
	parts_add_up "$name" "$rep" "$op"
	check_count "$name: no other drop (dropped - missed + 1)" \
		"$(($(jq '.dropped' <<<"$rep") - missed + 1))" 1
	if [[ -n $dev ]]; then
		check_count "$name: blk $op = total_ios" "$(cell "$rep" blk "$op" count)" "$ios"
		check_count "$name: diskstats $dev $op delta" "$disk" "$ios"
	fi
	if ((depth == 1)); then
		# fio stamps a request's issue once io_submit returned, and its
		# end when it sees the event: clat is the request's async part,
		# lat holds its submit part too. fio reaps here by polling the
		# ring (userspace_reap): no wake-up of fio's is in either. In this
		# emulated CPU fio's own time around each request (its system
		# call's entry and exit, its loop) is 10-20 us, as much as 20% of
		# a virtio request (INFO lines): the 10% check is on nullb9 below,
		# a device of 1 ms. Here a request lies inside fio's lat of it:
		# each percentile at most fio's (+7%: the histograms' buckets).
		for p in 50 90 99; do
			at_most "$name: p$p within fio's lat p$p" "$(cell "$rep" aio "$op" p${p}_ns)" \
				"$(fio_pct "$op" lat $p)" 7
			info "$name p$p: tool $(cell "$rep" aio "$op" p${p}_ns) ns" \
				"(submit $(part "$rep" "$op" submit p${p}_ns), async" \
				"$(part "$rep" "$op" async p${p}_ns)); fio slat" \
				"$(fio_pct "$op" slat $p)" "clat $(fio_pct "$op" clat $p)" \
				"lat $(fio_pct "$op" lat $p)"
		done
	else
		at_most "$name: p50 within fio's lat p50" "$(cell "$rep" aio "$op" p50_ns)" \
			"$(fio_pct "$op" lat 50)" 10
	fi
}

# 2. Direct I/O on the raw disk and on a file.
fio --name=lay --filename=/mnt/ext4/aio.dat --size=64M --rw=write --bs=1M --direct=1 \
	--output=/dev/null >/dev/null 2>&1
sync
for target in vdd file; do
	for rw in randread randwrite; do
		op="read"
		[[ $rw == randwrite ]] && op="write"
		for depth in 1 8 32; do
			name="$target $rw QD$depth"
			if [[ $target == vdd ]]; then
				where=(--filename=/dev/vdd --size=60M)
				dev=vdd
			else
				where=(--filename=/mnt/ext4/aio.dat --size=64M)
				dev=
			fi
			rb=$(disk_reads vdd) wb=$(disk_writes vdd)
			# Iodepth 1: fio reaps by polling the ring, in user space.
			reap=()
			((depth == 1)) && reap=(--userspace_reap=1 --iodepth_batch_complete_min=0)
			run_fio "$name" -- "${where[@]}" --ioengine=libaio --direct=1 --bs=4k \
				--rw=$rw --iodepth=$depth --runtime="$SECS" --time_based \
				--lat_percentiles=1 --slat_percentiles=1 "${reap[@]}" || continue
			if [[ $op == read ]]; then disk=$(($(disk_reads vdd) - rb)); else disk=$(($(disk_writes vdd) - wb)); fi
			check_run "$name" "$op" "$dev" "$depth"
		done
	done
done

# 2b. Percentiles against fio's, on a device of 1 ms (null_blk completing
# by a timer, made in configfs): fio's own time per request is then 1-2%
# of it. Iodepth 1, fio polling the ring; the async part's p50 within 10%
# of fio's clat p50, the whole request's of fio's lat p50. fio's p90 and
# p99 hold more: on the guest's one CPU its poll loop is not always
# running when the event is posted (kernel threads, the tool's own
# reading), and the same job untraced shows that tail too (its INFO line).
# There each request lies inside fio's lat of it: p90 and p99 at most
# fio's (+7%: the histograms' buckets), the async part's at most fio's
# clat's.
nb=/sys/kernel/config/nullb/nullb9
# (The guest's userland has no mountpoint(1): /proc/mounts says.)
grep -q " /sys/kernel/config configfs " /proc/mounts ||
	mount -t configfs none /sys/kernel/config 2>/dev/null
if [[ -d /sys/kernel/config/nullb ]] && mkdir "$nb" 2>/dev/null &&
	echo 2 >"$nb/irqmode" && echo 1000000 >"$nb/completion_nsec" && echo 64 >"$nb/size" &&
	echo 1 >"$nb/power" && sleep 0.5 && [[ -b /dev/nullb9 ]]; then
	for rw in randread randwrite; do
		op="read"
		[[ $rw == randwrite ]] && op="write"
		name="nullb9 1ms $rw QD1"
		job=(--filename=/dev/nullb9 --size=60M --ioengine=libaio --direct=1 --bs=4k "--rw=$rw"
			--iodepth=1 --runtime="$SECS" --time_based --lat_percentiles=1
			--slat_percentiles=1 --userspace_reap=1 --iodepth_batch_complete_min=0)
		fio --name=u --output-format=json --output=/tmp/fio-u.json "${job[@]}" >/dev/null 2>&1
		echo "INFO $name untraced fio: clat p50/p90/p99" \
			"$(jq -r "[.jobs[0].$op.clat_ns.percentile[\"50.000000\",\"90.000000\",\"99.000000\"]] | @tsv" /tmp/fio-u.json)" \
			"lat $(jq -r "[.jobs[0].$op.lat_ns.percentile[\"50.000000\",\"90.000000\",\"99.000000\"]] | @tsv" /tmp/fio-u.json)"
		run_fio "$name" -- "${job[@]}" || continue
		check_requests "$name" "$op"
		within "$name: async p50 vs fio clat" "$(part "$rep" "$op" async p50_ns)" \
			"$(fio_pct "$op" clat 50)" 10
		within "$name: p50 vs fio lat" "$(cell "$rep" aio "$op" p50_ns)" "$(fio_pct "$op" lat 50)" 10
		for p in 90 99; do
			at_most "$name: async p$p within fio's clat p$p" "$(part "$rep" "$op" async p${p}_ns)" \
				"$(fio_pct "$op" clat $p)" 7
			at_most "$name: whole p$p within fio's lat p$p" "$(cell "$rep" aio "$op" p${p}_ns)" \
				"$(fio_pct "$op" lat $p)" 7
		done
	done
	echo 0 >"$nb/power"
	rmdir "$nb"
else
	fail "nullb9" "cannot make a null_blk device in configfs (null_blk loaded?)"
fi

# 3. A buffered read of a cached file: inline.
cat /mnt/ext4/aio.dat >/dev/null
# fio drops a file's cached pages before a job unless --invalidate=0.
run_fio "cached buffered read" -u -- --filename=/mnt/ext4/aio.dat --size=16M --ioengine=libaio \
	--direct=0 --invalidate=0 --bs=4k --rw=read --iodepth=1 &&
	{
		ios=$(jq '.jobs[0].read.total_ios' /tmp/fio.json)
		check_count "cached read: aio read requests = fio total_ios" "$(cell "$rep" aio read count)" "$ios"
		check_count "cached read: all inline" "$(aio "$rep" read inline)" "$ios"
		check_count "cached read: no block request" "$(($(aio "$rep" read blk_requests) + 1))" 1
	}
rm -f /tmp/aio.txt
iostackbreak -T aio -u -- fio --name=c --filename=/mnt/ext4/aio.dat --size=16M --ioengine=libaio \
	--direct=0 --invalidate=0 --bs=4k --rw=read --iodepth=1 --output-format=json --output=/tmp/fio.json \
	>/tmp/aio.txt 2>/tmp/aio.err
ios=$(jq '.jobs[0].read.total_ios' /tmp/fio.json)
# As the report groups thousands: 4,096.
n=$(awk -v n="$ios" 'BEGIN { s = ""; while (n >= 1000) { s = sprintf(",%03d", n % 1000) s; n = int(n / 1000) } print n s }')
if grep -Eq "inline: ${n} of ${n} completed inside io_submit" /tmp/aio.txt; then
	pass "cached read: the report says all $ios completed inline"
else
	fail "cached read: the report says inline" "$(grep -E 'inline|^read' /tmp/aio.txt)"
fi

# 4. IOCB_CMD_FDSYNC owns its flushes. fio's libaio engine syncs with
# fdatasync(2), not through AIO: aiowork's writes and fdsyncs, one at a
# time, on vdd (blkdev_fsync: one flush each); its fsyncs on ext4.
run_aiowork() { # NAME AIOWORK ARGS: the tool runs aiowork; $rep, $done_line
	local name=$1
	shift
	rm -f /tmp/aio.json /tmp/aio.err
	timeout 600 iostackbreak -T aio,blk --json -- aiowork "$@" >/tmp/aio.json 2>/tmp/aio.err
	trc=$?
	rep=$(grep '^{' /tmp/aio.json | tail -n 1)
	done_line=$(grep '^aiowork ' /tmp/aio.json)
	if ((trc)) || [[ -z $rep || -z $done_line ]]; then
		fail "$name" "the tool exited $trc: $(tail -n 3 /tmp/aio.err)"
		return 1
	fi
}
did() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$done_line"; }
# check_worker NAME OP: a kernel worker ran OP's syncs (their worker part
# took time) and OP's parts add up to its total.
check_worker() {
	local w
	w=$(part "$rep" "$2" worker sum_ns)
	[[ ${w:-0} -gt 0 ]] && pass "$1: worker time $w ns" || fail "$1: worker time" "${w:-none}"
	parts_add_up "$1" "$rep" "$2"
}
fb=$(disk_flushes vdd)
run_aiowork "fdsync" -D -s fdsync -n 100 /dev/vdd &&
	{
		disk=$(($(disk_flushes vdd) - fb))
		check_count "fdsync: aio write requests" "$(cell "$rep" aio write count)" "$(did writes)"
		check_count "fdsync: aio fdsync requests" "$(cell "$rep" aio fdsync count)" "$(did syncs)"
		check_count "fdsync: their flushes = diskstats flushes" "$(aio "$rep" fdsync blk_flushes)" "$disk"
		check_count "fdsync: blk flushes = diskstats flushes" "$(cell "$rep" blk flush count)" "$disk"
		check_worker "fdsync" fdsync
	}
run_aiowork "fsync and poll on ext4" -s fsync -n 50 -p 50 /mnt/ext4/aw.dat &&
	{
		check_count "ext4: aio fsync requests" "$(cell "$rep" aio fsync count)" "$(did syncs)"
		check_count "ext4: aio poll requests" "$(cell "$rep" aio poll count)" "$(did polls)"
		check_count "ext4: polls of a file inline" "$(aio "$rep" poll inline)" "$(did polls)"
		check_count "ext4: buffered writes inline" "$(aio "$rep" write inline)" "$(did writes)"
		check_worker "ext4 fsync" fsync
	}

# 5. -p PID: fio's jobs as threads of the process the tool was given.
rm -f /tmp/go /tmp/aio.json /tmp/aio.err /tmp/fio.json
mkfifo /tmp/go
sh -c 'read x </tmp/go; exec fio --name=p --thread --filename=/dev/vdd --size=60M --ioengine=libaio \
	--direct=1 --bs=4k --rw=randread --iodepth=8 --runtime='"$SECS"' --time_based \
	--lat_percentiles=1 --output-format=json --output=/tmp/fio.json >/dev/null 2>&1' &
fiopid=$!
iostackbreak -T aio,blk --json -p "$fiopid" >/tmp/aio.json 2>/tmp/aio.err &
tool=$!
if await /tmp/aio.err 'Hit Ctrl-C to end' "$tool" 300; then
	rb=$(disk_reads vdd)
	echo go >/tmp/go
	wait "$fiopid"
	disk=$(($(disk_reads vdd) - rb))
	kill -INT "$tool"
	wait "$tool"
	rep=$(grep '^{' /tmp/aio.json | tail -n 1)
	check_run "-p $fiopid randread QD8" read vdd 8
else
	fail "-p" "the tool did not attach: $(tail -n 3 /tmp/aio.err)"
	echo go >/tmp/go
	wait "$fiopid"
	kill -INT "$tool" 2>/dev/null
fi

# 6. kprobes. A kprobe program does not run while another runs on its CPU
# (the kernel's bpf_prog_active): an aio_complete in an interrupt that
# came during one of ours is not seen; its iocb's next submission finds
# the entry and counts it, or the end of the run once fio has exited
# (aio_completion_missed). Counted + missed = fio.
rb=$(disk_reads vdd)
run_fio "kprobe vdd randread QD8" --attach=kprobe -- --filename=/dev/vdd --size=60M \
	--ioengine=libaio --direct=1 --bs=4k --rw=randread --iodepth=8 --runtime="$SECS" \
	--time_based --lat_percentiles=1 &&
	{
		disk=$(($(disk_reads vdd) - rb))
		check_run "kprobe vdd randread QD8" read vdd 8
	}

# 7. Events and the trace: one per request, its parts adding up to it.
rm -f /tmp/aio.trace
run_fio "events" --slower=0 --trace=/tmp/aio.trace -- --filename=/dev/vdd --size=60M \
	--ioengine=libaio --direct=1 --bs=4k --rw=randread --iodepth=4 --number_ios=300 &&
	{
		ios=$(jq '.jobs[0].read.total_ios' /tmp/fio.json)
		ev=$(grep '^{"event"' /tmp/aio.json | jq -s '[.[] | select(.layer == "aio" and .op == "read")]')
		check_count "events: one per aio read" "$(jq length <<<"$ev")" "$ios"
		bad=$(jq '[.[] | select(([.parts[]] | add) != .latency_ns)] | length' <<<"$ev")
		check_count "events: parts add up to each latency (bad + 1)" "$((bad + 1))" 1
		check_count "events: one block request each" \
			"$(jq '[.[] | select(.blk.requests == 1)] | length' <<<"$ev")" "$ios"
		check_count "trace: one aio slice per read" \
			"$(jq '[.traceEvents[] | select(.ph == "b" and .cat == "aio")] | length' /tmp/aio.trace)" \
			"$ios"
	}

guest_result
((nfail == 0))
