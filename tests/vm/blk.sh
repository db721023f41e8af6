#!/bin/bash
# blk.sh - the block layer exact on Debian's stock kernel (guest_blk.sh):
# fio's three loads on the guest's raw disk vdd, with the default programs
# and with the programs keyed by request, none missed.
#
#   make all && tests/vm/blk.sh [SECONDS]   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak and the host's fio and jq (with their
# libraries) into the guest.
set -uo pipefail

prog=tests/vm/blk.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak
guest_tools fio jq
run_guest 600 guest_blk.sh "$@"
