#!/bin/bash
# run.sh - run a test script inside a qemu guest booting Debian's cloud kernel.
#
#   tools/vm/run.sh [--timeout SECS] [--file HOSTPATH[:GUESTPATH]]... GUEST_SCRIPT [ARGS...]
#
# The host kernel cannot do kprobes/fentry, so tests of those attach methods run
# in a TCG (no KVM) guest. Each run builds, in a fresh temp dir:
#   - an initramfs with busybox-static (+ applet links), bash (+ libs), the
#     kernel modules for virtio disks, loop, xfs and btrfs (+ their deps and
#     softdeps, uncompressed, loaded at boot; a guest modprobe works for them),
#     libbpf-tools' fsdist/biolatency/ext4dist and bpftool when the host has
#     them (+ libs), coreutils' stdbuf, every --file (ELF files get their
#     shared libraries and the dynamic loader), and GUEST_SCRIPT;
#   - four disks: /dev/vda ext4 256 MiB (mounted at /mnt/ext4), /dev/vdb xfs
#     300 MiB (/mnt/xfs), /dev/vdc btrfs 256 MiB (/mnt/btrfs), /dev/vdd raw
#     64 MiB, no file system.
# The guest mounts proc, sys, devtmpfs, tmpfs /tmp, tracefs, debugfs and bpffs,
# then runs GUEST_SCRIPT ARGS... (in /tmp, stdin /dev/null, as root) and powers
# off. The guest console (the script's stdout and stderr) is streamed to
# stdout; run.sh's own notes go to stderr, prefixed "run.sh:".
#
# Options:
#   --timeout SECS   kill the guest after SECS seconds (default 600); exit 124
#   --file H[:G]     copy host file or directory H into the guest at G
#                    (default /usr/local/bin/<basename of H>, which is in PATH)
# Exit status: the guest script's exit status; 124 on timeout; 125 when the
# guest never reported one (boot/init failure, kernel panic); 2 on usage errors.
#
# Environment:
#   IOSB_VM_CACHE    kernel cache dir (default /var/cache/iostackbreak-vm)
#   IOSB_VM_KEEP=1   keep the temp dir (disk images, initramfs, console.log)
#   IOSB_VM_MODULES  extra kernel modules to include and load at boot
#                    (space separated, dependencies resolved)
#   IOSB_VM_APPEND   extra kernel command line arguments (after run.sh's own,
#                    so they win)
#   IOSB_VM_FLAVOUR  the Debian kernel: cloud-amd64 (default) or amd64, the
#                    generic one, which has f2fs (fetch-kernel.sh)
#   IOSB_VM_KERNEL   the kernel series: empty for Debian 12's own (6.1), or
#                    6.12 (its linux-image-6.12-<flavour>; fetch-kernel.sh)
#   IOSB_VM_ACCEL    qemu's -accel (default tcg,thread=multi; with more than
#                    one vCPU it can run stale patched kernel text: see below)
#   IOSB_VM_CPU      qemu's -cpu (default max)
#   IOSB_VM_SMP      the guest's CPUs (default 1: see below)
#   IOSB_VM_DIAG=1   diagnose a guest that stalls: qemu's monitor on a unix
#                    socket, a fifth disk /dev/vde that the guest's init
#                    fills with /proc/kallsyms at boot (a few seconds), and
#                    "softlockup_all_cpu_backtrace=1 loglevel=7" on the
#                    command line. When the console reports a soft lockup
#                    or an RCU stall, and on timeout, tools/vm/stall-dump.py
#                    prints every vCPU's RIP, halt state and raw stack,
#                    resolved against that kallsyms (Debian's System.map is
#                    a stub), twice 20 s apart: a spinning CPU moves, a
#                    halted one does not. The dumps, the console log and
#                    kallsyms are kept in IOSB_VM_DIAG_DIR (default: a new
#                    $TMPDIR/iosb-vm-diag.XXXXXX, printed).
#   IOSB_VM_DIAG=quiet  the same, but the console stays at loglevel=3 (the
#                    stall was never seen at loglevel=7; the dumps do not
#                    need the guest's printk). tests/vm/run.sh uses this.
#   TMPDIR           where the temp dir is created (needs ~1 GiB sparse)
#
# Notes for guest-script writers:
#   - Guest scripts run with bash if their first line says so (/bin/bash is
#     there), /bin/sh is busybox ash. In the guest IOSB_VM=1 is set, and the
#     script itself is at /iosb/<basename>.
#   - A background job of a non-interactive shell starts with SIGINT ignored:
#     `tool & ... kill -INT $!` only works if the tool installs its own SIGINT
#     handler (a C program calling signal()/sigaction() is fine; a shell script
#     using `trap ... INT` is not - it cannot un-ignore it). Use SIGTERM or a
#     bounded run (interval/count arguments) otherwise.
#   - Everything runs emulated (TCG): BPF tools can take tens of seconds to
#     load and attach. Wait for a tool's "started" line instead of sleeping,
#     and be generous with per-step timeouts.
#   - The kernel logs at loglevel 3 only, but error messages can still
#     interleave with script output on the console.
#   - stdout of a program writing into a file or pipe is block buffered: a
#     C tool's start line shows up there only if the tool flushes it; wrap
#     tools that do not in `stdbuf -oL` (coreutils' stdbuf is in the guest).
set -euo pipefail

