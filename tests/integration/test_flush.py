"""Flushes and fsync's block I/O (issue 29), against the kernel's counters.

For each fsync pattern, on an ext4 over a loop device (the only writer on
that disk, so the window is exact): the tool's blk write and flush counts,
under the plain report and under -P, -D and -F, against /proc/diskstats'
writes column and against the device flushes the kernel's own tracepoint
reports (ftrace, block_rq_complete of REQ_OP_FLUSH), and a process filter
(-p) that must see its own flushes."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from harness import (FtraceInstance, LoopDevice, Skip, Tool, Work, cell, check_blk_ops,
                     diskstats_writes, host_hides_completions, kernel_dev_t, mount, run,
                     unmount)
from harness import test
from harness import Process


N = 120

# name, iowork arguments (FILE is the file on the test file system), syscall
# op the process does, journal?, write cache
PATTERNS = [
    ("unchanged-fsync", ["-c", "fsync", N, "FILE"], "fsync", False, "write back"),
    ("overwrite-fsync", ["-W", "-c", "fsync", N, "FILE"], "fsync", False, "write back"),
    ("append-fdatasync", ["-W", "-A", "-c", "fdatasync", N, "FILE"], "fsync", False,
     "write back"),
    ("o_sync-writes", ["-S", "sync", "-c", "pwrite", N, "FILE"], "write", False, "write back"),
    ("o_dsync-writes", ["-S", "dsync", "-c", "pwrite", N, "FILE"], "write", False, "write back"),
    ("4-threads-fsync", ["-t", "4", "-W", "-c", "fsync", N, "FILE"], "fsync", False,
     "write back"),
    ("write-through", ["-W", "-c", "fsync", N, "FILE"], "fsync", False, "write through"),
    ("journal-overwrite-fsync", ["-W", "-c", "fsync", N, "FILE"], "fsync", True, "write back"),
    ("journal-append-fdatasync", ["-W", "-A", "-c", "fdatasync", N, "FILE"], "fsync", True,
     "write back"),
]


class DeviceFlushes(FtraceInstance):
    """Counts the device flushes the kernel completes on one disk, by its own
    tracepoint through ftrace: an independent count, no BPF."""

    def __init__(self, dev_t):
        super().__init__("flush", [("block", "block_rq_complete")], f"dev == {dev_t}")

    def stop(self):
        text = super().stop()
        # rwbs of a device flush: "FF" (REQ_OP_FLUSH | REQ_PREFLUSH)
        return sum(1 for line in text.splitlines() if "block_rq_complete:" in line
                   and line.split("block_rq_complete:")[1].split()[1] == "FF")


def op_totals(report, layer="blk"):
    """Per op, the count summed over a report's cells (any breakdown). A
    -P cell of requests written back for its process (their pages' dirtier:
    the data pages a journal commit writes for the workload) counts
    requests their submitter's cell has counted already: left out."""
    out = {}
    for c in report["cells"]:
        if c["layer"] == layer and not c.get("writeback"):
            out[c["op"]] = out.get(c["op"], 0) + c["count"] + c.get("errors", 0)
    return out


def run_pattern(name, args, sysop, journal, cache, tmp):
    """Runs one pattern; returns the figures of the window."""
    loop = LoopDevice(tmp, size_mib=256, name=f"{name}.img")
    mnt = os.path.join(tmp, name)
    os.mkdir(mnt)
    ftr = work = None
    tools = []
    try:
        # No lazy init: no background writer on the disk during the window.
        feats = [] if journal else ["-O", "^has_journal"]
        run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
            *feats, loop.dev, check=True)
        with open(f"/sys/block/{loop.name}/queue/write_cache", "w") as f:
            f.write(cache)
        # No block bitmap prefetch either: ext4lazyinit would read them
        # in the background, into the tools' start-up.
        p = mount("-o", "no_prefetch_block_bitmaps", loop.dev, where=mnt)
        assert p.returncode == 0, p.stderr
        path = os.path.join(mnt, "f")
        work = Work(*[path if a == "FILE" else str(a) for a in args])
        # Whatever setup left dirty goes out before the tools' window opens.
        run("sync")
        time.sleep(0.3)
        d = ["-d", loop.name, "--json"]
        # Those that time from the origin first, those that see a request
        # first at issue after: a request already started when the first
        # attached would be seen by the latter alone.
        tools = {
            "P": Tool("-T", "blk", "-P", *d),
            "Q": Tool("-T", "blk", "-Q", *d),
            "p": Tool("-T", "syscall,blk", "-p", str(work.pid), "--slower=0", *d),
            "D": Tool("-T", "blk", "-D", *d),
            "F": Tool("-T", "blk", "-F", *d),
            "plain": Tool("-T", "blk", *d),
        }
        ftr = DeviceFlushes(kernel_dev_t(loop.name))
        before = diskstats_writes(loop.name)
        ftr.start()
        work.go()
        result = work.finish()
        assert int(result["done"]) == N, result
        time.sleep(0.3)
        after = diskstats_writes(loop.name)
        device_flushes = ftr.stop()
        lines = {k: t.stop_json() for k, t in tools.items()}
        reports = {k: v[-1] for k, v in lines.items()}
        tools = {}
        return {
            "events": [e for e in lines["p"] if e.get("event") == "io"],
            "diskstats": tuple(a - b for a, b in zip(after, before)),
            "device_flushes": device_flushes,
            "reports": reports,
            "sysop": sysop,
        }
    finally:
        for t in (tools.values() if isinstance(tools, dict) else []):
            with contextlib.suppress(Exception):
                t.stop()
        if ftr:
            ftr.close()
        if work:
            work.stop()  # it holds its file open: the unmount waits for it
        unmount(mnt)  # checked: the loop device is detached next
        loop.close()


