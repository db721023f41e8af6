"""Single calls: --slower events, the --file filter and the --trace timeline.

Every count is checked against the workload's own: iowork does exactly N
calls of a kind on a known file at known offsets, and the tool traces its
process alone (-p)."""

import json
import os
import select
import signal
import subprocess
import tempfile
import time

from harness import TOOL, LoopDevice, Tool, Work, cell, check_blk_count, diskstats
from harness import test
from harness import Process

SIZE = 4096



def traced(work_args, tool_args):
    """iowork held until the tool (-p) is attached; returns (events, final
    report, the workload's result, the tool's stderr)."""
    work = Work("-x", *work_args)
    tool = Tool(*tool_args, "-p", str(work.pid), "--json")
    work.go()
    result = work.finish_held()
    work.release()
    rc, out, err = tool.wait(timeout=120)
    assert rc == 0, err
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    events = [o for o in lines if o.get("event") == "io"]
    reports = [o for o in lines if "cells" in o]
    assert reports, out
    return events, reports[-1], result, err


def make_file(tmp, name, blocks):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(os.urandom(blocks * SIZE))
    return path


@test
def slower_zero_names_every_call():
    """--slower=0 over N cached preads: N events, each with the workload's
    pid, tid and name, the file's name, the offsets and sizes it used."""
    n = 300
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = make_file(tmp, "known.dat", 64)
        events, rep, result, err = traced(["pread", str(n), path],
                                          ("-T", "syscall", "--slower=0"))
    reads = [e for e in events if e["op"] == "read"]
    assert len(reads) == n == int(result["done"]), (len(reads), result)
    assert cell(rep, "syscall", "read")["count"] == n
    pid = int(result["pid"])
    offsets = sorted(e["offset"] for e in reads)
    # iowork cycles through the file: offset i*SIZE mod its 64 blocks.
    assert offsets == sorted((i % 64) * SIZE for i in range(n)), offsets[:10]
    for e in reads:
        assert e["pid"] == pid and e["tid"] != 0 and e["comm"] == "iowork", e
        assert e["file"] == "known.dat" and e["layer"] == "syscall", e
        assert e["bytes"] == SIZE and e["ret"] == SIZE, e
        assert e["latency_ns"] > 0 and sum(e["parts"].values()) == e["latency_ns"], e
        assert e["blk"]["requests"] == 0, e
    assert len({e["tid"] for e in reads}) == 1, "one worker thread did them all"
    assert rep["lost"] == 0 and rep["dropped_by_reason"]["event_lost"] == 0, rep
    assert "0 events lost" in err, err


@test
def slower_threshold_keeps_only_slow_calls():
    """A threshold between two workloads' calls: every event at or above
    it, and as many as the histogram holds above it (bounded by the
    buckets around it). At 5 us it has calls on both sides whatever the
    machine's load (measured with --slower=0, three runs): O_DIRECT reads
    of a loop device take 8.3-11.5 us at the least (their request goes
    through the loop device's worker thread), 4 KiB preads of a cached file
    0.5-1.2 us at the median."""
    n, threshold = 400, 5000
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            works = [Work("-x", "-D", "pread", str(n), loop.dev),
                     Work("-x", "pread", str(n), make_file(tmp, "cached.dat", 64))]
            tool = Tool("-T", "syscall", f"--slower={threshold // 1000}us", "--json",
                        "-p", ",".join(str(w.pid) for w in works))
            for w in works:
                w.go()
            for w in works:
                assert int(w.finish_held()["done"]) == n
            for w in works:
                w.release()
            rc, out, err = tool.wait(timeout=120)
            assert rc == 0, err
        finally:
            loop.close()
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    events = [o for o in lines if o.get("event") == "io"]
    rep = [o for o in lines if "cells" in o][-1]
    reads = [e for e in events if e["op"] == "read"]
    c = cell(rep, "syscall", "read")
    assert c["count"] == 2 * n
    surely = sum(b["count"] for b in c["buckets"] if b["lo_ns"] >= threshold)
    maybe = sum(b["count"] for b in c["buckets"]
                if b["hi_ns"] is None or b["hi_ns"] > threshold)
    direct = sum(1 for e in reads if e["pid"] == works[0].pid)
    print(f"    {len(reads)} of {2 * n} reads at or above {threshold} ns ({direct} direct); "
          f"the histogram: {surely} surely, {maybe} maybe", flush=True)
    # Calls on both sides of the threshold: the checks below hold something.
    assert 0 < len(reads) < 2 * n, (len(reads), direct)
    assert all(e["latency_ns"] >= threshold for e in events), events
    assert surely <= len(reads) <= maybe, (surely, len(reads), maybe)


@test
def slower_sees_no_fast_calls():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = make_file(tmp, "fast.dat", 16)
        events, rep, _, err = traced(["pread", "2000", path], ("-T", "syscall", "--slower=50ms"))
    assert cell(rep, "syscall", "read")["count"] == 2000
    assert [e for e in events if e["op"] == "read"] == [], events[:3]
    assert "0 calls received, 0 events lost" in err, err


