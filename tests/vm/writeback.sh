#!/bin/bash
# writeback.sh - buffered writes charged to the processes that dirtied the
# pages, on Debian's stock kernel (guest_writeback.sh): dd's /proc/PID/io
# against the bytes written back for it, on ext4 and below dm-linear and
# dm-delay, with tp_btf and with raw tracepoints; -G against cgroup v2
# io.stat wbytes, for one cgroup's file and for a file two cgroups write.
#
#   make all && tests/vm/writeback.sh [DELAY_MS]   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak and the host's jq and dmsetup (with their
# libraries) into the guest, and loads dm-delay (and dm-mod).
set -uo pipefail

prog=tests/vm/writeback.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak
guest_tools jq dmsetup
IOSB_VM_MODULES="${IOSB_VM_MODULES:-} dm-delay" run_guest 900 guest_writeback.sh "$@"
