#!/bin/bash
# guest_fault.sh - the fault layer's cost, in the guest of bench/fault.sh
# (iostackbreak, faultwork and jq in PATH; ext4 on vda at /mnt/ext4).
#
# Per round:
#   minor: faultwork -a (4096 anonymous pages stored to, 20 times: minor
#     faults only) untraced, then under `iostackbreak -T fault --stats`:
#     the wall time per minor fault each way, and the BPF run time per
#     fault (BPF_STATS_RUN_TIME of the layer's programs over the faults).
#   major: faultwork on a cold file, 512 pages touched under MADV_RANDOM
#     (256 major faults), under `iostackbreak -T fault,blk --stats`: the
#     BPF run time per fault of the run (every fault of the machine passes
#     the programs, minor ones too), beside a major fault's p50.
# Prints a markdown table of the medians.
set -uo pipefail

ROUNDS=${1:-3}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
layer_stat() { # REPORT FIELD: the fault layer's figure in stats.layers
	jq --arg f "$2" '[.stats.layers[] | select(.layer == "fault") | .[$f]] | add // 0' <<<"$1"
}

declare -a mu mt mb jb jp rounds
for ((r = 1; r <= ROUNDS; r++)); do
	u=$(faultwork -a 4096 20 | awk '{ print $4 }')
	iostackbreak -T fault --stats --json -- faultwork -a 4096 20 >/tmp/b.json 2>/tmp/b.err
	t=$(awk '/^minor/ { print $4 }' /tmp/b.json)
	rep=$(grep '^{' /tmp/b.json | tail -n 1)
	runs=$(layer_stat "$rep" runs)
	ns=$(layer_stat "$rep" run_time_ns)
	b=$(awk -v a="$ns" -v n="$runs" 'BEGIN { printf "%.0f", n ? 2 * a / n : 0 }')
	rounds+=("round $r minor: untraced $u ns/fault, traced $t ns/fault, $runs program runs, BPF $b ns/fault (2 runs)")
	mu+=("$u") mt+=("$t") mb+=("$b")

	rm -f /tmp/go /tmp/fw.out
	touch /tmp/go
	(until grep -q '^touched' /tmp/fw.out 2>/dev/null; do sleep 0.05; done; rm -f /tmp/go) &
	iostackbreak -T fault,blk --stats --json -- faultwork /mnt/ext4/bench.dat 512 /tmp/go \
		>/tmp/fw.out 2>/tmp/b.err
	wait
	rep=$(grep '^{' /tmp/fw.out | tail -n 1)
	n=$(jq '[.cells[] | select(.layer == "fault") | .count] | add // 0' <<<"$rep")
	runs=$(layer_stat "$rep" runs)
	ns=$(layer_stat "$rep" run_time_ns)
	b=$(awk -v a="$ns" -v n="$runs" 'BEGIN { printf "%.0f", n ? 2 * a / n : 0 }')
	p50=$(jq '[.cells[] | select(.layer == "fault" and .op == "file_read") | .p50_ns] | add // 0' <<<"$rep")
	rounds+=("round $r major: $n major faults (p50 $p50 ns), $runs program runs, BPF $b ns/fault (2 runs)")
	jb+=("$b") jp+=("$p50")
done
echo
echo "| faults | untraced ns per fault | traced ns per fault | BPF ns per fault |"
echo "|---|---:|---:|---:|"
printf '| minor (-T fault) | %s | %s | %s |\n' "$(printf '%s\n' "${mu[@]}" | median)" \
	"$(printf '%s\n' "${mt[@]}" | median)" "$(printf '%s\n' "${mb[@]}" | median)"
printf '| major (-T fault,blk), cold file, MADV_RANDOM | %s (p50, traced) | | %s |\n' \
	"$(printf '%s\n' "${jp[@]}" | median)" "$(printf '%s\n' "${jb[@]}" | median)"
printf '\nRounds:\n\n'
printf '    %s\n' "${rounds[@]}"
echo "GUEST RESULT: done"
