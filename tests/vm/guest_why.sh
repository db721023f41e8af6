#!/bin/bash
# guest_why.sh - why calls waited, and what they did to the page cache
# (issues 24 and 29), in the guest: the checks of
# tests/integration/test_why.py with the calls split at the ext4 layer
# (-T ext4: ext4_file_write_iter, ext4_sync_file, ext4_file_read_iter are
# the root), traced once with --attach=fentry and once with --attach=kprobe;
# the journal and cache checks on an ext4 with a journal made here on the
# raw disk vdd (data=ordered), the lock check on the suite's /mnt/ext4.
#
#   tests/vm/why.sh [lock] [journal] [cache]   # host side (make vm-why)
#
# Per METHOD (fentry, then kprobe), each against a figure the kernel or the
# workload gives on its own:
#   plan     `--plan --attach=METHOD -T ext4`: the four ext4 cells use
#            METHOD; the "parts" lines for lock, journal, cache and wb name
#            their tracepoints, and ra is skipped exactly when tracefs has
#            no readahead:page_cache_sync_ra/async_ra (6.1 and 6.12 have
#            none: readahead_pages is then null in every report).
#   lock     NS paced 4 KiB pwrites while another process makes NB big
#            pwrites to the same file (one vCPU: no optimistic spinning,
#            every wait is a contention the kernel reports): the small
#            writes' lock part, rwsem_write, against the big writes'
#            duration (iowork's own ns=); the calls that waited name the
#            inode rwsem of the file. (The small writes' self time is not
#            bounded as on the host: under TCG it is 12-14% of their time.)
#   journal  NJ appends each followed by fsync: the journal part against
#            the commits' duration (the kernel's jbd2_start_commit ..
#            jbd2_end_commit through tracefs), the commits' bytes against
#            jbd2_run_stats' blocks logged, their number against
#            /proc/fs/jbd2/vdd-8/info, and with the fsyncs' own requests
#            all of vdd's writes, sectors and flushes (/proc/diskstats).
#   cache    dd reads a file of P pages after drop_caches: cache_miss_pages
#            = the pages the kernel added to that file's cache
#            (filemap:mm_filemap_add_to_page_cache through tracefs) = P;
#            read again, cached: 0 and 0; two dd's at once under -P, each
#            process its own file's pages.
#
# Every check prints "PASS <name>" or "FAIL <name>: <details>"; the exit
# status is 1 if any check failed.
set -uo pipefail

DISK=vdd
MNT=/mnt/why
T=/sys/kernel/tracing
NS=1500      # small writes (paced 1 ms)
NB=10        # big writes
BIG=16m      # bytes per big write
NJ=100       # append+fsync pairs
ATTACH_TIMEOUT=300
WORK_TIMEOUT=300

. guest_lib.sh
# check NAME JQ-EXPR [CONTEXT]: the expression, over $fig, is true.
check() {
	if [[ $(jq -r "$2" <<<"$fig" 2>/dev/null) == true ]]; then
		pass "$1"
	else
		fail "$1" "not ($2)${3:+: $3}"
	fi
}
t_suite=$(uptime_s)

# iowork_ready OUT ARGS...: an iowork process set up and held (-w); sets
# $wpid, or fails and returns 1.
iowork_ready() {
	local out=$1
	shift
	rm -f "$out"
	iowork -w "$@" >"$out" 2>"$out.err" &
	wpid=$!
	await "$out" '^READY ' "$wpid" 120 && return 0
	fail "workload setup" "iowork $* did not print READY"
	dump "iowork stderr" "$out.err"
	kill -9 "$wpid" 2>/dev/null
	return 1
}

