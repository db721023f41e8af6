#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package from `make deb`: lintian finds no error; apt installs it
# into a fresh minimal Debian root, pulling its dependencies from the archive,
# and there the tool, its man page and its completion work, the unit is
# installed but not enabled and --plan --check attaches (root, BPF); apt purges it
# with those dependencies and nothing is left behind.
#
# The root: Debian's apt variant (the Essential packages and apt) of this
# machine's release, bootstrapped by mmdebstrap, plus man-db and
# bash-completion, which the test uses and a user's machine has. None of the
# package's libraries is in it, so `apt-get install ./x.deb` has to find
# every one through Depends: a missing one leaves the tool unable to start.
# Bootstrapping takes half a minute and needs the archive, so the root is
# kept as a tarball under /var/cache/iostackbreak-deb, named by the
# mmdebstrap arguments that made it (remove it to get a new one). Each run
# unpacks it afresh into a tmpfs, the lower layer of an overlay whose upper
# layer, another tmpfs, catches every write.
#
# Everything happens in a mount and a PID namespace of their own: the mounts
# go with the namespace and every process in it (apt, dpkg, mmdebstrap and
# what they start) is killed when the test ends, however it ends. After the
# purge, any file of the upper layer that is not the same in the lower one,
# outside dpkg's and apt's bookkeeping, is a leftover.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ ${1:-} != --inside ]]; then
	[[ $(id -u) == 0 ]] || { echo "deb-check: run as root (namespaces, a chroot, BPF for --plan --check)" >&2; exit 1; }
	command -v mmdebstrap >/dev/null || { echo "deb-check: mmdebstrap missing: scripts/install-test-deps.sh" >&2; exit 1; }
	deb=$(scripts/deb.sh | tail -1)
	echo "deb-check: built $deb"
	# Errors and warnings fail; infos are shown.
	if lint=$(lintian --fail-on error,warning --display-info "$deb" 2>&1); then
		echo "ok   lintian: no errors, no warnings"
	else
		echo "FAIL lintian reports errors or warnings"
	fi
	grep -v '^running with root' <<<"$lint" | sed 's/^/     /' || true
	grep -q '^[EW]: ' <<<"$lint" && exit 1
	tmp=$(mktemp -d /tmp/iosb-deb.XXXXXX)
	trap 'rmdir "$tmp"' EXIT
	# --kill-child: if unshare dies, the namespace's first process is
	# killed, and with it every process of the namespace.
	unshare --mount --propagation private --pid --fork --kill-child "$0" --inside "$tmp" "$deb"
	exit
fi

tmp=$2
deb=$PWD/$3
version=$(dpkg-parsechangelog -S Version)
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

mount -t tmpfs tmpfs "$tmp"

# The root's recipe: this machine's release from deb.debian.org, the
# security suite too (mmdebstrap's default for it, security.debian.org, is a
# second host to reach).
. /etc/os-release
suite=$VERSION_CODENAME
mirror=http://deb.debian.org/debian
# shellcheck disable=SC2054 # one option, a comma list
options=(--variant=apt --include=man-db,bash-completion)
sources=("deb $mirror $suite main" "deb $mirror $suite-updates main"
	"deb $mirror-security $suite-security main")
cache=/var/cache/iostackbreak-deb
key=$(printf '%s\n' "${options[@]}" "$suite" "${sources[@]}" | sha256sum | cut -c1-12)
tarball=$cache/$suite-apt-$key.tar
mkdir -p "$cache"
# One bootstrap at a time. One root kept: another recipe's goes, as does a
# .part (what a run killed while copying left).
exec 9>"$cache/lock"
flock 9
if [[ ! -e $tarball ]]; then
	rm -f "$cache"/*.tar "$cache"/*.part
	echo "deb-check: bootstrapping a fresh $suite root, once on this machine:" \
		"mmdebstrap ${options[*]} $suite (deb.debian.org)"
	t0=$SECONDS
	TMPDIR=$tmp mmdebstrap "${options[@]}" "$suite" "$tmp/root.tar" "${sources[@]}" \
		>"$tmp/mmdebstrap.log" 2>&1 || { cat "$tmp/mmdebstrap.log"; fail "mmdebstrap"; exit 1; }
	cp "$tmp/root.tar" "$tarball.part"
	mv "$tarball.part" "$tarball"
	rm "$tmp/root.tar"
	echo "deb-check: bootstrapped in $((SECONDS - t0)) s, kept as $tarball"
fi
mkdir "$tmp/lower" "$tmp/upper" "$tmp/work" "$tmp/root"
tar -xf "$tarball" -C "$tmp/lower"
exec 9>&-
lower=$tmp/lower
root=$tmp/root
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$tmp/upper,workdir=$tmp/work" "$root"
for d in proc sys dev; do
	mount --rbind "/$d" "$root/$d"
done
# This machine's resolver, not the one of the day the root was made.
mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
# No /usr/local in PATH: a `make install` there must not stand in for the package.
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
packages() { in_root dpkg-query -W -f '${Package}\n' | sort; }

# apt as a user of a fresh machine would run it: the archive's indexes, then
# the file, with what its Depends name.
t0=$SECONDS
in_root apt-get update -q >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt-get update"; exit 1; }
packages >"$tmp/before"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -q "/tmp/$(basename "$deb")" >"$tmp/apt.log" 2>&1 ||
	{ cat "$tmp/apt.log"; fail "apt-get install $deb"; exit 1; }
rm "$root/tmp/$(basename "$deb")"
new=$(packages | comm -13 "$tmp/before" - | sed '/^iostackbreak$/d' | tr '\n' ' ')
ok "apt-get install ./$(basename "$deb") in $((SECONDS - t0)) s, from the archive: $new"

# Each library the binary links comes from a package apt installed just now
# (so Depends named it), or from the base of every Debian system: the
# Essential packages and what they depend on. One that was in the root
# already for another reason would go untested.
essential=$(in_root dpkg-query -W -f '${Package} ${Essential}\n' | awk '$2 == "yes" { print $1 }')
# shellcheck disable=SC2086
base=$(in_root apt-cache depends --recurse --important $essential | grep -v '^ ')
for lib in $(readelf -d "$root/usr/sbin/iostackbreak" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
	pkg=$(in_root dpkg-query -S "*/$lib" 2>/dev/null | sed -n '1s/[:,].*//p') || true
	if [[ -n $pkg && " $new " == *" $pkg "* ]]; then
		ok "$lib: $pkg, installed through Depends"
	elif [[ -n $pkg ]] && grep -qx "$pkg" <<<"$base"; then
		ok "$lib: $pkg, in every Debian system"
	elif [[ -z $pkg ]]; then
		fail "$lib: in no package of the root: Depends did not bring it"
	else
		fail "$lib: $pkg was in the fresh root already: whether Depends names it goes untested"
	fi
