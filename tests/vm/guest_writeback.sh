#!/bin/bash
# guest_writeback.sh - buffered writes charged to the process that dirtied
# the pages (bpf/writeback.bpf.c) on a stock kernel, in the guest of
# tests/vm/writeback.sh (iostackbreak, jq and dmsetup in PATH, dm-delay
# loaded; ext4 on vda at /mnt/ext4, the raw disk vdd). The truth is the
# kernel's own count of the bytes a process caused to be written,
# /proc/PID/io write_bytes - cancelled_write_bytes, charged where a page
# goes from clean to dirty, where the tool records the dirtier.
#
# Each writer is busybox dd reading a fifo a sleep holds open: it writes
# what the script feeds it, then waits in read() while the script syncs
# and reads its /proc/PID/io, and exits at the fifo's end. Every
# sync is the whole guest's; the guest has nothing else to write.
#
#   1. --plan --check -T syscall,blk -P --json: the blk dirtier line
#      names writeback_dirty_folio with the kernel's BTF (tp_btf), and the
#      programs load.
#   2. dd: 16 MiB buffered to a new ext4 file, sync, under
#      `-T syscall,blk -P -d vda`: the bytes written back for dd's PID =
#      its /proc/PID/io figure; dd submitted none of them; a flusher or
#      sync did; every byte of vda's write requests is in one of the
#      writeback parts.
#   3. two dd's write the two halves of one new file (8 MiB each, seek=),
#      sync, under `-T blk -p A,B -P -d vda` (the task filter's path):
#      each is charged its own /proc/PID/io bytes.
#   4. dm-linear, then dm-delay (DELAY_MS), over vdd: dd writes 8 MiB
#      buffered to the dm device (its page cache), sync, under `-T blk -P
#      -d vdd`: the requests on vdd, below the dm device, carry dd as
#      their dirtier, all of its /proc/PID/io bytes.
#   5. raw_tp: /sys/kernel/btf hidden, the kernel's BTF from --btf=FILE:
#      the plan's dirtier line says raw_tp, and 2 again, exact.
#   6. cgroup writeback, the truth each cgroup's io.stat wbytes for vda
#      (cgroup2 mounted in the guest, io and memory on below the root,
#      cgroups A and B), under `-T blk -G -d vda`:
#      a. dd in A writes 16 MiB to a new file, sync: the bytes written
#         back for A = A's io.stat delta = dd's /proc/PID/io.
#      b. dd in A creates a file and writes its first 8 MiB, then dd in B
#         its second 8 MiB, sync: the tool gives each cgroup its own half
#         (its writer's /proc/PID/io), io.stat gives both to A, the
#         inode's owner (the man page's cgroup writeback paragraph).
#      (Run before 5, whose umount of /sys/kernel/btf is the last.)
# Which object the kernel loads (with or without kfuncs) is the tool's
# choice from the kernel's BTF; both kernels' paths run here (6.1 has no
# bpf_rdonly_cast nor block_io_start, 6.12 has both).
# Prints PASS/FAIL lines and "GUEST RESULT: P passed, F failed, S skipped".
set -uo pipefail

MIB=$((1 << 20))
DELAY_MS=${1:-5}
ATTACH_TIMEOUT=300
. guest_lib.sh

# dd_start TAG OF [DD ARGS]: a dd copying the fifo /tmp/TAG.fifo to OF,
# its PID in $dd_pid; a sleep holds the fifo's write end open (PID in
# $dd_hold), so that dd reads on until that sleep ends. The script holds
# no end of it: a process it started later would inherit that, and dd
# would never see the fifo's end.
dd_start() {
	local fifo=/tmp/$1.fifo of=$2
	shift 2
	rm -f "$fifo"
	mkfifo "$fifo"
	# In cgroup $dd_cg when set: moved there before dd opens OF, so the
	# inode it creates and the pages it dirties are that cgroup's. The
	# script moves it: a write of its own (or of a child it reaps) would
	# be in dd's wchar, which dd_feed counts.
	(
		local l
		while [[ -n ${dd_cg:-} ]]; do
			read -r l <"/proc/$BASHPID/cgroup"
			[[ $l == "0::/${dd_cg##*/}" ]] && break
			sleep 0.1
		done
		exec dd if="$fifo" of="$of" bs=64k iflag=fullblock "$@" 2>"$fifo.dd"
	) &
	dd_pid=$!
	[[ -z ${dd_cg:-} ]] || echo "$dd_pid" >"$dd_cg/cgroup.procs"
	sleep 3600 >"$fifo" &
	dd_hold=$!
}

