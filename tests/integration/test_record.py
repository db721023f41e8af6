"""--record and iostackbreak report FILE: a run traced live and recorded at
once, then its recording reported again with the live run's options. The
report of the recording must be the live report field for field (counts,
histograms, breakdowns), its --slower=0 events and its --trace the live
ones line for line, and the counts the workload's own (fio) and the disk's
(/proc/diskstats). Bad files get one line on stderr and a non-zero exit; a
file cut short is read up to its last whole record."""

import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time

from harness import TOOL, LoopDevice, Process, Tool, check_blk_count, disk_stats
from harness import cell, run, test

EV_CALL = 1
HEADER_FIXED = 8 + 4 + 4 + 4  # magic, version, byte order, header length


def fio_cmd(dev, out, bs="4k", rw="randrw", loops=1):
    """Direct random reads and writes of bs, one request each on the loop
    device, psync QD1; fio's own count in its JSON (out)."""
    return ["fio", f"--filename={dev}", "--direct=1", f"--bs={bs}", "--ioengine=psync",
            f"--rw={rw}", "--size=6M", f"--loops={loops}", "--name=r", "--output-format=json",
            f"--output={out}"]


def fio_ios(out):
    with open(out) as f:
        text = f.read()
    jobs = json.loads(text[text.index("{"):])["jobs"]
    return (sum(j["read"]["total_ios"] for j in jobs),
            sum(j["write"]["total_ios"] for j in jobs))


def live_and_recorded(tmp, loop, view, name):
    """The workload under the tool with view options, recorded; returns
    (report file, events on stdout, trace file, recording, fio's ios,
    diskstats delta (reads, writes))."""
    rec = os.path.join(tmp, f"{name}.rec")
    rep = os.path.join(tmp, f"{name}.report")
    trace = os.path.join(tmp, f"{name}.trace.json")
    fio_out = os.path.join(tmp, f"{name}.fio.json")
    before = disk_stats(loop.name)
    tool = Tool("-T", "syscall,blk", *view, "--slower=0", f"--trace={trace}",
                f"--record={rec}", "-o", rep, "--", *fio_cmd(loop.dev, fio_out))
    rc, out, err = tool.wait(timeout=180)
    assert rc == 0, err
    after = disk_stats(loop.name)
    assert "events lost" in err and " 0 events lost" in err, err
    return (rep, out, trace, rec, fio_ios(fio_out),
            (after.reads - before.reads, after.writes - before.writes), err)


def report_of(rec, view, name, tmp):
    """iostackbreak report REC with the same views: (report, events, trace)."""
    rep = os.path.join(tmp, f"{name}.replay.report")
    trace = os.path.join(tmp, f"{name}.replay.trace.json")
    p = run(TOOL, "report", rec, *view, "--slower=0", f"--trace={trace}", "-o", rep,
            timeout=120)
    assert p.returncode == 0, p.stderr
    return rep, p.stdout, trace


def total(rep, layer, op):
    """A cell's count over every key: "totals" when broken down (-P, -D)."""
    return cell({"cells": rep.get("totals") or rep["cells"]}, layer, op)["count"]


def on_disk(rep, op, disk):
    """-D: the blk count of op on one disk (fio's process reads its own
    files from other disks too)."""
    return sum(c["count"] for c in rep["cells"]
               if c["layer"] == "blk" and c["op"] == op and c.get("disk") == disk)


def read(path):
    with open(path) as f:
        return f.read()


def trace_events(path):
    """The trace's events in file order; the writer's own metadata kept."""
    return json.loads(read(path))


@test
def record_json_breakdowns_events_and_trace_equal_live():
    """-P -D --json: the recording's JSON report equals the live one, whole
    (the trailer carries the live report's time and interval, so not one
    field differs, not even those that are by nature run-specific: "time",
    "interval_s"); the --slower=0 event lines and the --trace file equal
    the live ones; blk counts + missed = fio's count = diskstats; every
    syscall read and write of fio is an event."""
    view = ["-P", "-D", "--json"]
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=16)
        try:
            rep, out, trace, rec, ios, delta, err = live_and_recorded(tmp, loop, view, "j")
            rrep, rout, rtrace = report_of(rec, view, "j", tmp)
            live = json.loads(read(rep))
            again = json.loads(read(rrep))
            assert again == live, diff_keys(live, again)
            assert rout == out, "the --slower=0 events differ"
            assert trace_events(rtrace) == trace_events(trace), "the traces differ"
            assert ios == delta, (ios, delta)  # fio and diskstats agree
            check_blk_count(live, on_disk(live, "read", loop.name), delta[0], "blk reads")
            check_blk_count(live, on_disk(live, "write", loop.name), delta[1], "blk writes")
            events = [json.loads(line) for line in out.splitlines() if line.strip()]
            for op in ("read", "write"):
                n = sum(1 for e in events if e.get("op") == op)
                assert n == total(live, "syscall", op), (op, n, total(live, "syscall", op))
                assert n >= ios[0 if op == "read" else 1], (op, n, ios)
            print(f"    fio {ios}, diskstats {delta}, {len(events)} events, "
                  f"recording {os.path.getsize(rec)} bytes", flush=True)
        finally:
            loop.close()


