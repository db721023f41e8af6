#!/bin/bash
# startup.sh - start-up on kernels without what the tool needs: one guest
# per case of tests/vm/guest_startup.sh (make vm-startup):
#   nojit      booted with sysctl.net.core.bpf_jit_enable=0
#   integrity  booted with lockdown=integrity
#   nobtf      /sys/kernel/btf hidden in the guest (no Debian kernel lacks BTF)
#
#   make all && tests/vm/startup.sh [CASE...]
#
# Prints "P passed, F failed" over all cases; exit status 1 if any check
# failed or a guest did not finish. Environment: IOSB_VM_KERNEL (6.12 for
# Debian 12's 6.12 kernel), and tools/vm/run.sh's.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=tests/vm/startup.sh
for f in build/iostackbreak; do
	[[ -x $root/$f ]] || { echo "$prog: $root/$f missing: run 'make all' first" >&2; exit 2; }
done
jq=$(command -v jq) || { echo "$prog: jq not found on the host: run scripts/install-test-deps.sh" >&2; exit 2; }
(($#)) || set -- nojit integrity nobtf
log=$(mktemp "${TMPDIR:-/tmp}/iosb-vm-startup.XXXXXX")
trap 'rm -f "$log"' EXIT
passed=0 failed=0 status=0
for c in "$@"; do
	case $c in
	nojit) append=sysctl.net.core.bpf_jit_enable=0 ;;
	integrity) append=lockdown=integrity ;;
	nobtf) append='' ;;
	*) echo "$prog: unknown case '$c' (nojit, integrity, nobtf)" >&2; exit 2 ;;
	esac
	echo "=== $c${append:+: $append}"
	IOSB_VM_APPEND="${IOSB_VM_APPEND:-} $append" "$root/tools/vm/run.sh" --timeout 300 \
		--file "$root/tests/vm/guest_lib.sh" --file "$root/build/iostackbreak" --file "$jq" \
		"$root/tests/vm/guest_startup.sh" "$c" | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(sed -n 's/^GUEST RESULT: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^GUEST RESULT: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$log" | tail -n 1)
	[[ -n $p && -n $f ]] || { p=0 f=1; echo "$prog: $c: the guest reported no result (status $rc)" >&2; }
	passed=$((passed + p)) failed=$((failed + f))
	((rc == 0 && f == 0)) || status=1
done
echo "$passed passed, $failed failed"
exit "$status"