# tool_start OUT ARGS...: iostackbreak ARGS in the background, attached;
# sets $tpid, or fails and returns 1.
tool_start() {
	local out=$1 t0
	shift
	rm -f "$out" "$out.err"
	t0=$(uptime_s)
	iostackbreak "$@" >"$out" 2>"$out.err" &
	tpid=$!
	if await "$out.err" 'Hit Ctrl-C to end\.$' "$tpid" "$ATTACH_TIMEOUT"; then
		info "iostackbreak $* attached in $(since "$t0") s"
		return 0
	fi
	fail "attach" "iostackbreak $* did not start within $ATTACH_TIMEOUT s"
	dump "iostackbreak stderr" "$out.err"
	kill -9 "$tpid" 2>/dev/null
	return 1
}

# tool_stop: ends $tpid (SIGINT unless it ended by itself) and checks its
# exit status; the report, the last non-event JSON line of $1, in $rep.
tool_stop() {
	kill -INT "$tpid" 2>/dev/null
	wait_exit "$tpid" 120
	check_eq "$2: tool exit status" "$exit_rc" 0
	[[ $exit_rc == 0 ]] || dump "iostackbreak stderr" "$1.err"
	rep=$(grep '^{' "$1" | jq -c 'select(has("event") | not)' 2>/dev/null | tail -n 1)
	[[ -n $rep ]] || rep=null
}

# result FILE KEY: KEY= of iowork's (first) result line.
result() { sed -n "s/^iowork .* $2=\([0-9]*\).*/\1/p" "$1" | head -n 1; }

disk_stat() { awk -v d="$DISK" '$3 == d { print $8, $10, $19 }' /proc/diskstats; }

# An ftrace instance of our own: tracefs is the kernel's own account, read
# without BPF.
ftrace_on() { # NAME FILTER EVENT...
	local d=$T/instances/$1 filter=$2 e
	shift 2
	rmdir "$d" 2>/dev/null
	mkdir "$d" || return 1
	echo 8192 >"$d/buffer_size_kb"
	for e in "$@"; do
		echo "$filter" >"$d/events/$e/filter" || return 1
		echo 1 >"$d/events/$e/enable" || return 1
	done
	echo 1 >"$d/tracing_on"
}
ftrace_off() { # NAME: the trace on stdout, the instance removed
	echo 0 >"$T/instances/$1/tracing_on"
	cat "$T/instances/$1/trace"
	rmdir "$T/instances/$1"
}

for t in iostackbreak iowork jq mkfs.ext4; do
	command -v "$t" >/dev/null || fail "setup" "$t is not in the guest's PATH"
done
((nfail == 0)) || { guest_result; exit 1; }
echo "guest: kernel $(uname -r), $(nproc) CPU(s), uptime $(uptime_s) s"

# The ext4 with a journal: data=ordered; no lazy init and no bitmap
# prefetch, so nothing but the workloads and their commits writes to vdd.
mkdir -p "$MNT"
if ! mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "/dev/$DISK" \
	>/tmp/mkfs.log 2>&1 ||
	! mount -t ext4 -o no_prefetch_block_bitmaps,data=ordered "/dev/$DISK" "$MNT"; then
	fail "setup" "mkfs.ext4 or mount of /dev/$DISK failed"
	dump mkfs.ext4 /tmp/mkfs.log
	guest_result
	exit 1
fi
JINFO=$(echo /proc/fs/jbd2/"$DISK"-*/info)
[[ -r $JINFO ]] || fail "setup" "no /proc/fs/jbd2 entry for $DISK's journal"
# The kernel's dev_t, as the tracepoints' dev and s_dev fields hold it.
IFS=: read -r major minor <"/sys/block/$DISK/dev"
DEVT=$(((major << 20) | minor))
have_ra=0 have_io_start=0
[[ -d $T/events/block/block_io_start ]] && have_io_start=1
[[ -d $T/events/readahead/page_cache_sync_ra && -d $T/events/readahead/page_cache_async_ra ]] &&
	have_ra=1
info "$DISK: ext4 with a journal at $MNT, dev_t $DEVT; readahead tracepoints: $have_ra"

