#!/bin/sh
# Step 1 of 2: the Debian packages that building iostackbreak (make) and
# running it and its demo (scripts/demo.sh) need, and nothing else: no
# service is started, no kernel fetched. The test suite's tools are step 2,
# scripts/install-test-deps.sh.
#
#   scripts/install-deps.sh [--list]
#
# --list prints the package names and installs nothing (to measure a fresh
# machine: apt-get install -s --no-install-recommends $(scripts/install-deps.sh --list)).
# Idempotent and quiet: prints nothing when everything is already there.
set -eu
here=$(dirname "$0")

# clang builds the BPF object, llvm-strip (llvm) strips it for the skeleton
# that bpftool generates; the front end links libbpf, libelf, zlib, json-c
# (--json), libmicrohttpd (--prometheus) and libdw (elfutils: the names of
# user frames, -U); liburing is linked statically
# into build/liburingwork, an io_uring workload that make builds beside the
# tool.
PKGS="clang llvm make gcc pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev libjson-c-dev \
libmicrohttpd-dev liburing-dev libdw-dev"

case "${1:-}" in
'') ;;
--list) echo $PKGS; exit 0 ;;
*) echo "install-deps: unknown argument '$1' (usage: scripts/install-deps.sh [--list])" >&2; exit 2 ;;
esac

. "$here/apt-install.sh"
# shellcheck disable=SC2086
install_missing install-deps $PKGS
