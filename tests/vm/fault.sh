#!/bin/bash
# fault.sh - the fault layer (major page faults) on Debian's stock kernel
# (guest_fault.sh): faultwork's faults on a cold mapped file against the
# process's /proc/PID/stat majflt.
#
#   make all && tests/vm/fault.sh   # as root; IOSB_VM_KERNEL=6.12 for 6.12
#
# Copies build/iostackbreak, build/faultwork and the host's jq (with its
# libraries) into the guest.
set -uo pipefail

prog=tests/vm/fault.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak build/faultwork
guest_tools jq
run_guest 900 guest_fault.sh "$@"
