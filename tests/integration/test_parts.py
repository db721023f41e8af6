"""Where the time goes: each call of the root layer split into layer self
time, io_wait, blocked and runqueue. The parts must add up to the call
(test_breakdown.check_calls checks that in every report), and each kind of
wait must show when a workload is made to wait that way."""

import json
import os
import re
import subprocess
import tempfile
import time

from harness import (TOOL, LoopDevice, Skip, Tool, Work, cell, check_blk_count, diskstats,
                     diskstats_writes, on_cleanup)
from harness import test
from harness import Process, run_process
from test_breakdown import check_report



def calls(rep, op):
    """The breakdown of op, with its parts by name."""
    for b in rep["breakdown"]:
        if b["op"] == op:
            return b, {p["part"]: p for p in b["parts"]}
    raise AssertionError(f"no breakdown for {op}: {rep['breakdown']}")


def shares(b, parts):
    """Prints each part's share of the op's time (the figures the bounds
    below were set from)."""
    print("    " + ", ".join(f"{k} {p['sum_ns'] / 1e6:.1f} ms ({p['sum_ns'] / b['total_ns']:.1%})"
                            for k, p in parts.items()) + f" of {b['total_ns'] / 1e6:.1f} ms",
          flush=True)


def traced_run(work_args, tool_args=("-T", "syscall"), prefix=(), parts_whole=True):
    """Runs iowork (held until the tool is attached) under -p; returns
    (report, the workload's result)."""
    work = Work("-x", *work_args, prefix=prefix)
    tool = Tool(*tool_args, "-p", str(work.pid), "--json")
    work.go()
    result = work.finish_held()
    work.release()
    rc, out, err = tool.wait(timeout=60)
    assert rc == 0, err
    rep = json.loads(out.splitlines()[-1])
    check_report(rep, parts_whole=parts_whole)
    return rep, result


@test
def cached_preads_are_on_cpu():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        rep, result = traced_run(["-c", "pread", "3000", path])
        b, parts = calls(rep, "read")
        shares(b, parts)
        assert b["count"] == int(result["done"]) == 3000, b
        assert b["count"] == cell(rep, "syscall", "read")["count"]
        # A cached read never sleeps on I/O: io_wait 0.0 ms measured (two
        # runs; the time was self and, on a busy host, runqueue: 22.5%).
        assert parts["io_wait"]["sum_ns"] < 0.05 * b["total_ns"], parts
        assert b["blk_requests"] == 0, b


@test
def direct_reads_wait_for_the_device():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            # One request a read: a loop device may start with 4 KiB
            # requests (max_sectors_kb 4), which split each read in 16.
            with open(f"/sys/block/{loop.name}/queue/max_sectors_kb", "w") as f:
                f.write("128")
            # 64 KiB: with 4 KiB reads the loop device served a request in
            # about the time the call spent on CPU around it (self 7.5 us,
            # io_wait 5.9 us at the median), so io_wait was 44-62% of the
            # rest, around the bound below. At 64 KiB: 72-93% measured.
            rep, result = traced_run(["-D", "-s", "64k", "pread", "400", loop.dev],
                                        tool_args=("-T", "syscall,blk", "-d", loop.name))
        finally:
            loop.close()
        b, parts = calls(rep, "read")
        shares(b, parts)
        assert b["count"] == 400, b
        io = parts["io_wait"]["sum_ns"]
        # Time preempted by whatever else runs on this machine is runqueue,
        # not the workload's: at least half of the rest is io_wait.
        assert io >= 0.5 * (b["total_ns"] - parts["runqueue"]["sum_ns"]), (b, parts)
        blk = cell(rep, "blk", "read")
        check_blk_count(rep, blk["count"], 400, "direct reads")
        missed = rep["dropped_by_reason"]["request_completion_missed"]
        # The thread sleeps while its request is in the device (and a bit
        # around it): most of the requests' own latency is io_wait.
        # (or preempted before it sleeps, on a busy machine). Measured:
        # io_wait + runqueue 0.93-1.01x the requests' time in three runs.
        print(f"    io_wait + runqueue {(io + parts['runqueue']['sum_ns']) / 1e6:.1f} ms, "
              f"the requests' {blk['sum_ns'] / 1e6:.1f} ms", flush=True)
        assert io + parts["runqueue"]["sum_ns"] >= 0.7 * blk["sum_ns"], (io, blk, parts)
        # A completion the kernel ran no program for leaves its call without
        # that request (harness.check_blk_count): short by at most those.
        assert 400 - missed <= b["blk_requests"] <= 400, (b, missed)
        assert b["blk_bytes"] == b["blk_requests"] * 65536, b


