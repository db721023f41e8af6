#!/bin/bash
# guest_fault.sh - the fault layer on a stock kernel, in the guest of
# tests/vm/fault.sh (iostackbreak, faultwork and jq in PATH; ext4 on vda at
# /mnt/ext4). Its truth is the process's /proc/PID/stat majflt (field 12).
#
#   1. --plan --check -T fault: one line, fentry on handle_mm_fault
#      (--attach=kprobe: kprobe).
#   2. faultwork maps a file dropped from the page cache (mincore: none of
#      its pages resident) and touches it, under `iostackbreak -T fault,blk
#      -p PID`, by fentry and by kprobes:
#      a. MADV_RANDOM, every other page of 512, loads: file_read faults ==
#         the majflt delta == the pages touched; each has its block
#         request (blk_requests == faults), a page each at least.
#      b. MADV_SEQUENTIAL, every page of 2048: fewer faults than pages
#         (read-ahead), file_read faults == the majflt delta.
#      c. MADV_RANDOM, stores on a shared mapping: file_write faults ==
#         the majflt delta.
#      Nothing dropped.
#   3. Events (--slower=0, --trace): one per major fault (== majflt), each
#      on fault.dat at its page's offset (a distinct even page each), with
#      its block request; one async slice each in the trace.
# Prints PASS/FAIL lines and "GUEST RESULT: P passed, F failed, S skipped".
set -uo pipefail

. guest_lib.sh

majflt() { awk '{ print $12 }' "/proc/$1/stat"; }
# fault REPORT OP FIELD: a figure of fault_breakdown
fault() {
	jq -r --arg o "$2" --arg f "$3" '[.fault_breakdown[] | select(.op == $o) | .[$f]] | add // 0' \
		<<<"$1"
}

# 1. The plan.
plan_lines fault 'handle_mm_fault +ops'

# run_faults NAME ATTACH PAGES FAULTWORK-OPTIONS...: faultwork under the
# tool (-p); sets rep (the tool's last report), delta (majflt over the
# touches), touched.
run_faults() {
	local name=$1 attach=$2 pages=$3 fw tool before after
	shift 3
	rm -f /tmp/go /tmp/fw.out /tmp/fault.json /tmp/fault.err
	faultwork "$@" /mnt/ext4/fault.dat "$pages" /tmp/go >/tmp/fw.out 2>&1 &
	fw=$!
	if ! await /tmp/fw.out '^ready' "$fw" 60; then
		fail "$name" "faultwork: $(cat /tmp/fw.out)"
		return 1
	fi
	iostackbreak -T fault,blk --attach="$attach" --json "${topts[@]}" -p "$fw" \
		>/tmp/fault.json 2>/tmp/fault.err &
	tool=$!
	if ! await /tmp/fault.err 'Hit Ctrl-C to end' "$tool" 300; then
		fail "$name" "the tool did not attach: $(tail -n 3 /tmp/fault.err)"
		touch /tmp/go
		rm -f /tmp/go
		kill -INT "$tool" 2>/dev/null
		wait "$fw"
		return 1
	fi
	before=$(majflt "$fw")
	touch /tmp/go
	await /tmp/fw.out '^touched' "$fw" 120
	after=$(majflt "$fw")
	rm -f /tmp/go
	wait "$fw"
	kill -INT "$tool"
	wait "$tool"
	rep=$(grep '^{' /tmp/fault.json | tail -n 1)
	delta=$((after - before))
	touched=$(awk '/^touched/ { print $2 }' /tmp/fw.out)
	info "$name: $(cat /tmp/fw.out | tail -n 1); majflt $before -> $after"
	[[ -n $rep ]] || { fail "$name" "no report: $(tail -n 3 /tmp/fault.err)"; return 1; }
	check_count "$name: nothing dropped (dropped + 1)" "$(($(jq '.dropped' <<<"$rep") + 1))" 1
}

topts=()
for m in auto kprobe; do
	# a. Random loads: one fault, one block read per page touched.
	if run_faults "random $m" "$m" 512; then
		n=$(fault "$rep" file_read count)
		check_count "random $m: file_read faults = majflt delta" "$n" "$delta"
		check_count "random $m: majflt delta = pages touched" "$delta" "$touched"
		check_count "random $m: their block requests = faults" \
			"$(fault "$rep" file_read blk_requests)" "$n"
		b=$(fault "$rep" file_read blk_bytes)
		if ((n > 0 && b >= n * 4096)); then
			pass "random $m: a page or more read per fault ($b bytes, $n faults)"
		else
			fail "random $m: a page or more read per fault" "$b bytes, $n faults"
		fi
		info "random $m: $(jq -c '.fault_breakdown' <<<"$rep")"
		info "random $m: $(jq -c '[.cells[] | select(.layer == "fault") | {op, count, p50_ns, p99_ns}]' <<<"$rep")"
	fi
	# b. Sequential: read-ahead brings pages ahead of the faults.
	if run_faults "sequential $m" "$m" 2048 -s; then
		n=$(fault "$rep" file_read count)
		check_count "sequential $m: file_read faults = majflt delta" "$n" "$delta"
		if ((n > 0 && n < touched)); then
			pass "sequential $m: fewer faults ($n) than pages ($touched)"
		else
			fail "sequential $m: fewer faults than pages" "$n faults, $touched pages"
		fi
		info "sequential $m: $(jq -c '.fault_breakdown' <<<"$rep")"
	fi
	# c. Stores on a shared mapping: a write fault reads its page first.
	if run_faults "write $m" "$m" 512 -w; then
		check_count "write $m: file_write faults = majflt delta" \
			"$(fault "$rep" file_write count)" "$delta"
		info "write $m: $(jq -c '.fault_breakdown' <<<"$rep")"
	fi
done

# 3. Events and the trace.
rm -f /tmp/fault.trace
topts=(--slower=0 --trace=/tmp/fault.trace)
if run_faults "events" auto 512; then
	ev=$(grep '^{"event"' /tmp/fault.json | jq -s '[.[] | select(.layer == "fault")]')
	check_count "events: one per major fault" "$(jq length <<<"$ev")" "$delta"
	check_count "events: on fault.dat" \
		"$(jq '[.[] | select(.file == "fault.dat" and .op == "file_read")] | length' <<<"$ev")" \
		"$delta"
	# Every other page, each once: offsets 0, 8192, ... distinct.
	check_count "events: distinct even page offsets" \
		"$(jq '[.[] | select(.offset % 8192 == 0 and .bytes == 4096) | .offset] | unique | length' <<<"$ev")" \
		"$delta"
	check_count "events: one block request each" \
		"$(jq '[.[] | select(.blk.requests == 1)] | length' <<<"$ev")" "$delta"
	check_count "trace: one fault slice each" \
		"$(jq '[.traceEvents[] | select(.ph == "b" and .cat == "fault")] | length' /tmp/fault.trace)" \
		"$delta"
	info "events: $(jq -c '.[0]' <<<"$ev")"
fi

guest_result
