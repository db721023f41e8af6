#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package from `make deb`: lintian finds no error; apt installs it
# into a throwaway root, where the tool, its man page and its completion
# work, the unit is installed but not enabled and --plan attaches (root, BPF);
# apt purges it and nothing is left behind.
#
# The root: an overlay whose lower layer is this machine's / (read only, so
# the host is never touched: a Debian system with the package's dependencies,
# as apt would find them) and whose upper layer, a tmpfs, catches every
# write. Everything happens in a mount namespace of its own, which takes the
# mounts with it when the test ends, however it ends. After the purge, any
# file of the upper layer outside dpkg's and apt's bookkeeping is a leftover.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ ${1:-} != --inside ]]; then
	[[ $(id -u) == 0 ]] || { echo "deb-check: run as root (a mount namespace, a chroot, BPF for --plan)" >&2; exit 1; }
	if dpkg-query -W -f='${Status}' iostackbreak 2>/dev/null | grep -q installed; then
		echo "deb-check: iostackbreak is installed on this machine: the root would not be clean; remove it first" >&2
		exit 1
	fi
	deb=$(scripts/deb.sh | tail -1)
	echo "deb-check: built $deb"
	# Errors fail; warnings and infos are shown.
	if lint=$(lintian --fail-on error --display-info "$deb" 2>&1); then
		echo "ok   lintian: no errors"
	else
		echo "FAIL lintian reports errors"
	fi
	grep -v '^running with root' <<<"$lint" | sed 's/^/     /' || true
	grep -q '^E: ' <<<"$lint" && exit 1
	# The lower layer is this system as it is: not while dpkg changes it
	# (its frontend lock held, or a run left half done).
	for ((i = 0; ; i++)); do
		python3 -c 'import fcntl, sys
f = open("/var/lib/dpkg/lock-frontend", "w")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)' 2>/dev/null &&
			[[ -z $(ls -A /var/lib/dpkg/updates) ]] && break
		((i < 600)) || { echo "deb-check: dpkg on this machine has been busy for 10 minutes (or was interrupted: dpkg --configure -a)" >&2; exit 1; }
		((i == 0)) && echo "deb-check: waiting for dpkg on this machine to finish"
		sleep 1
	done
	tmp=$(mktemp -d /tmp/iosb-deb.XXXXXX)
	trap 'rmdir "$tmp"' EXIT
	unshare --mount --propagation private "$0" --inside "$tmp" "$deb"
	exit
fi

tmp=$2
deb=$PWD/$3
version=$(dpkg-parsechangelog -S Version)
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

mount -t tmpfs tmpfs "$tmp"
mkdir "$tmp/upper" "$tmp/work" "$tmp/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$tmp/upper,workdir=$tmp/work" "$tmp/root"
for d in proc sys dev; do
	mount --rbind "/$d" "$tmp/root/$d"
done
root=$tmp/root
# No /usr/local in PATH: a `make install` there must not stand in for the package.
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }

# apt as a user would run it. (--no-download would make apt refuse the local
# file itself.) Every dependency is met by this system: it installs the one
# package, nothing else.
in_root apt-get install -y -q "$deb" >"$tmp/apt.log" 2>&1 ||
	{ cat "$tmp/apt.log"; fail "apt-get install $deb"; exit 1; }
grep -q '^0 upgraded, 1 newly installed, 0 to remove' "$tmp/apt.log" ||
	{ cat "$tmp/apt.log"; fail "apt-get installed more than the package"; }
ok "apt-get install ./$(basename "$deb")"

files=$(in_root dpkg -L iostackbreak)
for f in /usr/sbin/iostackbreak /usr/share/man/man8/iostackbreak.8.gz \
	/usr/share/bash-completion/completions/iostackbreak \
	/lib/systemd/system/iostackbreak.service /usr/share/doc/iostackbreak/copyright; do
	grep -qx "$f" <<<"$files" && [[ -e $root$f ]] && ok "installed $f" || fail "not installed: $f"
done
[[ $(in_root sh -c 'command -v iostackbreak') == /usr/sbin/iostackbreak ]] &&
	ok "iostackbreak is /usr/sbin/iostackbreak" || fail "iostackbreak not found in PATH"

out=$(in_root iostackbreak --version)
[[ $(head -1 <<<"$out") == "iostackbreak $version" ]] && ok "--version: $(tr '\n' ' ' <<<"$out")" ||
	fail "--version says [$out], the changelog $version"
grep -Eq '^libbpf [0-9]+\.[0-9]+' <<<"$out" || fail "--version without libbpf's version: [$out]"

# The unit uses the packaged binary and is not enabled.
grep -q '^ExecStart=/usr/sbin/iostackbreak ' "$root/lib/systemd/system/iostackbreak.service" &&
	ok "unit runs /usr/sbin/iostackbreak" || fail "unit's ExecStart is not /usr/sbin/iostackbreak"
wants=$(find "$root/etc/systemd" -name 'iostackbreak*' 2>/dev/null || true)
[[ -z $wants ]] && ok "unit not enabled" || fail "unit enabled: $wants"

[[ $(in_root man -w iostackbreak) == /usr/share/man/man8/iostackbreak.8.gz ]] &&
	in_root man iostackbreak 2>/dev/null | grep -q -- '--per-disk' &&
	ok "man iostackbreak" || fail "man iostackbreak"

comp=$(in_root bash -c 'source /usr/share/bash-completion/completions/iostackbreak
	COMP_WORDS=(iostackbreak -T ""); COMP_CWORD=2; _iostackbreak; echo "${COMPREPLY[*]}"')
[[ " $comp " == *" syscall "* && " $comp " == *" blk "* ]] && ok "completion of -T: $comp" ||
	fail "completion of -T: [$comp]"

# --plan attaches for real: the syscall and blk layers get a source here.
if plan=$(in_root iostackbreak --plan 2>&1); then
	for layer in syscall blk; do
		grep -Eq "^$layer +[a-z]+ +[a-z_]+ " <<<"$plan" && ! grep -Eq "^$layer +[a-z]+ +- " <<<"$plan" &&
			ok "--plan: $layer attached" || fail "--plan: $layer not attached: $plan"
	done
else
	fail "--plan failed: $plan"
fi

in_root apt-get purge -y -q iostackbreak >"$tmp/apt.log" 2>&1 ||
	{ cat "$tmp/apt.log"; fail "apt-get purge"; exit 1; }
in_root dpkg-query -W iostackbreak >/dev/null 2>&1 && fail "still known to dpkg after purge" ||
	ok "apt-get purge: dpkg knows it no more"

# Leftovers: in the upper layer, anything but dpkg's and apt's bookkeeping
# and the directories copied up from below (they hold what was written).
left=$(cd "$tmp/upper" && find . -mindepth 1 -printf '%P\n' | while read -r p; do
	case $p in
	var/lib/dpkg/status* | var/lib/dpkg/available* | var/lib/dpkg/lock* | var/lib/dpkg/triggers/* | \
		var/lib/dpkg/updates/* | var/lib/dpkg/diversions* | var/lib/dpkg/statoverride* | \
		var/log/* | var/cache/* | var/lib/apt/*) continue ;;
	esac
	[[ -d $p && ! -L $p && -d /$p ]] && continue
	echo "$p"
done)
[[ -z $left ]] && ok "nothing left behind" || fail "left behind: $(tr '\n' ' ' <<<"$left")"
for f in $files; do
	[[ -d /$f ]] && continue # a directory of the system, such as /usr/sbin
	[[ ! -e $root$f ]] || fail "left after purge: $f"
done

exit $failed
