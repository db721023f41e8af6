#!/bin/bash
# aio.sh - the aio layer (Linux native AIO) on Debian's stock kernel
# (guest_aio.sh): fio's libaio engine against fio's own counts and
# percentiles and /proc/diskstats.
#
#   make all && tests/vm/aio.sh [SECONDS]   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak, build/aiowork and the host's fio and jq
# (with their libraries) into the guest, and loads null_blk.
set -uo pipefail

prog=tests/vm/aio.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak build/aiowork
guest_tools fio jq
IOSB_VM_MODULES="${IOSB_VM_MODULES:-} null_blk" run_guest 1500 guest_aio.sh "$@"
