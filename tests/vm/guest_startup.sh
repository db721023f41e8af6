#!/bin/bash
# guest_startup.sh - start-up on a kernel that lacks something the tool
# uses: what the tool says, and what still works.
#
#   tests/vm/startup.sh        # host side: one guest per case (make vm-startup)
#
# In the guest: guest_startup.sh CASE, CASE one of
#   nojit     the guest booted with sysctl.net.core.bpf_jit_enable=0: BPF
#             programs run in the interpreter. Everything still loads and
#             attaches (Debian's 6.1 attaches fentry too: the trampoline is
#             not JIT output), so the tool says once that the JIT is off and
#             how to turn it on, and counts stay exact.
#   integrity the guest booted with lockdown=integrity: nothing the tool
#             uses is refused at that level (kprobes and reading kernel
#             memory are "confidentiality" items): fentry and exact counts.
#   nobtf     /sys/kernel/btf hidden under an empty tmpfs: to user space,
#             a kernel built without CONFIG_DEBUG_INFO_BTF. One line on
#             stderr says BTF is missing and what to do (--btf, BTFHub);
#             exit status 1. Given a copy of the kernel's BTF (taken before
#             hiding it) with --btf=FILE, the tool traces with kprobes and
#             raw tracepoints (no fentry, no tp_btf: the kernel checks those
#             against a BTF user space no longer sees), with exact counts.
# Each check prints "PASS name" or "FAIL name: details"; exit status 1 if
# any failed.
set -uo pipefail

case=${1:-}
N=50
. guest_lib.sh
cnt() { jq -r --arg l "$1" --arg o "$2" '[.cells[] | select(.layer == $l and .op == $o) | .count] | add // 0' /tmp/run.json; }

# The lockdown level is in securityfs, which the guest's init leaves unmounted.
grep -qs " /sys/kernel/security " /proc/mounts || mount -t securityfs securityfs /sys/kernel/security
echo "guest: kernel $(uname -r), case '$case', lockdown: $(cat /sys/kernel/security/lockdown 2>/dev/null || echo '?'), bpf_jit_enable=$(cat /proc/sys/net/core/bpf_jit_enable)"

# traced_dd [TOOL ARGS]: N direct 4 KiB reads of /dev/vdd by dd, traced on
# syscall, vfs and blk; checks the counts against dd's own and
# /proc/diskstats.
traced_dd() {
	local r0 r1 rc
	r0=$(disk_reads vdd)
	iostackbreak -T syscall,vfs,blk --json "$@" -- dd if=/dev/vdd of=/dev/null bs=4096 count=$N iflag=direct \
		>/tmp/run.json 2>/tmp/run.err
	rc=$?
	r1=$(disk_reads vdd)
	check_eq "$case: traced dd, tool exit status" "$rc" 0
	[[ $rc == 0 ]] || { sed 's/^/    /' /tmp/run.err; return; }
	echo "    counts: $(jq -r '[.cells[] | "\(.layer).\(.op)=\(.count)"] | join(" ")' /tmp/run.json)"
	check_eq "$case: diskstats vdd reads" $((r1 - r0)) "$N"
	check_eq "$case: blk read count = diskstats" "$(cnt blk read)" $((r1 - r0))
	# dd's reads of the disk: N, and as many at vfs (busybox is static: it
	# reads nothing else).
	check_eq "$case: syscall read count" "$(cnt syscall read)" "$N"
	check_eq "$case: vfs read count" "$(cnt vfs read)" "$N"
}

# plan_line LAYER OP: the --plan row of that cell ("layer op method ...").
plan_line() { awk -v l="$1" -v o="$2" '$1 == l && $2 == o' /tmp/plan.out; }

case $case in
nojit)
	iostackbreak --plan --check >/tmp/plan.out 2>/tmp/plan.err
	check_eq "nojit: --plan exit status" "$?" 0
	sed 's/^/    /' /tmp/plan.out /tmp/plan.err
	row=$(plan_line vfs read)
	if [[ $row == *fentry* ]]; then pass "nojit: vfs read traced with fentry"; else fail "nojit: vfs read" "plan row '$row'"; fi
	if [[ $(grep -c 'JIT is off.*sysctl -w net.core.bpf_jit_enable=1' /tmp/plan.err) == 1 ]]; then
		pass "nojit: one line says the JIT is off and how to turn it on"
	else
		fail "nojit: the JIT line" "stderr: $(cat /tmp/plan.err)"
	fi
	traced_dd
	;;
integrity)
	[[ $(cat /sys/kernel/security/lockdown) == *'[integrity]'* ]] ||
		fail "integrity: lockdown" "not at integrity: $(cat /sys/kernel/security/lockdown)"
	iostackbreak --plan --check >/tmp/plan.out 2>/tmp/plan.err
	check_eq "integrity: --plan exit status" "$?" 0
	sed 's/^/    /' /tmp/plan.out /tmp/plan.err
	row=$(plan_line vfs read)
	if [[ $row == *fentry* ]]; then pass "integrity: vfs read traced with fentry"; else fail "integrity: vfs read" "plan row '$row'"; fi
	traced_dd
	;;
nobtf)
	cp /sys/kernel/btf/vmlinux /tmp/vmlinux.btf || fail "nobtf" "cannot copy the kernel's BTF"
	mount -t tmpfs -o ro,size=4k none /sys/kernel/btf || { fail "nobtf" "cannot hide /sys/kernel/btf"; exit 1; }
	iostackbreak --plan --check >/tmp/plan.out 2>/tmp/plan.err
	rc=$?
	sed 's/^/    /' /tmp/plan.err
	check_eq "nobtf: --plan exit status" "$rc" 1
	check_eq "nobtf: lines on stderr" "$(wc -l </tmp/plan.err)" 1
	if grep -q 'BTF' /tmp/plan.err && grep -q 'CONFIG_DEBUG_INFO_BTF' /tmp/plan.err &&
		grep -q -- '--btf=FILE' /tmp/plan.err && grep -q 'BTFHub' /tmp/plan.err; then
		pass "nobtf: the line names BTF, CONFIG_DEBUG_INFO_BTF, --btf=FILE and BTFHub"
	else
		fail "nobtf: the line" "$(cat /tmp/plan.err)"
	fi
	# The kernel's BTF from a file: kprobes for functions, raw tracepoints.
	iostackbreak --btf=/tmp/vmlinux.btf --plan --check >/tmp/plan.out 2>/tmp/plan.err
	check_eq "nobtf: --btf=FILE --plan exit status" "$?" 0
	sed 's/^/    /' /tmp/plan.out /tmp/plan.err
	row=$(plan_line vfs read)
	if [[ $row == *kprobe* ]]; then pass "nobtf: --btf: vfs read traced with kprobe"; else fail "nobtf: --btf: vfs read" "plan row '$row'"; fi
	row=$(plan_line syscall read)
	if [[ $row == *raw_tp* ]]; then pass "nobtf: --btf: syscall read from raw_tp"; else fail "nobtf: --btf: syscall read" "plan row '$row'"; fi
	case=nobtf-btf-file
	traced_dd --btf=/tmp/vmlinux.btf
	umount /sys/kernel/btf
	;;
*)
	fail "usage" "guest_startup.sh nojit|integrity|nobtf, not '$case'"
	;;
esac
guest_result
((nfail == 0))
