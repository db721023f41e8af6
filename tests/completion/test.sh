#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (contrib/bash-completion/iostackbreak) against
# independent truths: every option of the man page, the layers of
# bpf/cells.def, the disks of /sys/block, attach methods the binary
# accepts. No root. Usage: tests/completion/test.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
[[ -x $build/iostackbreak ]] || { echo "completion: no $build/iostackbreak: run make first" >&2; exit 1; }
PATH=$PWD/$build:$PATH
source contrib/bash-completion/iostackbreak
failed=0

# complete WORD...: the words typed, the last one being completed; sets got.
complete_words()
{
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	_iostackbreak iostackbreak "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
}

# expect WHAT WANT: got must equal WANT (words, in any order).
expect()
{
	local want
	want=$(printf '%s\n' $2 | sort | tr '\n' ' ')
	if [[ $got == "$want" ]]; then
		echo "ok   $1"
	else
		echo "FAIL $1: got [$got], want [$want]"
		failed=1
	fi
}

# Every option of the man page (groff's "\-" undone), and "--".
man_opts=$(sed 's/\\-/-/g' man/iostackbreak.8 | grep -oE '\\fB--?[A-Za-z][a-z-]*\\fR' |
	sed 's/\\f[BR]//g' | sort -u)
complete_words iostackbreak -
expect "every option of the man page after -" "$man_opts --"
complete_words iostackbreak --tr
expect "--tr" "$(grep -- '^--tr' <<<"$man_opts")"

# Layers: the LAYER lines of bpf/cells.def, and "all".
layers=$(sed -n 's/^LAYER(LAYER_[A-Z0-9_]*, *\([a-z0-9_]*\),.*/\1/p' bpf/cells.def)
[[ -n $layers ]] || { echo "FAIL no LAYER lines in bpf/cells.def"; failed=1; }
complete_words iostackbreak -T ''
expect "-T: the layers of cells.def" "$layers all"
complete_words iostackbreak --type = ''
expect "--type=: the same" "$layers all"
complete_words iostackbreak -T sys
expect "-T sys" "syscall"
complete_words iostackbreak -T syscall,
expect "-T syscall,: the others, after it" "$(grep -vx syscall <<<"$layers" | sed 's/^/syscall,/')"

# Disks: /sys/block as it is now.
complete_words iostackbreak -d ''
expect "-d: /sys/block" "$(ls /sys/block)"
complete_words iostackbreak --disk = ''
expect "--disk=: /sys/block" "$(ls /sys/block)"

# Attach methods: each one offered is accepted by the binary.
complete_words iostackbreak --attach ''
methods=$got
[[ " $methods " == *" auto "* && " $methods " == *" fentry "* ]] &&
	echo "ok   --attach: $methods" || { echo "FAIL --attach: [$methods]"; failed=1; }
for m in $methods; do
	if ! iostackbreak --attach="$m" --version >/dev/null 2>&1; then
		echo "FAIL --attach=$m offered but refused by the binary"
		failed=1
	fi
done
iostackbreak --attach=nosuch --version >/dev/null 2>&1 &&
	{ echo "FAIL the binary accepts --attach=nosuch: the check above proves nothing"; failed=1; }

# Values of a few words, from the option's own line of --help.
complete_words iostackbreak --io ''
expect "--io: r w rw" "r w rw"
complete_words iostackbreak --weight = ''
expect "--weight=: requests bytes time" "requests bytes time"
complete_words iostackbreak --user-stack = ''
expect "--user-stack=: fp dwarf auto" "fp dwarf auto"
# An optional value only after "=": "--folded " is followed by options.
complete_words iostackbreak --folded --ve
expect "--folded --ve: an option" "--version --verbose"

# A value that is a number: no options offered in its place.
complete_words iostackbreak --top ''
expect "--top: nothing" ""
complete_words iostackbreak -p $$,
pids=$got
[[ " $pids " == *" $$,$PPID "* && " $pids " != *" $$,$$ "* ]] &&
	echo "ok   -p $$,: other pids" || { echo "FAIL -p $$,: [$pids]"; failed=1; }

# After --, a command.
complete_words iostackbreak -T blk -- bas
[[ " $got " == *" bash "* ]] && echo "ok   -- bas: commands" ||
	{ echo "FAIL -- bas: [$got]"; failed=1; }

exit $failed
