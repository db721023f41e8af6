#!/bin/bash
# fetch-kernel.sh - make sure the host can run the iostackbreak test VM.
#
#   tools/vm/fetch-kernel.sh [--print-dir]
#
# 1. Installs (apt-get, needs root) whichever host packages the VM harness needs
#    and that are missing: qemu-system-x86 busybox-static cpio kmod e2fsprogs
#    xfsprogs btrfs-progs f2fs-tools libbpf-tools.
# 2. Resolves the current Debian cloud kernel (the linux-image-*-cloud-amd64
#    package that `apt-cache depends linux-image-cloud-amd64` names), downloads
#    it with `apt-get download`, extracts it with `dpkg-deb -x` (nothing is
#    installed) into $IOSB_VM_CACHE/<package>_<version>/ and runs `depmod -b`
#    on it so lib/modules/<kver>/modules.dep exists. $IOSB_VM_CACHE/current is a
#    symlink to the tree to use.
#    IOSB_VM_FLAVOUR=amd64 takes Debian's generic kernel instead (linked as
#    $IOSB_VM_CACHE/current-amd64): the cloud kernel has no f2fs.
#    IOSB_VM_FLAVOUR=cloud-arm64 takes Debian's arm64 cloud kernel (for
#    qemu-system-aarch64, which tools/vm/run.sh runs for it; linked as
#    current-cloud-arm64).
#    IOSB_VM_KERNEL=6.12 takes the newest 6.12 kernel Debian 12 ships beside
#    its 6.1 (the meta-package linux-image-6.12-<flavour>, linked as
#    $IOSB_VM_CACHE/current-6.12, or current-<flavour>-6.12).
#
# Idempotent; prints nothing when everything is already in place (progress
# notes go to stderr only when something is installed or downloaded).
# --print-dir prints the kernel tree directory on stdout afterwards.
#
# Environment: IOSB_VM_CACHE (default /var/cache/iostackbreak-vm), IOSB_VM_FLAVOUR
# (cloud-amd64, the default, amd64 or cloud-arm64), IOSB_VM_KERNEL (empty, the default:
# Debian 12's own kernel, 6.1; or a series with its own meta-package: 6.12).
set -euo pipefail

prog=fetch-kernel.sh
cache=${IOSB_VM_CACHE:-/var/cache/iostackbreak-vm}
flavour=${IOSB_VM_FLAVOUR:-cloud-amd64}
[[ $flavour == cloud-amd64 || $flavour == amd64 || $flavour == cloud-arm64 ]] ||
	{ echo "$prog: error: IOSB_VM_FLAVOUR must be cloud-amd64, amd64 or cloud-arm64, not '$flavour'" >&2; exit 1; }
# An arm64 kernel is a package of Debian's arm64 architecture: apt needs it
# as a foreign architecture (dpkg --add-architecture arm64) to name it.
pkgarch=''
[[ $flavour != *-arm64 ]] || pkgarch=:arm64
series=${IOSB_VM_KERNEL:-}
[[ -z $series || $series =~ ^[0-9]+\.[0-9]+$ ]] ||
	{ echo "$prog: error: IOSB_VM_KERNEL must be a kernel series such as 6.12, not '$series'" >&2; exit 1; }
meta=linux-image-${series:+$series-}$flavour
# The cloud kernel stays "current", as before; another flavour or series has
# its own link (tools/vm/run.sh asks for it with --print-dir).
link=current
[[ $flavour == cloud-amd64 ]] || link+=-$flavour
[[ -z $series ]] || link+=-$series

die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

print_dir=0
for a in "$@"; do
	case $a in
	--print-dir) print_dir=1 ;;
	-h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) die "unknown argument '$a' (usage: $prog [--print-dir])" ;;
	esac
done

# Running apt-get update at most once per invocation.
updated=0
apt_update() {
	[[ $updated == 1 ]] && return 0
	[[ $EUID == 0 ]] || die "package lists are missing/stale and refreshing them needs root: run 'apt-get update' as root (or run this script as root)"
	note "running apt-get update"
	apt-get -qq update >&2 || die "apt-get update failed (is Debian's apt archive reachable?)"
	updated=1
}

# ---- 1. host packages -------------------------------------------------------
need_pkgs=(qemu-system-x86 busybox-static cpio kmod e2fsprogs xfsprogs btrfs-progs f2fs-tools libbpf-tools)
if [[ -n $pkgarch ]]; then
	# An arm64 guest: its emulator, and the arm64 libraries the guest's
	# programs load (the host keeps them in /usr/lib/aarch64-linux-gnu; the
	# cross build links against the same ones, see make vm-arm64).
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		[[ $EUID == 0 ]] || die "apt knows no arm64 packages: as root, dpkg --add-architecture arm64 && apt-get update"
		note "adding arm64 as a foreign architecture (dpkg --add-architecture arm64)"
		dpkg --add-architecture arm64
		updated=0
		apt_update
	fi
	need_pkgs+=(qemu-system-arm libc6:arm64 libtinfo6:arm64 libjq1:arm64 libonig5:arm64 libbpf1:arm64
		libelf1:arm64 zlib1g:arm64 libjson-c5:arm64 libmicrohttpd12:arm64 libdw1:arm64)
fi
missing=()
for p in "${need_pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[[ $st == installed ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	[[ $EUID == 0 ]] || die "missing host packages: ${missing[*]}; install them as root: apt-get install --no-install-recommends ${missing[*]}"
	note "installing host packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get -qq install -y --no-install-recommends "${missing[@]}" >&2; then
		apt_update
		apt-get -qq install -y --no-install-recommends "${missing[@]}" >&2 ||
			die "could not install ${missing[*]} with apt-get"
	fi
