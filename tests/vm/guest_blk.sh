#!/bin/bash
# guest_blk.sh - the block layer exact on a stock kernel, in the guest of
# tests/vm/blk.sh (iostackbreak, fio and jq in PATH; the raw disk vdd).
#
# On the host, a kernel may hide some completions from BPF; the integration
# tests count that loss (tests/integration/harness.py,
# host_hides_completions). Here, on Debian's own kernel, none may be
# missed. Three fio loads of 4 KiB random O_DIRECT reads on vdd:
#   psync QD1, io_uring QD32, and 32 psync jobs;
# each under `iostackbreak -T blk -d vdd --json`, once with the default
# programs (one program per request: --plan says so) and once with the
# programs keyed by request (IOSB_BLK_STAMPS=0), with and without -Q.
# Then the common option sets load and attach, in text and in JSON.
# Each run: blk reads == vdd's diskstats delta, fio's total_ios == that
# plus the reads merged into them, request_completion_missed == 0, nothing
# dropped.
# Prints PASS/FAIL lines and "GUEST RESULT: P passed, F failed, S skipped".
set -uo pipefail

SECS=${1:-2}
. guest_lib.sh

for way in default keyed; do
	env=()
	[[ $way == keyed ]] && env=(IOSB_BLK_STAMPS=0)
	for mode in "" -Q; do
		plan=$(env "${env[@]}" iostackbreak --plan -T blk -d vdd $mode 2>&1)
		want="one program per request"
		[[ $way == keyed ]] && want="programs keyed by request"
		if grep -q "blk timing: $want" <<<"$plan"; then
			pass "$way ${mode:-issue}: plan says $want"
		else
			fail "$way ${mode:-issue}: plan says $want" "$(grep 'blk timing' <<<"$plan")"
		fi
		for load in psync-qd1 io_uring-qd32 psync-32jobs; do
			case $load in
			psync-qd1) args=(--ioengine=psync --iodepth=1) ;;
			io_uring-qd32) args=(--ioengine=io_uring --iodepth=32) ;;
			psync-32jobs) args=(--ioengine=psync --numjobs=32 --group_reporting) ;;
			esac
			name="$way ${mode:-issue} $load"
			# A fresh log: await must not find the last run's ready line
			# before this shell's redirection empties the file.
			rm -f /tmp/blk.json /tmp/blk.err
			env "${env[@]}" iostackbreak -T blk -d vdd --json $mode >/tmp/blk.json 2>/tmp/blk.err &
			tool=$!
			if ! await /tmp/blk.err 'Hit Ctrl-C to end' "$tool" 300; then
				fail "$name" "the tool did not attach: $(tail -n 3 /tmp/blk.err)"
				continue
			fi
			before=$(disk_reads vdd) merged=$(disk_reads_merged vdd)
			fio --name=r --filename=/dev/vdd --direct=1 --bs=4k --rw=randread "${args[@]}" \
				--runtime="$SECS" --time_based --output-format=json >/tmp/fio.json 2>/tmp/fio.err
			frc=$?
			sleep 0.2
			after=$(disk_reads vdd) merged=$(($(disk_reads_merged vdd) - merged))
			kill -INT "$tool"
			wait "$tool"
			trc=$?
			if ((frc || trc)); then
				fail "$name" "fio exited $frc, the tool $trc: $(tail -n 3 /tmp/fio.err /tmp/blk.err)"
				continue
			fi
			fio_ios=$(jq '[.jobs[].read.total_ios] | add' /tmp/fio.json)
			rep=$(grep '^{' /tmp/blk.json | tail -n 1)
			got=$(jq '[.cells[] | select(.layer == "blk" and .op == "read") | .count] | add // 0' <<<"$rep")
			missed=$(jq '.dropped_by_reason.request_completion_missed' <<<"$rep")
			dropped=$(jq '.dropped' <<<"$rep")
			disk=$((after - before))
			what="counted $got, missed $missed, dropped $dropped, fio $fio_ios, diskstats $disk + $merged merged"
			# 32 jobs' reads of neighbouring blocks may merge into one
			# request: fio's reads are the requests plus those merged
			# (once fio 6,174 = 6,173 requests + 1 merged).
			if [[ $got == "$disk" && $fio_ios == $((disk + merged)) && $missed == 0 &&
				$dropped == 0 && $got -gt 0 ]]; then
				pass "$name: $what"
			else
				fail "$name" "$what"
			fi
		done
	done
done
# The option sets users type most, in the default text report (which also
# counts whole units) and JSON: each must load and attach here. Text -P
# once ran the system call exit past 6.1's verifier limit while JSON loaded.
for opts in "" "-P" "-G" "-T syscall -P" "-T syscall,blk -P" "-T syscall,blk -G" "-P -K" \
	"-P --pattern" "-T blk -P" "-Q" "-D -F" "-T aio,blk -P" "-P --json" "-G --json" \
	"-T blk -K -U --user-stack=dwarf" "-T blk -U" "-T syscall -U --user-stack=dwarf" \
	"-T syscall -U"; do
	# shellcheck disable=SC2086 # the options split into words
	if iostackbreak --plan --check $opts >/tmp/plan.out 2>/tmp/plan.err; then
		pass "loads: ${opts:-(defaults)}"
	else
		fail "loads: ${opts:-(defaults)}" "$(head -c 300 /tmp/plan.err)"
	fi
done
guest_result
((nfail == 0))
