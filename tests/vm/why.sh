#!/bin/bash
# why.sh - why calls waited, and the pages they added, in the VM
# (guest_why.sh): the lock, journal and cache checks of
# tests/integration/test_why.py with the calls split at the ext4 layer,
# traced with --attach=fentry and --attach=kprobe (make vm-why).
#
#   make all && tests/vm/why.sh [lock] [journal] [cache]   # as root
#
# Copies build/iostackbreak, build/iowork, the host's jq and mkfs.ext4 into
# the guest. IOSB_VM_KERNEL=6.12 boots Debian 12's 6.12 kernel instead of
# its 6.1. Prints the guest's "P passed, F failed, S skipped"; exit
# status 1 if any check failed or the guest did not finish.
set -uo pipefail

prog=tests/vm/why.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak build/iowork
guest_tools jq mkfs.ext4
run_guest 420 guest_why.sh "$@"
