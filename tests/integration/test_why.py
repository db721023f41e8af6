"""Why a call waited (issue 24) and the journal commit it waited for (issue
29), each against a figure the kernel or the workload gives on its own:

- the lock part, against the duration of the writes that held the lock;
- the journal part and the commit's block requests, against ftrace's own
  jbd2 events (commit start and end, jbd2_run_stats' blocks logged),
  /proc/fs/jbd2/*/info and /proc/diskstats;
- cache_miss_pages and readahead_pages, against the file's size, fincore
  (util-linux, from mincore) and what POSIX_FADV_RANDOM promises."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from harness import (FtraceInstance, LoopDevice, Skip, Tool, Work, cell, check_blk_ops,
                     diskstats_writes, evict_pages, fincore_pages, kernel_dev_t, mount, run,
                     unmount)
from harness import test
from harness import Process
from test_breakdown import check_report
from test_events import check_nesting, slices
from test_parts import calls as calls_of
from test_prometheus import free_port, http_get, parse_exposition



def calls(rep, op):
    """The breakdown of op, and its parts' times by name."""
    b, parts = calls_of(rep, op)
    return b, {name: p["sum_ns"] for name, p in parts.items()}


class CallContentions(FtraceInstance):
    """The lock contentions inside each pwrite64 of one process, by the
    kernel's own events through ftrace (no BPF): lock:contention_begin/end
    between sys_enter_pwrite64 and sys_exit_pwrite64 of the same thread.
    A contention that begins inside another (a spinlock's, such as the
    rwsem's wait_lock, taken while waiting for the rwsem) is part of the
    outer one, as the tool counts it (call_parts.h, parts_lock_begin).
    One in an interrupt on top of the thread (ftrace's h or s flag) has it
    as current too: the tool counts it as the thread's unless it comes
    while a change of the thread's split is in progress (parts_busy), which
    no outside count can tell: those are counted apart."""

    def __init__(self, pid):
        tids = os.listdir(f"/proc/{pid}/task")  # iowork's threads exist before READY
        super().__init__(f"locks-{pid}", [("lock", "contention_begin"),
                                          ("lock", "contention_end"),
                                          ("syscalls", "sys_enter_pwrite64"),
                                          ("syscalls", "sys_exit_pwrite64")],
                         " || ".join(f"common_pid == {t}" for t in tids))

    def stop(self):
        """[(contentions in the thread's own context, in interrupts on top
        of it) of each call that had one or more]."""
        calls, held, contended = {}, {}, []
        for line in super().stop().splitlines():
            m = re.match(r"^\s*.+?-(\d+)\s+\[\d+\] (\S+)\s.*?: (sys_pwrite64\(|"
                         r"sys_pwrite64 ->|contention_begin: (\w+)|contention_end: (\w+))", line)
            if not m:
                continue
            tid, irq, what = int(m.group(1)), m.group(2)[2] in "hsH", m.group(3)
            if what == "sys_pwrite64(":
                calls[tid], held[tid] = [0, 0], {}
            elif tid not in calls:
                continue  # a call begun before the trace
            elif m.group(4):  # begin: counted unless inside another
                if held[tid].get(irq) is None:
                    held[tid][irq] = m.group(4)
                    calls[tid][irq] += 1
            elif m.group(5):
                if held[tid].get(irq) == m.group(5):
                    held[tid][irq] = None
            else:
                n = calls.pop(tid)
                if sum(n):
                    contended.append(tuple(n))
        return contended


def lock_workload(tmp, tool_args, collect=Tool.stop_json):
    """The lock test's workload in tmp: 1500 paced 4 KiB pwrites (small)
    while another process makes 30 64 MiB pwrites (big) to the same file
    "f", under the tool with tool_args(small pid, big pid). Returns what
    collect(tool) gives (by default the tool's lines) and both workloads'
    results; the small writer's has "contended", the contentions of each
    of its calls that had any, by ftrace."""
    path = os.path.join(tmp, "f")
    # The small writer starts first and outlasts the big one: every big
    # write happens while a small write may be waiting for it.
    # Both on one CPU: when a small write finds the lock held, its
    # owner is not running, so the rwsem takes no optimistic spin
    # (rwsem_can_spin_on_owner() wants the owner on a CPU) and every
    # wait is a contention the kernel reports. On two CPUs, how much of
    # the wait is spent spinning, before contention_begin, depends on
    # the machine's load (1 to 30 of the 30 waits were reported).
    one_cpu = ("taskset", "-c", str(max(os.sched_getaffinity(0))))
    small = Work("-s", "4k", "-P", "1000", "-c", "pwrite", "1500", path, prefix=one_cpu)
    big = Work("-s", "64m", "-c", "pwrite", "30", path, prefix=one_cpu)
    ts = Tool(*tool_args(small.pid, big.pid))
    ft = CallContentions(small.pid)
    try:
        ft.start()
        small.go()
        time.sleep(0.05)
        big.go()
        rb = big.finish()
        rs = small.finish()
        rs["contended"] = ft.stop()
    finally:
        ft.close()
    rb["pid"], rs["pid"] = big.pid, small.pid
    return collect(ts), rb, rs


