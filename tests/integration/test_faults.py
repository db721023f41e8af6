"""Trust under faults: a reader that goes away, the tool killed, traced
threads killed or exiting in the middle of a call, a process that execs,
two tools at once, a cgroup removed under a run. The tool must keep
counting exactly and leave nothing loaded."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from harness import (IOWORK, KEYED, TOOL, LoopDevice, Skip, Tool, Work, bpf_prog_ids, count,
                     check_blk_count, check_blk_ops, diskstats, diskstats_merged,
                     host_hides_completions, make_cgroup, make_tempdir, mount, read_proc_io, remove_cgroup)
from harness import test
from harness import Process, run, run_process
from test_breakdown import cgroup2_root, check_report, keyed
from harness import held_prog_ids, held_prog_runs, recursion_misses
from test_host import biolatency_total



def wait_unloaded(ids, timeout=5):
    """Programs are freed after an RCU grace period, not at close()."""
    deadline = time.monotonic() + timeout
    while ids & bpf_prog_ids() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = ids & bpf_prog_ids()
    assert not left, f"programs {left} left loaded"


@test
def a_reader_that_goes_away_ends_the_run_with_status_0():
    """`iostackbreak --json 1 | head -1`: the tool notices its reader is
    gone (POLLERR on the pipe, or EPIPE on the next write) and exits 0,
    without waiting for another report and with nothing left loaded."""
    for args in (["--json", "1"], []):
        tool = Process([TOOL, "-T", "syscall", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        # Wait until attached: the ready line on stderr.
        while b"Hit Ctrl-C" not in tool.stderr.readline():
            assert tool.poll() is None, tool.stderr.read()
        ours = held_prog_ids(tool.pid)
        assert ours, "the tool holds no programs while it runs"
        if args:  # head -1: read the first report, then go
            first = tool.stdout.readline()
            json.loads(first)
        tool.stdout.close()
        t0 = time.monotonic()
        rc = tool.wait(timeout=30)
        took = time.monotonic() - t0
        print(f"    {args or 'no interval'}: exited {rc} {took * 1000:.0f} ms after its "
              "reader went away", flush=True)
        assert rc == 0, (args, rc, tool.stderr.read())
        # The next interval tick is a second away: it did not wait for it.
        assert took < 0.9, took
        wait_unloaded(ours)


@test
def sigkill_of_the_tool_leaves_nothing_loaded():
    tool = Tool("-T", "syscall,blk", "--json")
    ours = held_prog_ids(tool.proc.pid)
    assert len(ours) >= 4, ours
    tool.proc.kill()
    tool.proc.communicate(timeout=30)
    wait_unloaded(ours)


# Children whose calls never end: a thread blocked in a read of a pipe
# while the process exits (the thread dies mid-call), or the whole process
# SIGKILLed while its read blocks.
DYING = r"""
import os, signal, sys, threading, time
mode, n = sys.argv[1], int(sys.argv[2])
pids = []
for i in range(n):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if mode == "exit":
            threading.Thread(target=os.read, args=(r, 1), daemon=True).start()
            time.sleep(0.02)
            os._exit(0)
        os.read(r, 1)
        os._exit(1)
    os.close(r)
    pids.append((pid, w))