@test
def record_text_report_equals_live():
    """The text report (-P -D, and without breakdowns) of the recording is
    the live one, byte for byte, and so are the --slower=0 text lines."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=16)
        try:
            for name, view in (("t", ["-P", "-D"]), ("plain", [])):
                rep, out, trace, rec, ios, delta, err = live_and_recorded(tmp, loop, view, name)
                rrep, rout, rtrace = report_of(rec, view, name, tmp)
                assert read(rrep) == read(rep), (read(rep), read(rrep))
                assert rout == out, "the --slower=0 text lines differ"
                assert trace_events(rtrace) == trace_events(trace)
                assert ios == delta, (ios, delta)
        finally:
            loop.close()


def diff_keys(a, b, path=""):
    """Where two JSON values first differ, for the assertion's message."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return diff_keys(a.get(k), b.get(k), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return diff_keys(x, y, f"{path}[{i}]")
    return f"{path}: {str(a)[:300]} != {str(b)[:300]}"


def records(data):
    """(offset, length, type, first payload byte) of each record (Python's
    own reading of docs/record.md)."""
    hlen = struct.unpack_from("<I", data, 16)[0]
    off = HEADER_FIXED + hlen
    out = []
    while off + 4 <= len(data):
        n = struct.unpack_from("<I", data, off)[0]
        if off + 4 + n > len(data):
            break
        typ = struct.unpack_from("<I", data, off + 4)[0]
        out.append((off, n, typ, data[off + 8] if n > 4 else None))
        off += 4 + n
    return out


def report_rc(path, *args):
    p = run(TOOL, "report", path, *args, timeout=60)
    return p.returncode, p.stdout, p.stderr