# The small writes' self time, the rest of their time once the lock and
# their waits for the CPU are named: 1-3% measured (6-31 ms of 0.45-2.5 s;
# a loaded machine's interrupts on their CPU count to it), 3.7-6.9% in four
# runs of 2026-11-28 with other tests on the host (10.6-21.3 ms of 0.26-0.49
# s). A wait on the lock left in self time would make it ~90%.
SMALL_WRITE_SELF_SHARE = 0.1


@test
def small_writes_behind_a_big_writer_wait_on_the_inode_lock():
    """4 KiB pwrites while another process rewrites the file in 64 MiB
    writes, each of which holds the inode's rwsem: the small writes' time
    is the lock part (rwsem write), close to the big writes' duration, and
    no longer than it."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        lines, rb, rs = lock_workload(
            tmp, lambda small, big: ("-T", "syscall", "-p", str(small), "--json", "--slower=0"))
    rep = [x for x in lines if "event" not in x][-1]
    waited = [x for x in lines if x.get("event") == "io" and x["op"] == "write" and x["lock"]]
    assert rep.pop("lost") == 0, rep
    check_report(rep)
    big_ns = int(rb["ns"])
    b, parts = calls(rep, "write")
    assert b["count"] == int(rs["done"]) == 1500, b
    lock = parts["lock"]
    kinds = b["lock_ns_by_kind"]
    print(f"    big writes {big_ns / 1e6:.1f} ms; small writes {b['total_ns'] / 1e6:.1f} ms, "
          f"lock {lock / 1e6:.1f} ms ({lock / big_ns:.0%} of the big writes), "
          f"self {parts['syscall'] / 1e6:.1f} ms, blocked {parts['blocked'] / 1e6:.1f} ms, "
          f"by kind {kinds}")
    assert sum(parts.values()) == b["total_ns"], parts
    # The small writer waits only while a big write holds the lock: at
    # most the big writes' time (iowork's clock around each), plus the big
    # writer's steps between two writes when it takes the lock again
    # before the small writer it woke has run (microseconds each, 30 at
    # most: the 2%).
    assert lock <= big_ns * 1.02, f"waited {lock} ns for writes of {big_ns} ns"
    # With no optimistic spin (one CPU, above), a small write that finds
    # the lock held waits in contention until the big write ends: lock.
    # The rest is its own work (self) and its waits for the CPU (runqueue).
    # Against the big writes the lock part is less by each big write's
    # start before the small writer next runs: its 1 ms pacing plus, on a
    # busy machine, its wait for the CPU (86-91% measured; 75-87% in four
    # runs of 2026-11-28).
    assert parts["syscall"] <= SMALL_WRITE_SELF_SHARE * b["total_ns"], (lock, parts, b["total_ns"])
    # Of the lock part, the inode's rwsem: all of it in those four runs
    # (240-462 ms rwsem_write, 0 other); a spinlock contended in an
    # interrupt on top of a small write is "other" (10.9 us of 647 ms once).
    assert kinds["rwsem_write"] >= 0.95 * lock, kinds
    assert sum(kinds.values()) == lock, kinds
    # The small writes write to the page cache and sleep on nothing else:
    # blocked was 0.0 ms in those four runs.
    assert parts["blocked"] < 0.1 * lock, parts
    # The lock, named: the file's inode rwsem, in the calls that waited.
    names = {}
    for e in waited:
        names[e["lock"]["name"]] = names.get(e["lock"]["name"], 0) + e["lock"]["max_ns"]
    print(f"    the longest contention of each call, by lock: {names}")
    own = sum(1 for t, _ in rs["contended"] if t)
    print(f"    {len(waited)} of the small writes waited on the lock, for 30 big writes; "
          f"ftrace: {own} calls with contentions of their own, "
          f"{len(rs['contended']) - own} with contentions in interrupts only")
    # Which calls met a contention: the kernel's own events say (ftrace).
    # How many do depends on the schedule: 22-30 of the 1,500 measured.
    assert own and own <= len(waited) <= len(rs["contended"]), len(waited)
    # The others: contentions in interrupts (above), microseconds each.
    assert names.get("inode rwsem of f", 0) >= 0.9 * sum(names.values()), names
    # A contention's time runs from its begin to its end: within the call.
    assert all(e["lock"]["max_ns"] <= e["latency_ns"] for e in waited), waited[:3]


def process_calls(rep, pid, op):
    """-P: the breakdown_by_process entry of pid's op, and its parts' times
    by name."""
    for b in rep["breakdown_by_process"]:
        if b["pid"] == pid and b["op"] == op:
            return b, {p["part"]: p["sum_ns"] for p in b["parts"]}
    raise AssertionError(f"no -P entry for {pid} {op}: {rep['breakdown_by_process']}")


@test
def each_process_has_its_own_lock_part_and_the_trace_names_the_lock():
    """The lock test's workload with both writers traced, under -P and
    --trace:
    - -P: the small writer's lock part, against the big writes' duration as
      in the lock test; the big writer's, at most the small writes' time
      (it can only wait for them); each process's lock part by kind adds up
      to its lock part, and the two processes' to the op's;
    - the trace: each contention is a slice named by its lock, nested in its
      call; the small writes' are "inode rwsem of f", and add up to their
      lock part plus at most their waits for a CPU inside them; a call's
      slice names its longest contention, the longest of its slices."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        out = os.path.join(tmp, "trace.json")
        lines, rb, rs = lock_workload(tmp, lambda small, big: (
            "-T", "syscall", "-P", "-p", f"{small},{big}", "--json", f"--trace={out}"))
        with open(out) as f:
            trace = json.load(f)
    rep = lines[-1]
    assert rep.pop("lost") == 0, rep
    check_report(rep, split=("pid",))
    assert trace["otherData"]["lost_ring_buffer"] == 0, trace["otherData"]
    assert trace["otherData"]["lost_trace_max"] == 0, trace["otherData"]
    sb, sp = process_calls(rep, rs["pid"], "write")
    bb, bp = process_calls(rep, rb["pid"], "write")
    b, parts = calls(rep, "write")
    big_ns, small_ns = int(rb["ns"]), int(rs["ns"])
    print(f"    big writes {big_ns / 1e6:.1f} ms: lock {bp['lock'] / 1e6:.3f} ms "
          f"{bb['lock_ns_by_kind']}; small writes {sb['total_ns'] / 1e6:.1f} ms: lock "
          f"{sp['lock'] / 1e6:.1f} ms {sb['lock_ns_by_kind']}, runqueue "
          f"{sp.get('runqueue', 0) / 1e6:.1f} ms")
    assert sb["count"] == int(rs["done"]) == 1500, sb
    assert bb["count"] == int(rb["done"]) == 30, bb
    assert b["count"] == sb["count"] + bb["count"], b
    # The small writer's, as in the lock test.
    assert sp["lock"] <= big_ns * 1.02, (sp, big_ns)
    assert sp["syscall"] <= SMALL_WRITE_SELF_SHARE * sb["total_ns"], (sp, sb["total_ns"])
    assert sb["lock_ns_by_kind"]["rwsem_write"] >= 0.95 * sp["lock"], sb
    # The big writer waits only for small writes holding the lock.
    assert bp["lock"] <= small_ns, (bp, small_ns)
    for e, p in ((sb, sp), (bb, bp)):
        assert sum(e["lock_ns_by_kind"].values()) == p["lock"], (e, p)
        assert sum(p.values()) == e["total_ns"], (e, p)
    assert parts["lock"] == sp["lock"] + bp["lock"], (parts, sp, bp)
    for kind, ns in b["lock_ns_by_kind"].items():
        assert ns == sb["lock_ns_by_kind"][kind] + bb["lock_ns_by_kind"][kind], b
    # The trace: contentions, named, nested in their calls.
    check_nesting(trace)
    locks = slices(trace, cat="lock")
    small_locks = [e for e in locks if e["pid"] == rs["pid"]]
    names = {}
    for e in small_locks:
        names[e["name"]] = names.get(e["name"], 0) + round(e["dur"] * 1000)
    print(f"    the small writes' contentions in the trace, by name (ns): {names}; "
          f"the big writes': {len(locks) - len(small_locks)}")
    # A slice for each contention the kernel reported in a small write;
    # those in interrupts on top of it, for those not inside a change.
    own = sum(t for t, _ in rs["contended"])
    irq = sum(i for _, i in rs["contended"])
    print(f"    ftrace: {own} contentions in small writes, {irq} in interrupts on top of them;"
          f" the trace's slices: {len(small_locks)}")
    assert own and own <= len(small_locks) <= own + irq, len(small_locks)
    assert names.get("inode rwsem of f", 0) >= 0.9 * sum(names.values()), names
    assert all(e["args"]["kind"] in ("mutex", "rwsem_read", "rwsem_write", "other")
               for e in locks), locks[:3]
    # A contention's time is the lock part's, or a wait for a CPU inside it.
    lock_us = sum(round(e["dur"] * 1000) for e in small_locks)
    assert sp["lock"] <= lock_us <= sp["lock"] + sp.get("runqueue", 0), (lock_us, sp)
    # Each call's slice names the longest of its contentions.
    eps = 0.0015
    for call in slices(trace, cat="syscall"):
        inside = [e for e in locks if e["tid"] == call["tid"] and call["ts"] - eps <= e["ts"]
                  and e["ts"] + e["dur"] <= call["ts"] + call["dur"] + eps]
        lock = call["args"].get("lock")
        if not inside:
            assert lock is None, call
            continue
        longest = max(inside, key=lambda e: e["dur"])
        assert lock is not None and lock["name"] == longest["name"], (call, longest)
        assert lock["max_ns"] == round(longest["dur"] * 1000), (call, longest)


