#!/bin/sh
# Installs the Debian packages iostackbreak needs to build, test and run, and
# (as root) the Debian kernels the VM suite boots: 6.1 and 6.12
# (tools/vm/fetch-kernel.sh).
#
#   scripts/install-deps.sh [--arm64]
#
# --arm64: also what make vm-arm64 needs: arm64 as a foreign architecture,
# the cross compiler, the arm64 libraries to link against, qemu-system-arm
# and Debian's arm64 cloud kernel.
# Idempotent and quiet: prints nothing when everything is already there.
set -eu
arm64=0
case "${1:-}" in
'') ;;
--arm64) arm64=1 ;;
*) echo "install-deps: unknown argument '$1' (usage: scripts/install-deps.sh [--arm64])" >&2; exit 2 ;;
esac
here=$(dirname "$0")

# libclang-rt-dev: clang's libFuzzer and sanitizer runtimes (make fuzz-check).
# chromium: renders --heatmap's SVG in a test (a headless screenshot);
# tmux: the terminal the --live test types into and reads.
# prometheus: its server and promtool for the exporter's integration tests,
# which run their own server on 127.0.0.1. (Where systemd runs, Debian's
# package also enables its own prometheus.service on port 9090.)
# redis-server, redis-tools: a database whose commits are fdatasyncs, for the
# flush tests (they start their own server on 127.0.0.1 and stop it by PID).
PKGS="clang llvm make gcc pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev \
libjson-c-dev libcriterion-dev libbpf-tools python3 util-linux e2fsprogs \
xfsprogs btrfs-progs kmod cpio busybox-static qemu-system-x86 fdisk fio strace jq \
libmicrohttpd-dev prometheus libclang-rt-dev chromium fonts-dejavu-core tmux \
redis-server redis-tools"
# sqlite3: the database a shell pipeline feeds in the storage-files test
# (test_fds: its reads of its stdin pipe are left out, its file's counted).
PKGS="$PKGS sqlite3"
# liburing-dev: tools/liburingwork.c, the io_uring layer's liburing client.
PKGS="$PKGS liburing-dev"
# make deb and its test (make deb-check), which installs the package into a
# fresh Debian root made by mmdebstrap (gpg: mmdebstrap names the archive's
# key in the root's sources with it).
PKGS="$PKGS dpkg-dev lintian man-db mmdebstrap gpg"
# lld links the VM suite's 32-bit compat program (tools/compat32.c).
PKGS="$PKGS lld"
# dmsetup and mdadm: tests/vm/bio.sh copies them into its guest (make vm-bio).
PKGS="$PKGS dmsetup mdadm"
if [ $arm64 = 1 ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		[ "$(id -u)" = 0 ] || { echo "install-deps: run as root: arm64 must be added as a foreign architecture (dpkg --add-architecture arm64)" >&2; exit 1; }
		dpkg --add-architecture arm64
		apt-get update -qq >/dev/null
	fi
	PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64 \
zlib1g-dev:arm64 libjson-c-dev:arm64 libmicrohttpd-dev:arm64 qemu-system-arm"
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: missing packages:$missing; run this script as root (or: sudo apt-get install$missing)" >&2
		exit 1
	fi
	echo "install-deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The VM suite's kernels (make check boots both; silent when cached). Not
# root: tools/vm/run.sh fetches them when it first runs, as root.
[ "$(id -u)" = 0 ] || exit 0
"$here/../tools/vm/fetch-kernel.sh"
IOSB_VM_KERNEL=6.12 "$here/../tools/vm/fetch-kernel.sh"
[ $arm64 = 0 ] || IOSB_VM_FLAVOUR=cloud-arm64 "$here/../tools/vm/fetch-kernel.sh"