# plan_check METHOD
plan_check() {
	local m=$1 out=/tmp/plan.$1 n bad w
	if ! iostackbreak --plan --check --attach="$m" -T ext4 -p $$ >"$out" 2>"$out.err"; then
		fail "$m plan" "iostackbreak --plan exited non-zero"
		dump "plan stderr" "$out.err"
		return
	fi
	sed 's/^/    /' "$out"
	n=$(awk -v m="$m" '$1 == "ext4" && $3 == m' "$out" | wc -l)
	check_eq "$m plan: ext4 cells by $m" "$n" 4
	for w in lock journal cache wb; do
		bad=$(awk -v w="$w" '$1 == "parts" && $2 == w && $3 != "-"' "$out" | wc -l)
		check_eq "$m plan: parts $w traced" "$bad" 1
	done
	if ((have_ra)); then
		n=$(awk '$1 == "parts" && $2 == "ra" && $3 == "tracepoint"' "$out" | wc -l)
		check_eq "$m plan: parts ra traced (tracefs has readahead:*)" "$n" 1
	else
		n=$(awk '$1 == "parts" && $2 == "ra" && $3 == "-" && /skipped: no readahead:page_cache_sync_ra\/async_ra/' "$out" | wc -l)
		check_eq "$m plan: parts ra skipped, named (tracefs has no readahead:*)" "$n" 1
	fi
	# The journal commits' requests: counted from block_io_start only.
	iostackbreak --plan --check --attach="$m" -T ext4,blk -p $$ >"$out.blk" 2>&1
	if ((have_io_start)); then
		n=$(awk '$1 == "parts" && $2 == "jreqs" && $3 != "-" && /block:block_io_start/' "$out.blk" | wc -l)
		check_eq "$m plan: jreqs from block_io_start" "$n" 1
	else
		n=$(awk '$1 == "parts" && $2 == "jreqs" && $3 == "-" && /skipped: no block:block_io_start/' "$out.blk" | wc -l)
		check_eq "$m plan: jreqs skipped, named (no block_io_start)" "$n" 1
	fi
}