class Jbd2Trace(FtraceInstance):
    """The journal's commits on one disk, from the kernel's own jbd2 events:
    start and end of each commit, and jbd2_run_stats' blocks logged; and
    who asked the disk for a flush (block_bio_queue of a PREFLUSH bio, its
    rwbs beginning with F, in the task that submitted it)."""

    def __init__(self, dev_t):
        evs = ("jbd2_start_commit", "jbd2_end_commit", "jbd2_run_stats")
        super().__init__("jbd2", [("jbd2", e) for e in evs] + [("block", "block_bio_queue")],
                         f"dev == {dev_t}")

    def stop(self):
        """(commits, total commit time in ns, blocks logged, {"journal" or
        the task's name: flushes it asked for})."""
        starts, total, commits, logged = {}, 0, 0, 0
        asks = {}
        for line in super().stop().splitlines():
            q = re.search(r"block_bio_queue: \d+,\d+ (\S+) .*\[(.*)\]$", line)
            if q:
                # A PREFLUSH asks for a flush before the write; a FUA write
                # to a disk without FUA (a loop device: queue/fua 0), for
                # one after it (the block layer's flush sequence).
                rwbs, comm = q.group(1), q.group(2)
                who = "journal" if comm.startswith("jbd2/") else comm
                asks[who] = asks.get(who, 0) + (rwbs[0] == "F") + ("F" in rwbs[1:])
                continue
            m = re.search(r"\s(\d+\.\d+): (jbd2_\w+): .*?(?:transaction|tid) (\d+)", line)
            if not m:
                continue
            t, ev, tid = float(m.group(1)), m.group(2), int(m.group(3))
            if ev == "jbd2_start_commit":
                starts[tid] = t
            elif ev == "jbd2_end_commit" and tid in starts:
                total += round((t - starts.pop(tid)) * 1e9)
                commits += 1
            elif ev == "jbd2_run_stats":
                logged += int(re.search(r"blocks_logged (\d+)", line).group(1))
        return commits, total, logged, asks