fi

# ---- 2. kernel -------------------------------------------------------------
mkdir -p "$cache" || die "cannot create cache directory $cache (set IOSB_VM_CACHE to a writable place)"
exec 9>"$cache/.lock" || die "cannot write $cache/.lock (set IOSB_VM_CACHE to a writable place)"
flock 9

resolve() {
	pkg=$(apt-cache depends "$meta$pkgarch" 2>/dev/null |
		awk -v f="$flavour\$" '$1 == "Depends:" { sub(/:arm64$/, "", $2) }
			$1 == "Depends:" && $2 ~ "^linux-image-[0-9].*-" f { print $2; exit }')
	[[ -n $pkg ]] || return 1
	ver=$(apt-cache show --no-all-versions "$pkg$pkgarch" 2>/dev/null | awk '$1 == "Version:" { print $2; exit }')
	[[ -n $ver ]]
}

pkg='' ver=''
if ! resolve; then
	if [[ $EUID == 0 ]]; then
		apt_update
		resolve || true
	fi
fi
if [[ -z $pkg || -z $ver ]]; then
	# Offline or no package lists: fall back to what is cached, if anything.
	if [[ -e $cache/$link/.complete ]]; then
		note "warning: cannot resolve $meta with apt-cache; using cached $(readlink "$cache/$link")"
		[[ $print_dir == 1 ]] && readlink -f "$cache/$link"
		exit 0
	fi
	[[ -z $pkgarch ]] || dpkg --print-foreign-architectures | grep -qx arm64 ||
		die "cannot resolve $meta: apt knows no arm64 packages (as root: dpkg --add-architecture arm64 && apt-get update)"
	die "cannot resolve the kernel: 'apt-cache depends $meta$pkgarch' names no linux-image-*-$flavour package (run 'apt-get update' as root; the package is in Debian 12's main archive)"
fi

name=${pkg}_${ver//:/%3a}
dir=$cache/$name
if [[ ! -e $dir/.complete ]]; then
	note "downloading and extracting $pkg $ver into $dir"
	tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# apt-get download drops privileges to _apt: let it write here.
	chmod 0755 "$tmp"
	if id _apt >/dev/null 2>&1 && [[ $EUID == 0 ]]; then chown _apt "$tmp"; fi
	(cd "$tmp" && apt-get -qq download "$pkg$pkgarch=$ver" >&2) ||
		die "apt-get download $pkg=$ver failed (is Debian's apt archive reachable? try 'apt-get update')"
	deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n1)
	[[ -f $deb ]] || die "apt-get download produced no .deb for $pkg"
	dpkg-deb -x "$deb" "$tmp/tree" || die "dpkg-deb -x $deb failed"
	rm -f "$deb"
	kver=$(ls "$tmp/tree/lib/modules" 2>/dev/null | head -n1)
	[[ -n $kver && -f $tmp/tree/boot/vmlinuz-$kver ]] ||
		die "$pkg does not contain lib/modules/<kver> and boot/vmlinuz-<kver>"
	depmod -b "$tmp/tree" "$kver" || die "depmod -b $tmp/tree $kver failed (kmod package)"
	[[ -s $tmp/tree/lib/modules/$kver/modules.dep ]] || die "depmod produced no modules.dep"
	echo "$kver" >"$tmp/tree/.kver"
	echo "$pkg $ver" >"$tmp/tree/.package"
	touch "$tmp/tree/.complete"
	rm -rf "$dir"
	mv "$tmp/tree" "$dir"
	rm -rf "$tmp"
	trap - EXIT
fi
if [[ "$(readlink "$cache/$link" 2>/dev/null)" != "$name" ]]; then
	ln -sfn "$name" "$cache/.$link.new"
	mv -T "$cache/.$link.new" "$cache/$link"
fi

# ---- 3. arm64 programs for the guest ---------------------------------------
# busybox, bash, jq, stdbuf, mkfs.ext4 and bindfs built for arm64 cannot be installed
# beside the host's own: their packages are extracted into
# $IOSB_VM_CACHE/userland-arm64 (tools/vm/run.sh takes them from there; their
# libraries are the host's arm64 ones, step 1, or e2fsprogs' own, extracted
# with it). The marker names the set, so a cache of an older set is made anew.
arm64_pkgs=(busybox-static:arm64 bash:arm64 jq:arm64 coreutils:arm64 e2fsprogs:arm64
	libext2fs2:arm64 libcom-err2:arm64 libss2:arm64 libblkid1:arm64 libuuid1:arm64
	bindfs:arm64 libfuse3-3:arm64)
if [[ -n $pkgarch && ! -e $cache/userland-arm64/.complete-bindfs ]]; then
	note "downloading and extracting arm64 busybox-static, bash, jq, coreutils, e2fsprogs and bindfs into $cache/userland-arm64"
	tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	chmod 0755 "$tmp"
	if id _apt >/dev/null 2>&1 && [[ $EUID == 0 ]]; then chown _apt "$tmp"; fi
	(cd "$tmp" && apt-get -qq download "${arm64_pkgs[@]}" >&2) ||
		die "apt-get download of arm64 ${arm64_pkgs[*]} failed (try 'apt-get update')"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$tmp/tree" || die "dpkg-deb -x $deb failed"
	done
	touch "$tmp/tree/.complete-bindfs"
	rm -rf "$cache/userland-arm64"
	mv "$tmp/tree" "$cache/userland-arm64"
	rm -rf "$tmp"
	trap - EXIT
fi
[[ $print_dir == 1 ]] && echo "$dir"
exit 0
