#!/bin/sh
# A short all-layers run while a small workload runs, so a newcomer sees
# real output: cached reads, writes, fsyncs and O_DIRECT reads that reach
# the disk. Needs root and a built tree (make).
set -eu

cd "$(dirname "$0")/.."
tool=build/iostackbreak
work=build/iowork
[ -x "$tool" ] && [ -x "$work" ] || { echo "demo: run make first" >&2; exit 1; }

dir=$(mktemp -d /var/tmp/iostackbreak-demo.XXXXXX)
out=$dir/report.txt
trap 'kill "$tpid" 2>/dev/null || true; rm -rf "$dir"' EXIT

"$tool" -u >"$out" 2>"$dir/err" &
tpid=$!
# Wait for the tool to attach before starting the workload.
i=0
until grep -q "Hit Ctrl-C to end." "$dir/err" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 300 ] || ! kill -0 "$tpid" 2>/dev/null; then
		cat "$dir/err" >&2
		exit 1
	fi
	sleep 0.1
done
cat "$dir/err" >&2

"$work" -c pread 20000 "$dir/data" >/dev/null
"$work" pwrite 2000 "$dir/data" >/dev/null
"$work" -W fsync 20 "$dir/data" >/dev/null
"$work" -D pread 500 "$dir/data" >/dev/null

kill -INT "$tpid"
wait "$tpid"
cat "$out"
