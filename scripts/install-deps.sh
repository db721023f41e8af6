#!/bin/sh
# Installs the Debian packages iostackbreak needs to build, test and run.
# Idempotent and quiet: prints nothing when everything is already there.
set -eu

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
# make deb and its test (make deb-check).
PKGS="$PKGS dpkg-dev lintian man-db"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing; run this script as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
