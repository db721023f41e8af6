#!/bin/sh
# The overhead benchmark of iostackbreak (bench/README.md), as root:
# builds the tool and the floor, then measures for about 10 minutes and
# writes bench/results/YYYY-MM-DD.md. Options go to bench/bench.py
# (--rounds, --n-pread, --n-direct, --n-fsync, --phases, --seed, --no-stats,
# --quiet-budget, --only, --out; see bench/README.md).
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root (it loads BPF programs and sets up a loop device)" >&2
	exit 1
fi
# Build output goes to stderr: stdout is the report alone.
${MAKE:-make} --no-print-directory -f bench/bench.mk bench-build >&2
exec python3 bench/bench.py "$@"