time.sleep(0.2)
for pid, w in pids:
    if mode == "kill":
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(w)
"""


@test
def threads_that_die_mid_call_leave_no_trace():
    """300 reads that never return (200 threads dying with their process,
    100 processes killed), then a workload's 3,000 preads: counted
    exactly, nothing dropped. The reads are of pipes: --all-fds times
    them. Everything runs in a cgroup of its own and the tool selects it
    (--cgroup): -P over the whole machine would also key every other
    process, and on a busy host its breakdown map fills with them."""
    root, _ = cgroup2_root()
    group = make_cgroup(os.path.join(root, f"iosb-test-{os.getpid()}-dying"))
    procs = os.path.join(group, "cgroup.procs")

    def join_group():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-c", "pread", "3000", path)  # set up, held until go()
        with open(procs, "w") as f:
            f.write(str(work.pid))
        tool = Tool("-T", "syscall", "-P", "--json", "--all-fds", "--cgroup", group)
        for mode, n in (("exit", 200), ("kill", 100)):
            p = run_process([sys.executable, "-c", DYING, mode, str(n)],
                               capture_output=True, text=True, timeout=120,
                               preexec_fn=join_group)
            assert p.returncode == 0, p.stderr
        work.go()
        result = work.finish()
        rep = tool.stop_json()[0]
        check_report(rep, split=("pid",))
        assert int(result["done"]) == 3000, result
        assert keyed(rep, "syscall", "read", pid=work.pid) == 3000, rep
        assert rep["dropped"] == 0, rep["dropped_by_reason"]


@test
def a_process_that_execs_keeps_counting_under_its_new_name():
    """-p on a process that writes 100 times to /dev/null, then execs
    iowork (static: no loader I/O) for 400 pwrites: its cell and the writes
    left out (/dev/null, a character device; iowork's lines to a pipe) add
    up to every write the kernel counted for it (/proc/PID/io syscw, kept
    across exec), the cell under the name it has after the exec."""
    static = os.path.join(os.path.dirname(IOWORK), "iowork-static")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        script = ("import os, sys\n"
                  "sys.stdin.readline()\n"
                  "fd = os.open('/dev/null', os.O_WRONLY)\n"
                  "for i in range(100):\n"
                  "    os.write(fd, b'x')\n"
                  f"os.execv({static!r}, [{static!r}, '-w', '-x', '-c', 'pwrite', '400', "
                  f"{path!r}])\n")
        proc = Process([sys.executable, "-c", script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        tool = Tool("-T", "syscall", "-P", "-p", str(proc.pid), "--json")
        before = read_proc_io(proc.pid)["syscw"]
        proc.stdin.write("go\n")
        proc.stdin.close()
        assert proc.stdout.readline().startswith("READY"), "no exec"
        proc.send_signal(signal.SIGUSR1)
        result = dict(kv.split("=", 1) for kv in proc.stdout.readline().split()[1:])
        writes = read_proc_io(proc.pid)["syscw"] - before
        proc.send_signal(signal.SIGUSR1)
        proc.wait(timeout=60)
        assert proc.returncode == 0
        rc, tout, err = tool.wait(timeout=60)
        assert rc == 0, err
        assert int(result["done"]) == 400, result
    rep = json.loads(tout.splitlines()[-1])
    check_report(rep, split=("pid",))
    mine = [c for c in rep["cells"] if c.get("pid") == proc.pid and c["op"] == "write"]
    assert len(mine) == 1, mine
    assert writes >= 500, writes
    left = {o["op"]: o for o in rep["left_out_by_op"] if o["layer"] == "syscall"}["write"]
    assert left["other"] == 100, left
    assert mine[0]["count"] + left["pipe"] + left["other"] == writes, (mine, left, writes)
    assert mine[0]["comm"] == "iowork-static", mine


@test
def two_tools_at_once_with_different_filters_are_both_exact():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        a = Work("-c", "pread", "1500", os.path.join(tmp, "a"))
        b = Work("-c", "-s", "8k", "pread", "900", os.path.join(tmp, "b"))
        ta = Tool("-T", "syscall", "-p", str(a.pid), "--json")
        tb = Tool("-T", "syscall", "-p", str(b.pid), "--json")
        a.go()
        b.go()
        ra, rb = a.finish(), b.finish()
        for tool, n in ((ta, 1500), (tb, 900)):
            rc, out, err = tool.wait(timeout=60)
            assert rc == 0, err
            rep = json.loads(out.splitlines()[-1])
            check_report(rep)
            assert count(rep, "syscall", "read") == n, rep
        assert int(ra["done"]) == 1500 and int(rb["done"]) == 900


@test
def a_cgroup_removed_mid_run_does_not_end_it():
    root, _ = cgroup2_root()
    group = make_cgroup(os.path.join(root, f"iosb-gone-{os.getpid()}"))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        work = Work("-c", "pread", "700", os.path.join(tmp, "data"))
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(work.pid))
        tool = Tool("-T", "syscall", "--cgroup", group, "--json", "1")
        work.go()
        work.finish()
        # The process is gone; so goes the group, under the running tool.
        remove_cgroup(group)
        time.sleep(1.5)  # an interval report after the removal
        assert tool.proc.poll() is None, "the tool ended when its cgroup went"
        reports = tool.stop_json()
        for rep in reports:
            check_report(rep)
        assert sum(count(r, "syscall", "read") for r in reports) == 700, reports
        assert len(reports) >= 2, reports


@test
def a_failing_device_counts_its_errors_apart():
    """A loop device over a file on an 8 MiB tmpfs: O_DIRECT writes past
    the first 8 MiB fail (ENOSPC from the backing file, an I/O error for
    the request). Failed requests are counted and timed apart, never in the
    histogram: errors == the workload's failed writes, count == its
    successful ones, and the two add up to the disk's completed writes."""
    mnt = make_tempdir(prefix="iosb-full-")
    mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", where=mnt).check_returncode()
    loop = LoopDevice(mnt, size_mib=32)
    work = Work("-D", "pwrite", "4096", loop.dev)
    tool = Tool("-T", "blk", "-d", loop.name, "-D", "--json")
    before = diskstats(loop.name)
    work.go()
    out, _ = work.proc.communicate(timeout=120)  # exits 1: it saw errors
    result = dict(kv.split("=", 1) for kv in out.split()[1:])
    time.sleep(0.2)
    after = diskstats(loop.name)
    rep = tool.stop_json()[0]
    check_report(rep, split=("disk",))
    done, failed = int(result["done"]), int(result["errors"])
    writes = [c for c in rep["cells"] if c["op"] == "write"]
    print(f"    {done} writes done, {failed} failed; blk: {writes[0]['count']} + "
          f"{writes[0]['errors']} errors; diskstats {after[1] - before[1]} writes", flush=True)
    assert done > 0 and failed > 0, result
    assert len(writes) == 1 and writes[0]["disk"] == loop.name, writes
    # A completion the kernel ran no program for (harness.check_blk_count)
    # is counted as missed, whether it failed or not: each one the cell
    # lacks, of either kind, is one of those.
    missed = rep["dropped_by_reason"]["request_completion_missed"]
    assert writes[0]["errors"] <= failed and writes[0]["count"] <= done, (writes[0], result)
    assert (done - writes[0]["count"]) + (failed - writes[0]["errors"]) == missed, \
        (writes[0], result, missed)
    assert missed == 0 or host_hides_completions(), missed
    assert writes[0]["error_sum_ns"] > 0, writes[0]
    assert sum(b["count"] for b in writes[0]["buckets"]) == writes[0]["count"], writes[0]
    assert after[1] - before[1] == done + failed, (before, after)
    total = [c for c in rep["totals"] if c["op"] == "write"][0]
    assert (total["count"], total["errors"]) == (writes[0]["count"], writes[0]["errors"]), total


@test
def a_disk_that_goes_away_is_reported_gone():
    """A loop device detached under a run that traces it (-d, then -D):
    the run goes on, its requests until then are all counted, and the
    reports from then on name the disk as gone (JSON and text). A run
    started on it afterwards refuses with one line."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        for args in (["-d"], ["-D"]):
            loop = LoopDevice(tmp)
            try:
                work = Work("-D", "pread", "300", loop.dev)
                tool = Tool("-T", "blk", *(args + [loop.name] if args == ["-d"] else args),
                            "--json", "1")
                text = Tool("-T", "blk", *(args + [loop.name] if args == ["-d"] else args))
                work.go()
                work.finish()
                time.sleep(0.2)
            finally:
                loop.close()  # detached under the running tool
            time.sleep(1.5)  # an interval report after it
            assert tool.proc.poll() is None, f"{args}: the run ended with its disk"
            reports = tool.stop_json()
            for rep in reports:
                check_report(rep, split=("disk",) if args == ["-D"] else ())
            reads = sum(c["count"] for r in reports for c in r["cells"]
                        if c["op"] == "read" and c.get("disk", loop.name) == loop.name)
            # Every read counted, or its completion counted missed where
            # the kernel hides some from BPF (once: 299 of 300 with -d);
            # with -D the missed ones may be any disk's.
            missed = sum(r["dropped_by_reason"]["request_completion_missed"] for r in reports)
            check_blk_ops({"dropped_by_reason": {"request_completion_missed": missed}},
                          {"read": reads}, {"read": 300}, f"disk gone {args}")
            gone = reports[-1].get("disks_gone", [])
            assert {"disk": loop.name, "dev": f"7:{os.minor(os.stat(loop.dev).st_rdev)}"} \
                in gone, (args, gone)
            # In text, one line says so.
            rc, out, err = text.stop()
            assert rc == 0, err
            assert f"disk {loop.name} (7:" in out and "is gone" in out, out
            # Gone before tracing began: nothing to report, one line, exit 1.
            p = run_process([TOOL, "-T", "blk", "-d", loop.name, "--duration=1"],
                               capture_output=True, text=True, timeout=30)
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            assert p.returncode == 1 and len(lines) == 1, (p.returncode, p.stderr)
            assert "has no medium or went away" in lines[0], lines


def reads_merged(name):
    """Field 2 of /proc/diskstats: reads merged into a request of another."""
    return diskstats_merged(name)[0]


@test
def thirty_two_fio_jobs_counted_exactly():
    """Load: 32 concurrent fio jobs of random 4 KiB O_DIRECT reads on a
    loop device for 60 s (IOSB_LOAD_SECONDS; the sanitized run takes 10),
    with libbpf-tools' biolatency on the same disk at the same time: its
    count equals ours, and blk reads plus request_completion_missed equal
    the /proc/diskstats delta (harness.check_blk_count: none may be missed
    but on a kernel that hides completions from BPF, where biolatency misses
    the same ones)."""
    if not os.path.exists("/usr/sbin/biolatency"):
        raise Skip("libbpf-tools' biolatency is not installed (scripts/install-test-deps.sh)")
    secs = int(os.environ.get("IOSB_LOAD_SECONDS", "60"))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            bio = Process(["/usr/sbin/biolatency", "-d", loop.name],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            tool = Tool("-T", "blk", "-d", loop.name, "--json", "--stats", env=KEYED)
            time.sleep(3)  # biolatency prints no "attached" line to wait for
            before = diskstats(loop.name)
            merged = reads_merged(loop.name)
            # One read first, alone: biolatency makes its histogram's key at
            # the first completion it times with an update that replaces
            # (flags 0, libbpf-tools 0.26 biolatency.bpf.c 125-131), so two
            # first completions on two CPUs at once can leave one count in
            # the element replaced: exactly one lost. Measured before this
            # read: 1,602,627 against our 1,602,628, no recursion misses,
            # ours + missed = diskstats; then 8 runs equal. Counted by both.
            run("dd", f"if={loop.dev}", "of=/dev/null", "bs=4096", "count=1", "iflag=direct",
                check=True)
            p = run_process(["fio", "--name=load", f"--filename={loop.dev}", "--rw=randread",
                                "--bs=4k", "--direct=1", "--ioengine=psync", "--numjobs=32",
                                f"--runtime={secs}", "--time_based", "--group_reporting",
                                "--output-format=json"],
                               capture_output=True, text=True, timeout=secs + 120)
            assert p.returncode == 0, p.stderr
            time.sleep(0.2)
            after = diskstats(loop.name)
            merged = reads_merged(loop.name) - merged
            rep = tool.stop_json()[0]
            their_misses = recursion_misses(bio.pid)
            # Its programs' runs while our --stats held BPF stats on: what
            # each tool's programs saw, should the counts ever differ.
            their_runs = held_prog_runs(bio.pid)
            bio.send_signal(signal.SIGINT)
            bout, berr = bio.communicate(timeout=30)
        finally:
            loop.close()
    stats = rep.pop("stats")
    check_report(rep)
    fio_reads = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["read"]["total_ios"]
    blk = count(rep, "blk", "read")
    theirs = biolatency_total(bout)
    disk = after[0] - before[0]
    missed = rep["dropped_by_reason"]["request_completion_missed"]
    print(f"    {secs} s, 32 jobs: fio {fio_reads} reads, diskstats {disk} (+ {merged} merged "
          f"into others); blk {blk} + "
          f"{missed} request_completion_missed; biolatency {theirs}; BPF "
          f"{stats['layers'][0]['run_time_ns'] / max(blk, 1):.0f} ns/request", flush=True)
    check_blk_count(rep, blk, disk, "32 fio jobs")
    assert rep["dropped"] == missed, rep["dropped_by_reason"]
    # Both tools see the same requests, in the same window (the loop device
    # is idle when they start and when they stop), but for the runs the
    # kernel skipped of one program and not of the other: a completion
    # that interrupts the same program on its CPU (recursion_misses, per
    # program, any disk's). Twice biolatency counted one fewer with no
    # misses on either side (7,339,018 against 7,339,019): its histogram's
    # first update, now made by the one read before fio (above). A
    # difference with no misses to explain it fails here.
    ours_missed = sum(l.get("recursion_misses", 0) for l in stats["layers"])
    print(f"    recursion misses: biolatency {their_misses}, ours {ours_missed}; program runs: "
          f"biolatency {their_runs}, ours {[(l['layer'], l.get('runs')) for l in stats['layers']]}",
          flush=True)
    assert blk - their_misses <= theirs <= blk + ours_missed, \
        (theirs, blk, their_misses, ours_missed, berr)
    # Two jobs' reads of neighbouring blocks can merge into one request:
    # once fio counted 6,338,455 reads against 6,338,453 requests. Every
    # read of fio's is a request of its own or merged into another's
    # (field 2; measured: fio 1,924,131 = 1,924,128 requests + 3 merged),
    # and nothing else reads the disk in the window but the one read.
    assert disk + merged == fio_reads + 1 and fio_reads > 0, (disk, merged, fio_reads)