def check_pattern(name, fig):
    ws, wsect, dflush = fig["diskstats"]
    r = fig["reports"]
    plain = op_totals(r["plain"])
    what = f"{name}: diskstats {fig['diskstats']}, device flushes {fig['device_flushes']}"
    # The stated relation: write = diskstats' writes (an empty PREFLUSH write
    # counted as the kernel does), flush = the flushes the device completed,
    # each counted or counted missed (harness.check_blk_ops).
    assert fig["device_flushes"] == dflush, what
    check_blk_ops(r["plain"], plain, {"write": ws, "flush": dflush}, what)
    for key in ("P", "D", "F", "Q"):
        got = op_totals(r[key])
        for op in set(plain) | set(got):
            assert got.get(op, 0) == plain.get(op, 0), \
                f"{what}: -{key} {op} {got.get(op, 0)} != plain {plain.get(op, 0)}"
        # A key that found no room would be counted here, not lost.
        assert r[key]["dropped_by_reason"]["breakdown_map_full"] == 0, f"{what}: -{key}"
    own = op_totals(r["p"])
    # The workload's own count: its N calls (iowork's result line goes to
    # a pipe, left out), and every one of them an event (--slower=0).
    calls = cell(r["p"], "syscall", fig["sysop"])["count"]
    assert calls == N, f"{what}: -p saw {calls} {fig['sysop']} calls"
    # Completions the kernel ran no program for (harness.check_blk_ops;
    # every tool misses the same ones): 0 but on a host that hides some.
    missed = r["plain"]["dropped_by_reason"]["request_completion_missed"]
    if fig["device_flushes"] and "journal" not in name:
        # No journal: the process asked for every flush the disk did.
        check_blk_ops(r["p"], {"write": own.get("write", 0), "flush": own.get("flush", 0)},
                      {"write": ws, "flush": dflush}, f"{what}: -p")
    # Each call's own flushes, in its event: every flush its requests
    # waited for, asked for first or shared (4 threads: each waiter has
    # it), none on a write-through disk. Without a journal those are all
    # the disk's flushes. With one, the commits' flushes are the journal
    # thread's (journal_blk); a call's own PREFLUSH may share a flush the
    # commit asked for first, which -p then leaves to the commit: at
    # least -p's flushes, at most one a call.
    events = [e for e in fig["events"] if e["op"] == fig["sysop"]]
    assert len(events) == N, f"{what}: {len(events)} events for {N} calls"
    flushes = sum(e["blk"]["flushes"] for e in events)
    assert all(e["blk"]["flushes"] <= e["blk"]["requests"] for e in events), what
    # Sectors: without a journal every write request on the disk is one
    # of the process's calls', so the bytes of the calls' requests are the
    # sectors diskstats counts (* 512); an empty PREFLUSH write adds a
    # write and no bytes, in both.
    # A missed completion leaves its call's event without that request:
    # the events' sums are then short by at most the missed ones.
    if "journal" not in name:
        data = sum(e["blk"]["bytes"] for e in fig["events"])
        assert data == wsect * 512 or (missed and data < wsect * 512), \
            f"{what}: the calls' request bytes {data}, {missed} missed"
    if "journal" not in name and "threads" not in name:
        assert fig["device_flushes"] - missed <= flushes <= fig["device_flushes"], \
            f"{what}: events' own flushes {flushes}, {missed} missed"
    elif "threads" in name:
        assert fig["device_flushes"] <= flushes <= calls, f"{what}: events' own flushes {flushes}"
    else:
        # A completion no program ran for (missed, above) leaves its call's
        # event without that request, and a flush that followed it without
        # its caller: once -p counted 17 flushes and the events 16, with 1
        # completion missed in the window.
        assert own.get("flush", 0) - missed <= flushes <= calls, \
            f"{what}: events' own flushes {flushes}, -p {own}, {missed} missed"