def jbd2_transactions(info):
    with open(info) as f:
        return int(f.readline().split()[0])


def journal_window(work_args, tool_args, collect):
    """Runs iowork work_args (FILE: a file of an ext4 with a journal,
    data=ordered, over a loop device) under -T syscall,blk -p -d and
    tool_args, with ftrace's jbd2 events on; returns what collect(tool)
    gives once the work is done, the workload's result and the window's
    figures from the kernel (jbd2 events, /proc/fs/jbd2, diskstats)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=256, name="j.img")
        mnt = os.path.join(tmp, "m")
        os.mkdir(mnt)
        jt, tool = None, None
        try:
            run("mkfs.ext4", "-q", "-F", "-b", "4096", "-E",
                "lazy_itable_init=0,lazy_journal_init=0", loop.dev, check=True)
            p = mount("-o", "no_prefetch_block_bitmaps,data=ordered", loop.dev, where=mnt)
            assert p.returncode == 0, p.stderr
            work = Work(*[os.path.join(mnt, "f") if a == "FILE" else a for a in work_args])
            run("sync")
            time.sleep(0.3)
            info = glob.glob(f"/proc/fs/jbd2/{loop.name}-*/info")
            assert info, "no /proc/fs/jbd2 entry for the journal"
            jt = Jbd2Trace(kernel_dev_t(loop.name))
            tool = Tool("-T", "syscall,blk", "-p", str(work.pid), "-d", loop.name, *tool_args)
            tx0, ds0 = jbd2_transactions(info[0]), diskstats_writes(loop.name)
            jt.start()
            work.go()
            res = work.finish()
            time.sleep(0.3)
            commits, commit_ns, logged, asks = jt.stop()
            tx1, ds1 = jbd2_transactions(info[0]), diskstats_writes(loop.name)
            got = collect(tool)
            tool = None
        finally:
            if tool:
                tool.stop()
            if jt:
                jt.close()
            unmount(mnt)  # checked: the loop device is detached next
            loop.close()
    assert int(res["done"]) == int(res["n"]), res
    fig = {"commits": commits, "commit_ns": commit_ns, "logged": logged,
           "transactions": tx1 - tx0, "done": int(res["done"]),
           "journal_asks": asks.pop("journal", 0), "thread_asks": asks.pop("iowork", 0),
           "other_asks": asks}
    fig["writes"], fig["sectors"], fig["flushes"] = (a - b for a, b in zip(ds1, ds0))
    return got, fig


def journal_run(work_args):
    """journal_window with --json --slower=0: the report, the fsync events
    and the window's figures."""
    lines, fig = journal_window(work_args, ("--json", "--slower=0"), Tool.stop_json)
    rep = [x for x in lines if "event" not in x][-1]
    events = [x for x in lines if x.get("event") == "io" and x["op"] == "fsync"]
    assert rep.pop("lost") == 0, rep  # events' reports say what they lost
    check_report(rep)
    fig["own_w"] = cell(rep, "blk", "write")["count"]
    fig["own_f"] = sum(c["count"] for c in rep["cells"]
                       if c["layer"] == "blk" and c["op"] == "flush")
    b, parts = calls(rep, "fsync")
    print(f"    {b['count']} fsyncs, {b['total_ns'] / 1e6:.1f} ms: journal "
          f"{parts['journal'] / 1e6:.1f} ms, io_wait {parts['io_wait'] / 1e6:.1f} ms, "
          f"blocked {parts['blocked'] / 1e6:.1f} ms; journal blk {b['journal_blk']}, own blk "
          f"bytes {b['blk_bytes']}; {fig}")
    return rep, events, fig


