#!/bin/bash
# guest_aio.sh - the aio layer's cost per request beside the io_uring
# layer's, on the same fio job, in the guest of bench/aio.sh (iostackbreak,
# fio and jq in PATH; null_blk's nullb0: a device that costs next to
# nothing, so the tracer's share shows).
#
# Per round and engine (libaio, io_uring): the job untraced, then under
# `iostackbreak -T aio` (libaio) or `-T io_uring` (io_uring) with --stats.
# Per request: the kernel's run time of the layer's programs
# (BPF_STATS_RUN_TIME, over the layer's requests) and the time fio lost
# (1e9/IOPS traced - untraced). Prints a markdown table of the medians.
set -uo pipefail

ROUNDS=${1:-3}
SECS=${2:-3}
DEPTH=${3:-8}
dev=/dev/nullb0
[[ -b $dev ]] || { echo "no $dev: load null_blk (IOSB_VM_MODULES=null_blk)"; exit 1; }
job=(--name=b "--filename=$dev" --direct=1 --rw=randread --bs=4k "--iodepth=$DEPTH"
	--runtime="$SECS" --time_based --output-format=json --output=/tmp/fio.json)

iops() { jq '.jobs[0].read.iops' /tmp/fio.json; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A bpf lost base
for ((r = 1; r <= ROUNDS; r++)); do
	for eng in libaio io_uring; do
		layer=aio
		[[ $eng == io_uring ]] && layer=io_uring
		fio "${job[@]}" --ioengine=$eng >/dev/null 2>&1
		u=$(iops)
		iostackbreak -T $layer --stats --json -- fio "${job[@]}" --ioengine=$eng \
			>/tmp/b.json 2>/tmp/b.err
		t=$(iops)
		rep=$(grep '^{' /tmp/b.json | tail -n 1)
		n=$(jq --arg l $layer '[.cells[] | select(.layer == $l) | .count] | add // 0' <<<"$rep")
		ns=$(jq --arg l $layer '[.stats.layers[] | select(.layer == $l) | .run_time_ns] | add // 0' <<<"$rep")
		progs=$(jq --arg l $layer '[.stats.layers[] | select(.layer == $l) | .programs] | add // 0' <<<"$rep")
		runs=$(jq --arg l $layer '[.stats.layers[] | select(.layer == $l) | .runs] | add // 0' <<<"$rep")
		b=$(awk -v a="$ns" -v n="$n" 'BEGIN { printf "%.0f", n ? a / n : 0 }')
		l=$(awk -v u="$u" -v t="$t" 'BEGIN { printf "%.0f", 1e9 / t - 1e9 / u }')
		echo "round $r $eng: untraced $u IOPS, traced $t IOPS, $n requests, $progs programs, $runs runs, BPF $b ns/request, fio lost $l ns/request"
		bpf[$eng]+="$b "
		lost[$eng]+="$l "
		base[$eng]+="$u "
		echo "$progs $runs $n" >/tmp/progs.$eng
	done
done
echo
echo "| engine | layer | programs | runs per request | untraced IOPS | BPF ns per request | fio lost ns per request |"
echo "|---|---|---:|---:|---:|---:|---:|"
for eng in libaio io_uring; do
	layer=aio
	[[ $eng == io_uring ]] && layer=io_uring
	read -r progs runs n </tmp/progs.$eng
	printf '| %s | -T %s | %s | %.2f | %s | %s | %s |\n' "$eng" "$layer" "$progs" \
		"$(awk -v r="$runs" -v n="$n" 'BEGIN { print n ? r / n : 0 }')" \
		"$(tr ' ' '\n' <<<"${base[$eng]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${bpf[$eng]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${lost[$eng]}" | grep . | median)"
done
echo "GUEST RESULT: done"
