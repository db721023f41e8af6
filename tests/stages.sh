#!/bin/bash
# stages.sh MAKE STAGE... - make check: runs `MAKE STAGE` for each stage in
# order, stops at the first that fails, and prints the wall time of each
# stage and the total (README: "What make check runs").
set -uo pipefail
make=$1
shift
times=()
t_all=$(date +%s.%N)
rc=0
for stage in "$@"; do
	t0=$(date +%s.%N)
	"$make" --no-print-directory "$stage"
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
	times+=("$(printf '%-12s %5s s%s' "$stage" "$secs" "$( ((rc)) && echo "  FAILED ($rc)")")")
	((rc)) && break
done
total=$(awk -v a="$t_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
echo "== make check: time per stage"
printf '   %s\n' "${times[@]}"
printf '   %-12s %5s s\n' total "$total"
exit "$rc"
