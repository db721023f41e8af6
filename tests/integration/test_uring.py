"""The io_uring layer against clients no one here wrote (fio) and against a
workload of known counts with no liburing (tools/uringwork.c): every
request counted once, by op; percentiles against fio's own; requests on
pipes and NOPs left out by default and counted with --all-fds."""

import json
import math
import os
import re
import subprocess

from harness import (ROOT, TOOL, FtraceInstance, LoopDevice, Skip, Tool, cell, check_blk_count,
                     count, diskstats,
                     diskstats_merged,
                     make_cgroup, make_tempdir, on_cleanup, run)
from harness import test
from harness import Process, run_process

URINGWORK = os.path.join(ROOT, "build", "uringwork")



def uringwork_under_tool(tmp, tool_args, work_args, prefix=()):
    """uringwork as the tool's command: (its report, its own counts).
    prefix: a command that execs it with its arguments after."""
    path = os.path.join(tmp, "uw.dat")
    p = run(TOOL, *tool_args, "--json", "--",
            *prefix, URINGWORK, *work_args, path, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    done = [l for l in lines if l.startswith("uringwork ")]
    assert done, p.stdout + p.stderr
    reports = [json.loads(l) for l in lines if l.startswith("{")]
    assert len(reports) == 1, p.stdout
    return reports[0], {k: int(v) for k, v in (kv.split("=") for kv in done[0].split()[1:])}


def uring_left_out(report, op):
    for o in report["left_out_by_op"]:
        if o["layer"] == "io_uring" and o["op"] == op:
            return o
    raise AssertionError(f"no io_uring {op} in left_out_by_op: {report['left_out_by_op']}")


WORK = ["-o", "3", "-w", "24", "-s", "5", "-r", "200", "-q", "8", "-p", "7", "-n", "9"]


@test
def uringlayer_counts_exact_with_raw_syscall_workload():
    """uringwork opens, writes, fsyncs and reads a file through its own ring
    (raw io_uring_setup/io_uring_enter), then reads a pipe and makes NOPs:
    each op counted exactly; the pipe reads and NOPs left out and counted
    by kind, then counted in the cells with --all-fds. Then the same from a
    SQPOLL ring, whose kernel thread submits: -p (the command) still
    follows its requests."""
    tmp = make_tempdir()
    for sqpoll in ([], ["-S"]):
        rep, did = uringwork_under_tool(tmp, ["-T", "io_uring"], WORK + sqpoll)
        got = {op: count(rep, "io_uring", op) for op in ("read", "write", "open", "fsync",
                                                          "other")}
        want = {"read": did["reads"], "write": did["writes"], "open": did["opens"],
                "fsync": did["fsyncs"], "other": 0}
        print(f"    {'sqpoll' if sqpoll else 'plain'}: got {got}, uringwork {want}")
        assert got == want, (got, want)
        assert uring_left_out(rep, "read")["pipe"] == did["pipe_reads"]
        assert uring_left_out(rep, "other")["other"] == did["nops"]
        assert rep["left_out"]["pipe"] == did["pipe_reads"], rep["left_out"]
        assert not any(rep["dropped_by_reason"].values()), rep["dropped_by_reason"]
    rep, did = uringwork_under_tool(tmp, ["-T", "io_uring", "--all-fds"], WORK)
    assert count(rep, "io_uring", "read") == did["reads"] + did["pipe_reads"]
    assert count(rep, "io_uring", "other") == did["nops"]
    assert count(rep, "io_uring", "fsync") == did["fsyncs"]


def uringwork(path, *args, prefix=()):
    """One uringwork run on path (made beforehand, so that --file can find
    it): its own counts and its pid (the tool's -P key)."""
    if not os.path.exists(path):
        open(path, "wb").close()
    p = Process([*prefix, URINGWORK, *args, path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    line = next(l for l in out.splitlines() if l.startswith("uringwork "))
    return {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}, p.pid


URING_OPS = ("read", "write", "open", "fsync")


def uring_counts(did):
    return {"read": did["reads"], "write": did["writes"], "open": did["opens"],
            "fsync": did["fsyncs"]}


@test
def uringlayer_filters_pick_the_submitter_and_the_file():
    """With no command, two uringworks run under each filter, one that it
    must keep and one that it must leave out: --cgroup (one of them in a
    cgroup the test made), --file (each on its own file: an open is the
    file's when the descriptor it made is, as for open(2)) and -P (each
    under its own pid, with its own counts). Every count is the kept
    one's own."""
    from test_breakdown import cgroup2_root
    root, _ = cgroup2_root()
    rel = f"/iosb-uringcg-{os.getpid()}"
    cg = make_cgroup(root + rel)
    tmp = make_tempdir()
    a, b = os.path.join(tmp, "a.dat"), os.path.join(tmp, "b.dat")
    inside = ["sh", "-c", f'echo $$ > "{cg}/cgroup.procs" && exec "$0" "$@"']

    tool = Tool("-T", "io_uring", "--cgroup", cg, "--json")
    kept, _ = uringwork(a, *WORK, prefix=inside)
    uringwork(b, *WORK)
    rep = tool.stop_json()[-1]
    got = {op: count(rep, "io_uring", op) for op in URING_OPS}
    print(f"    --cgroup: {got}, the one inside {uring_counts(kept)}")
    assert got == uring_counts(kept), (got, kept)

    open(a, "wb").close()
    tool = Tool("-T", "io_uring", "--file", a, "--json")
    kept, _ = uringwork(a, *WORK)
    uringwork(b, *WORK)
    rep = tool.stop_json()[-1]
    got = {op: count(rep, "io_uring", op) for op in URING_OPS}
    want = uring_counts(kept)
    print(f"    --file: {got}, the one on it {want}")
    assert got == want, (got, want)

    tool = Tool("-T", "io_uring", "-P", "--json")
    runs = [uringwork(p, *WORK) for p in (a, b)]
    rep = tool.stop_json()[-1]
    for did, pid in runs:
        got = {op: sum(c["count"] for c in rep["cells"] if c["layer"] == "io_uring"
                       and c["op"] == op and c["pid"] == pid) for op in URING_OPS}
        assert got == uring_counts(did), (pid, got, did)
        assert {c["comm"] for c in rep["cells"] if c["pid"] == pid} == {"uringwork"}
    print(f"    -P: each of pids {[pid for _, pid in runs]} exact")


@test
def uringlayer_in_prometheus_under_its_pid():
    """--prometheus -P: a uringwork's requests under layer="io_uring" and its
    pid, each op its own count, and its parts of requests
    (iostackbreak_uring_time_seconds_total, if any) in an exposition
    promtool accepts."""
    from test_prometheus import free_port, http_get, parse_exposition, promtool_check, value
    tmp = make_tempdir()
    port = free_port()
    tool = Tool("-T", "io_uring", "-P", f"--prometheus={port}")
    did, pid = uringwork(os.path.join(tmp, "p.dat"), *WORK)
    status, _, text = http_get(f"http://127.0.0.1:{port}/metrics")
    rc, _, err = tool.stop()
    assert status == 200 and rc == 0, (status, err)
    promtool_check(text)
    samples = parse_exposition(text)
    got = {op: value(samples, "iostackbreak_latency_seconds_count", layer="io_uring", op=op,
                     pid=pid) for op in URING_OPS}
    print(f"    pid {pid}: {got}, uringwork {uring_counts(did)}")
    assert got == uring_counts(did), (got, did)


LIBURINGWORK = os.path.join(ROOT, "build", "liburingwork")


@test
def uringlayer_counts_a_liburing_client_exactly():
    """tools/liburingwork.c, built on liburing (its prep helpers,
    io_uring_submit, io_uring_wait_cqe) as services are: opens, writes
    (8 in flight), fsyncs and reads (8 in flight) of a file, buffered then
    direct, as its command: each op counted exactly as it says it made
    them, nothing left out or dropped."""
    tmp = make_tempdir()
    for direct in ([], ["-D"]):
        path = os.path.join(tmp, "lu.dat")
        p = run(TOOL, "-T", "io_uring", "--json", "--", LIBURINGWORK, "-o", "3", "-w", "40",
                "-s", "6", "-r", "300", "-q", "8", *direct, path, timeout=120)
        assert p.returncode == 0, p.stderr
        line = next(l for l in p.stdout.splitlines() if l.startswith("liburingwork "))
        did = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
        rep = json.loads(next(l for l in p.stdout.splitlines() if l.startswith("{")))
        got = {op: count(rep, "io_uring", op) for op in ("read", "write", "open", "fsync",
                                                          "other")}
        want = {"read": did["reads"], "write": did["writes"], "open": did["opens"],
                "fsync": did["fsyncs"], "other": 0}
        print(f"    {'direct' if direct else 'buffered'}: got {got}, liburingwork {want}")
        assert got == want, (got, want)
        assert not any(rep["left_out"].values()), rep["left_out"]
        assert not any(rep["dropped_by_reason"].values()), rep["dropped_by_reason"]


class DirectLoop:
    """A loop device in direct-I/O mode over a 64 MiB file of data on this
    host's disk: its reads reach the disk (tens of microseconds), not the
    page cache (a few: there fio's own fixed costs would weigh as much as
    the device, for fio's figures and ours)."""

    def __init__(self, tmp):
        path = os.path.join(tmp, "uring.img")
        with open(path, "wb") as f:
            for _ in range(64):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
        p = run("losetup", "-f", "--show", "--direct-io=on", path)
        if p.returncode:
            raise Skip(f"cannot create a direct-I/O loop device: {p.stderr.strip()}")
        self.dev = p.stdout.strip()
        on_cleanup(f"loop device {self.dev}", run, "losetup", "-d", self.dev)


@test
def uringlayer_per_cgroup_counts_under_the_submitters_cgroup():
    """-G on the io_uring layer: uringwork moves itself into a nested
    cgroup the test made, then submits; each op's requests are exactly
    its own count, under that cgroup's path, none elsewhere."""
    from test_breakdown import cgroup2_root
    root, _ = cgroup2_root()
    rel = f"/iosb-uringG-{os.getpid()}/inner"
    make_cgroup(root + rel)
    tmp = make_tempdir()
    shell = f'echo $$ > "{root}{rel}/cgroup.procs" && exec "$0" "$@"'
    rep, did = uringwork_under_tool(tmp, ["-T", "io_uring", "-G"],
                                    WORK, prefix=["sh", "-c", shell])
    for op, n in (("read", did["reads"]), ("write", did["writes"]), ("open", did["opens"]),
                  ("fsync", did["fsyncs"])):
        got = sum(c["count"] for c in rep["cells"] if c["op"] == op and c["cgroup"] == rel)
        assert got == n, (op, got, n, rep["cells"])
    assert {c["cgroup"] for c in rep["cells"]} == {rel}, rep["cells"]
    print(f"    {rel}: reads {did['reads']}, writes {did['writes']}, opens {did['opens']}, "
          f"fsyncs {did['fsyncs']}, each exact")


@test
def uringlayer_parts_add_up():
    """Each request's time split into inline, io-wq and poll: per op the
    parts' sums equal the requests' total time exactly, which is the
    cell's. Where they go is known for these: an fsync never runs inline
    (punted to io-wq every time); a read of an empty pipe arms a poll and
    waits in it at least until uringwork writes the byte, 1 ms after its
    submission (-W)."""
    tmp = make_tempdir()
    rep, did = uringwork_under_tool(tmp, ["-T", "io_uring", "--all-fds"], WORK + ["-W"])
    split = {o["op"]: o for o in rep["uring_breakdown"]}
    for op in ("read", "write", "open", "fsync", "other"):
        c, o = cell(rep, "io_uring", op), split[op]
        parts = {p["part"]: p for p in o["parts"]}
        assert o["count"] == c["count"], (op, o, c)
        assert o["total_ns"] == c["sum_ns"], (op, o, c)
        assert sum(p["sum_ns"] for p in parts.values()) == o["total_ns"], (op, o)
        print(f"    {op}: {o['count']} requests, " + ", ".join(
            f"{name} {p['sum_ns'] / max(o['total_ns'], 1):.1%}" for name, p in parts.items()))
    fsync = {p["part"]: p for p in split["fsync"]["parts"]}
    assert fsync["io-wq"]["p50_ns"] > 0 and fsync["inline"]["sum_ns"] < fsync["io-wq"]["sum_ns"], \
        split["fsync"]
    poll = {p["part"]: p for p in split["read"]["parts"]}["poll"]
    assert poll["sum_ns"] >= did["pipe_reads"] * 1_000_000, poll


@test
def uringlayer_trace_events():
    """--trace: each request an async slice (b/e, cat io_uring) of its
    submitting thread, as many as uringwork made on its file, carrying the
    opcode, file, offset, size, result and parts (which add up to its
    latency); --slower=1ms with --json prints the 1 ms pipe reads' poll
    waits only under --all-fds, each with its parts."""
    tmp = make_tempdir()
    trace = os.path.join(tmp, "t.json")
    work = ["-o", "2", "-w", "6", "-s", "2", "-r", "12", "-q", "4"]
    rep, did = uringwork_under_tool(tmp, ["-T", "io_uring", f"--trace={trace}"], work)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    begins = [e for e in events if e["ph"] == "b" and e.get("cat") == "io_uring"]
    ends = {e["id"]: e for e in events if e["ph"] == "e" and e.get("cat") == "io_uring"}
    by_name = {}
    for b in begins:
        by_name[b["name"]] = by_name.get(b["name"], 0) + 1
        a, e = b["args"], ends[b["id"]]
        assert sum(a["parts_ns"].values()) == a["latency_ns"], b
        assert abs((e["ts"] - b["ts"]) * 1000 - a["latency_ns"]) < 2, (b, e)
        if b["name"] in ("io_uring read", "io_uring write"):
            assert a["file"] == "uw.dat" and a["bytes"] == 4096 and a["ret"] == 4096, b
            assert a["offset"] % 4096 == 0, b
        if b["name"] == "io_uring fsync":
            assert a["file"] == "uw.dat" and a["ret"] == 0 and a["opcode"] == 3, b
    want = {"io_uring open": did["opens"], "io_uring write": did["writes"],
            "io_uring fsync": did["fsyncs"], "io_uring read": did["reads"]}
    print(f"    trace: {by_name}")
    assert by_name == want, (by_name, want)
    p = run(TOOL, "-T", "io_uring", "--all-fds", "--slower=1ms", "--json", "--", URINGWORK,
            *work, "-p", "3", "-W", os.path.join(tmp, "uw.dat"), timeout=120)
    assert p.returncode == 0, p.stderr
    slow = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"event"')]
    # A pipe's dentry has no name of its own: told by its 1-byte reads.
    pipe = [e for e in slow if e["op"] == "read" and e["bytes"] == 1]
    assert len(pipe) == 3, slow
    for e in pipe:
        assert e["layer"] == "io_uring" and e["ret"] == 1 and e["parts"]["poll"] >= 1_000_000, e


def fio(dev, *args, rt=True, timeout=180):
    """fio on the device, direct I/O, 4 KiB: its first job's JSON. fio runs
    at a real-time priority (chrt -f 5): on a busy machine a preempted fio
    reaps completions late, and its clat grew by 25-30% at iodepth 8 and 32
    here (load 4 on 2 CPUs) while the kernel's figures did not; it sleeps
    in io_uring_enter between completions, so it starves no one (but a
    SQPOLL ring's kernel thread, of normal priority: rt=False there)."""
    p = run_process([*(["chrt", "-f", "5"] if rt else []), "fio", "--name=uring", f"--filename={dev}", "--ioengine=io_uring",
                        "--direct=1", "--bs=4k", "--size=64M", "--lat_percentiles=1",
                        "--output-format=json", *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]


PCTS = (("p50_ns", "50.000000"), ("p90_ns", "90.000000"), ("p99_ns", "99.000000"))


def percentile_misses(ours, theirs, what):
    """Percentiles of a cell more than 10% off fio's (theirs: fio's
    percentile dict); also printed, as the figures the README quotes."""
    misses, shown = [], []
    for key, pct in PCTS:
        mine, fio_ns = ours[key], theirs[pct]
        delta = (mine - fio_ns) / fio_ns
        shown.append(f"{key[:3]} {mine / 1e3:.1f}/{fio_ns / 1e3:.1f} us ({delta:+.1%})")
        if abs(delta) > 0.10:
            misses.append(f"{what} {key}: {mine} against fio's {fio_ns} ({delta:+.1%})")
    print(f"    {what}: " + ", ".join(shown))
    return misses


# Our percentile against fio's lat percentile, as an upper bound: a
# request's latency, from io_uring_submit_req to its completion's posting,
# lies inside fio's lat of it (from before fio submits to when it reaps),
# so each order statistic of ours is at most fio's. Both are read from
# histograms: ours within a bucket, an eighth of an octave (12.5%), fio's
# within 1/64 of one (1.6%, its FIO_IO_U_PLAT_BITS): 1.125 * 1.016 < 1.15.
LAT_BOUND = 1.15


def percentile_over(ours, lat, what):
    """Percentiles of ours over fio's lat by more than the two histograms'
    resolution: what cannot be, whatever the machine's load."""
    return [f"{what} {key}: {ours[key]} over fio's lat {lat[pct]}" for key, pct in PCTS
            if ours[key] > LAT_BOUND * lat[pct]]


def traced_fio(loop, *fio_args, rt=True):
    tool = Tool("-T", "io_uring", "--json")
    job = fio(loop.dev, *fio_args, rt=rt)
    reports = tool.stop_json()
    assert len(reports) == 1, reports
    return reports[0], job


@test
def uringlayer_fio_randread_counts_and_percentiles():
    """fio --ioengine=io_uring, direct 4 KiB random reads on a loop device
    (direct I/O) over a file, at iodepth 1, 8 and 32: the read count equals fio's
    total_ios; p50/p90/p99 at most fio's lat_ns (LAT_BOUND) at every depth,
    and within 10% of it at depth 1.
    fio's clat starts only when the submitting io_uring_enter has returned
    (that call is fio's slat), so the request's inline issue, which a
    request's latency from io_uring_submit_req holds, is outside it; its
    lat starts before the submission. Both end when fio reaps the
    completion: at depth 1 fio waits in io_uring_enter for it and reaps it
    at once (ours within 2% of lat here), at depth 8 and 32 it reaps
    completions in batches, stamped when it gets to them, which the
    machine's load delays: against clat, -0.4% to -5% at depth 8 and -2%
    to -22% at depth 32 in runs on one machine (2026-11-25 to 27). Those
    are printed, not checked: they measure fio's reaping, not the
    request."""
    tmp = make_tempdir()
    loop = DirectLoop(tmp)
    misses = []
    for depth in (1, 8, 32):
        rep, job = traced_fio(loop, "--rw=randread", f"--iodepth={depth}", "--number_ios=6000")
        reads = cell(rep, "io_uring", "read")
        assert reads["count"] == job["read"]["total_ios"], (reads["count"], job["read"])
        assert count(rep, "io_uring", "write") == 0
        assert not any(rep["dropped_by_reason"].values()), rep["dropped_by_reason"]
        clat, lat = job["read"]["clat_ns"]["percentile"], job["read"]["lat_ns"]["percentile"]
        print(f"    iodepth {depth}: {reads['count']} reads, fio {job['read']['total_ios']}")
        misses += percentile_over(reads, lat, f"iodepth {depth}")
        if depth == 1:
            misses += percentile_misses(reads, lat, "iodepth 1 vs lat")
        else:
            percentile_misses(reads, lat, f"iodepth {depth} vs lat (at most)")
        percentile_misses(reads, clat, f"iodepth {depth} vs clat (not checked)")
    assert not misses, misses


class UringTimes(FtraceInstance):
    """Each request's time from io_uring_submit_req to io_uring_complete,
    from the kernel's own events through ftrace (no BPF), matched by the
    request's address: the same interval our layer times, independently
    (to the microsecond of ftrace's clock)."""

    def __init__(self):
        super().__init__("uring", [("io_uring", "io_uring_submit_req"),
                                   ("io_uring", "io_uring_complete")], None)
        with open(os.path.join(self.dir, "trace_clock"), "w") as f:
            f.write("mono")

    def stop(self, opcode):
        """The latencies in ns of the requests of opcode (e.g. READ)."""
        started, lat = {}, []
        for line in super().stop().splitlines():
            m = re.search(r" (\d+\.\d+): io_uring_(submit_req|complete): .*?req ([0-9a-f]+),"
                          r"(?:.*?opcode (\w+))?", line)
            if not m:
                continue
            t, ev, req = round(float(m.group(1)) * 1e9), m.group(2), m.group(3)
            if ev == "submit_req":
                if m.group(4) == opcode:
                    started[req] = t
            elif req in started:
                lat.append(t - started.pop(req))
        return sorted(lat)


def nearest_rank(sorted_ns, p):
    return sorted_ns[max(0, math.ceil(p / 100 * len(sorted_ns)) - 1)]


@test
def uringlayer_percentiles_are_the_kernels_own_request_times():
    """fio's io_uring reads at iodepth 1, 8 and 32, against the kernel's own
    io_uring_submit_req and io_uring_complete events through ftrace, matched
    by request: as many requests, and p50/p90/p99 within our buckets' width
    (an eighth of an octave) and ftrace's microsecond of its exact
    percentiles at every depth. This is the interval the layer claims to
    time; fio's clat, which at depth 8 and 32 also holds fio's wait before
    it reaps a posted completion, is not it (the fio tests)."""
    tmp = make_tempdir()
    loop = DirectLoop(tmp)
    misses = []
    for depth in (1, 8, 32):
        times = UringTimes()
        try:
            times.start()
            rep, job = traced_fio(loop, "--rw=randread", f"--iodepth={depth}",
                                  "--number_ios=4000")
            truth = times.stop("READ")
        finally:
            times.close()
        reads = cell(rep, "io_uring", "read")
        assert reads["count"] == len(truth) == job["read"]["total_ios"], \
            (reads["count"], len(truth), job["read"]["total_ios"])
        shown = []
        for key, p in (("p50_ns", 50), ("p90_ns", 90), ("p99_ns", 99)):
            want = nearest_rank(truth, p)
            shown.append(f"{key[:3]} {reads[key] / 1e3:.1f}/{want / 1e3:.1f} us "
                         f"({(reads[key] - want) / want:+.1%})")
            if abs(reads[key] - want) > want / 8 + 2000:
                misses.append(f"iodepth {depth} {key}: {reads[key]} against {want}")
        print(f"    iodepth {depth}, ours/the kernel's: " + ", ".join(shown))
    assert not misses, misses


@test
def uringlayer_fio_writes_with_fsync():
    """fio --ioengine=io_uring --fsync=1: direct 4 KiB random writes, each
    followed by an fsync, on a loop device over a file, at iodepth 1, 8 and
    32: writes and fsyncs counted as fio counts them (total_ios of write and
    sync) at every depth. Writes and fsyncs at most fio's lat_ns (LAT_BOUND)
    at every depth, and within 10% of it at depth 1, as for reads: a direct
    write's inline issue is in fio's slat, not its clat (see the read test),
    and at depth 8 and 32 fio reaps in batches (-0.4% to -7.8% against lat
    at depth 8, 2026-11-27: printed). fio times an fsync from after its
    submission, while ours holds its punt to io-wq (an fsync never runs
    inline: ~15 us here); so the loop device is in buffered mode, where
    each fsync writes the backing file back to the disk and the punt weighs
    little."""
    tmp = make_tempdir()
    loop = LoopDevice(tmp)
    misses = []
    for depth in (1, 8, 32):
        # fio scrambles each write's buffer after its lat clock started: not here.
        rep, job = traced_fio(loop, "--rw=randwrite", "--fsync=1", f"--iodepth={depth}",
                              "--number_ios=1500", "--scramble_buffers=0")
        writes, fsyncs = cell(rep, "io_uring", "write"), cell(rep, "io_uring", "fsync")
        print(f"    iodepth {depth}: {writes['count']} writes, {fsyncs['count']} fsyncs; fio "
              f"{job['write']['total_ios']} and {job['sync']['total_ios']}")
        assert writes["count"] == job["write"]["total_ios"], (depth, writes, job["write"])
        assert fsyncs["count"] == job["sync"]["total_ios"], (depth, fsyncs, job["sync"])
        assert not any(rep["dropped_by_reason"].values()), rep["dropped_by_reason"]
        wlat, slat = job["write"]["lat_ns"]["percentile"], job["sync"]["lat_ns"]["percentile"]
        misses += percentile_over(writes, wlat, f"iodepth {depth} write")
        misses += percentile_over(fsyncs, slat, f"iodepth {depth} fsync")
        if depth == 1:
            misses += percentile_misses(writes, wlat, "iodepth 1 write vs lat")
            misses += percentile_misses(fsyncs, slat, "iodepth 1 fsync vs lat")
        else:
            percentile_misses(writes, wlat, f"iodepth {depth} write vs lat (at most)")
            percentile_misses(fsyncs, slat, f"iodepth {depth} fsync vs lat (at most)")
        percentile_misses(writes, job["write"]["clat_ns"]["percentile"],
                          f"iodepth {depth} write vs clat (not checked)")
    assert not misses, misses


@test
def uringlayer_fio_sqpoll_counted():
    """fio --sqthread_poll: every read counted. Its time starts when the
    ring's kernel thread takes the request; how long the request waited in
    the ring for that thread no tracepoint shows, so it is printed against
    fio's lat, not checked (fio's own clat is not usable with SQPOLL: it
    has no submission time to start from)."""
    tmp = make_tempdir()
    loop = DirectLoop(tmp)
    rep, job = traced_fio(loop, "--rw=randread", "--sqthread_poll=1", "--iodepth=8",
                          "--number_ios=4000", rt=False)
    reads = cell(rep, "io_uring", "read")
    assert reads["count"] == job["read"]["total_ios"], (reads["count"], job["read"])
    percentile_misses(reads, job["read"]["lat_ns"]["percentile"], "sqpoll vs lat (not checked)")


def uring_split(report, op):
    for o in report["uring_breakdown"]:
        if o["op"] == op:
            return o
    raise AssertionError(f"no io_uring {op} in uring_breakdown: {report['uring_breakdown']}")


@test
def uringlayer_block_requests_per_request():
    """-T io_uring,blk: each io_uring request's block requests, tied to it
    where its issue started them. fio's direct 4 KiB I/O on a direct-I/O
    loop device makes one request on the loop device per fio I/O: inline
    at iodepth 1 and 32 (32 submitted per io_uring_enter, under a plug),
    from the ring's SQPOLL thread, and from io-wq workers
    (--force_async=1: every request punted). Per op, the requests' block
    requests equal fio's total_ios and diskstats' count for the loop device
    (and the blk layer's own, -d: that device only, as check_blk_count
    allows); their bytes 4 KiB each;
    --trace gives each request its one block request."""
    tmp = make_tempdir()
    loop = DirectLoop(tmp)
    name = os.path.basename(loop.dev)
    trace = os.path.join(tmp, "t.json")
    runs = (("iodepth 1", ["--rw=randread", "--iodepth=1"], True, []),
            ("iodepth 32", ["--rw=randread", "--iodepth=32"], True, [f"--trace={trace}"]),
            ("sqpoll", ["--rw=randread", "--iodepth=8", "--sqthread_poll=1"], False, []),
            ("io-wq", ["--rw=randread", "--iodepth=8", "--force_async=1"], True, []),
            ("writes", ["--rw=randwrite", "--iodepth=8"], True, []))
    for what, args, rt, extra in runs:
        tool = Tool("-T", "io_uring,blk", "-d", name, "--json", *extra)
        before, m0 = diskstats(name), diskstats_merged(name)
        job = fio(loop.dev, *args, "--number_ios=3000", rt=rt)
        after, m1 = diskstats(name), diskstats_merged(name)
        rep = tool.stop_json()[0]
        op = "write" if "randwrite" in args[0] else "read"
        ios = job[op]["total_ios"]
        split, blk = uring_split(rep, op), cell(rep, "blk", op)
        disk = after[1] - before[1] if op == "write" else after[0] - before[0]
        # A request merged into another after both started (diskstats'
        # merged field; under the SQ thread's plug): each io_uring request
        # started one, the disk completed one (fio 3000, disk 2999, once).
        merged = m1[1] - m0[1] if op == "write" else m1[0] - m0[0]
        print(f"    {what}: fio {ios} {op}s; io_uring {split['count']} requests, "
              f"{split['blk_requests']} block requests, {split['blk_bytes']} B; "
              f"blk {blk['count']}, diskstats {disk} (+ {merged} merged)")
        assert split["count"] == ios, (what, split, ios)
        assert split["blk_requests"] == ios == disk + merged, (what, split, ios, disk, merged)
        # The blk layer's own count: every completion seen, or counted as
        # missed where this kernel hides it (harness.check_blk_count).
        check_blk_count(rep, blk["count"], disk, what)
        assert split["blk_bytes"] == 4096 * ios, (what, split)
        if extra:
            traced = ios
        if what == "io-wq":
            parts = {p["part"]: p for p in split["parts"]}
            assert parts["io-wq"]["sum_ns"] > parts["inline"]["sum_ns"], split
    with open(trace) as f:
        slices = [e for e in json.load(f)["traceEvents"]
                  if e["ph"] == "b" and e.get("cat") == "io_uring"]
    per = {}
    for e in slices:
        per[(e["args"]["blk_requests"], e["args"]["blk_bytes"])] = \
            per.get((e["args"]["blk_requests"], e["args"]["blk_bytes"]), 0) + 1
    print(f"    iodepth 32 trace: (block requests, bytes) of each request: {per}")
    assert per == {(1, 4096): traced}, per


@test
def uringlayer_sqpoll_filters_follow_the_rings_owner():
    """With SQPOLL the ring's kernel thread (iou-sqp-PID) submits; -t and -c
    are applied to the thread that made the ring: uringwork's requests from
    its SQPOLL ring are counted exactly with -c uringwork and with -t its
    TID (a shell waits for a line, then execs it: its PID is known first),
    and none with -c or -t naming another."""
    tmp = make_tempdir()
    path = os.path.join(tmp, "uw.dat")
    for flt, want_all in ((["-c", "uringwork"], True), (["-c", "uringworkX"], False),
                          (["-t", None], True), (["-t", "1"], False)):
        sh = Process(["sh", "-c", 'read x; exec "$0" "$@"', URINGWORK, *WORK, "-S",
                               path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        args = [flt[0], flt[1] or str(sh.pid)]
        tool = Tool("-T", "io_uring", "--json", *args)
        out, _ = sh.communicate("go\n", timeout=120)
        assert sh.returncode == 0, out
        rep = tool.stop_json()[0]
        line = next(l for l in out.splitlines() if l.startswith("uringwork "))
        did = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
        got = {op: count(rep, "io_uring", op) for op in ("read", "write", "open", "fsync")}
        want = {"read": did["reads"], "write": did["writes"], "open": did["opens"],
                "fsync": did["fsyncs"]} if want_all else dict.fromkeys(got, 0)
        print(f"    {' '.join(args)}: got {got}, want {want}")
        assert got == want, (args, got, want)