@test
def direct_reads_carry_their_request():
    """O_DIRECT reads of a loop device: each event has the one request of
    its size that the call submitted, on that disk; the disk agrees."""
    n = 200
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            r0 = diskstats(loop.name)[0]
            events, rep, _, _ = traced(["-D", "pread", str(n), loop.dev],
                                       ("-T", "syscall,blk", "-d", loop.name, "--slower=0"))
            r1 = diskstats(loop.name)[0]
        finally:
            loop.close()
    reads = [e for e in events if e["op"] == "read"]
    assert len(reads) == n == r1 - r0, (len(reads), n, r1 - r0)
    # Each block read counted, or missed where the kernel hid it from BPF.
    check_blk_count(rep, cell(rep, "blk", "read")["count"], n, "-d blk reads")
    for e in reads:
        assert e["file"] == loop.name, e
        b = e["blk"]
        assert b["requests"] == 1 and b["bytes"] == SIZE and b["disk"] == loop.name, e
        assert 0 < b["max_ns"] <= e["latency_ns"], e
        # It waits off CPU for its request, unless the request completed
        # before the call went to sleep (the loop worker on the other CPU
        # took 62 us once): then the call was on CPU all along, its own
        # time covering the request's.
        p = e["parts"]
        assert p["io_wait"] > 0 or p["runqueue"] > 0 or p["syscall"] >= b["max_ns"], e