@test
def fsyncs_wait_on_the_journal_commit_and_own_its_requests():
    """Appends, each followed by fsync, on an ext4 with a journal
    (data=ordered): each fsync forces a commit and waits for it. Its wait is
    the journal part, at least the commits' own duration (ftrace's
    jbd2_start_commit..end_commit); the commits' writes and flushes are the
    fsyncs' (-p), equal to jbd2_run_stats' blocks logged (the commit block
    among them), and with the fsyncs' own requests to /proc/diskstats. Each
    fsync's writeback_pages is the page its append dirtied."""
    n = 100
    rep, events, fig = journal_run(["-W", "-A", "-c", "fsync", str(n), "FILE"])
    b, parts = calls(rep, "fsync")
    j = b["journal_blk"]
    assert b["count"] == fig["done"] == n, b
    assert fig["commits"] == fig["transactions"] >= n, fig
    # Each fsync sleeps before its commit starts and wakes after it ends,
    # so its journal part holds the commit's time (ftrace's start to end)
    # and its wake-up: 260.7 ms for 259.5 ms of commits measured. Less
    # only by the clocks' difference: ftrace's text time is whole us, BPF's
    # ns, both the same clock, so by at most 1 us a commit (the 10%: room
    # for a sleep that begins after its commit started, not seen here).
    assert parts["journal"] >= 0.9 * fig["commit_ns"], (parts, fig)
    assert parts["journal"] <= b["total_ns"], parts
    # Appends to the page cache sleep on nothing but the commit and their
    # own requests (io_wait): blocked 0.0 ms of 281 ms measured.
    assert parts["blocked"] < 0.05 * b["total_ns"], parts
    # The commits' writes: the blocks logged (the commit block among them).
    assert j["bytes"] == fig["logged"] * 4096, (j, fig)
    # Their flushes: those the journal's thread asked for (ftrace), none
    # asked for by the fsyncs themselves (200 for 100 commits measured).
    assert fig["thread_asks"] == 0 and j["flushes"] == fig["journal_asks"], (j, fig)
    # With the fsyncs' own requests, all the disk did in the window: their
    # writes counted, or counted missed where the kernel hides completions
    # from BPF (once: 99 of 100 own writes, their bytes all in the calls').
    check_blk_ops(rep, {"write": fig["own_w"]},
                  {"write": fig["writes"] - (j["requests"] - j["flushes"])}, "journal fsyncs")
    assert fig["sectors"] * 512 == b["blk_bytes"] + j["bytes"], (j, fig)
    assert fig["flushes"] == fig["own_f"] + j["flushes"], (j, fig)
    # The pages each fsync put under writeback (ext4's writepages, run by
    # the fsync itself): the one page its pwrite dirtied, the workload's own
    # count, and all its own requests wrote (the commit wrote the rest).
    w, _ = calls(rep, "write")
    assert b["writeback_pages"] == n and w["writeback_pages"] == 0, (b, w)
    assert b["blk_bytes"] == 4096 * b["writeback_pages"], b
    assert all(e["writeback_pages"] == 1 for e in events), [
        e for e in events if e["writeback_pages"] != 1][:2]
    # Each fsync's event: its own requests and the commit it waited for.
    assert len(events) == n, len(events)
    for key in ("requests", "flushes", "bytes"):
        assert sum(e["journal_blk"][key] for e in events) == j[key], (key, j)
    assert all(e["journal_blk"]["flushes"] >= 1 and e["blk"]["requests"] >= 1
               for e in events), [e for e in events if not e["journal_blk"]["flushes"]][:2]


