# Sourced by scripts/install-deps.sh and scripts/install-test-deps.sh:
# install_missing PROG PKG... installs, with apt-get and without recommends,
# those of the Debian packages that are not installed yet; quiet when none
# is missing; as a normal user it names them and fails.
install_missing() {
	prog=$1
	shift
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	[ -n "$missing" ] || return 0
	if [ "$(id -u)" != 0 ]; then
		echo "$prog: missing packages:$missing; run this script as root (or: sudo apt-get install$missing)" >&2
		exit 1
	fi
	echo "$prog: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}