# dd_feed TAG PID BYTES: BYTES into TAG's fifo; returns once dd has
# written them all (its wchar), status 1 if it has not in 120 s.
dd_feed() {
	local i
	head -c "$3" /dev/zero >"/tmp/$1.fifo"
	for ((i = 0; i < 1200; i++)); do
		[[ $(awk '$1 == "wchar:" { print $2 }' "/proc/$2/io") == "$3" ]] && return 0
		sleep 0.1
	done
	return 1
}

# charged PID: the bytes the kernel charged PID for pages it dirtied.
charged() {
	awk '$1 == "write_bytes:" { w = $2 } $1 == "cancelled_write_bytes:" { c = $2 }
		END { print w - c }' "/proc/$1/io"
}

# dd_end TAG PID HOLD: the fifo's end (its holder gone); dd exits 0.
dd_end() {
	kill "$3"
	wait "$3" 2>/dev/null
	wait "$2"
	check_eq "$1: dd exit status" "$?" 0
}

# dd_written TAG OF BYTES: a dd writes BYTES to OF; sync; it exits. Its
# PID in $dd_pid, the bytes the kernel charged it in $truth.
dd_written() {
	dd_start "$1" "$2"
	dd_feed "$1" "$dd_pid" "$3" || fail "$1: dd wrote" "$(cat "/proc/$dd_pid/io")"
	sync
	truth=$(charged "$dd_pid")
	dd_end "$1" "$dd_pid" "$dd_hold"
}

# tool_start TAG ARGS: the tool with ARGS (--json), attached; its PID in
# $tpid, its report in /tmp/TAG.json. Status 1 if it did not attach.
tool_start() {
	local tag=$1
	shift
	iostackbreak "$@" --json >"/tmp/$tag.json" 2>"/tmp/$tag.err" &
	tpid=$!
	if ! await "/tmp/$tag.err" 'Hit Ctrl-C to end\.$' "$tpid" "$ATTACH_TIMEOUT"; then
		fail "$tag attach" "$(tail -n 5 "/tmp/$tag.err")"
		kill -9 "$tpid" 2>/dev/null
		return 1
	fi
}

# tool_stop TAG: ends the tool (a -p run may have ended with its
# processes); its last report in $rep.
tool_stop() {
	kill -INT "$tpid" 2>/dev/null
	wait "$tpid"
	check_eq "$1: tool exit status" "$?" 0
	rep=$(grep '^{' "/tmp/$1.json" | tail -n 1)
	[[ -n $rep ]] || dump "$1: tool" "/tmp/$1.err"
}

# written_back PID: the bytes of the blk write cells of $rep written back
# for PID (-P).
written_back() {
	jq --argjson p "$1" '[.cells[] | select(.layer == "blk" and .op == "write" and
		.writeback == true and .pid == $p) | .bytes] | add // 0' <<<"$rep"
}

# plan_dirtier TAG WANT [TOOL ARGS]: --plan --check's blk dirtier line
# uses WANT (tp_btf, raw_tp), and the programs load as for dd_run's JSON
# report. (In text, 6.1's verifier refuses -T syscall -P's tb_sys_exit,
# "BPF program is too large", without writeback as well.)
plan_dirtier() {
	local tag=$1 want=$2 line
	shift 2
	iostackbreak "$@" --plan --check -T syscall,blk -P --json >/tmp/plan.out 2>/tmp/plan.err
	check_eq "$tag: --plan --check exit status" "$?" 0
	line=$(grep '^blk  *dirtier ' /tmp/plan.out)
	if [[ $line =~ ^blk\ +dirtier\ +$want\ +writeback:writeback_dirty_folio ]]; then
		pass "$tag: $line"
	else
		fail "$tag: dirtier line" "${line:-none}; $(cat /tmp/plan.err)"
	fi
}