@test
def four_threads_share_commits_each_counts_the_one_it_waited_for():
    """Four threads fsyncing one file each: a commit often serves several
    fsyncs, and jbd2 wakes every waiter at each commit's end (also those
    waiting for the next one). Each fsync that waited has one commit's
    flushes (every commit here asks for the same number: the disk's
    flushes over the commits), never two commits'; a commit shared is
    counted for each waiter, so the calls' sum is at least the disk's."""
    rep, events, fig = journal_run(["-t", "4", "-W", "-c", "fsync", "200", "FILE"])
    b, parts = calls(rep, "fsync")
    j = b["journal_blk"]
    assert fig["commits"] == fig["transactions"] > 0, fig
    # Who asked for the flushes, by ftrace (block_bio_queue): the journal's
    # thread the same number at every commit (2: 74 for 37 commits, 82 for
    # 41, ...). The block layer serves the flushes pending at one time with
    # one device flush, owned by the first that asked (bpf/blk_flush.bpf.h,
    # man page FLUSHES): when a thread's own flush and a commit's share one,
    # it is the thread's own, and that commit owns one fewer. So the disk's
    # flushes less the threads' own are the others' asks less those shared.
    per_commit, rest = divmod(fig["journal_asks"], fig["commits"])
    assert per_commit and not rest, fig
    # Another task's sync on this machine writes this file system back
    # too, and may ask for a flush of its own ({'sync': 1} once).
    others = sum(fig["other_asks"].values())
    shared = fig["journal_asks"] + others - (fig["flushes"] - fig["own_f"])
    print(f"    flushes asked for by the journal {fig['journal_asks']}, by the threads "
          f"{fig['thread_asks']}, by others {fig['other_asks']}; the disk's {fig['flushes']}, "
          f"the threads' own {fig['own_f']}: {shared} of the others' served by a thread's",
          flush=True)
    # A flush served for two asks is the first's: the threads own no more
    # than they asked for, the journal and others no more than they did.
    assert fig["own_f"] <= fig["thread_asks"], fig
    assert 0 <= shared <= min(fig["own_f"], fig["commits"] + others), (shared, fig)
    assert len(events) == b["count"] == 200, (len(events), b["count"])
    got = sorted({e["journal_blk"]["flushes"] for e in events})
    assert set(got) <= ({0, per_commit, per_commit - 1} if shared else {0, per_commit}), \
        (got, per_commit, shared)
    assert j["flushes"] >= fig["flushes"] - fig["own_f"] - others, (j, fig)
    assert j["requests"] - j["flushes"] >= fig["writes"] - fig["own_w"], (j, fig)
    assert parts["journal"] > 0, parts


READER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long)
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
if sys.argv[2] == "random":
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
# A mapping only to ask mincore (PROT_READ, MAP_SHARED): it adds no page.
base = libc.mmap(None, size, 1, 1, fd, 0)
vec = ctypes.create_string_buffer(1)
sys.stdout.write("READY\n")
sys.stdout.flush()
sys.stdin.readline()
n = own = off = 0
while True:
    if off < size:
        assert libc.mincore(ctypes.c_void_p(base + off), 4096, vec) == 0
        own += not (vec.raw[0] & 1)
    if not os.read(fd, 4096):
        break
    n += 1
    off += 4096
