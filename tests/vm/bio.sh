#!/bin/bash
# bio.sh - the bio layer on stacked devices in the VM (guest_bio.sh):
# dm-linear, then dm-delay, over the guest's raw disk vdd; dm-crypt and
# dm-flakey over null_blk; md RAID1 over two null_blk.
#
#   make all && tests/vm/bio.sh [N [DELAY_MS]]   # as root, under the VM lock
#
# Copies build/iostackbreak, build/iowork, the host's jq and dmsetup (with
# their libraries) and mdadm into the guest and loads dm-delay (and dm-mod),
# dm-crypt with xts (AES is built in), dm-flakey, null_blk and raid1.
set -uo pipefail

prog=tests/vm/bio.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_lib.sh"
guest_builds build/iostackbreak build/iowork
guest_tools jq dmsetup mdadm
IOSB_VM_MODULES="${IOSB_VM_MODULES:-} dm-delay dm-crypt xts dm-flakey null_blk raid1" \
	run_guest 420 guest_bio.sh "$@"