def table_row(name, fig):
    r = fig["reports"]
    plain, own = op_totals(r["plain"]), op_totals(r["p"])
    pre = sum(c["count"] for c in r["F"]["cells"] if c["layer"] == "blk" and c["op"] == "write"
              and "preflush" in c.get("flags", []))
    ws, wsect, dflush = fig["diskstats"]
    return (f"{name:26} tool write {plain.get('write', 0):4} (preflush-only {pre:3}) "
            f"flush {plain.get('flush', 0):4} | -p write {own.get('write', 0):4} "
            f"flush {own.get('flush', 0):4} | diskstats writes {ws:4} sectors {wsect:6} "
            f"flushes {dflush:4} | device flushes {fig['device_flushes']:4}")


def _pattern_test(pattern):
    name = pattern[0]

    def test():
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            fig = run_pattern(*pattern, tmp)
        print("   ", table_row(name, fig))
        check_pattern(name, fig)

    test.__name__ = "flush_relation_" + name.replace("-", "_")
    return test


for _pattern in PATTERNS:
    test(_pattern_test(_pattern))


def strace_sync_counts(path):
    """fsync and fdatasync calls from strace -c's summary table."""
    calls = {"fsync": 0, "fdatasync": 0}
    with open(path) as f:
        for line in f:
            v = line.split()
            if v and v[-1] in calls:
                # % time, seconds, usecs/call, calls, [errors,] syscall
                calls[v[-1]] = int(v[3])
    return calls


def redis_fdatasyncs_have_one_flush_each():
    """Redis with appendfsync always, its AOF on an ext4 (no journal) of its
    own: under -p its fdatasyncs equal strace's, and it shows one flush and
    one empty PREFLUSH write per fdatasync, equal to the disk's flushes."""
    for prog in ("redis-server", "redis-benchmark", "strace"):
        if not shutil.which(prog):
            raise Skip(f"{prog} missing (scripts/install-test-deps.sh installs it)")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=256, name="redis.img")
        mnt = os.path.join(tmp, "mnt")
        os.mkdir(mnt)
        server = strace = tool = None
        try:
            run("mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E",
                "lazy_itable_init=0,lazy_journal_init=0", loop.dev, check=True)
            p = mount("-o", "no_prefetch_block_bitmaps", loop.dev, where=mnt)
            assert p.returncode == 0, p.stderr
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            server = Process(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", mnt,
                 "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                 "--daemonize", "no", "--logfile", os.path.join(tmp, "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if run("redis-cli", "-p", str(port), "ping").stdout.strip() == "PONG":
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("redis-server did not answer PING")
            run("sync")
            time.sleep(0.3)
            tool = Tool("-T", "syscall,blk", "-p", str(server.pid), "-F", "--json")
            tids = os.listdir(f"/proc/{server.pid}/task")
            st_out = os.path.join(tmp, "strace.txt")
            strace = Process(
                ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", st_out,
                 *[a for t in tids for a in ("-p", t)]],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)  # strace attaches
            before = diskstats_writes(loop.name)
            bench = run("redis-benchmark", "-p", str(port), "-t", "set", "-n", "3000", "-c",
                        "4", "-q", timeout=300)
            assert bench.returncode == 0, bench.stderr
            time.sleep(0.3)
            after = diskstats_writes(loop.name)
            strace.send_signal(signal.SIGINT)
            strace.wait(timeout=30)
            strace = None
            rep = tool.stop_json()[-1]
            tool = None
        finally:
            if strace:
                strace.kill()
                strace.wait()
            if tool:
                tool.stop()
            if server:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=30)
            unmount(mnt)  # checked: the loop device is detached next
            loop.close()
        calls = strace_sync_counts(st_out)
        syncs = calls["fsync"] + calls["fdatasync"]
        own = op_totals(rep)
        pre = sum(c["count"] for c in rep["cells"] if c["layer"] == "blk"
                  and c["op"] == "write" and "preflush" in c.get("flags", []))
        flushes = after[2] - before[2]
        print(f"    redis: strace {calls}, -p syscall fsync "
              f"{cell(rep, 'syscall', 'fsync')['count']}, blk {own}, preflush-only {pre}, "
              f"diskstats flushes {flushes}")
        assert calls["fdatasync"] > 100, calls
        assert cell(rep, "syscall", "fsync")["count"] == syncs, (calls, rep["cells"])
        # Each sync's empty PREFLUSH write and its flush. A completion the
        # kernel ran no program for (harness.check_blk_count) is one of
        # redis's requests the report cannot name, a data write, a PREFLUSH
        # write or a flush: each count is short by at most those, and none
        # is missed but on a host that hides completions.
        assert flushes == syncs, (flushes, syncs)
        missed = rep["dropped_by_reason"]["request_completion_missed"]
        assert missed == 0 or host_hides_completions(), missed
        assert syncs - missed <= pre <= syncs, (pre, syncs, missed)
        assert syncs - missed <= own.get("flush", 0) <= syncs, (own, syncs, missed)
        assert (syncs - pre) + (syncs - own.get("flush", 0)) <= missed, (pre, own, missed)


test(redis_fdatasyncs_have_one_flush_each)