@test
def file_filter_counts_only_that_file():
    """One process reads two disks and a file: --file keeps exactly the
    calls on the one named, at the syscall layer and for its requests."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        other = make_file(tmp, "other.dat", 16)
        loop = LoopDevice(tmp)
        loop2 = LoopDevice(tmp, name="disk2.img")
        try:
            r0 = diskstats(loop.name)[0]
            o0 = diskstats(loop2.name)[0]
            events, rep, _, _ = traced(
                ["pread/D", "150", loop.dev, "pread/D", "230", loop2.dev, "pread", "170", other],
                ("-T", "syscall,blk", f"--file={loop.dev}", "--slower=0"))
            r1 = diskstats(loop.name)[0]
            o1 = diskstats(loop2.name)[0]
        finally:
            loop.close()
            loop2.close()
    assert o1 - o0 == 230, "the other disk was read"
    assert cell(rep, "syscall", "read")["count"] == 150, rep
    # Every block read of the named device came from a call on it; the
    # other disk's 230 reads are left out.
    assert r1 - r0 == 150, (r0, r1)
    check_blk_count(rep, cell(rep, "blk", "read")["count"], 150, "--file blk reads")
    assert cell(rep, "syscall", "write")["count"] == 0, "the result line is not on the file"
    assert {e["file"] for e in events} == {loop.name}, {e["file"] for e in events}
    assert len(events) == 150


@test
def file_filter_matches_opens_by_what_they_return():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        a = make_file(tmp, "a.dat", 4)
        b = make_file(tmp, "b.dat", 4)
        events, rep, _, _ = traced(["open", "120", a, "open", "80", b, "pread", "50", a],
                                   ("-T", "syscall", f"--file={b}", "--slower=0", "--full-path"))
    assert cell(rep, "syscall", "open")["count"] == 80, rep
    assert cell(rep, "syscall", "read")["count"] == 0, rep
    opens = [e for e in events if e["op"] == "open"]
    assert len(opens) == 80 and {e["file"] for e in opens} == {os.path.realpath(b)}, opens[:2]


@test
def full_path_names_the_whole_path():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        deep = os.path.join(tmp, "one", "two")
        os.makedirs(deep)
        path = make_file(deep, "three.dat", 4)
        events, _, _, _ = traced(["pread", "20", path],
                                 ("-T", "syscall", "--slower=0", "--full-path"))
    reads = [e for e in events if e["op"] == "read"]
    assert len(reads) == 20 and {e["file"] for e in reads} == {os.path.realpath(path)}, reads[0]


def trace_of(path):
    with open(path) as f:
        return json.load(f)


def slices(trace, cat=None, name=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"
            and (cat is None or e.get("cat") == cat) and (name is None or e["name"] == name)]


def check_nesting(trace):
    """Every slice on a thread lies within a call of its thread, every
    request has a flow back to the call that submitted it."""
    calls = {}
    for e in slices(trace, cat="syscall"):
        calls.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    eps = 0.0015  # the file's microseconds are rounded to the nanosecond
    for e in slices(trace):
        if e["cat"] in ("syscall", "blk"):
            continue
        assert any(s - eps <= e["ts"] and e["ts"] + e["dur"] <= t + eps
                   for s, t in calls.get(e["tid"], [])), f"slice outside its call: {e}"
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {(e["pid"], e["tid"], e["ts"]): e for e in trace["traceEvents"] if e["ph"] == "f"}
    for rq in slices(trace, cat="blk"):
        f = ends.get((rq["pid"], rq["tid"], rq["ts"]))
        assert f is not None, f"request without a flow: {rq}"
        s = starts[f["id"]]
        assert any(a - eps <= s["ts"] <= b + eps for a, b in calls.get(s["tid"], [])), s


@test
def trace_file_nests_calls_and_requests():
    n = 150
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        out = os.path.join(tmp, "trace.json")
        try:
            _, rep, _, err = traced(["-D", "pread", str(n), loop.dev],
                                    ("-T", "syscall,blk", "-d", loop.name, f"--trace={out}"))
        finally:
            loop.close()
        trace = trace_of(out)
    reads = slices(trace, cat="syscall", name="read")
    assert len(reads) == n, len(reads)
    check_blk_count(rep, cell(rep, "blk", "read")["count"], n, "--trace blk reads")
    # A request the kernel hid the completion of has no slice: as many
    # fewer as the report counted missed.
    rqs = slices(trace, cat="blk")
    missed = rep["dropped_by_reason"]["request_completion_missed"]
    assert len(rqs) + missed == n and all(r["args"]["bytes"] == SIZE for r in rqs), rqs[:2]
    assert slices(trace, cat="offcpu"), "O_DIRECT reads wait off CPU"
    check_nesting(trace)
    meta = {(e["name"], e["args"]["name"]) for e in trace["traceEvents"] if e["ph"] == "M"}
    assert ("thread_name", "iowork") in meta and ("process_name", f"disk {loop.name}") in meta
    other = trace["otherData"]
    assert other["lost_ring_buffer"] == 0 and other["lost_trace_max"] == 0, other
    assert f"trace {out}" in err, err


@test
def trace_honours_slower_and_its_bound():
    n = 300
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        out = os.path.join(tmp, "trace.json")
        try:
            # 5 us: below every O_DIRECT read of a loop device (8.3 us at
            # the least, slower_threshold_keeps_only_slow_calls), so the
            # trace has reads to check whatever the machine's load.
            events, rep, _, _ = traced(["-D", "pread", str(n), loop.dev],
                                       ("-T", "syscall,blk", "--slower=5us", f"--trace={out}"))
        finally:
            loop.close()
        trace = trace_of(out)
        reads = slices(trace, cat="syscall", name="read")
        print(f"    {len(reads)} of {n} direct reads in the trace", flush=True)
        assert reads, "no read at or above the threshold in the trace"
        assert all(e["dur"] >= 5 for e in reads), reads
        assert len(reads) == len([e for e in events if e["op"] == "read"]), len(reads)
        check_nesting(trace)
        # Bounded to 50 trace events: the rest are counted. Without the
        # off-CPU parts the file would hold exactly 500 calls, the process's
        # name and its worker thread's (the main thread's one call, the
        # result line's write, goes to a pipe: left out, so no name).
        work = Work("-x", "pread", "500", make_file(tmp, "b.dat", 8))
        bounded = os.path.join(tmp, "bounded.json")
        tool = Tool("-T", "syscall", "--no-offcpu", f"--trace={bounded}", "--trace-max=50",
                    "-p", str(work.pid))
        work.go()
        work.finish_held()
        work.release()
        rc, _, err = tool.wait()
        assert rc == 0, err
        small = trace_of(bounded)
        assert len(small["traceEvents"]) == 50, len(small["traceEvents"])
        assert small["otherData"]["lost_trace_max"] == 500 + 2 - 50, small["otherData"]


@test
def slow_reader_loses_events_and_counts_them():
    """A million calls, every one an event, into a reader that waits: the
    ring buffer fills, and every call is either an event or counted lost."""
    n = 1000000
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = make_file(tmp, "many.dat", 16)
        work = Work("-x", "pread", str(n), path)
        tool = Process([TOOL, "-T", "syscall", "--slower=0", "--json", "-p",
                                 str(work.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = b""
        while b"Hit Ctrl-C" not in err:
            ready, _, _ = select.select([tool.stderr], [], [], 30)
            assert ready, f"the tool did not start: {err}"
            err += os.read(tool.stderr.fileno(), 4096)
        io0 = work.io()
        work.go()
        work.finish_held()
        # The kernel's own count of the process's read calls (syscr), its
        # n preads of a storage file: each an event or counted lost.
        reads = work.io()["syscr"] - io0["syscr"]
        time.sleep(2)  # the tool is blocked on a full pipe meanwhile
        work.release()
        out, rest = tool.communicate(timeout=300)
        err = (err + rest).decode()
    assert tool.returncode == 0, err
    lines = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    events = [o for o in lines if o.get("event") == "io"]
    rep = [o for o in lines if "cells" in o][-1]
    calls = sum(c["count"] for c in rep["cells"] if c["layer"] == "syscall")
    assert cell(rep, "syscall", "read")["count"] == n
    assert rep["lost"] > 0, "a reader this slow must lose events"
    assert reads == n, reads
    assert calls == n, (calls, rep["cells"])
    assert len(events) + rep["lost"] == reads, (len(events), rep["lost"], reads)
    assert f"{rep['lost']} events LOST" in err, err
