#!/bin/bash
# smoke.sh - guest script proving the VM harness works.
#
#   tools/vm/run.sh tests/vm/smoke.sh
#
# Checks: kernel BTF, the three file systems and the raw disk, kprobes via
# tracefs, and that libbpf-tools' fsdist attaches to ext4 in the guest and
# counts exactly 200 cached reads of 4 KiB done by dd.
set -euo pipefail

fail() { echo "SMOKE FAIL: $*" >&2; exit 1; }
ok() { echo "SMOKE ok: $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

echo "SMOKE kernel $(uname -r), guest uptime at script start $(uptime_s) s"

[[ -e /sys/kernel/btf/vmlinux ]] || fail "/sys/kernel/btf/vmlinux missing (kernel built without BTF?)"
ok "/sys/kernel/btf/vmlinux exists"

check_mount() { # DEVICE MOUNTPOINT FSTYPE
	awk -v d="$1" -v m="$2" -v t="$3" '$1 == d && $2 == m && $3 == t { f = 1 } END { exit !f }' /proc/mounts ||
		fail "$1 is not mounted at $2 as $3; /proc/mounts has: $(awk -v m="$2" '$2 == m' /proc/mounts)"
	ok "$1 mounted at $2 as $3"
}
check_mount /dev/vda /mnt/ext4 ext4
check_mount /dev/vdb /mnt/xfs xfs
check_mount /dev/vdc /mnt/btrfs btrfs
check_mount tracefs /sys/kernel/tracing tracefs
check_mount bpffs /sys/fs/bpf bpf
[[ -b /dev/vdd ]] || fail "/dev/vdd (raw disk) missing"
ok "/dev/vdd is a block device"

# kprobes exist in this kernel (the host's have none).
kpe=/sys/kernel/tracing/kprobe_events
[[ -w $kpe ]] || fail "$kpe missing: no kprobes in this kernel"
echo 'p:iosb_smoke ext4_file_read_iter' >>"$kpe" || fail "cannot create a kprobe on ext4_file_read_iter"
echo '-:iosb_smoke' >>"$kpe"
ok "kprobe on ext4_file_read_iter can be created"

# fsdist: attach, then exactly 200 cached reads of 4 KiB.
command -v fsdist >/dev/null || fail "fsdist not in the guest (install libbpf-tools on the host)"
f=/mnt/ext4/smoke.dat
dd if=/dev/zero of="$f" bs=4096 count=256 2>/dev/null
cat "$f" >/dev/null # now cached
t0=$(uptime_s)
# stdbuf -oL: fsdist's stdout is a file, so without it the start line would
# stay in its stdio buffer. The 600 1 bound ends it even if SIGINT got lost;
# SIGINT works although this job starts with SIGINT ignored, because fsdist
# installs its own handler.
stdbuf -oL fsdist -t ext4 600 1 >/tmp/fsdist.out 2>/tmp/fsdist.err &
pid=$!
started=0
for ((i = 0; i < 1800; i++)); do # up to 180 s
	if grep -q 'Hit Ctrl-C to end' /tmp/fsdist.out; then started=1; break; fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if [[ $started != 1 ]]; then
	kill "$pid" 2>/dev/null || true
	echo "--- fsdist stdout:"; cat /tmp/fsdist.out; echo "--- fsdist stderr:"; cat /tmp/fsdist.err
	fail "fsdist -t ext4 did not print its start line within 180 s"
fi
t1=$(uptime_s)
methods=$(bpftool prog show 2>/dev/null | awk '$2 ~ /^(tracing|kprobe):?$/ && $3 == "name" { print $4 }' | sort | tr '\n' ' ')
ok "fsdist attached in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (programs: ${methods:-?})"

dd if="$f" of=/dev/null bs=4096 count=200 2>/dev/null
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
echo "--- fsdist output:"
cat /tmp/fsdist.out
[[ -s /tmp/fsdist.err ]] && { echo "--- fsdist stderr:"; cat /tmp/fsdist.err; }
[[ $rc == 0 ]] || fail "fsdist exited with status $rc"
reads=$(awk '/^operation = / { op = $3; next } op == "'\''read'\''" && $2 == "->" { n += $5 } END { print n + 0 }' /tmp/fsdist.out)
[[ $reads == 200 ]] || fail "fsdist counted $reads ext4 reads, expected exactly 200"
ok "fsdist counted exactly 200 ext4 reads"

echo "SMOKE PASSED (guest uptime $(uptime_s) s)"