prog=run.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
marker=IOSB-VM-EXIT
init_fail_marker=IOSB-VM-INIT-FAILED

die() { echo "$prog: error: $*" >&2; exit 125; }
usage_error() {
	echo "$prog: $*" >&2
	echo "usage: $prog [--timeout SECS] [--file HOSTPATH[:GUESTPATH]]... GUEST_SCRIPT [ARGS...]" >&2
	exit 2
}
note() { echo "$prog: $*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- arguments ----------------------------------------------------------------
timeout=600
files=()
while (($#)); do
	case $1 in
	--timeout) (($# >= 2)) || usage_error "--timeout needs a value"; timeout=$2; shift 2 ;;
	--timeout=*) timeout=${1#*=}; shift ;;
	--file) (($# >= 2)) || usage_error "--file needs a value"; files+=("$2"); shift 2 ;;
	--file=*) files+=("${1#*=}"); shift ;;
	-h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) usage_error "unknown option '$1'" ;;
	*) break ;;
	esac
done
(($# >= 1)) || usage_error "missing GUEST_SCRIPT"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || usage_error "--timeout wants a positive number of seconds, got '$timeout'"
script=$1
shift
[[ -f $script ]] || usage_error "guest script '$script' not found"

t_start=$(now)

# ---- host prerequisites and kernel ---------------------------------------------
kdir=$("$here/fetch-kernel.sh" --print-dir) || die "fetch-kernel.sh failed (see above)"
[[ -n $kdir && -e $kdir/.complete ]] || die "no kernel in '$kdir' (run tools/vm/fetch-kernel.sh)"
kver=$(cat "$kdir/.kver")
vmlinuz=$kdir/boot/vmlinuz-$kver
moddir=$kdir/lib/modules/$kver
# The guest's architecture: x86_64, or arm64 (IOSB_VM_FLAVOUR=cloud-arm64)
# under qemu-system-aarch64, whose programs come from Debian's arm64
# packages (fetch-kernel.sh extracts them into $cache/userland-arm64).
garch=x86_64
qemu="qemu-system-x86_64"
if [[ ${IOSB_VM_FLAVOUR:-} == *-arm64 ]]; then
	garch=aarch64
	qemu="qemu-system-aarch64"
	userland=${IOSB_VM_CACHE:-/var/cache/iostackbreak-vm}/userland-arm64
	[[ -e $userland/.complete-e2fsprogs ]] || die "no arm64 programs in $userland (run IOSB_VM_FLAVOUR=cloud-arm64 tools/vm/fetch-kernel.sh)"
fi
for c in "$qemu" cpio depmod modprobe mkfs.ext4 mkfs.xfs mkfs.btrfs ldd ldconfig readelf; do
	command -v "$c" >/dev/null || die "'$c' not found in PATH (run tools/vm/fetch-kernel.sh as root to install the host packages)"
done
# The host's busybox runs here (xzcat, the applet list); the guest's is
# the same program, built for the guest.
busybox=/bin/busybox
[[ -x $busybox ]] || die "$busybox missing: apt-get install busybox-static"
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked: apt-get install busybox-static"
fi
gbusybox=$busybox gbash=/bin/bash
if [[ $garch == aarch64 ]]; then
	gbusybox=$userland/bin/busybox gbash=$userland/bin/bash
fi

# ---- diagnosis of stalls (IOSB_VM_DIAG) -----------------------------------------
diag=${IOSB_VM_DIAG:-0}
case $diag in
0 | '') diag=0 ;;
1 | quiet) ;;
*) usage_error "IOSB_VM_DIAG wants 0, 1 or quiet, got '$diag'" ;;
esac
diagdir=''
if [[ $diag != 0 ]]; then
	command -v python3 >/dev/null || die "IOSB_VM_DIAG=1 needs python3 (tools/vm/stall-dump.py)"
	if [[ -n ${IOSB_VM_DIAG_DIR:-} ]]; then
		diagdir=$IOSB_VM_DIAG_DIR
		mkdir -p "$diagdir" || die "cannot create IOSB_VM_DIAG_DIR '$diagdir'"
	else
		diagdir=$(mktemp -d "${TMPDIR:-/tmp}/iosb-vm-diag.XXXXXX")
	fi
fi

# ---- temp dir ---------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/iosb-vm.XXXXXX")
qpid='' wpid='' rpid='' dpid=''
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local rc=$?
	set +e
	[[ -n $wpid ]] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
	[[ -n $qpid ]] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	[[ -n $rpid ]] && wait "$rpid" 2>/dev/null
	[[ -n $dpid ]] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	if [[ -n $diagdir ]]; then
		cp "$work/console.log" "$diagdir/console.log" 2>/dev/null
		note "diag: console log, kallsyms and any stall dumps are in $diagdir"
	fi
	if [[ ${IOSB_VM_KEEP:-0} == 1 ]]; then
		note "kept $work"
	else
		rm -rf "$work"
	fi
	return "$rc"
}
trap cleanup EXIT
trap 'note "interrupted"; exit 130' INT TERM HUP
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,usr/local/sbin,lib64,etc,proc,sys,dev,tmp,run,root,iosb,mnt/ext4,mnt/xfs,mnt/btrfs}
mkdir -p "$root/lib/$garch-linux-gnu" "$root/usr/lib/$garch-linux-gnu"