@test
def a_cpu_hog_on_the_same_cpu_shows_as_runqueue():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        hog = Process(["taskset", "-c", "1", "sh", "-c", "while :; do :; done"])
        time.sleep(0.5)  # the hog settles on its CPU first
        try:
            # 64 MiB reads from the cache, about 10 ms each: many ticks per
            # call. Small reads would show little: a kernel that preempts
            # lazily does it on the way back to user space, between calls.
            rep, _ = traced_run(["-c", "-s", "64m", "pread", "40", path],
                                prefix=("taskset", "-c", "1"))
        finally:
            hog.kill()
            hog.wait()
        b, parts = calls(rep, "read")
        shares(b, parts)
        assert b["count"] == 40, b
        # The scheduler shares the CPU between the two: runqueue 48.4-49.9%
        # measured; no runqueue at all would be the failure.
        assert parts["runqueue"]["sum_ns"] > 0.10 * b["total_ns"], parts


@test
def a_read_that_waits_on_a_pipe_is_blocked():
    """A wait queue, not I/O: head reading a pipe its writer fills 20 ms
    apart, 20 times. Those reads spend about 400 ms asleep, not in
    io_schedule: seen with --all-fds; by default they are left out, as
    reads of a pipe, and none of that wait is in the reads."""
    cmd = "for i in $(seq 20); do sleep 0.02; printf x; done | head -c 20 >/dev/null"
    reps = {}
    for args in (["--all-fds"], []):
        p = run_process([TOOL, "-T", "syscall", "--json", *args, "--", "sh", "-c", cmd],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        reps[bool(args)] = rep = json.loads(p.stdout.splitlines()[-1])
        check_report(rep)
    b, parts = calls(reps[True], "read")
    shares(b, parts)
    # 20 waits of about 20 ms each (the writer's sleeps): blocked 434-449
    # ms measured, 99.7-99.8% of the reads' time, io_wait 0.0 ms.
    assert parts["blocked"]["sum_ns"] >= 0.3e9, parts
    assert parts["blocked"]["sum_ns"] >= 0.5 * b["total_ns"], (parts, b)
    assert parts["io_wait"]["sum_ns"] < 0.05 * b["total_ns"], parts
    assert reps[True]["left_out"] == {"pipe": 0, "socket": 0, "other": 0}, reps[True]
    b, parts = calls(reps[False], "read")
    shares(b, parts)
    print(f"    left out: {reps[False]['left_out']}", flush=True)
    # head's reads of its 20 bytes, one at least each (it reads as they
    # come, 20 ms apart), and the shell's and seq's pipe reads: 43 pipe
    # reads measured; how many depends on how the bytes meet the reads.
    assert reps[False]["left_out"]["pipe"] >= 20, reps[False]["left_out"]
    # What is left, the shells' file reads, waits for nothing: blocked
    # 0.0 ms of 0.1 ms measured.
    assert parts["blocked"]["sum_ns"] < 0.1e9, parts


@test
def threads_syncing_one_file_wait_for_io():
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        rep, _ = traced_run(["-c", "-t", "2", "-W", "fsync", "200", path],
                               tool_args=("-T", "syscall,blk"))
        b, parts = calls(rep, "fsync")
        shares(b, parts)
        assert b["count"] == 200, b
        # Of the time not spent waiting for a CPU (runqueue 18-50% of it
        # on the shared host), io_wait is most: 80-83% in three runs.
        assert parts["io_wait"]["sum_ns"] > 0.3 * (b["total_ns"] - parts["runqueue"]["sum_ns"]), \
            parts
        # Each fsync writes the page its write dirtied, unless the other
        # thread's fsync took it: one request or more for most calls, and
        # the flushes and their empty PREFLUSH writes on top (612-615
        # requests measured: about three a call on this unjournalled /).
        print(f"    {b['blk_requests']} requests for 200 fsyncs", flush=True)
        assert b["blk_requests"] >= 200, b


# One thread: O_DIRECT reads of a device into an aligned buffer, between
# "go" and "quit" on stdin.
DIRECT_READER = r"""
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
print("READY", flush=True)
sys.stdin.readline()
for i in range(int(sys.argv[2])):
    os.preadv(fd, [buf], (i % 1024) * 4096)
print("DONE", flush=True)
sys.stdin.readline()
"""

TRACEFS = "/sys/kernel/tracing"
SWITCH = re.compile(r"\[(\d+)\].* (\d+)\.(\d+): sched_switch: .*prev_pid=(\d+) .*prev_state=(\S+)")
WAKEUP = re.compile(r"\[(\d+)\].* (\d+)\.(\d+): sched_wakeup: .*pid=(\d+) ")


class SchedTrace:
    """The kernel's own record of one thread's switches and wake-ups: an
    ftrace instance of its own (other tracers are untouched), on the
    CLOCK_MONOTONIC clock that bpf_ktime_get_ns() reads."""

    def __init__(self, tid):
        if not os.path.isdir(os.path.join(TRACEFS, "instances")):
            raise Skip(f"no tracefs at {TRACEFS}")
        self.tid = tid
        self.dir = os.path.join(TRACEFS, "instances", f"iosb-sched-{tid}")
        os.mkdir(self.dir)
        on_cleanup(f"ftrace instance {self.dir}", os.rmdir, self.dir)
        self.write("trace_clock", "mono")
        self.write("buffer_size_kb", "8192")
        self.write("events/sched/sched_switch/filter", f"prev_pid == {tid}")
        self.write("events/sched/sched_wakeup/filter", f"pid == {tid}")
        for event in ("sched_switch", "sched_wakeup"):
            self.write(f"events/sched/{event}/enable", "1")
            on_cleanup(f"ftrace event {event}", self.write, f"events/sched/{event}/enable", "0")

    def write(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(value)

    def uninterruptible_sleeps(self):
        """Stops the trace; [(switched out, woken) ns] of each sleep in
        TASK_UNINTERRUPTIBLE (state D) whose wake-up follows its switch-out
        in the trace, and the number of switch-outs in state D (self.d_out:
        the trace's lines are ordered by whole-us time stamps from two
        CPUs, so a wake-up stamped in the same us can come first)."""
        self.write("tracing_on", "0")
        with open(os.path.join(self.dir, "trace")) as f:
            text = f.read()
        assert "LOST" not in text, "the sched trace lost events"
        sleeps, out, self.d_out = [], None, 0
        for line in text.splitlines():
            m = SWITCH.search(line)
            if m and int(m.group(4)) == self.tid:
                out = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0"))
                out = out if "D" in m.group(5) else None
                self.d_out += out is not None
                continue
            m = WAKEUP.search(line)
            if m and int(m.group(4)) == self.tid and out is not None:
                sleeps.append((out, int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0"))))
                out = None
        return sleeps


@test
def io_wait_agrees_with_the_kernels_sched_trace():
    """io_wait is the time from the switch-out of a thread asleep in
    io_schedule (in_iowait) to its sched_wakeup. The kernel's own ftrace
    record of the same thread's D sleeps measures that same interval, apart
    from the BPF tool; they agree within 1 us a sleep.

    Why not the neighbouring measures (they used to be the check here)? On
    this project's 2-vCPU hosts (6.18), 3,000 O_DIRECT reads of a loop
    device, compared with ftrace's sched_waking/sched_wakeup and taskstats:
    - /proc/diskstats' read time ends where the request is accounted done,
      right after the completing CPU calls try_to_wake_up. When the reader's
      CPU is idle, the wake-up goes there as an IPI and sched_wakeup fires
      when that vCPU leaves idle: about 11 us later (median), up to 2,107
      of 2,991 sleeps at a time. io_wait holds that wake-up, the disk does
      not: io_wait 77.1 ms against the disk's 58 ms, the failure that
      retired the old 1.2x bound, is 3,000 x 6.4 us of it.
    - Delay accounting's block I/O delay (taskstats, in ns) ends at the
      waker's try_to_wake_up in that case too: io_wait - blkio_delay was
      22.5 ms with 26.2 ms of waking-to-wakeup, and 0.2-0.3 ms in runs
      with no remote wake-up. And since 6.12 (EEVDF's delayed dequeue) a
      sleep that starts while its task stays queued is not counted at all
      (0.5x-7x of ours, once 4,360 s for 70 ms of reads). The VM suite
      checks io_wait against delay accounting on Debian's 6.1, where its
      ticks are exact.
    io_wait against ftrace in eight runs: -667 us of 221.9 ms, -371 of
    172.8, -34 of 22.4, -99 of 15.8, -80 of 9.9, +70 of 27.3, +60 of 18.3,
    -30 of 49.9: at most 0.22 us a sleep (the two probes on a tracepoint
    run one after the other; ftrace's text timestamps are whole us)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        reader = Process(["python3", "-c", DIRECT_READER, loop.dev, "3000"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert reader.stdout.readline().startswith("READY")
        tool = Tool("-T", "syscall", "-p", str(reader.pid), "--json", "--slower=0")
        trace = SchedTrace(reader.pid)
        requests = diskstats(loop.name)[0]
        reader.stdin.write("go\n")
        reader.stdin.flush()
        assert reader.stdout.readline().startswith("DONE")
        sleeps = trace.uninterruptible_sleeps()
        requests = diskstats(loop.name)[0] - requests
        reader.stdin.write("quit\n")
        reader.stdin.close()
        reader.wait(timeout=30)
        rc, out, err = tool.wait(timeout=30)
        assert rc == 0, err
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    rep = lines[-1]
    slept = sum(1 for e in lines[:-1] if e.get("event") == "io" and e["parts"]["io_wait"])
    assert rep.pop("lost") == 0, rep  # every read's event is here
    check_report(rep)
    b, parts = calls(rep, "read")
    # The read of "quit" is on a pipe: left out, and said so.
    assert b["count"] == 3000, b
    left = {o["op"]: o["pipe"] for o in rep["left_out_by_op"]}
    assert left["read"] == 1, rep["left_out_by_op"]
    assert requests == 3000, requests
    io_ns = parts["io_wait"]["sum_ns"]
    slept_ns = sum(woken - out for out, woken in sleeps)
    print(f"    io_wait {io_ns / 1e6:.2f} ms in {slept} reads; ftrace: {trace.d_out} switched "
          f"out in D, {len(sleeps)} with their wake-up after, {slept_ns / 1e6:.2f} ms",
          flush=True)
    # A read whose request completes before its thread sleeps does not
    # sleep: at most one sleep a read. The loop device's worker thread has
    # to run first, so most do (2,991 to 3,000 of 3,000 measured). The
    # reads with io_wait (their events) are the thread's D sleeps (its
    # switch-outs in state D: pairing each with its wake-up by the text's
    # order once lost one whose wake-up was stamped first, 2,999 of 3,000).
    assert slept == trace.d_out and 0 < slept <= 3000, (slept, trace.d_out, len(sleeps))
    assert abs(io_ns - slept_ns) <= 1000 * len(sleeps), (io_ns, slept_ns, len(sleeps))


@test
def part_histograms_count_every_call():
    """-B: a histogram per part of each op that took time, in text (a part
    with none would be a histogram of zeros); the root layer's self time is
    in every call, so its histogram counts them all. Which parts took time:
    a --json tracer of the same calls says."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        work = Work("-x", "-c", "pread", "1000", path)
        tool = Tool("-T", "syscall", "-B", "-p", str(work.pid))
        jtool = Tool("-T", "syscall", "-p", str(work.pid), "--json")
        work.go()
        work.finish_held()
        work.release()
        rc, out, err = tool.wait(timeout=60)
        jrc, jout, jerr = jtool.wait(timeout=60)
    assert rc == 0, err
    assert jrc == 0, jerr
    _, parts = calls(json.loads(jout.splitlines()[-1]), "read")
    lines = out.splitlines()
    title = "syscall read, part syscall: per call, in us"
    assert title in lines, out
    total = 0
    for line in lines[lines.index(title) + 2:]:
        if "->" not in line:
            break
        total += int(line.split(":")[1].split()[0])
    assert total == 1000, (total, out)
    for part in ("io_wait", "blocked", "runqueue"):
        shown = f"syscall read, part {part}: per call, in us" in lines
        assert shown == (parts[part]["sum_ns"] > 0), (part, parts[part], out)


@test
def no_offcpu_leaves_waits_in_self_time():
    """--no-offcpu: no wait parts, the root layer's self time is the call."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            rep, _ = traced_run(["-D", "pread", "200", loop.dev],
                                tool_args=("-T", "syscall", "--no-offcpu"))
        finally:
            loop.close()
    b, parts = calls(rep, "read")
    assert b["count"] == 200 and set(parts) == {"syscall"}, parts
    assert parts["syscall"]["sum_ns"] == b["total_ns"] == cell(rep, "syscall", "read")["sum_ns"]


def reads_with_thread_slots(slots, n, threads):
    """n O_DIRECT preads by threads under -T syscall, with the start slots
    in an LRU hash of that many entries: (timed, drops by reason)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        path = os.path.join(tmp, "data")
        os.environ["IOSB_THREAD_SLOTS"] = str(slots)
        try:
            # With fewer slots than threads in calls, a slot is taken over
            # while its call is open, and the LRU hash may hand it to
            # another thread while the first still writes it: those calls'
            # parts can mix (the man page says so). Counting is what this
            # checks; the parts add up wherever every thread has a slot.
            rep, result = traced_run(["-c", "-D", "-t", str(threads), "pread", str(n), path],
                                     parts_whole=slots >= threads)
        finally:
            del os.environ["IOSB_THREAD_SLOTS"]
    drops = rep["dropped_by_reason"]
    timed = cell(rep, "syscall", "read")["count"]
    b, _ = calls(rep, "read")
    print(f"    {slots} slots: {n} reads, {timed} timed, {drops['thread_slot_evicted']} "
          f"evicted, {drops['thread_map_full']} without a slot")
    assert int(result["done"]) == n, result
    assert b["count"] == timed, b
    assert drops["call_exit_missed"] == 0, drops
    return timed, drops


@test
def evicted_thread_slots_are_counted():
    """The thread slots' LRU hash fallback (IOSB_THREAD_SLOTS forces it, as
    on kernels without task storage for these programs) with 4 slots for 32
    threads reading with O_DIRECT: while one waits for the device the others
    take its slot. Every read is timed, or counted as evicted (or as
    thread_map_full when no slot could be made): none is lost silently.
    With a slot for every thread, nothing is evicted and every read timed."""
    n = 20000
    timed, drops = reads_with_thread_slots(4, n, 32)
    assert timed + drops["thread_slot_evicted"] + drops["thread_map_full"] == n, (timed, drops)
    # Not vacuous: slots were taken from calls in progress, and some kept theirs.
    assert drops["thread_slot_evicted"] > 0 and timed > 0, drops
    timed, drops = reads_with_thread_slots(8192, n, 32)
    assert timed == n and drops["thread_slot_evicted"] == 0, (timed, drops)


@test
def an_fsyncs_block_bytes_include_the_bios_merged_into_its_requests():
    """512 buffered 4 KiB pwrites to a loop device under mq-deadline, then
    one fsync: the fsync writes the 512 pages back, one bio each, and the
    scheduler merges them into a few large requests after each request
    started (block_io_start saw 4 KiB; diskstats counts the merges). The
    fsync's blk_bytes is all 2 MiB, and its blk_requests the requests
    diskstats counted, each exactly."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            with open(f"/sys/block/{loop.name}/queue/scheduler", "w") as f:
                f.write("mq-deadline")
            # The loop driver starts with 4 KiB requests here: room to merge.
            with open(f"/sys/block/{loop.name}/queue/max_sectors_kb", "w") as f:
                f.write("128")
            work = Work("-x", "pwrite", "512", loop.dev, "fsync", "1", loop.dev)
            before = diskstats_writes(loop.name)  # after its setup (which syncs)
            tool = Tool("-T", "syscall,blk", "-d", loop.name, "-p", str(work.pid), "--json")
            work.go()
            result = work.finish_held()
            after = diskstats_writes(loop.name)
            work.release()
            rc, out, err = tool.wait(timeout=60)
            assert rc == 0, err
            rep = json.loads(out.splitlines()[-1])
            check_report(rep)
        finally:
            loop.close()
    writes, sectors, flushes = (a - b for a, b in zip(after, before))
    b, _ = calls(rep, "fsync")
    print(f"    fsync: blk_requests {b['blk_requests']}, blk_bytes {b['blk_bytes']}; diskstats "
          f"{writes} writes, {sectors * 512} bytes, {flushes} flushes", flush=True)
    assert b["count"] == 1, b
    assert sectors * 512 == 512 * 4096, (sectors, result)
    assert writes < 512, f"no bio merged: {writes} requests"
    assert b["blk_bytes"] == sectors * 512, b
    # The data's requests, the empty PREFLUSH write and the flush (FLUSHES
    # in the man page): all the disk did, all the fsync's.
    assert b["blk_requests"] == writes + flushes, (b, writes, flushes)