# dd_run TAG [TOOL ARGS]: 2. above, on /mnt/ext4.
dd_run() {
	local tag=$1 got
	shift
	rm -f /mnt/ext4/dd
	sync
	tool_start "$tag" -T syscall,blk -P -d vda "$@" || return
	dd_written "$tag" /mnt/ext4/dd $((16 * MIB))
	tool_stop "$tag"
	check_eq "$tag: /proc/PID/io charged dd a new file's 16 MiB" "$truth" $((16 * MIB))
	check_count "$tag: written back for dd (pid $dd_pid) = its /proc/PID/io" \
		"$(written_back "$dd_pid")" "$truth"
	# (It may read: an inode table or bitmap block for its new file.)
	check_eq "$tag: dd submitted none of its writes itself" "$(jq --argjson p "$dd_pid" \
		'[.cells[] | select(.layer == "blk" and .op == "write" and .writeback != true and
		.pid == $p)] | length' <<<"$rep")" 0
	got=$(jq -r '[.cells[] | select(.layer == "blk" and .op == "write" and .writeback != true and
		.bytes > 0) | .comm] | unique | join(",")' <<<"$rep")
	if [[ ,$got, =~ ,(kworker[^,]*|sync), ]]; then
		pass "$tag: submitters $got"
	else
		fail "$tag: a flusher or sync submitted the writes" "submitters: ${got:-none}"
	fi
	# Every byte of the disk's write requests is someone's, or counted.
	got=$(jq '[.cells[] | select(.layer == "blk" and .op == "write" and .writeback != true) |
		.bytes] | add // 0' <<<"$rep")
	check_count "$tag: vda's write bytes = their pages' parts" "$(jq '.writeback |
		.bytes + .self_submitted_bytes + .unknown_bytes + .not_page_cache_bytes +
		.unwalked_bytes + .crowded_bytes' <<<"$rep")" "$got"
	check_eq "$tag: no dirtied folio evicted" "$(jq '.writeback.evicted_folios' <<<"$rep")" 0
}

# cg_wbytes CG: the wbytes of vda in cgroup CG's io.stat (0 before its
# first write there).
cg_wbytes() {
	awk -v d="$vda_dev" 'BEGIN { w = 0 } $1 == d {
		for (i = 2; i <= NF; i++) if (sub(/^wbytes=/, "", $i)) w = $i } END { print w }' \
		"$1/io.stat"
}

# cg_written_back CG: the bytes of the blk write cells of $rep written
# back for cgroup CG (-G keys cells by cgroup_id, the cgroup directory's
# inode number).
cg_written_back() {
	jq --argjson id "$(stat -c %i "$1")" '[.cells[] | select(.layer == "blk" and
		.op == "write" and .writeback == true and .cgroup_id == $id) | .bytes] |
		add // 0' <<<"$rep"
}

# cg_others: the cells of $rep written back for neither test cgroup, a
# line each, for the log.
cg_others() {
	jq -c --argjson a "$(stat -c %i "$cg_a")" --argjson b "$(stat -c %i "$cg_b")" \
		'.cells[] | select(.layer == "blk" and .op == "write" and .cgroup_id != $a and
		.cgroup_id != $b) | {cgroup, writeback, count, bytes}' <<<"$rep"
}

# cg_submitted CG: how many blk write cells of $rep CG submitted itself.
cg_submitted() {
	jq --argjson id "$(stat -c %i "$1")" '[.cells[] | select(.layer == "blk" and
		.op == "write" and .writeback != true and .cgroup_id == $id)] | length' <<<"$rep"
}

# switches: how many writeback:inode_switch_wbs ftrace saw since the last
# call; the log gets them and the foreign-history lines (which cgroup's
# pages won each writeback round of an inode, bdi 254:0 being vda).
switches() {
	grep -E 'inode_switch_wbs|inode_foreign_history' /sys/kernel/tracing/trace |
		sed 's/^ */INFO   /' >&2
	grep -c ' inode_switch_wbs:' /sys/kernel/tracing/trace
	: >/sys/kernel/tracing/trace
}

# cg_one_run: 6a. above.
cg_one_run() {
	local tag=cg-one before got
	rm -f /mnt/ext4/cg
	sync
	before=$(cg_wbytes "$cg_a")
	: >/sys/kernel/tracing/trace
	tool_start "$tag" -T blk -G -d vda || return
	dd_cg=$cg_a dd_written "$tag" /mnt/ext4/cg $((16 * MIB))
	tool_stop "$tag"
	got=$(($(cg_wbytes "$cg_a") - before))
	info "$tag: io.stat wbytes on vda: A +$got, B $(cg_wbytes "$cg_b"); A is cgroup" \
		"$(stat -c %i "$cg_a"), B $(stat -c %i "$cg_b")"
	info "$tag: inode switches: $(switches); the other write cells:" $(cg_others)
	check_eq "$tag: /proc/PID/io charged dd a new file's 16 MiB" "$truth" $((16 * MIB))
	# Exact: the kernel charges A's blkcg each bio of the inode A owns
	# (A created it and dirtied all of it), at submission; the tool, each
	# page A dirtied, at completion. The rest of vda's writes were
	# measured at 18-31 KiB of metadata and journal, none of them A's in
	# io.stat: the jbd2 thread (root cgroup) writes the journal, and the
	# metadata goes through the block device's inode, owned by the root
	# cgroup (dirtied at mount, before A existed). The tool puts them
	# under "/" (7-9 KiB, dirtied by a task of the root cgroup while it
	# ran) or the unknown key (cgroup null, 11-17 KiB: the journal, and
	# pages dirtied before it started).
	check_count "$tag: written back for A under -G = A's io.stat wbytes on vda" \
		"$(cg_written_back "$cg_a")" "$got"
	check_eq "$tag: = dd's /proc/PID/io" "$(cg_written_back "$cg_a")" "$truth"
	check_eq "$tag: A submitted none of its writes itself" "$(cg_submitted "$cg_a")" 0
}

