# host_lib.sh - what the host sides of the guest suites share (bio.sh,
# blk.sh, uring.sh, why.sh, aio.sh, writeback.sh), sourced after setting $prog: the files the
# guest gets, and one run of a guest script. Every guest gets guest_lib.sh.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
files=(--file "$root/tests/vm/guest_lib.sh")
host_log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm.XXXXXX")
trap 'rm -f "$host_log"' EXIT

# guest_builds FILE...: the project's builds (build/iowork, ...) into the
# guest; exits 2 when one is missing.
guest_builds() {
	local f
	for f; do
		[[ -x $root/$f ]] || { echo "$prog: $root/$f missing: run 'make all' first" >&2; exit 2; }
		files+=(--file "$root/$f")
	done
}

# guest_tools TOOL...: the host's TOOL (with its libraries) into the
# guest; exits 2 when the host has none.
guest_tools() {
	local t p
	for t; do
		p=$(command -v "$t") ||
			{ echo "$prog: $t not found on the host: run scripts/install-test-deps.sh" >&2; exit 2; }
		files+=(--file "$p")
	done
}

# run_guest TIMEOUT SCRIPT [ARGS...]: tests/vm/SCRIPT in a guest with the
# files above (IOSB_VM_TIMEOUT overrides TIMEOUT seconds); prints the
# guest's result line. Status 0 when the guest ended well with no check
# failed, and, under CI, none skipped: CI's machines can run every check.
run_guest() {
	local rc line
	"$root/tools/vm/run.sh" --timeout "${IOSB_VM_TIMEOUT:-$1}" "${files[@]}" \
		"$root/tests/vm/$2" "${@:3}" | tee "$host_log"
	rc=${PIPESTATUS[0]}
	line=$(sed -n 's/^GUEST RESULT: //p' "$host_log" | tail -n 1)
	echo "${line:-no result from the guest}"
	((rc == 0)) && [[ $line == *" 0 failed, "* ]] && { [[ -z ${CI:-} ]] || [[ $line == *" 0 skipped"* ]]; }
}