done

files=$(in_root dpkg -L iostackbreak)
for f in /usr/sbin/iostackbreak /usr/share/man/man8/iostackbreak.8.gz \
	/usr/share/bash-completion/completions/iostackbreak \
	/lib/systemd/system/iostackbreak.service /usr/share/doc/iostackbreak/copyright \
	/usr/share/doc/iostackbreak/README.md /usr/share/doc/iostackbreak/docs/layers.md; do
	grep -qx "$f" <<<"$files" && [[ -e $root$f ]] && ok "installed $f" || fail "not installed: $f"
done
[[ $(in_root sh -c 'command -v iostackbreak') == /usr/sbin/iostackbreak ]] &&
	ok "iostackbreak is /usr/sbin/iostackbreak" || fail "iostackbreak not found in PATH"

out=$(in_root iostackbreak --version 2>&1) || true
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

# --plan --check attaches for real: the syscall and blk layers get a source here
# for every op (not counting rows of what a layer adds, as blk's "dirtier").
ops='(read|write|open|fsync|flush|discard|other)'
if plan=$(in_root iostackbreak --plan --check 2>&1); then
	for layer in syscall blk; do
		grep -Eq "^$layer +$ops +[a-z_]+ " <<<"$plan" && ! grep -Eq "^$layer +$ops +- " <<<"$plan" &&
			ok "--plan: $layer attached" || fail "--plan: $layer not attached: $plan"
	done
else
	fail "--plan failed: $plan"
fi

# The package and the dependencies it brought, as `apt purge --autoremove`.
in_root apt-get purge --autoremove -y -q iostackbreak >"$tmp/apt.log" 2>&1 ||
	{ cat "$tmp/apt.log"; fail "apt-get purge"; exit 1; }
changed=$(packages | diff "$tmp/before" - | sed -n 's/^[<>] //p' | tr '\n' ' ')
[[ -z $changed ]] && ok "apt-get purge --autoremove: the root's packages are those it had before" ||
	fail "apt-get purge --autoremove: packages not as before: $changed"

# Leftovers: in the upper layer, anything but dpkg's and apt's bookkeeping,
# the directories copied up from below (they hold what was written) and files
# written again as they were (ld.so.cache); a whiteout is a file removed.
left=$(cd "$tmp/upper" && find . -mindepth 1 -printf '%P\n' | while read -r p; do
	case $p in
	var/lib/dpkg/status* | var/lib/dpkg/available* | var/lib/dpkg/lock* | var/lib/dpkg/triggers/* | \
		var/lib/dpkg/updates/* | var/lib/dpkg/diversions* | var/lib/dpkg/statoverride* | \
		var/log/* | var/cache/* | var/lib/apt/*) continue ;;
	esac
	[[ -d $p && ! -L $p && -d $lower/$p ]] && continue
	[[ -f $p && ! -L $p && -f $lower/$p ]] && cmp -s "$p" "$lower/$p" && continue
	[[ -c $p && $(stat -c %t:%T "$p") == 0:0 ]] && echo "$p (removed)" || echo "$p"
done)
[[ -z $left ]] && ok "nothing left behind" || fail "left behind: $(tr '\n' ' ' <<<"$left")"
for f in $files; do
	[[ -d $lower$f ]] && continue # a directory of the system, such as /usr/sbin
	[[ ! -e $root$f ]] || fail "left after purge: $f"
done

exit $failed