# cg_two_run: 6b. above.
cg_two_run() {
	local tag=cg-two a b ha hb ta tb wa wb n
	rm -f /mnt/ext4/cgshared
	sync
	wa=$(cg_wbytes "$cg_a") wb=$(cg_wbytes "$cg_b")
	: >/sys/kernel/tracing/trace
	tool_start "$tag" -T blk -G -d vda || return
	dd_cg=$cg_a dd_start cg-two-a /mnt/ext4/cgshared
	a=$dd_pid ha=$dd_hold
	dd_feed cg-two-a "$a" $((8 * MIB)) || fail "$tag: dd a wrote" "$(cat "/proc/$a/io")"
	dd_cg=$cg_b dd_start cg-two-b /mnt/ext4/cgshared conv=notrunc seek=128
	b=$dd_pid hb=$dd_hold
	dd_feed cg-two-b "$b" $((8 * MIB)) || fail "$tag: dd b wrote" "$(cat "/proc/$b/io")"
	sync
	ta=$(charged "$a") tb=$(charged "$b")
	dd_end "$tag a" "$a" "$ha"
	dd_end "$tag b" "$b" "$hb"
	tool_stop "$tag"
	wa=$(($(cg_wbytes "$cg_a") - wa)) wb=$(($(cg_wbytes "$cg_b") - wb))
	n=$(switches)
	info "$tag: io.stat wbytes on vda: A +$wa, B +$wb; inode switches: $n;" \
		"the other write cells:" $(cg_others)
	check_eq "$tag: /proc/PID/io charged A's writer its 8 MiB" "$ta" $((8 * MIB))
	check_eq "$tag: /proc/PID/io charged B's writer its 8 MiB" "$tb" $((8 * MIB))
	# The tool: each cgroup the pages its writer dirtied.
	check_count "$tag: written back for A under -G = A's writer's" \
		"$(cg_written_back "$cg_a")" "$ta"
	check_count "$tag: written back for B under -G = B's writer's" \
		"$(cg_written_back "$cg_b")" "$tb"
	# The kernel: the inode's owner, A (its creator), both halves; B
	# none. Its foreign-inode detection (wbc_detach_inode) switches an
	# inode to another cgroup only when more than 8 of the 16 slots of
	# the inode's history are foreign, and one writeback round marks at
	# most 5 of them: it takes two rounds won by B's pages. The writeback
	# of this file is sync's alone (the dirty expiry is an hour, 16 MiB
	# is far below the background threshold), in file order, so B's half
	# is in its last round or two, and a switch after them would move no
	# byte of it. Measured on 6.1 and 6.12: A +16 MiB, B +0, no switch;
	# ftrace saw one round won by B's pages, marking one slot
	# (inode_foreign_history cgroup_ino=A's id history=0x1).
	check_eq "$tag: io.stat charged A (the inode's owner) both halves" "$wa" $((ta + tb))
	check_eq "$tag: io.stat charged B nothing" "$((wb + 1))" 1
	check_eq "$tag: the kernel switched no inode's owner" "$((n + 1))" 1
}

