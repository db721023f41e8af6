#!/bin/bash
# uring.sh - io_uring where fentry attaches (io-wq-queued; block requests
# per request without block_io_start) and where a device polls (IOPOLL on
# null_blk's poll queues), in the VM (guest_uring.sh; make vm-uring).
#
#   make all && tests/vm/uring.sh   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak, build/uringwork, build/liburingwork and the
# host's jq into the guest, and loads null_blk.
set -uo pipefail

prog=tests/vm/uring.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak build/uringwork build/liburingwork
guest_tools jq
IOSB_VM_MODULES="${IOSB_VM_MODULES:-} null_blk" run_guest 900 guest_uring.sh "$@"