@test
def record_bad_files_one_line_and_a_cut_file_reads_to_its_last_record():
    """Bad magic, a newer version and a corrupt record length: exit 1 and one
    line naming the file. A file cut inside a record: exit 0, one line that
    it is cut short, and the report counts exactly the calls of the whole
    records before the cut (counted here from the file's bytes)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        rec = os.path.join(tmp, "small.rec")
        data_file = os.path.join(tmp, "data")
        tool = Tool("-T", "syscall", f"--record={rec}", "--json", "--",
                    "dd", "if=/dev/zero", f"of={data_file}", "bs=4k", "count=200")
        rc, out, err = tool.wait(timeout=60)
        assert rc == 0, err
        data = open(rec, "rb").read()
        recs = records(data)
        assert recs and recs[-1][2] == 2, "no trailer"
        live = json.loads(out.splitlines()[-1])
        rc, rout, rerr = report_rc(rec, "--json")
        assert rc == 0, rerr
        assert json.loads(rout) == live, diff_keys(live, json.loads(rout))

        def variant(name, blob):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(blob)
            return path

        bad = [("magic", b"X" + data[1:], "no magic"),
               ("newer", data[:8] + struct.pack("<I", 99) + data[12:], "newer"),
               ("length", data[:recs[3][0]] + struct.pack("<I", 0xFFFFFFF0)
                + data[recs[3][0] + 4:], "corrupt recording")]
        for name, blob, words in bad:
            path = variant(name, blob)
            rc, rout, rerr = report_rc(path)
            lines = rerr.strip().splitlines()
            assert rc == 1 and len(lines) == 1 and words in lines[0] and path in lines[0], \
                (name, rc, rerr)
            assert not rout, (name, rout)
        # Cut in the middle of the 60th record: the 59 before it are whole.
        cut_at = recs[59][0] + 4 + recs[59][1] // 2
        whole = recs[:59]
        calls = {}
        for off, n, typ, kind in whole:
            if typ == 1 and kind == EV_CALL:
                op = data[off + 8 + 2]
                calls[op] = calls.get(op, 0) + 1
        path = variant("cut", data[:cut_at])
        rc, rout, rerr = report_rc(path, "--json")
        assert rc == 0, rerr
        notes = [line for line in rerr.splitlines() if "cut short" in line]
        assert len(notes) == 1 and "59 whole records" in notes[0], rerr
        cut = json.loads(rout)
        got = sum(c["count"] for c in cut["cells"] if c["layer"] == "syscall")
        assert got == sum(calls.values()), (got, calls)
        print(f"    {len(recs)} records; cut after 59: {got} calls", flush=True)


@test
def diff_names_the_layer_that_changed():
    """iostackbreak diff: a recording against the JSON report of its own run
    shows no change; a run of 4 KiB direct reads against one of 512 KiB
    reads (each request 128 times the bytes, on the same loop device, -d:
    that disk's requests alone; 45 loops, for enough reads to judge p99;
    blk's p99 stays within the noise: 4 KiB reads have a tail of their own)
    names blk read and syscall read as changed, by their percentiles."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=16)
        try:
            runs = {}
            for bs, loops in (("4k", 1), ("512k", 45)):
                rec = os.path.join(tmp, f"{bs}.rec")
                rep = os.path.join(tmp, f"{bs}.json")
                tool = Tool("-T", "syscall,blk", "-d", loop.name, "--json", f"--record={rec}",
                            "-o", rep, "--", *fio_cmd(loop.dev, os.path.join(tmp, f"{bs}.fio"),
                                                      bs, "randread", loops))
                rc, out, err = tool.wait(timeout=180)
                assert rc == 0, err
                runs[bs] = (rec, rep)
            p = run(TOOL, "diff", runs["4k"][0], runs["4k"][1])
            assert p.returncode == 0, p.stderr
            assert "No change beyond the noise." in p.stdout, p.stdout
            # The parts' shares, read from the recording and from the JSON
            # report of the same run, are the same to the point.
            lines = p.stdout.splitlines()
            at = lines.index(next(l for l in lines if l.startswith("OP     PART")))
            shares = [l.split() for l in lines[at + 1:] if l and l[0].isalpha()
                      and "%" in l]
            assert shares and all(r[-1] == "+0.0" for r in shares), p.stdout
            p = run(TOOL, "diff", runs["4k"][0], runs["512k"][1])
            assert p.returncode == 0, p.stderr
            changed = [l for l in p.stdout.splitlines() if l.startswith("Changed: ")]
            assert changed and "blk read: count p50 p90" in changed[0] \
                and "syscall read: " in changed[0] and "p50" in changed[0], p.stdout
            print("    " + changed[0], flush=True)
        finally:
            loop.close()


PHASES = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
print("READY", flush=True)
sys.stdin.readline()
for k, n in enumerate((100, 200, 300)):
    for _ in range(n):
        os.pread(fd, 4096, 0)
    print(f"phase {k} {n}", flush=True)
    if k < 2:
        time.sleep(3)
sys.stdin.readline()
"""


@test
def ring_keeps_only_the_last_seconds():
    """--record --ring=2: a workload of three phases of 100, 200 and 300
    preads, 3 s apart; SIGUSR1 right after the third writes a file holding
    the third phase alone (300 reads, the workload's own count), the two
    before being older than 2 s; the file written at the end, 3 s after the
    last read, holds none. A dump says on stderr that it holds no report's
    totals."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        data = os.path.join(tmp, "data")
        with open(data, "wb") as f:
            f.write(os.urandom(65536))
        rec = os.path.join(tmp, "ring.rec")
        work = Process(["python3", "-c", PHASES, data], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, text=True)
        assert work.stdout.readline().strip() == "READY"
        tool = Tool("-T", "syscall", "-p", str(work.pid), "--json", "-o", os.devnull,
                    f"--record={rec}", "--ring=2")
        work.stdin.write("go\n")
        work.stdin.flush()
        phases = [work.stdout.readline().split() for _ in range(3)]
        assert [p[2] for p in phases] == ["100", "200", "300"], phases
        tool.proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        dump = os.path.join(tmp, "dump.rec")
        shutil.copyfile(rec, dump)
        time.sleep(2)
        work.stdin.write("end\n")
        work.stdin.flush()
        work.wait(timeout=30)
        rc, out, err = tool.wait(timeout=60)
        assert rc == 0, err
        assert "the last 2 s" in err, err
        for path, want in ((dump, 300), (rec, 0)):
            p = run(TOOL, "report", path, "--json", timeout=60)
            assert p.returncode == 0, p.stderr
            assert "holds no report's totals" in p.stderr, p.stderr
            got = sum(c["count"] for c in json.loads(p.stdout)["cells"]
                      if c["layer"] == "syscall" and c["op"] == "read")
            assert got == want, (path, got, want)
        print(f"    dump after phase 3: 300 reads of 600; at the end: 0", flush=True)


@test
def record_blk_alone_equals_live():
    """-T blk -d LOOP -D, no layer of calls (no event of a call, only the
    requests' own): the recording's JSON report is the live one, and its
    counts are fio's and diskstats'."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=16)
        try:
            rec = os.path.join(tmp, "blk.rec")
            rep = os.path.join(tmp, "blk.json")
            fio_out = os.path.join(tmp, "blk.fio")
            before = disk_stats(loop.name)
            tool = Tool("-T", "blk", "-d", loop.name, "-D", "--json", f"--record={rec}",
                        "-o", rep, "--", *fio_cmd(loop.dev, fio_out))
            rc, out, err = tool.wait(timeout=180)
            assert rc == 0, err
            after = disk_stats(loop.name)
            delta = (after.reads - before.reads, after.writes - before.writes)
            p = run(TOOL, "report", rec, "-D", "--json", timeout=60)
            assert p.returncode == 0, p.stderr
            live, again = json.loads(read(rep)), json.loads(p.stdout)
            assert again == live, diff_keys(live, again)
            assert fio_ios(fio_out) == delta, (fio_ios(fio_out), delta)
            check_blk_count(live, on_disk(live, "read", loop.name), delta[0], "blk reads")
            check_blk_count(live, on_disk(live, "write", loop.name), delta[1], "blk writes")
        finally:
            loop.close()
