#!/bin/sh
# Step 2 of 2: what the test suite (make check) needs beyond step 1
# (scripts/install-deps.sh, which this runs first): the test tools, qemu and
# (as root) the Debian kernels the VM suite boots, 6.1 and 6.12
# (tools/vm/fetch-kernel.sh).
#
#   scripts/install-test-deps.sh [--arm64] [--list]
#
# --arm64: also what make vm-arm64 needs: arm64 as a foreign architecture,
# the cross compiler, the arm64 libraries to link against, qemu-system-arm
# and Debian's arm64 cloud kernel.
# --list prints this step's package names and installs nothing.
# Idempotent and quiet: prints nothing when everything is already there.
set -eu
arm64=0
list=0
for a in "$@"; do
	case "$a" in
	--arm64) arm64=1 ;;
	--list) list=1 ;;
	*) echo "install-test-deps: unknown argument '$a' (usage: scripts/install-test-deps.sh [--arm64] [--list])" >&2; exit 2 ;;
	esac
done
here=$(dirname "$0")

# libcriterion-dev: the unit tests. libclang-rt-dev: clang's libFuzzer and
# sanitizer runtimes (make fuzz-check, make sanitized).
PKGS="libcriterion-dev libclang-rt-dev"
# The host integration tests make loop devices and file systems, and compare
# with fio, strace, libbpf-tools (biolatency, fsdist...) and jq.
PKGS="$PKGS python3 util-linux e2fsprogs xfsprogs btrfs-progs kmod fdisk fio strace jq \
libbpf-tools"
# chromium: renders --heatmap's SVG in a test (a headless screenshot);
# tmux: the terminal the --live test types into and reads.
PKGS="$PKGS chromium fonts-dejavu-core tmux"
# postgresql: Debian's PostgreSQL 15, whose WAL flush stacks the DWARF
# unwinding test checks (its libc has no frame pointers) (it runs its own cluster on a
# loop device; Debian's package also creates and starts one of its own where
# systemd runs, on port 5432; the test's is on 54329).
PKGS="$PKGS postgresql"
# linux-perf: perf record --call-graph=dwarf, the stacks test's independent
# unwinder on a separate run of the same program.
PKGS="$PKGS linux-perf"
# prometheus: its server and promtool for the exporter's integration tests,
# which run their own server on 127.0.0.1. (Where systemd runs, Debian's
# package also enables its own prometheus.service on port 9090: one reason
# this is not step 1.)
PKGS="$PKGS prometheus"
# redis-server, redis-tools: a database whose commits are fdatasyncs, for the
# flush tests (they start their own server on 127.0.0.1 and stop it by PID).
# sqlite3: the database a shell pipeline feeds in the storage-files test.
PKGS="$PKGS redis-server redis-tools sqlite3"
# make deb and its test (make deb-check), which installs the package into a
# fresh Debian root made by mmdebstrap (gpg: mmdebstrap names the archive's
# key in the root's sources with it); man-db and groff check the man page.
PKGS="$PKGS dpkg-dev lintian man-db mmdebstrap gpg"
# The VM suite: qemu, a guest root of busybox in a cpio archive, lld for
# its 32-bit compat program (tools/compat32.c), dmsetup and mdadm that
# tests/vm/bio.sh copies into its guest, bindfs (FUSE) for tests/vm/run.sh.
PKGS="$PKGS qemu-system-x86 cpio busybox-static lld dmsetup mdadm bindfs"
if [ $arm64 = 1 ]; then
	PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64 \
zlib1g-dev:arm64 libjson-c-dev:arm64 libmicrohttpd-dev:arm64 libdw-dev:arm64 qemu-system-arm"
fi
if [ $list = 1 ]; then
	echo $PKGS
	exit 0
fi

"$here/install-deps.sh"
if [ $arm64 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	[ "$(id -u)" = 0 ] || { echo "install-test-deps: run as root: arm64 must be added as a foreign architecture (dpkg --add-architecture arm64)" >&2; exit 1; }
	dpkg --add-architecture arm64
	apt-get update -qq >/dev/null
fi
. "$here/apt-install.sh"
# shellcheck disable=SC2086
install_missing install-test-deps $PKGS

# The VM suite's kernels (make check boots both; silent when cached). Not
# root: tools/vm/run.sh fetches them when it first runs, as root.
[ "$(id -u)" = 0 ] || exit 0
"$here/../tools/vm/fetch-kernel.sh"
IOSB_VM_KERNEL=6.12 "$here/../tools/vm/fetch-kernel.sh"
[ $arm64 = 0 ] || IOSB_VM_FLAVOUR=cloud-arm64 "$here/../tools/vm/fetch-kernel.sh"