# lock_run METHOD
lock_run() {
	local m=$1 tag="lock $1" d=/mnt/ext4/lock out=/tmp/tool.lock.$1.json spid bpid
	local big_ns small_ns
	mkdir -p "$d"
	rm -f "$d/f"
	# The small writer starts first and outlasts the big one.
	iowork_ready /tmp/iowork.small -s 4k -P 1000 -c pwrite "$NS" "$d/f" || return
	spid=$wpid
	iowork_ready /tmp/iowork.big -s "$BIG" -c pwrite "$NB" "$d/f" || { kill -9 "$spid"; return; }
	bpid=$wpid
	if ! tool_start "$out" --attach="$m" -T ext4 -P -p "$spid,$bpid" --json --slower=0; then
		kill -9 "$spid" "$bpid"
		return
	fi
	kill -USR1 "$spid"
	sleep 0.05
	kill -USR1 "$bpid"
	wait_exit "$bpid" "$WORK_TIMEOUT"
	check_eq "$tag: big writer's exit status" "$exit_rc" 0
	wait_exit "$spid" "$WORK_TIMEOUT"
	check_eq "$tag: small writer's exit status" "$exit_rc" 0
	tool_stop "$out" "$tag"
	big_ns=$(result /tmp/iowork.big ns) small_ns=$(result /tmp/iowork.small ns)
	fig=$(jq -c -s --argjson s "$spid" --argjson b "$bpid" --argjson big "${big_ns:-0}" \
		--argjson small "${small_ns:-0}" --argjson rep "$rep" '
		def proc($p): $rep.breakdown_by_process[] | select(.pid == $p and .op == "write");
		def parts: [.parts[] | {(.part): .sum_ns}] | add;
		(proc($s)) as $sb | (proc($b)) as $bb
		| [.[] | select(.event == "io" and .op == "write" and .pid == $s and .lock != null)] as $w
		| {big_ns: $big, small_ns: $small, small: $sb.count, bigs: $bb.count,
		   total: $sb.total_ns, sum: ($sb.parts | map(.sum_ns) | add), parts: ($sb | parts),
		   kinds: $sb.lock_ns_by_kind, big_lock: ($bb | parts).lock,
		   root: $sb.root, dropped: $rep.dropped, lost: $rep.lost,
		   waited: ($w | length),
		   names: ($w | group_by(.lock.name) | map({(.[0].lock.name): (map(.lock.max_ns) | add)}) | add),
		   outside: ($w | map(select(.lock.max_ns > .latency_ns)) | length)}
		| .lock = .parts.lock' "$out" 2>/dev/null)
	[[ -n $fig ]] || fig=null
	info "$tag: $fig"
	info "$tag: big writes $(jq -r '.big_ns / 1e6' <<<"$fig") ms, the small writes' lock part $(jq -r '.lock / 1e6' <<<"$fig") ms ($(jq -r '(.lock * 100 / .big_ns | floor)' <<<"$fig")% of them)"
	check "$tag: no event lost, nothing dropped" '.lost == 0 and .dropped == 0'
	check "$tag: split at ext4" '.root == "ext4"'
	check_eq "$tag: small writes = the writer's" "$(jq -r .small <<<"$fig")" "$NS"
	check_eq "$tag: big writes = the writer's" "$(jq -r .bigs <<<"$fig")" "$NB"
	check "$tag: parts add up to the calls' time" '.sum == .total'
	# The small writes wait only while a big write holds the lock.
	check "$tag: lock part <= the big writes' duration (+2%)" '.lock <= .big_ns * 1.02'
	# One vCPU: a small write that finds the lock held sleeps in the
	# contention until the big write ends. Less by each big write's start
	# before the small writer next runs (its 1 ms pacing).
	check "$tag: lock part >= $LOCK_SHARE of the big writes' duration" ".lock >= .big_ns * $LOCK_SHARE"
	check "$tag: rwsem_write >= 95% of the lock part" '.kinds.rwsem_write >= 0.95 * .lock'
	check "$tag: lock kinds add up" '(.kinds | add) == .lock'
	check "$tag: blocked < 10% of the lock part" '(.parts.blocked // 0) < 0.1 * .lock'
	check "$tag: the big writer waits only for small writes" '(.big_lock // 0) <= .small_ns'
	check "$tag: most big writes made a small write wait ($NB big)" ".waited >= $NB * 8 / 10"
	check "$tag: the lock named: inode rwsem of f, >= 90%" '(.names["inode rwsem of f"] // 0) >= 0.9 * (.names | add)'
	check "$tag: each contention within its call" '.outside == 0'
	rm -f "$d/f"
	sync
}
LOCK_SHARE=0.8

# jbd2_figures TRACE: the commits in the trace of jbd2_start_commit,
# jbd2_end_commit and jbd2_run_stats: {"commits", "commit_ns" (their start
# to end, summed), "logged" (blocks logged)}.
jbd2_figures() {
	awk '{
		t = ""; ev = ""
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1); ev = $(i + 1); break }
		if (ev == "") next
		for (i = 1; i <= NF; i++) {
			if ($i == "transaction" || $i == "tid") tid = $(i + 1)
			if ($i == "blocks_logged") logged += $(i + 1)
		}
		# The journal superblock, written by the commit thread (the log
		# tail moved): not among the blocks logged.
		if (ev == "jbd2_write_superblock:" && $1 ~ /^jbd2\//) sb++
		if (ev == "jbd2_start_commit:") start[tid] = t
		else if (ev == "jbd2_end_commit:" && (tid in start)) {
			ns += (t - start[tid]) * 1e9; commits++; delete start[tid]
		}
	} END { printf "{\"commits\": %d, \"commit_ns\": %.0f, \"logged\": %d, \"sb\": %d}\n", commits, ns, logged, sb }' "$1"
}
jbd2_transactions() { head -n 1 "$JINFO" | awk '{ print $1 }'; }

