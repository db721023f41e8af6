#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make deb: builds iostackbreak_VERSION_ARCH.deb in the repository's root.
#
# dpkg-deb on the tree `make install DESTDIR=` makes, not dpkg-buildpackage:
# make install stays the one list of what is installed (a package and a
# from-source install cannot differ), the build needs no debhelper, and it is
# fast enough for make check (an incremental build in build-deb/). The
# package is still made with dpkg's own tools from debian/: the version from
# debian/changelog, the control file by dpkg-gencontrol from debian/control,
# the library dependencies by dpkg-shlibdeps from the symbols files of this
# machine's libraries (the lowest versions that provide every symbol the
# binary uses).
set -eu
cd "$(dirname "$0")/.."

out=build-deb
root=$out/root
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb=iostackbreak_${version}_$arch.deb
# Reproducible: file dates from the changelog's entry.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -S Timestamp)
export SOURCE_DATE_EPOCH

# Debian's hardening flags, all of them (stack protector, fortify, PIE,
# relro, bind now), in a build directory of its own so that build/ keeps
# the developers' flags. The Makefile appends its own flags to these (they
# come from the environment). Changed flags do not rebuild objects: make
# clean after changing them.
DEB_BUILD_MAINT_OPTIONS=hardening=+all
export DEB_BUILD_MAINT_OPTIONS
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS=$(dpkg-buildflags --get LDFLAGS)
export CFLAGS LDFLAGS
make -s OUTPUT=$out $out/iostackbreak

rm -rf "$root"
make -s OUTPUT=$out install DESTDIR="$PWD/$root" PREFIX=/usr SYSTEMDUNITDIR=/lib/systemd/system
# As dh_strip would; the man page and changelog compressed as policy says.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/sbin/iostackbreak"
gzip -9n "$root/usr/share/man/man8/iostackbreak.8"
doc=$root/usr/share/doc/iostackbreak
install -D -m 0644 debian/copyright "$doc/copyright"
gzip -9n -c debian/changelog >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

mkdir -p "$root/DEBIAN"
rm -f "$out/substvars"
dpkg-shlibdeps -T"$out/substvars" "$root/usr/sbin/iostackbreak"
dpkg-gencontrol -piostackbreak -P"$root" -T"$out/substvars" -f"$out/files"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
	xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
# Every file root's, whoever builds it.
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
