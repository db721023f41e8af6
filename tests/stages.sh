#!/bin/bash
# stages.sh MAKE STAGE... - make check: runs `MAKE STAGE` for each stage in
# order, every one even after a failure (one CI run shows them all), then
# prints the wall time and status of each stage and the total; exits 1 if
# any stage failed (README: Tests).
set -uo pipefail
make=$1
shift
times=()
t_all=$(date +%s.%N)
failed=0
for stage in "$@"; do
	t0=$(date +%s.%N)
	"$make" --no-print-directory "$stage"
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
	times+=("$(printf '%-12s %5s s%s' "$stage" "$secs" "$( ((rc)) && echo "  FAILED ($rc)")")")
	((rc)) && failed=1
done
total=$(awk -v a="$t_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
echo "== make check: time per stage"
printf '   %s\n' "${times[@]}"
printf '   %-12s %5s s\n' total "$total"
exit "$failed"