# journal_run METHOD
journal_run() {
	local m=$1 tag="journal $1" d=$MNT/journal out=/tmp/tool.journal.$1.json
	local tx0 tx1 w0 s0 f0 w1 s1 f1 jf
	mkdir -p "$d"
	rm -f "$d/f"
	iowork_ready /tmp/iowork.journal -W -A -c fsync "$NJ" "$d/f" || return
	sync
	sleep 1
	if ! ftrace_on iosb-jbd2 "dev == $DEVT" jbd2/jbd2_start_commit jbd2/jbd2_end_commit \
		jbd2/jbd2_run_stats jbd2/jbd2_write_superblock; then
		fail "$tag: ftrace" "cannot trace jbd2's events"
		kill -9 "$wpid"
		return
	fi
	if ! tool_start "$out" --attach="$m" -T ext4,blk -p "$wpid" -d "$DISK" --json --slower=0; then
		kill -9 "$wpid"
		ftrace_off iosb-jbd2 >/dev/null
		return
	fi
	tx0=$(jbd2_transactions)
	read -r w0 s0 f0 < <(disk_stat)
	: >"$T/instances/iosb-jbd2/trace"
	kill -USR1 "$wpid"
	wait_exit "$wpid" "$WORK_TIMEOUT"
	check_eq "$tag: iowork exit status" "$exit_rc" 0
	sleep 1
	ftrace_off iosb-jbd2 >/tmp/jbd2.trace
	tx1=$(jbd2_transactions)
	read -r w1 s1 f1 < <(disk_stat)
	tool_stop "$out" "$tag"
	jf=$(jbd2_figures /tmp/jbd2.trace)
	fig=$(jq -c -s --argjson rep "$rep" --argjson jf "$jf" --argjson tx $((tx1 - tx0)) \
		--argjson w $((w1 - w0)) --argjson s $((s1 - s0)) --argjson f $((f1 - f0)) \
		--argjson done "$(result /tmp/iowork.journal done)" '
		($rep.breakdown[] | select(.op == "fsync")) as $b
		| ($rep.breakdown[] | select(.op == "write")) as $wb
		| [.[] | select(.event == "io" and .op == "fsync")] as $ev
		| $jf + {transactions: $tx, writes: $w, sectors: $s, flushes: $f, done: $done,
		   count: $b.count, total: $b.total_ns, root: $b.root,
		   parts: ([$b.parts[] | {(.part): .sum_ns}] | add), j: $b.journal_blk,
		   blk_bytes: $b.blk_bytes, wb: $b.writeback_pages, write_wb: $wb.writeback_pages,
		   own_w: ([$rep.cells[] | select(.layer == "blk" and .op == "write") | .count] | add // 0),
		   own_f: ([$rep.cells[] | select(.layer == "blk" and .op == "flush") | .count] | add // 0),
		   events: ($ev | length),
		   ev_j: {requests: ($ev | map(.journal_blk.requests) | add),
		          flushes: ($ev | map(.journal_blk.flushes) | add),
		          bytes: ($ev | map(.journal_blk.bytes) | add)},
		   ev_wb_not_1: ($ev | map(select(.writeback_pages != 1)) | length),
		   ev_without: ($ev | map(select(.journal_blk.flushes < 1 or .blk.requests < 1)) | length),
		   ev_own_none: ($ev | map(select(.blk.requests < 1)) | length),
		   dropped: $rep.dropped, lost: $rep.lost}' "$out" 2>/dev/null)
	[[ -n $fig ]] || fig=null
	info "$tag: $fig"
	info "$tag: $(jq -r '"\(.count) fsyncs \(.total / 1e6) ms: journal \(.parts.journal / 1e6) ms against the commits (jbd2 trace) \(.commit_ns / 1e6) ms; \(.commits) commits, \(.transactions) in /proc/fs/jbd2; journal bytes \(.j.bytes), blocks logged \(.logged)"' <<<"$fig")"
	check "$tag: no event lost, nothing dropped" '.lost == 0 and .dropped == 0'
	check "$tag: split at ext4" '.root == "ext4"'
	check_eq "$tag: fsyncs = the workload's" "$(jq -r .count <<<"$fig")" "$NJ"
	check_eq "$tag: iowork done" "$(jq -r .done <<<"$fig")" "$NJ"
	check "$tag: commits traced = /proc/fs/jbd2 transactions >= fsyncs" '.commits == .transactions and .commits >= .count'
	# While its commit runs, an fsync is off CPU: asleep on the commit
	# (journal) or, on this one vCPU, runnable behind the commit thread it
	# woke, which may preempt it before it sleeps (runqueue: 86 ms of 606
	# on 6.1 with kprobes, 2026-11-27, journal then 89% of the commits).
	check "$tag: journal + runqueue >= 90% of the commits' time" \
		'.parts.journal + .parts.runqueue >= 0.9 * .commit_ns'
	check "$tag: journal part >= half the commits' time" '.parts.journal >= 0.5 * .commit_ns'
	check "$tag: journal part <= the fsyncs' time" '.parts.journal <= .total'
	check "$tag: blocked < 5% of the fsyncs' time" '.parts.blocked < 0.05 * .total'
	# Before 6.5 (no block_io_start) the commits' requests cannot be
	# counted exactly (see PRE65 below): the report and the events say
	# null, not a figure.
	if ((!have_io_start)); then
		check "$tag: no block_io_start: the commits' requests not counted (null)" \
			'.j == null and .ev_j.requests == null and .ev_j.bytes == null'
	else
		check "$tag: the commits' bytes = jbd2_run_stats' blocks logged + the superblocks jbd2 wrote" \
			'.j.bytes == (.logged + .sb) * 4096'
		check "$tag: disk writes = own + the commits' (diskstats)" '.writes == .own_w + .j.requests - .j.flushes'
		check "$tag: disk sectors = own + the commits' bytes (diskstats)" '.sectors * 512 == .blk_bytes + .j.bytes'
		check "$tag: disk flushes = own + the commits' (diskstats)" '.flushes == .own_f + .j.flushes'
	fi
	check "$tag: writeback_pages: one page per fsync, none per write" ".wb == $NJ and .write_wb == 0"
	check "$tag: the fsyncs' own bytes = their pages" '.blk_bytes == 4096 * .wb'
	check_eq "$tag: fsync events" "$(jq -r .events <<<"$fig")" "$NJ"
	check "$tag: events' commit requests add up" '.ev_j == .j or (.j == null and .ev_j.requests == null)'
	check "$tag: every event wrote one page" '.ev_wb_not_1 == 0'
	if ((have_io_start)); then
		check "$tag: every event has its own request and a commit's flush" '.ev_without == 0'
	else
		check "$tag: every event has its own request" '.ev_own_none == 0'
	fi
}
# PRE65: on 6.1 a commit's requests start at block_rq_insert (no
# block_io_start), so the tool does not count them (plan: "jreqs skipped"):
# - its log blocks, one bio each, merge in the plug before the insert, so
#   the request's bytes at insert hold them and block_bio_backmerge adds
#   them again (per commit 7 blocks counted for 4 written);
# - its commit block (PREFLUSH|FUA with data) goes to the flush machinery
#   before insert: seen only by its bio at block_getrq, where
#   journal_count() is not called (rq NULL), so neither it nor its flushes
#   are the commit's;
# - whether a disk has a write-back cache is read from
#   queue_limits.features (6.11+) only: no flush is counted before.
# Measured (100 fsyncs, 6.1.0-56): journal_blk 101 requests, 0 flushes,
# 2,863,104 bytes, against 500 blocks logged (2,048,000 bytes) and
# diskstats 302 writes, 201 flushes.
# (Before 2026-11-27 it counted them so: journal_blk 101 requests, 0
# flushes, 2,863,104 bytes against the figures below.)

# pages_added TRACE: pages added per inode (hex, as the event prints it) in
# a trace of filemap:mm_filemap_add_to_page_cache: {"INO": pages}.
pages_added() {
	awk '/mm_filemap_add_to_page_cache:/ {
		ino = ""; order = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "ino") ino = $(i + 1)
			if ($i ~ /^order=/) order = substr($i, 7) + 0
		}
		p = 1
		while (order-- > 0) p *= 2
		n[ino] += p
	} END { printf "{"; s = ""; for (i in n) { printf "%s\"%s\": %d", s, i, n[i]; s = ", " } print "}" }' "$1"
}
ino_hex() { printf '%x' "$(stat -c %i "$1")"; }

