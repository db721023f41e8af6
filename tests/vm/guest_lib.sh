# guest_lib.sh - what the guest scripts share, sourced in the guest (the
# host side copies it with --file, so it is in PATH: `. guest_lib.sh`).
# pass NAME, fail NAME DETAILS: a check's line, counted in npass/nfail.
# skip NAME WHY: a check this guest cannot run, counted in nskip (a
# failure under CI: tests/vm/run.sh and the host scripts).
npass=0
nfail=0
nskip=0
pass() { echo "PASS $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
skip() { echo "SKIP $1: $2"; nskip=$((nskip + 1)); }

# await FILE REGEX PID SECS: until FILE has a line matching REGEX, while
# PID lives, at most SECS.
await() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