# two_run: 3. above.
two_run() {
	local tag=two a b ha hb ta tb
	rm -f /mnt/ext4/shared
	: >/mnt/ext4/shared
	sync
	dd_start two-a /mnt/ext4/shared conv=notrunc
	a=$dd_pid ha=$dd_hold
	dd_start two-b /mnt/ext4/shared conv=notrunc seek=128
	b=$dd_pid hb=$dd_hold
	if ! tool_start "$tag" -T blk -p "$a,$b" -P -d vda; then
		dd_end "$tag a" "$a" "$ha"
		dd_end "$tag b" "$b" "$hb"
		return
	fi
	dd_feed two-a "$a" $((8 * MIB)) || fail "$tag: dd a wrote" "$(cat "/proc/$a/io")"
	dd_feed two-b "$b" $((8 * MIB)) || fail "$tag: dd b wrote" "$(cat "/proc/$b/io")"
	sync
	ta=$(charged "$a") tb=$(charged "$b")
	dd_end "$tag a" "$a" "$ha"
	dd_end "$tag b" "$b" "$hb"
	tool_stop "$tag"
	check_eq "$tag: /proc/PID/io charged the first half's writer its 8 MiB" "$ta" $((8 * MIB))
	check_eq "$tag: /proc/PID/io charged the second half's writer its 8 MiB" "$tb" $((8 * MIB))
	check_count "$tag: written back for the first half's writer" "$(written_back "$a")" "$ta"
	check_count "$tag: written back for the second half's writer" "$(written_back "$b")" "$tb"
}

# dm_run TAG TABLE: 4. above, on dm device "wb" made from TABLE. A reader
# holds the device open: the last close of a block device writes its
# pages back itself (the closer would be the submitter).
dm_run() {
	local tag=$1 table=$2 hold dm
	if ! dmsetup --noudevsync create wb --table "$table" 2>/tmp/dmsetup.err; then
		fail "$tag: dmsetup" "$(cat /tmp/dmsetup.err)"
		return
	fi
	dm=$(dm_name wb)
	info "$tag: wb is $dm: $table"
	exec {hold}<"/dev/$dm"
	if tool_start "$tag" -T blk -P -d vdd; then
		dd_written "$tag" "/dev/$dm" $((8 * MIB))
		tool_stop "$tag"
		check_eq "$tag: /proc/PID/io charged dd 8 MiB of $dm's pages" "$truth" $((8 * MIB))
		check_count "$tag: written back on vdd, below $dm, for dd" \
			"$(written_back "$dd_pid")" "$truth"
	fi
	exec {hold}<&-
	dmsetup --noudevsync remove wb || fail "$tag: dmsetup remove" "wb stays"
}

info "kernel $(uname -r); bpf_rdonly_cast in kallsyms:" \
	"$(grep -c ' bpf_rdonly_cast$' /proc/kallsyms); block_io_start:" \
	"$([[ -d /sys/kernel/tracing/events/block/block_io_start ]] && echo yes || echo no)"
plan_dirtier plan tp_btf
dd_run dd
two_run
sectors=$(cat /sys/block/vdd/size)
dm_run linear "0 $sectors linear /dev/vdd 0"
dm_run delay "0 $sectors delay /dev/vdd 0 $DELAY_MS"

# 6. cgroup writeback: the guest's own cgroup2, io and memory on.
vda_dev=$(cat /sys/block/vda/dev)
cg_a=/sys/fs/cgroup/iosb-wb-a cg_b=/sys/fs/cgroup/iosb-wb-b
if mount -t cgroup2 none /sys/fs/cgroup &&
	echo "+io +memory" >/sys/fs/cgroup/cgroup.subtree_control &&
	mkdir "$cg_a" "$cg_b"; then
	echo 1 >/sys/kernel/tracing/events/writeback/inode_switch_wbs/enable
	echo 1 >/sys/kernel/tracing/events/writeback/inode_foreign_history/enable
	# Only sync writes the files back (cg_two_run says why).
	expire=$(cat /proc/sys/vm/dirty_expire_centisecs)
	echo 360000 >/proc/sys/vm/dirty_expire_centisecs
	cg_one_run
	cg_two_run
	echo "$expire" >/proc/sys/vm/dirty_expire_centisecs
	echo 0 >/sys/kernel/tracing/events/writeback/enable
else
	fail "cgroup" "cannot make cgroups with io and memory"
fi

# 5. The raw tracepoints: the kernel's BTF hidden from user space.
if cp /sys/kernel/btf/vmlinux /tmp/vmlinux.btf &&
	mount -t tmpfs -o ro,size=4k none /sys/kernel/btf; then
	plan_dirtier "raw_tp plan" raw_tp --btf=/tmp/vmlinux.btf
	dd_run raw_tp --btf=/tmp/vmlinux.btf
	umount /sys/kernel/btf
else
	fail "raw_tp" "cannot hide /sys/kernel/btf"
fi
guest_result
((nfail == 0))