# ---- initramfs content --------------------------------------------------------------
is_elf() { [[ -f $1 && "$(head -c 4 "$1" | od -An -c | tr -d ' ')" == '177ELF' ]]; }

# Copy the shared libraries (and dynamic loader) an ELF file needs, at the
# paths ldd reports, dereferencing symlinks.
copy_libs() {
	local f=$1 out lib
	is_elf "$f" || return 0
	[[ $garch == x86_64 ]] || { copy_libs_arm64 "$f"; return; }
	out=$(ldd "$f" 2>&1) || return 0 # static, or not an executable/library
	if grep -q 'not found' <<<"$out"; then
		die "$f needs libraries the host does not have:"$'\n'"$(grep 'not found' <<<"$out")"
	fi
	for lib in $(awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }' <<<"$out"); do
		[[ -e $root$lib ]] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# The same for an arm64 ELF file, which ldd cannot run: its interpreter and
# its NEEDED libraries, recursively, from the extracted arm64 programs or
# the host's arm64 libraries (multiarch), copied to /lib/aarch64-linux-gnu.
copy_libs_arm64() {
	local f=$1 interp lib d found
	interp=$(readelf -lW "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [[ -n $interp && ! -e $root$interp ]]; then
		mkdir -p "$root$(dirname "$interp")"
		cp -L "$interp" "$root$interp" || die "$f needs $interp: apt-get install libc6:arm64"
	fi
	for lib in $(readelf -dW "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[[ -e $root/lib/aarch64-linux-gnu/$lib ]] && continue
		found=''
		for d in "$userland/lib/aarch64-linux-gnu" "$userland/usr/lib/aarch64-linux-gnu" \
			/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu; do
			[[ -e $d/$lib ]] && { found=$d/$lib; break; }
		done
		[[ -n $found ]] || die "$f needs $lib, which no arm64 package on the host provides (tools/vm/fetch-kernel.sh installs the usual ones)"
		cp -L "$found" "$root/lib/aarch64-linux-gnu/$lib"
		copy_libs_arm64 "$found"
	done
}

# install_file HOST GUEST: copy a file or directory tree, with libraries.
install_file() {
	local src=$1 dst=$2 f
	[[ -e $src ]] || die "--file: '$src' does not exist on the host"
	[[ $dst == /* ]] || die "--file: guest path '$dst' must be absolute"
	mkdir -p "$root$(dirname "$dst")"
	if [[ -d $src ]]; then
		rm -rf "${root:?}$dst"
		cp -a "$src" "$root$dst"
		while IFS= read -r -d '' f; do copy_libs "$f"; done < <(find "$root$dst" -type f -perm -u+x -print0)
	else
		# Never write through an existing link (applet links point at
		# /bin/busybox, which is an absolute path: the host's).
		rm -f "$root$dst"
		cp -L "$src" "$root$dst"
		copy_libs "$src"
	fi
}

# busybox and its applet links; bash (guest scripts may be bash scripts).
cp "$gbusybox" "$root/bin/busybox"
while read -r applet; do
	[[ -e $root/$applet || -L $root/$applet ]] || ln -s /bin/busybox "$root/$applet"
done < <("$busybox" --list-full)
rm -f "$root/bin/bash"
install_file "$gbash" /bin/bash

# coreutils' stdbuf (its LD_PRELOAD helper too): `stdbuf -oL tool >file`
# makes a stdio tool's start line visible in the file as soon as it is printed.
for t in /usr/bin/stdbuf /usr/libexec/coreutils/libstdbuf.so; do
	if [[ $garch == aarch64 ]]; then
		install_file "$userland$t" "$t"
	elif [[ -e $t ]]; then
		install_file "$t" "$t"
	fi
done

# libbpf-tools for cross-checks, bpftool (the host's: x86_64 guests only).
for t in /usr/sbin/fsdist /usr/sbin/biolatency /usr/sbin/ext4dist /usr/sbin/bpftool; do
	[[ $garch == x86_64 && -x $t ]] && install_file "$t" "$t"
done

# --file arguments.
for spec in "${files[@]}"; do
	if [[ $spec == *:* ]]; then
		h=${spec%%:*} g=${spec#*:}
	else
		h=$spec g=/usr/local/bin/$(basename "$spec")
	fi
	[[ -n $h && -n $g ]] || usage_error "bad --file '$spec'"
	install_file "$h" "$g"
done

# Kernel modules: resolved by the host's modprobe against the cached tree
# (dependencies first, softdeps included), copied uncompressed.
# ext4 is built into the cloud kernel, a module of the generic one.
mods=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk loop ext4 xfs btrfs)
read -r -a extra <<<"${IOSB_VM_MODULES:-}"
mods+=("${extra[@]}")
declare -A seen=()
: >"$root/iosb/modules.load"
for m in "${mods[@]}"; do
	out=$(modprobe -d "$kdir" -S "$kver" --show-depends "$m" 2>&1) ||
		die "kernel module '$m' not found for $kver: $out"
	while read -r kind path _; do
		[[ $kind == insmod ]] || continue # "builtin NAME": nothing to load
		rel=${path#"$moddir"/}
		[[ $rel != "$path" ]] || rel=${path#*/lib/modules/"$kver"/}
		dst=${rel%.xz}; dst=${dst%.zst}; dst=${dst%.gz}
		[[ -n ${seen[$dst]:-} ]] && continue
		seen[$dst]=1
		mkdir -p "$root/lib/modules/$kver/$(dirname "$dst")"
		case $rel in
		*.ko.xz) "$busybox" xzcat "$moddir/$rel" >"$root/lib/modules/$kver/$dst" ;;
		*.ko.gz) "$busybox" zcat "$moddir/$rel" >"$root/lib/modules/$kver/$dst" ;;
		*.ko.zst) command -v zstd >/dev/null || die "$rel is zstd-compressed: apt-get install zstd"
			zstd -q -d -c "$moddir/$rel" >"$root/lib/modules/$kver/$dst" ;;
		*) cp "$moddir/$rel" "$root/lib/modules/$kver/$dst" ;;
		esac
		echo "$dst" >>"$root/iosb/modules.load"
	done <<<"$out"
done
for f in modules.builtin modules.builtin.modinfo modules.order; do
	[[ -e $moddir/$f ]] && cp "$moddir/$f" "$root/lib/modules/$kver/"
done
depmod -b "$root" "$kver" || die "depmod on the initramfs tree failed"

# Guest script and its arguments.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; } # single-quote for the guest shell
sname=$(basename "$script")
cp -L "$script" "$root/iosb/$sname"
chmod 0755 "$root/iosb/$sname"
{
	printf 'set --'
	for a in "$@"; do printf ' %s' "$(sq "$a")"; done
	printf '\n'
} >"$root/iosb/args"

[[ $diag != 0 ]] && touch "$root/iosb/diag"

# Minimal /etc.
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
echo iosb-vm >"$root/etc/hostname"
printf '%s\n' "/lib/$garch-linux-gnu" "/usr/lib/$garch-linux-gnu" /usr/local/lib >"$root/etc/ld.so.conf"
[[ $garch != x86_64 ]] || ldconfig -r "$root" 2>/dev/null || true

cat >"$root/init" <<INIT
#!/bin/sh
# Generated by tools/vm/run.sh: guest init (busybox ash, PID 1).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root IOSB_VM=1 TERM=dumb
kver=$kver
INIT
cat >>"$root/init" <<'INIT'
fail() {
	echo "iosb-init: $*"
	echo "IOSB-VM-INIT-FAILED"
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 5
	exit 1
}
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp || fail "mount /tmp"
mount -t tmpfs tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing || fail "mount tracefs"
mount -t debugfs debugfs /sys/kernel/debug || fail "mount debugfs"
mount -t bpf bpffs /sys/fs/bpf || fail "mount bpffs"
hostname -F /etc/hostname
ln -sf /proc/self/fd /dev/fd 2>/dev/null
ulimit -l unlimited
while read -r m; do
	insmod "/lib/modules/$kver/$m" 2>/tmp/insmod.err ||
		grep -q 'File exists' /tmp/insmod.err ||
		echo "iosb-init: warning: insmod $m: $(cat /tmp/insmod.err)"
done </iosb/modules.load
rm -f /tmp/insmod.err
for d in vda vdb vdc vdd; do
	i=0
	while [ ! -b /dev/$d ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b /dev/$d ] || fail "/dev/$d did not appear (virtio_blk not loaded?)"
done
if [ -e /iosb/diag ]; then
	# IOSB_VM_DIAG=1: the host resolves a stuck vCPU's addresses against
	# this, KASLR and modules included.
	i=0
	while [ ! -b /dev/vde ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	cat /proc/kallsyms >/dev/vde && sync || echo "iosb-init: warning: kallsyms not written to /dev/vde"
fi
mount -t ext4 /dev/vda /mnt/ext4 || fail "mount ext4 /dev/vda"
mount -t xfs /dev/vdb /mnt/xfs || fail "mount xfs /dev/vdb"
mount -t btrfs /dev/vdc /mnt/btrfs || fail "mount btrfs /dev/vdc"
. /iosb/args
cd /tmp
INIT
cat >>"$root/init" <<INIT
$(sq "/iosb/$sname") "\$@" </dev/null
rc=\$?
INIT
cat >>"$root/init" <<'INIT'
cd /
sync
echo
echo "IOSB-VM-EXIT=$rc"
poweroff -f
echo o >/proc/sysrq-trigger
sleep 10
INIT
chmod 0755 "$root/init"

(cd "$root" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) >"$work/initramfs.cpio" ||
	die "building the initramfs with cpio failed"

# ---- disks ------------------------------------------------------------------------
mkdisk() { # name MiB mkfs...
	local img=$work/$1.img
	truncate -s "$2M" "$img"
	shift 2
	(($#)) || return 0
	"$@" "$img" >"$work/mkfs.log" 2>&1 || { cat "$work/mkfs.log" >&2; die "$* $img failed"; }
}
mkdisk vda 256 mkfs.ext4 -q -F -L iosb-ext4
mkdisk vdb 300 mkfs.xfs -q -f -L iosb-xfs
mkdisk vdc 256 mkfs.btrfs -q -f -L iosb-btrfs
mkdisk vdd 64
[[ $diag != 0 ]] && mkdisk vde 32

t_built=$(now)
note "kernel $kver; initramfs $(( $(stat -c %s "$work/initramfs.cpio") / 1024 / 1024 )) MiB; prepared in $(elapsed "$t_start") s; booting (timeout ${timeout} s)"

# ---- boot -------------------------------------------------------------------------
# The console goes through a fifo into a reader that strips CRs, prints it and
# keeps a copy in console.log for the exit marker (and the stall watcher:
# sed -u, as tr would hold up to 4 KiB back in its pipe buffer).
log=$work/console.log
mkfifo "$work/console.fifo"
# qboot (qemu-system-data) boots -kernel directly, faster than SeaBIOS and
# without its terminal escape sequences on the console.
bios=()
[[ $garch == x86_64 && -f /usr/share/qemu/qboot.rom ]] && bios=(-bios /usr/share/qemu/qboot.rom)
# arm64: qemu's "virt" board (PSCI powers it off; -drive if=virtio is a
# virtio PCI disk there too), its PL011 UART as the console.
machine=() console=ttyS0
[[ $garch == aarch64 ]] && machine=(-M virt) console=ttyAMA0
sed -u 's/\r//g' <"$work/console.fifo" | tee "$log" &
rpid=$!
cmdline="console=$console quiet loglevel=3 panic=-1"
diag_args=()
if [[ $diag != 0 ]]; then
	cmdline+=" softlockup_all_cpu_backtrace=1"
	[[ $diag == 1 ]] && cmdline+=" loglevel=7"
	# debug-threads: the vCPU threads are named "CPU N/TCG" on the host.
	diag_args=(-name "iosb-vm,debug-threads=on" -monitor "unix:$work/monitor.sock,server=on,wait=off"
		-drive "file=$work/vde.img,if=virtio,format=raw")
fi
# One vCPU by default. With two, qemu 7.2.22's thread=multi runs code the
# kernel has already rewritten: tests/vm/stall_loop.sh tracefs-hot, with no
# BPF and no iostackbreak, only tracefs flipping hot tracepoints and
# kprobes, killed the 6.12 guest in its first 1-22 enable/disable cycles in
# 3 of 3 boots ("Oops: int3" at try_to_wake_up+0x5b4 and __schedule+0x5b8,
# RIP one byte into an instruction that memory holds whole: an int3 that
# text_poke_bp had written and removed, still executed) and the 6.1 guest
# in 2 of 2; the CI run of b160556 panicked the same way at
# __mutex_lock+0x6e while iostackbreak detached. thread=single (one host
# thread for both vCPUs) ran 49-78 cycles in each of 4 boots with no fault,
# but guest time runs on while a vCPU waits for its turn: the suite's
# timing checks failed there (slow events, delayacct: the kernel's blkio
# clock starts in __schedule before the sched_switch we time from, and a
# vCPU frozen between them puts ms into one and not the other). One vCPU
# has neither: no other vCPU runs text being patched, and none waits for
# another's turn. 6.1 and 6.12 suites: 209 of 209 each (2026-11-25,
# tests/vm/README.md "When the guest stalls").
accel=${IOSB_VM_ACCEL:-tcg,thread=multi}
cpu=${IOSB_VM_CPU:-max}
smp=${IOSB_VM_SMP:-1}
# Pointer authentication with QARMA costs a lot under TCG; qemu's own
# cheaper algorithm is as good for a test guest.
[[ $garch == aarch64 && -z ${IOSB_VM_CPU:-} ]] && cpu=max,pauth-impdef=on
note "qemu -accel $accel -cpu $cpu -smp $smp; guest command line: $cmdline ${IOSB_VM_APPEND:-}"
"$qemu" ${machine[@]+"${machine[@]}"} \
	-accel "$accel" -cpu "$cpu" -m 1024 -smp "$smp" \
	-nographic -no-reboot -nic none ${bios[@]+"${bios[@]}"} \
	-kernel "$vmlinuz" -initrd "$work/initramfs.cpio" \
	-append "$cmdline ${IOSB_VM_APPEND:-}" \
	-drive "file=$work/vda.img,if=virtio,format=raw" \
	-drive "file=$work/vdb.img,if=virtio,format=raw" \
	-drive "file=$work/vdc.img,if=virtio,format=raw" \
	-drive "file=$work/vdd.img,if=virtio,format=raw" \
	${diag_args[@]+"${diag_args[@]}"} \
	</dev/null >"$work/console.fifo" 2>&1 &
qpid=$!

# qemu_threads: "TID NAME TICKS" per qemu thread (utime+stime, in USER_HZ).
# shellcheck disable=SC2317 # called from diag_dump
qemu_threads() {
	local t name
	for t in /proc/"$qpid"/task/*; do
		name=$(tr ' ' '_' <"$t/comm" 2>/dev/null) || continue
		awk -v t="${t##*/}" -v n="$name" '{ sub(/^.*\) /, ""); print t, n, $12 + $13 }' "$t/stat" 2>/dev/null
	done
}
# diag_dump LABEL: where each vCPU is now (IOSB_VM_DIAG=1).
# shellcheck disable=SC2317 # called from the subshells below
diag_dump() {
	local tmp=$diagdir/dump.$BASHPID # per caller: two subshells may dump
	[[ -s $diagdir/kallsyms ]] || tr -d '\0' <"$work/vde.img" >"$diagdir/kallsyms"
	"$here/stall-dump.py" --socket "$work/monitor.sock" --kallsyms "$diagdir/kallsyms" \
		--label "$1" >"$tmp" 2>&1
	# The host's view: a vCPU thread that is halted sleeps, one that
	# executes (guest code, or qemu looping) uses CPU time.
	qemu_threads >"$tmp.threads"
	sleep 2
	qemu_threads | paste "$tmp.threads" - |
		awk '{ printf "host thread %s (%s): %d%% CPU over 2 s\n", $1, $2, ($6 - $3) / 2 }' \
			>>"$tmp"
	rm -f "$tmp.threads"
	cat "$tmp" >>"$diagdir/stall-dump.txt"
	note "diag: $1:"
	grep -E '^(CPU[0-9]* RIP|host thread .*CPU_[0-9])' "$tmp" | sed "s/^/$prog:   /" >&2
	rm -f "$tmp"
}
stall_re='soft lockup|rcu: INFO|detected stall|kthread starved|timer wakeup didn|hung_task|blocked for more than'
if [[ $diag != 0 ]]; then
	(
		trap 'kill "$dsp" 2>/dev/null; wait "$dsp" 2>/dev/null; exit 0' TERM
		until grep -Eq "$stall_re" "$log"; do
			sleep 2 & dsp=$!
			wait "$dsp"
		done
		# Let the guest's own all-CPU backtraces reach the console first.
		sleep 10 & dsp=$!
		wait "$dsp"
		diag_dump "the console reported a stall" || true
		sleep 20 & dsp=$!
		wait "$dsp"
		diag_dump "20 s later" || true
	) &
	dpid=$!
fi
(
	trap 'kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null; exit 0' TERM
	sleep "$timeout" & sp=$!
	wait "$sp"
	touch "$work/timed-out"
	# (|| true: under set -e a failed dump must not keep qemu alive.)
	[[ $diag == 0 ]] || diag_dump "timeout after $timeout s" || true
	kill "$qpid" 2>/dev/null
	sleep 10 & sp=$!
	wait "$sp"
	kill -9 "$qpid" 2>/dev/null
) &
wpid=$!
qrc=0
wait "$qpid" || qrc=$?
qpid=''
kill "$wpid" 2>/dev/null || true
wait "$wpid" 2>/dev/null || true
wpid=''
wait "$rpid" || true
rpid=''
if [[ -n $dpid ]]; then
	kill "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || true
	dpid=''
fi

secs=$(elapsed "$t_built")
if [[ -e $work/timed-out ]]; then
	note "TIMEOUT: guest killed after ${timeout} s"
	exit 124
fi
status=$(sed -n "s/^$marker=\([0-9][0-9]*\)\$/\1/p" "$log" | tail -n1)
if [[ -z $status ]]; then
	if grep -q "^$init_fail_marker" "$log"; then
		note "guest init failed (see the iosb-init line above)"
	else
		note "guest never reported an exit status (qemu exit status $qrc; kernel panic or init crash? see the console output above)"
	fi
	exit 125
fi
note "guest script exited with status $status; VM ran ${secs} s, total $(elapsed "$t_start") s"
exit "$status"