print(n, own, flush=True)
"""


def read_under_tool(path, mode, tool_args=("--json",), collect=lambda t: t.stop_json()[-1]):
    """Reads path 4 KiB at a time under -p, --file and tool_args; (what
    collect(tool) gives, by default the report; reads; reads whose own page
    mincore found not cached just before)."""
    proc = Process([sys.executable, "-c", READER, path, mode], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "READY\n"
        tool = Tool("-T", "syscall", "-p", str(proc.pid), "--file", path, *tool_args)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        reads, own = (int(x) for x in proc.stdout.readline().split())
        proc.wait(timeout=60)
        rep = collect(tool)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return rep, reads, own


class PagesAdded(FtraceInstance):
    """Pages the kernel adds to one file's page cache, by its own
    filemap:mm_filemap_add_to_page_cache events through ftrace (no BPF):
    exact, where fincore, asked after, misses pages reclaim took since."""

    def __init__(self, path, tag="pages"):
        st = os.stat(path)
        s_dev = (os.major(st.st_dev) << 20) | os.minor(st.st_dev)
        super().__init__(tag, [("filemap", "mm_filemap_add_to_page_cache")],
                         f"i_ino == {st.st_ino} && s_dev == {s_dev}")

    def stop(self):
        return sum(1 << int(m.group(1)) for m in
                   re.finditer(r"mm_filemap_add_to_page_cache: .* order=(\d+)", super().stop()))


def pass_under_tool(path, mode, **tool):
    """read_under_tool, with fincore before and after and the kernel's own
    count of the pages added: (report, reads, own misses, before, after,
    pages added)."""
    before = fincore_pages(path)
    added = PagesAdded(path)
    try:
        added.start()
        rep, reads, own = read_under_tool(path, mode, **tool)
        n = added.stop()
    finally:
        added.close()
    return rep, reads, own, before, fincore_pages(path), n


@test
def cold_reads_count_the_pages_they_add_to_the_cache():
    """A file read after its pages were evicted (harness.evict_pages): the
    reads' cache_miss_pages add up to the pages the kernel added to the
    file's cache (its own tracepoint, through ftrace): all the file's, which
    fincore finds cached after (unless reclaim took some back since);
    readahead_pages are those past each
    read's own page (so the reads that added their own page, at most those
    whose page mincore found missing just before). Under POSIX_FADV_RANDOM
    (no readahead) each read adds its own page: readahead_pages 0. Read
    again, cached: 0 pages."""
    if not shutil.which("fincore"):
        raise Skip("fincore (util-linux) missing")
    size = (8 << 20) + 12288 + 100  # not a whole number of pages
    pages = (size + 4095) // 4096
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "f")
        with open(path, "wb") as f:
            f.write(os.urandom(size))
            os.fsync(f.fileno())
        figures = {}
        for mode in ("sequential", "random"):
            evict_pages(path)
            rep, reads, own, before, after, added = pass_under_tool(path, mode)
            check_report(rep)
            b, _ = calls(rep, "read")
            figures[mode] = (before, after, added, reads, own, b["count"],
                             b["cache_miss_pages"], b["readahead_pages"])
            assert before == 0, f"{mode}: {before} pages cached after the eviction"
            assert b["count"] == reads + 1 == pages + 1, (b["count"], reads, pages)
            assert b["cache_miss_pages"] == added >= pages, figures[mode]
            assert pages >= after >= pages - 64, figures[mode]
            # A read that added its own page found it missing in mincore just
            # before; mincore also calls a page missing while readahead's I/O
            # for it is in flight (not uptodate), so it bounds them only.
            own_added = b["cache_miss_pages"] - b["readahead_pages"]
            assert 1 <= own_added <= own, figures[mode]
            if mode == "random":
                assert b["readahead_pages"] == 0 and own == own_added == pages, figures[mode]
                # Per call: one page each, and none at the end of the file.
                per = {(x["lo"], x["hi"]): x["count"]
                       for x in b["cache_miss_pages_per_call"]["buckets"]}
                assert per == {(0, 1): 1, (1, 2): pages}, per
            else:
                assert b["readahead_pages"] > 0, figures[mode]
        rep, reads, own, before, after, added = pass_under_tool(path, "sequential")
        b, _ = calls(rep, "read")
        figures["cached"] = (before, added, reads, b["cache_miss_pages"], b["readahead_pages"])
    print(f"    {pages} pages; (fincore before, after, pages added (ftrace), reads, own "
          f"misses, calls, cache_miss_pages, readahead_pages): {figures}")
    # The kernel's own count of the pages it added during the pass (ftrace)
    # says whether the pass was all cached, not fincore just before it: this
    # host runs DAMON's pageout scheme (kdamond, /sys/kernel/mm/damon: paddr,
    # action pageout), which pages cold memory out, page cache too, at any
    # time. A fresh clone's run saw fincore find 2052 of 2052 pages cached
    # before the pass and ftrace 13 pages added during it; the reads counted
    # those 13, 3 of them readahead. With nothing added, both must be 0.
    assert b["cache_miss_pages"] == added, figures["cached"]
    assert b["readahead_pages"] <= b["cache_miss_pages"], figures["cached"]


def per_call_pages(b):
    """The histogram of pages each call added: {(lo, hi): calls}."""
    return {(x["lo"], x["hi"]): x["count"] for x in b["cache_miss_pages_per_call"]["buckets"]}


@test
def two_processes_cold_reading_each_count_their_own_pages():
    """Two processes read a file each after their pages were evicted, at
    the same time, under -P: one under POSIX_FADV_RANDOM (each read adds its own page, none
    read ahead), the other sequentially (readahead). Each process's
    cache_miss_pages are the pages the kernel added to its own file (its
    tracepoint, through ftrace), its readahead_pages its own, and the two
    add up to the op's."""
    if not shutil.which("fincore"):
        raise Skip("fincore (util-linux) missing")
    sizes = {"random": (4 << 20) + 100, "sequential": (12 << 20) + 8192}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        paths = {}
        for mode, size in sizes.items():
            paths[mode] = os.path.join(tmp, mode)
            with open(paths[mode], "wb") as f:
                f.write(os.urandom(size))
                os.fsync(f.fileno())
        for path in paths.values():
            evict_pages(path)
        procs, added, tool = {}, {}, None
        try:
            for mode, path in paths.items():
                assert fincore_pages(path) == 0, f"{mode}: cached after the eviction"
                procs[mode] = Process(
                    [sys.executable, "-c", READER, path, mode], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, text=True)
                assert procs[mode].stdout.readline() == "READY\n"
                added[mode] = PagesAdded(path, tag=f"pages-{mode}")
                added[mode].start()
            pids = ",".join(str(p.pid) for p in procs.values())
            tool = Tool("-T", "syscall", "-P", "-p", pids, "--json")
            for p in procs.values():
                p.stdin.write("go\n")
                p.stdin.flush()
            reads = {m: int(p.stdout.readline().split()[0]) for m, p in procs.items()}
            for p in procs.values():
                p.wait(timeout=60)
            pages_added = {m: a.stop() for m, a in added.items()}
            rep = tool.stop_json()[-1]
            tool = None
        finally:
            if tool:
                tool.stop()
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
            for a in added.values():
                a.close()
    check_report(rep, split=("pid",))
    b, _ = calls(rep, "read")
    got = {}
    for mode, p in procs.items():
        e, _ = process_calls(rep, p.pid, "read")
        pages = (sizes[mode] + 4095) // 4096
        got[mode] = (pages, reads[mode], e["count"], pages_added[mode], e["cache_miss_pages"],
                     e["readahead_pages"])
        assert e["count"] == reads[mode] + 1 == pages + 1, got[mode]
        assert e["cache_miss_pages"] == pages_added[mode] >= pages, got[mode]
        if mode == "random":
            assert e["readahead_pages"] == 0, got[mode]
            assert per_call_pages(e) == {(0, 1): 1, (1, 2): pages}, per_call_pages(e)
        else:
            assert 0 < e["readahead_pages"] < e["cache_miss_pages"], got[mode]
    print(f"    per process (pages, reads, calls, pages added (ftrace), cache_miss_pages, "
          f"readahead_pages): {got}")
    assert b["cache_miss_pages"] == sum(g[4] for g in got.values()), (b, got)
    assert b["readahead_pages"] == sum(g[5] for g in got.values()), (b, got)