# cache_pass METHOD TAG FILTER TOOL-ARGS... -- COMMAND: COMMAND under the
# tool, pages added traced; the report in $rep, the pages added in $added.
cache_pass() {
	local m=$1 tag=$2 filter=$3 out=/tmp/tool.cache.json
	shift 3
	if ! ftrace_on iosb-pages "$filter" filemap/mm_filemap_add_to_page_cache; then
		fail "$tag: ftrace" "cannot trace filemap:mm_filemap_add_to_page_cache"
		rep=null added='{}'
		return
	fi
	rm -f "$out" "$out.err"
	iostackbreak --attach="$m" -T ext4 --json "$@" >"$out" 2>"$out.err"
	check_eq "$tag: tool exit status (dd's)" "$?" 0
	ftrace_off iosb-pages >/tmp/pages.trace
	added=$(pages_added /tmp/pages.trace)
	rep=$(grep '^{' "$out" | tail -n 1)
	jq -e . >/dev/null 2>&1 <<<"$rep" || { rep=null; dump "iostackbreak stderr" "$out.err"; }
}

# cache_run METHOD
cache_run() {
	local m=$1 tag="cache $1" d=$MNT/cache a b c ia ib ic pa pb pc pass pid_b pid_c ra
	mkdir -p "$d"
	a=$d/a b=$d/b c=$d/c
	# Not whole pages: the last page is a partial one.
	head -c $(((4 << 20) + 12288 + 100)) /dev/urandom >"$a"
	head -c $(((4 << 20) + 100)) /dev/urandom >"$b"
	head -c $(((12 << 20) + 8192)) /dev/urandom >"$c"
	sync
	ia=$(ino_hex "$a") ib=$(ino_hex "$b") ic=$(ino_hex "$c")
	pa=$((($(stat -c %s "$a") + 4095) / 4096)) pb=$((($(stat -c %s "$b") + 4095) / 4096))
	pc=$((($(stat -c %s "$c") + 4095) / 4096))
	# readahead_pages: null where the kernel has no readahead tracepoints
	# (the plan says so), else some of the pages.
	ra='.readahead_pages == null'
	((have_ra)) && ra='.readahead_pages > 0 and .readahead_pages < .cache_miss_pages'
	for pass in cold cached; do
		[[ $pass == cold ]] && echo 3 >/proc/sys/vm/drop_caches
		cache_pass "$m" "$tag $pass" "i_ino == $((16#$ia)) && s_dev == $DEVT" --file="$a" -- \
			dd if="$a" of=/dev/null bs=4096
		fig=$(jq -c --argjson added "$added" --arg ino "$ia" --argjson pages "$pa" '
			(.breakdown[] | select(.op == "read")) as $b
			| {pages: $pages, added: ($added[$ino] // 0), count: $b.count, root: $b.root,
			   cache_miss_pages: $b.cache_miss_pages, readahead_pages: $b.readahead_pages,
			   per_call_calls: $b.cache_miss_pages_per_call.calls}' <<<"$rep" 2>/dev/null)
		[[ -n $fig ]] || fig=null
		info "$tag $pass: $fig"
		check "$tag $pass: split at ext4" '.root == "ext4"'
		check_eq "$tag $pass: reads = the file's pages + the read at its end" \
			"$(jq -r .count <<<"$fig")" $((pa + 1))
		check "$tag $pass: cache_miss_pages = the pages the kernel added (tracefs)" \
			'.cache_miss_pages == .added'
		check "$tag $pass: per-call histogram holds every call" '.per_call_calls == .count'
		if [[ $pass == cold ]]; then
			check "$tag cold: the kernel added the file's pages, every one" '.added == .pages'
			check "$tag cold: readahead_pages ($( ((have_ra)) && echo traced || echo 'not traced: null'))" "$ra"
		else
			check "$tag cached: nothing added" '.added == 0 and .cache_miss_pages == 0'
		fi
	done
	# Two processes at once, each reading its own file: -P.
	echo 3 >/proc/sys/vm/drop_caches
	rm -f /tmp/pid.b /tmp/pid.c
	cache_pass "$m" "$tag two processes" \
		"(i_ino == $((16#$ib)) || i_ino == $((16#$ic))) && s_dev == $DEVT" -P -- sh -c "
		dd if='$b' of=/dev/null bs=4096 2>/dev/null & echo \$! >/tmp/pid.b
		dd if='$c' of=/dev/null bs=4096 2>/dev/null & echo \$! >/tmp/pid.c
		wait"
	pid_b=$(cat /tmp/pid.b 2>/dev/null) pid_c=$(cat /tmp/pid.c 2>/dev/null)
	fig=$(jq -c --argjson added "$added" --arg ib "$ib" --arg ic "$ic" --argjson pb "$pb" \
		--argjson pc "$pc" --argjson b "${pid_b:-0}" --argjson c "${pid_c:-0}" '
		def proc($p): [.breakdown_by_process[] | select(.pid == $p and .op == "read")][0]
			| {count, cache_miss_pages, readahead_pages};
		(.breakdown[] | select(.op == "read")) as $all
		| {b: (proc($b) + {pages: $pb, added: ($added[$ib] // 0)}),
		   c: (proc($c) + {pages: $pc, added: ($added[$ic] // 0)}),
		   all: {cache_miss_pages: $all.cache_miss_pages, readahead_pages: $all.readahead_pages}}' \
		<<<"$rep" 2>/dev/null)
	[[ -n $fig ]] || fig=null
	info "$tag two processes: $fig"
	for p in b c; do
		check "$tag two processes: $p's reads = its file's pages + 1" ".$p.count == .$p.pages + 1"
		check "$tag two processes: $p's cache_miss_pages = the pages the kernel added to its file" \
			".$p.cache_miss_pages == .$p.added and .$p.added == .$p.pages"
		check "$tag two processes: $p's readahead_pages" "(.$p | $ra)"
	done
	check "$tag two processes: the two add up to the op's" \
		'.all.cache_miss_pages == .b.cache_miss_pages + .c.cache_miss_pages'
	rm -f "$a" "$b" "$c"
}

PARTS=${*:-lock journal cache}
for m in fentry kprobe; do
	echo "=== --attach=$m"
	t0=$(uptime_s)
	plan_check "$m"
	echo "=== lock: small writes behind a big writer, --attach=$m"
	t1=$(uptime_s)
	[[ " $PARTS " != *" lock "* ]] || lock_run "$m"
	info "lock $m: $(since "$t1") s"
	echo "=== journal: append+fsync on $DISK's ext4, --attach=$m"
	t1=$(uptime_s)
	[[ " $PARTS " != *" journal "* ]] || journal_run "$m"
	info "journal $m: $(since "$t1") s"
	echo "=== cache: cold and cached reads, --attach=$m"
	t1=$(uptime_s)
	[[ " $PARTS " != *" cache "* ]] || cache_run "$m"
	info "cache $m: $(since "$t1") s"
	info "$m: $(since "$t0") s in all"
done

umount "$MNT"
guest_result "in $(since "$t_suite") s"
((nfail == 0))
