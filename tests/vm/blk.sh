#!/bin/bash
# blk.sh - the block layer exact on Debian's stock kernel (guest_blk.sh):
# fio's three loads on the guest's raw disk vdd, with the default programs
# and with the programs keyed by request, none missed.
#
#   make all && tests/vm/blk.sh [SECONDS]   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak and the host's fio and jq (with their
# libraries) into the guest (tests/vm/fio_guest.sh).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec "$root/tests/vm/fio_guest.sh" "$root/tests/vm/guest_blk.sh" "$@"
