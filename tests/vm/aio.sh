#!/bin/bash
# aio.sh - the aio layer (Linux native AIO) on Debian's stock kernel
# (guest_aio.sh): fio's libaio engine against fio's own counts and
# percentiles and /proc/diskstats.
#
#   make all && tests/vm/aio.sh [SECONDS]   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak, build/aiowork and the host's fio and jq
# (with their libraries) into the guest (tests/vm/fio_guest.sh).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IOSB_VM_MODULES=null_blk IOSB_VM_TIMEOUT=${IOSB_VM_TIMEOUT:-1500} exec "$root/tests/vm/fio_guest.sh" \
	--file "$root/build/aiowork" "$root/tests/vm/guest_aio.sh" "$@"
