#!/bin/bash
# guest_uring.sh - VM checks of the io_uring layer where fentry attaches.
#
#   make vm-uring   # host side: tools/vm/run.sh boots the guest and runs this
#
# The host kernel refuses fentry, so io-wq-queued (fentry on
# io_wq_submit_work: no tracepoint marks an io-wq worker taking a request)
# is checked here. It needs iostackbreak, uringwork and jq in PATH.
#
#   1. --plan -T io_uring says io-wq-queued ends at fentry on io_wq_submit_work.
#   2. uringwork on /mnt/ext4 (4 opens, 40 writes, 20 fsyncs, 200 O_DIRECT
#      reads one at a time) under -T io_uring,blk --json: counts equal
#      uringwork's; every op's parts add up to its total; the fsyncs, which
#      never run inline, show io-wq-queued > 0 and io-wq > 0.
#   3. Block requests per request: each 4 KiB O_DIRECT read, submitted one
#      per io_uring_enter (no plug), is one block request on vda: the reads'
#      blk_requests equal the reads, their bytes 4 KiB each.
#   4. A polled ring (IORING_SETUP_IOPOLL, fio's --hipri) on a null_blk with
#      a poll queue: liburingwork's direct reads and writes, completed by
#      polling in io_uring_enter, are each counted (liburingwork's own
#      count), as are their block requests (nullb0's /proc/diskstats, whose
#      requests and merges make the reads).
#
# Every check prints "PASS <name>" or "FAIL <name>: <details>"; the exit
# status is 1 if any check failed.
set -uo pipefail
. guest_lib.sh

plan=$(iostackbreak --plan --check -T io_uring 2>&1)
if grep -q 'io-wq-queued ends at fentry on io_wq_submit_work' <<<"$plan"; then
	pass "plan: io-wq-queued from fentry"
else
	fail "plan: io-wq-queued from fentry" "$(grep -i 'io-wq' <<<"$plan" | head -n 3)"
fi

out=/tmp/uring.json
timeout 600 iostackbreak -T io_uring,blk --json -- \
	uringwork -o 4 -w 40 -s 20 -r 200 -q 1 -p 0 -n 0 -D /mnt/ext4/uw.dat >"$out" 2>/tmp/uring.err
check_eq "tool exit status" "$?" 0
done_line=$(grep '^uringwork ' "$out")
rep=$(grep '^{' "$out" | tail -n 1)
if [[ -z $done_line || -z $rep ]]; then
	fail "uringwork run" "$(tail -n 5 /tmp/uring.err)"
else
	did() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$done_line"; }
	for pair in read:reads write:writes open:opens fsync:fsyncs; do
		op=${pair%%:*}
		got=$(jq -r --arg o "$op" \
			'[.cells[] | select(.layer == "io_uring" and .op == $o) | .count] | add // 0' <<<"$rep")
		check_eq "io_uring $op count" "$got" "$(did "${pair#*:}")"
		sums=$(jq -r --arg o "$op" '.uring_breakdown[] | select(.op == $o) |
			"\([.parts[].sum_ns] | add) \(.total_ns)"' <<<"$rep")
		[[ ${sums% *} == "${sums#* }" ]] && pass "$op parts add up ($sums)" ||
			fail "$op parts add up" "$sums"
	done
	q=$(jq -r '.uring_breakdown[] | select(.op == "fsync") | .parts[] |
		select(.part == "io-wq-queued" or .part == "io-wq") | .sum_ns' <<<"$rep" | tr '\n' ' ')
	read -r queued run <<<"$q"
	[[ ${queued:-0} -gt 0 && ${run:-0} -gt 0 ]] &&
		pass "fsync io-wq-queued $queued ns, io-wq $run ns" ||
		fail "fsync io-wq-queued and io-wq > 0" "got '$q'"
	blk=$(jq -r '.uring_breakdown[] | select(.op == "read") | "\(.blk_requests) \(.blk_bytes)"' <<<"$rep")
	reads=$(did reads)
	check_eq "read blk_requests" "${blk% *}" "$reads"
	check_eq "read blk_bytes" "${blk#* }" "$((reads * 4096))"
	jq -c '.uring_breakdown[] | {op, count, blk_requests, parts: [.parts[] | [.part, .sum_ns]]}' \
		<<<"$rep" | sed 's/^/INFO /'
fi
# 4. IOPOLL: completions posted by polling (io_do_iopoll) still pass
# io_uring_complete, so the requests are timed like any other.
# (The guest loaded null_blk at boot with its defaults: again, with a poll queue.)
rmmod null_blk 2>/dev/null
if ! modprobe null_blk nr_devices=1 queue_mode=2 submit_queues=1 poll_queues=1 gb=1 \
	2>/tmp/modprobe.err || [[ ! -b /dev/nullb0 ]]; then
	fail "null_blk with a poll queue" "$(cat /tmp/modprobe.err)"
else
	read -r r0 w0 m0 < <(awk '$3 == "nullb0" { print $4, $8, $5 }' /proc/diskstats)
	timeout 600 iostackbreak -T io_uring,blk -d nullb0 --json -- \
		liburingwork -D -P -o 1 -w 64 -s 2 -r 256 -q 8 /dev/nullb0 >"$out" 2>/tmp/uring.err
	check_eq "polled: tool exit status" "$?" 0
	read -r r1 w1 m1 < <(awk '$3 == "nullb0" { print $4, $8, $5 }' /proc/diskstats)
	done_line=$(grep '^liburingwork ' "$out")
	rep=$(grep '^{' "$out" | tail -n 1)
	if [[ -z $done_line || -z $rep ]]; then
		fail "polled liburingwork run" "$(tail -n 5 /tmp/uring.err)"
	else
		did() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$done_line"; }
		cnt() { jq -r --arg l "$1" --arg o "$2" \
			'[.cells[] | select(.layer == $l and .op == $o) | .count] | add // 0' <<<"$rep"; }
		check_eq "polled: io_uring read count" "$(cnt io_uring read)" "$(did reads)"
		check_eq "polled: io_uring write count" "$(cnt io_uring write)" "$(did writes)"
		check_eq "polled: io_uring fsync count" "$(cnt io_uring fsync)" "$(did fsyncs)"
		check_eq "polled: nullb0 reads = diskstats" "$(cnt blk read)" "$((r1 - r0))"
		check_eq "polled: nullb0 writes = diskstats" "$(cnt blk write)" "$((w1 - w0))"
		# Neighbouring reads in flight together merge in the submission's
		# plug: requests and merges make the reads.
		check_eq "polled: nullb0 reads + merged = liburingwork's" \
			"$((r1 - r0 + m1 - m0))" "$(did reads)"
		check_eq "polled: dropped" "$(jq -r '.dropped' <<<"$rep")" 0
		jq -c '.cells[] | select(.count > 0) | {layer, op, count, p50_ns, p99_ns}' \
			<<<"$rep" | sed 's/^/INFO polled /'
	fi
	rmmod null_blk
fi

guest_result
((nfail == 0))
