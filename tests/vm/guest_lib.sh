# guest_lib.sh - what the guest scripts share, sourced in the guest (the
# host side copies it with --file, so it is in PATH: `. guest_lib.sh`).
#
# pass NAME, fail NAME DETAILS: a check's line, counted in npass/nfail.
# skip NAME WHY: a check this guest cannot run, counted in nskip (a
# failure under CI: tests/vm/host_lib.sh, tests/vm/run.sh).
# guest_result [SUFFIX]: the line the host side reads,
# "GUEST RESULT: P passed, F failed, S skipped[ SUFFIX]".
npass=0
nfail=0
nskip=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
skip() { echo "SKIP $1: $2"; nskip=$((nskip + 1)); }
info() { echo "INFO $*"; }
guest_result() { echo "GUEST RESULT: $npass passed, $nfail failed, $nskip skipped${1:+ $1}"; }

# check_eq NAME GOT WANT [CONTEXT]: GOT is a number equal to WANT.
check_eq() {
	if [[ $2 =~ ^[0-9]+$ && $2 == "$3" ]]; then
		pass "$1 ($2)"
	else
		fail "$1" "got ${2:-nothing}, want $3${4:+ ($4)}"
	fi
}

# check_count NAME GOT WANT [CONTEXT]: check_eq of a count of what the
# workload did, which must also be > 0: a run that did nothing (0 = 0)
# must not pass. A count that should be 0 is checked as COUNT + 1 = 1.
check_count() {
	if [[ $2 =~ ^[0-9]+$ ]] && (($2 == 0)); then
		fail "$1" "got 0, want $3${4:+ ($4)} (> 0)"
	else
		check_eq "$@"
	fi
}

# plan_lines LAYER REGEX: a layer of shared function programs (aio, fault)
# has one --plan --check line, fentry by default, kprobe with
# --attach=kprobe, then REGEX (its functions).
plan_lines() {
	local m want plan line
	for m in auto kprobe; do
		want=fentry
		[[ $m == kprobe ]] && want=kprobe
		plan=$(iostackbreak --plan --check -T "$1" --attach=$m 2>&1)
		line=$(grep "^$1 " <<<"$plan")
		if [[ $(grep -c "^$1 " <<<"$plan") == 1 && $line =~ ^$1\ +all\ +$want\ +$2 ]]; then
			pass "plan --attach=$m: $line"
		else
			fail "plan --attach=$m" "$plan"
		fi
	done
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }
# since T: seconds from uptime T to now.
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }

# await FILE REGEX PID SECS: until FILE has a line matching REGEX; fails
# (status 1) if PID exits without one, or SECS pass.
await() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { grep -Eq -- "$2" "$1" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}

# wait_exit PID SECS: waits for a child of ours, killing it after SECS;
# sets $exit_rc.
wait_exit() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		exit_rc=timeout
		return 1
	fi
	wait "$1"
	exit_rc=$?
}

dump() { # LABEL FILE: the end of FILE, indented
	echo "--- $1 ($2):"
	sed 's/^/    /' "$2" 2>/dev/null | tail -n 40
}

# disk_reads DISK, disk_writes DISK, disk_flushes DISK: completed reads,
# writes, flushes (/proc/diskstats); disk_reads_merged DISK: reads merged
# into another's request.
disk_reads() { awk -v d="$1" '$3 == d { print $4 }' /proc/diskstats; }
disk_reads_merged() { awk -v d="$1" '$3 == d { print $5 }' /proc/diskstats; }
disk_writes() { awk -v d="$1" '$3 == d { print $8 }' /proc/diskstats; }
disk_flushes() { awk -v d="$1" '$3 == d { print $19 }' /proc/diskstats; }

# dm_name NAME: the kernel's name (dm-N) of device-mapper device NAME
# (dmsetup in PATH).
dm_name() {
	basename "$(readlink -f /sys/dev/block/"$(dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' ')")"
}
