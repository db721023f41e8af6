#!/bin/sh
# A short all-layers run of a small workload, so a newcomer sees real
# output: cached reads, writes, fsyncs with data, and O_DIRECT reads that
# reach the disk, in a directory under $TMPDIR (default /var/tmp). The
# workload runs as the traced COMMAND, so the report holds its I/O and
# nothing else the machine does. Needs root (or CAP_BPF and CAP_PERFMON)
# and a built tree (make).
#
#   scripts/demo.sh [OPTION...]    options are passed to iostackbreak (default -u)
set -eu

cd "$(dirname "$0")/.."
tool=build/iostackbreak
work=build/iowork
[ -x "$tool" ] && [ -x "$work" ] || { echo "demo: run make first" >&2; exit 1; }
[ $# -gt 0 ] || set -- -u

dir=$(mktemp -d "${TMPDIR:-/var/tmp}/iostackbreak-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT

"$tool" "$@" -- sh -c '
	work=$1 data=$2
	exec >/dev/null
	"$work" -c pread 20000 "$data" &&
	"$work" pwrite 2000 "$data" &&
	"$work" -W fsync 20 "$data" &&
	"$work" -D pread 500 "$data"' demo "$PWD/$work" "$dir/data"
