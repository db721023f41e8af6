#!/bin/bash
# Per-program cost, side by side on the same events: iostackbreak -T syscall,
# the empty floor, and the floor with one clock read per program, all
# attached at once to the syscall tracepoints while N cached preads run.
# Prints the kernel's ns per run (BPF_STATS_RUN_TIME) of the pread programs.
#   bench/per_program.sh [N]        (root; make -f bench/bench.mk bench-build)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300000}
out=build/bench
make -s -f bench/bench.mk bench-build
tmp=$(mktemp -d /var/tmp/iosb-perprog.XXXXXX)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
pids=()
cleanup() {
	kill -INT "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	echo "$old" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

start() { # NAME COMMAND...: starts it and waits for its ready line
	local name=$1
	shift
	"$@" >/dev/null 2>"$tmp/$name.err" &
	pids+=($!)
	echo "$name $!" >>"$tmp/who"
	until grep -q 'Hit Ctrl-C to end' "$tmp/$name.err"; do
		kill -0 "$!" 2>/dev/null || { cat "$tmp/$name.err" >&2; exit 1; }
		sleep 0.1
	done
}

echo 1 >/proc/sys/kernel/bpf_stats_enabled
start iostackbreak build/iostackbreak -T syscall
start floor "$out/floor" "$out/floor-syscall.bpf.o"
start floor+clock "$out/floor" "$out/floor-syscall-clock.bpf.o"
build/iowork -c pread "$n" "$tmp/data" >/dev/null

printf '%-14s %-12s %10s %8s\n' TRACER PROGRAM RUNS NS/RUN
while read -r name pid; do
	ids=$(cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -u)
	for id in $ids; do
		bpftool -j prog show id "$id" | python3 -c '
import json, sys
p = json.load(sys.stdin)
if p["name"] in ("se_pread64", "sx_pread64") and p.get("run_cnt"):
    print("%-14s %-12s %10d %8d" % (sys.argv[1], p["name"], p["run_cnt"],
                                     p["run_time_ns"] // p["run_cnt"]))' "$name"
	done
done <"$tmp/who"