# ---- the same figures in the Prometheus exporter ----

def scrape_and_stop(port):
    """collect for an exporter: its /metrics, parsed and checked by the
    exposition reader of test_prometheus, then the tool stopped (exit 0)."""
    def collect(tool):
        status, _, text = http_get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200, status
        samples = parse_exposition(text)
        rc, _, err = tool.stop()
        assert rc == 0, err
        return samples
    return collect


def metric(samples, name, **labels):
    """A counter of the scrape; 0 when the series is absent (not yet seen)."""
    found = [v for (n, ls), v in samples.items()
             if n == name and all(dict(ls).get(k) == str(w) for k, w in labels.items())]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else 0


@test
def prometheus_names_the_lock_the_journal_and_the_pages():
    """The why figures in the exporter, each against the kernel's or the
    workload's own count: iostackbreak_time_seconds_total{part="lock"} of
    small writes behind a big writer, at most the big writes' duration and
    most of the small writes' time; {op="fsync",part="journal"} at least
    the commits' duration (ftrace's jbd2 events), with
    iostackbreak_journal_requests_total{op="fsync"} the commits' writes and
    flushes (diskstats less the fsyncs' own) and
    iostackbreak_writeback_pages_total{op="fsync"} one page per fsync;
    iostackbreak_cache_miss_pages_total{op="read"} of a cold read the pages
    the kernel added to the file's cache (its own tracepoint, through
    ftrace), iostackbreak_readahead_pages_total{op="read"} most of them."""
    parts = "iostackbreak_time_seconds_total"
    port = free_port()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        samples, rb, rs = lock_workload(
            tmp, lambda small, big: ("-T", "syscall", "-p", str(small), f"--prometheus={port}"),
            scrape_and_stop(port))
    lock_s = metric(samples, parts, op="write", part="lock")
    write_s = metric(samples, "iostackbreak_latency_seconds_sum", layer="syscall", op="write")
    big_s = int(rb["ns"]) / 1e9
    print(f"    lock {lock_s:.3f} s of {write_s:.3f} s of small writes; big writes {big_s:.3f} s")
    assert metric(samples, "iostackbreak_latency_seconds_count", layer="syscall",
                  op="write") == int(rs["done"]) == 1500
    assert 0 < lock_s <= big_s * 1.02, (lock_s, big_s)
    assert metric(samples, parts, op="write", part="syscall") <= \
        SMALL_WRITE_SELF_SHARE * write_s, samples

    n = 50
    port = free_port()
    samples, fig = journal_window(["-W", "-A", "-c", "fsync", str(n), "FILE"],
                                  (f"--prometheus={port}",), scrape_and_stop(port))
    journal_s = metric(samples, parts, op="fsync", part="journal")
    own_w = metric(samples, "iostackbreak_latency_seconds_count", layer="blk", op="write")
    own_f = metric(samples, "iostackbreak_latency_seconds_count", layer="blk", op="flush")
    j = metric(samples, "iostackbreak_journal_requests_total", op="fsync")
    print(f"    journal {journal_s * 1e3:.1f} ms, commits {fig['commit_ns'] / 1e6:.1f} ms; "
          f"journal requests {j:.0f}; own writes {own_w:.0f}, flushes {own_f:.0f}; {fig}")
    assert metric(samples, "iostackbreak_latency_seconds_count", layer="syscall",
                  op="fsync") == fig["done"] == n
    assert journal_s >= 0.9 * fig["commit_ns"] / 1e9, (journal_s, fig)
    assert journal_s <= metric(samples, "iostackbreak_latency_seconds_sum", layer="syscall",
                               op="fsync")
    assert j == fig["writes"] + fig["flushes"] - own_w - own_f, (j, own_w, own_f, fig)
    assert metric(samples, "iostackbreak_writeback_pages_total", op="fsync") == n

    if not shutil.which("fincore"):
        raise Skip("fincore (util-linux) missing")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "f")
        with open(path, "wb") as f:
            f.write(os.urandom(4 << 20))
            os.fsync(f.fileno())
        evict_pages(path)
        port = free_port()
        samples, reads, own, before, after, added = pass_under_tool(
            path, "sequential", tool_args=(f"--prometheus={port}",),
            collect=scrape_and_stop(port))
    miss = metric(samples, "iostackbreak_cache_miss_pages_total", op="read")
    ahead = metric(samples, "iostackbreak_readahead_pages_total", op="read")
    print(f"    cold read of 1024 pages: cache_miss_pages {miss:.0f}, readahead {ahead:.0f}, "
          f"added (ftrace) {added}")
    assert before == 0 and miss == added >= 1024, (before, miss, added)
    assert 0 < ahead < miss, (ahead, miss)
