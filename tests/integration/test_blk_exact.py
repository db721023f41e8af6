"""The block layer exact: every request of a run counted once, checked
against fio's own count and /proc/diskstats; requests merged in the
scheduler neither counted missed nor left behind. A completion no BPF
program can see (a kernel that runs none in PID 1's threads,
harness.check_blk_count) is counted apart and printed; with PID 1 kept off
the CPU that completes the requests, none is missed. These run the
programs keyed by request (harness.KEYED), which count such a completion;
one program per request is compared with them in test_blk_stamped.py."""

import json
import os
import subprocess
import tempfile
import time

from harness import (KEYED, STAMPED, LoopDevice, Skip, Tool, check_blk_count, count,
                     keep_pid1_on, kernel_skips_pid1, on_cleanup, pid1_state)

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def disk_fields(name):
    """(reads, writes, writes merged) of a disk, from /proc/diskstats."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                return int(fields[3]), int(fields[7]), int(fields[8])
    raise AssertionError(f"{name} not in /proc/diskstats")


def fio(dev, *args, timeout=120):
    p = subprocess.run(["fio", f"--filename={dev}", "--direct=1", "--bs=4k",
                        "--output-format=json", *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    jobs = json.loads(p.stdout[p.stdout.index("{"):])["jobs"]
    return (sum(j["read"]["total_ios"] for j in jobs),
            sum(j["write"]["total_ios"] for j in jobs))


def traced(loop, tool_args, fio_args, env=KEYED):
    """One fio run under the tool: (report, fio's (reads, writes), diskstats
    delta). env STAMPED: one program per request where the disk is stamped."""
    tool = Tool("-T", "blk", "--json", "-d", loop.name, *tool_args, env=env)
    before = disk_fields(loop.name)
    ios = fio(loop.dev, *fio_args)
    time.sleep(0.1)
    after = disk_fields(loop.name)
    reports = tool.stop_json()
    assert len(reports) == 1, reports
    return reports[0], ios, tuple(a - b for a, b in zip(after, before))


@test
def blk_exact_over_five_fio_runs_psync_then_io_uring():
    """With and without -Q: 5 runs of fio psync QD1, then 5 of io_uring
    QD32, 4 KiB random direct reads on a loop device over a file. Each
    run's count equals fio's total_ios and the diskstats delta, and no
    completion is counted missed."""
    secs = os.environ.get("IOSB_BLK_RUN_SECONDS", "2")
    engines = (["--ioengine=psync", "--iodepth=1"], ["--ioengine=io_uring", "--iodepth=32"])
    failures = []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=256)
        try:
            for mode in ([], ["-Q"]):
                for engine in engines:
                    for i in range(5):
                        rep, ios, delta = traced(loop, mode, ["--name=r", "--rw=randread",
                                                              *engine, f"--runtime={secs}",
                                                              "--time_based"])
                        got = count(rep, "blk", "read")
                        missed = rep["dropped_by_reason"]["request_completion_missed"]
                        line = (f"{mode or ['issue']} {engine[0][11:]} run {i + 1}: fio {ios[0]}, "
                                f"diskstats {delta[0]}, counted {got}, missed {missed}")
                        print("    " + line, flush=True)
                        if ios[0] != delta[0]:
                            failures.append(line)  # fio and diskstats disagree
                        try:
                            check_blk_count(rep, got, delta[0], line)
                        except AssertionError as e:
                            failures.append(str(e))
        finally:
            loop.close()
    assert not failures, failures


@test
def blk_merged_requests_are_not_missed_nor_left_behind():
    """mq-deadline on a loop device; two fio jobs writing alternate 4 KiB
    blocks at a deep queue, so requests wait in the scheduler and one that
    fills the gap between two merges them (block_rq_merge, diskstats'
    merged column). The origin (block_io_start, -Q) saw the request merged
    away: its entry must go then, not be found at the struct's next use."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=64)
        try:
            with open(f"/sys/block/{loop.name}/queue/scheduler", "w") as f:
                f.write("mq-deadline")
            # A loop device may start with 4 KiB requests (max_sectors_kb 4
            # here at times): no room to merge 4 KiB writes.
            with open(f"/sys/block/{loop.name}/queue/max_sectors_kb", "w") as f:
                f.write("128")
            # Requests merge only when they wait in the scheduler, which
            # depends on how busy the machine is: the workload runs again
            # (each run checked in full) until a -Q run saw merges, at most
            # 10 rounds, so the check always proves something.
            merged = 0
            for _ in range(10):
                for mode in (["-Q"], []):
                    rep, ios, delta = traced(loop, mode, [
                        "--ioengine=libaio", "--iodepth=512", "--iodepth_batch_submit=64",
                        "--size=32M", "--rw=write:4k", "--name=a", "--offset=0", "--name=b",
                        "--offset=4k"])
                    got = count(rep, "blk", "write")
                    missed = rep["dropped_by_reason"]["request_completion_missed"]
                    print(f"    {mode or ['issue']}: fio {ios[1]} writes, diskstats {delta[1]} "
                          f"({delta[2]} merged), counted {got}, missed {missed}", flush=True)
                    check_blk_count(rep, got, delta[1], f"{mode or ['issue']} merged writes")
                    # Nothing else may be dropped: a merged request is no
                    # longer taken for a missed one.
                    assert rep["dropped"] == missed, (mode, rep["dropped_by_reason"])
                    if mode:
                        merged += delta[2]
                if merged:
                    break
            assert merged > 0, "no request merged in 10 rounds: the check proved nothing"
        finally:
            loop.close()


@test
def blk_exact_with_pid1_on_another_cpu():
    """The cause of the only completions this tool misses, shown: on a
    kernel that runs no BPF program while a thread of PID 1 is current,
    a completion is lost when it interrupts PID 1. PID 1's threads are
    pinned to CPU 0 (restored after), fio to CPU 1, and the loop device
    completes each request on the CPU that submitted it (rq_affinity 2):
    no completion can land on PID 1, and none is missed: with and
    without -Q, counted == fio's total_ios == the diskstats delta. (Under
    the same load unpinned, about 1 in 3,000 is missed, and biolatency
    misses the same ones.) Both with the programs keyed by request and
    with one program per request, which cannot count a miss apart: here
    it has none to count."""
    if not kernel_skips_pid1():
        raise Skip("this kernel runs BPF programs in PID 1's threads too: every other "
                   "block test is already strict here")
    if len(os.sched_getaffinity(0)) < 2:
        raise Skip("needs 2 CPUs: one for PID 1, one for the workload")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=256)
        try:
            with open(f"/sys/block/{loop.name}/queue/rq_affinity", "w") as f:
                f.write("2")
            release = keep_pid1_on(0)
            on_cleanup("PID 1's cpuset", release)
            try:
                for mode, env in (([], KEYED), (["-Q"], KEYED), ([], STAMPED), (["-Q"], STAMPED)):
                    rep, ios, delta = traced(loop, mode, [
                        "--name=r", "--rw=randread", "--ioengine=io_uring", "--iodepth=32",
                        "--numjobs=2", "--cpus_allowed=1", "--group_reporting",
                        f"--runtime={os.environ.get('IOSB_BLK_RUN_SECONDS', '4')}",
                        "--time_based"], env)
                    got = count(rep, "blk", "read")
                    missed = rep["dropped_by_reason"]["request_completion_missed"]
                    way = "keyed" if env is KEYED else "one program"
                    print(f"    {mode or ['issue']} {way}: PID 1 on CPU 0, fio on CPU 1: fio "
                          f"{ios[0]}, diskstats {delta[0]}, counted {got}, missed {missed}",
                          flush=True)
                    assert got == ios[0] == delta[0] and missed == 0, (got, ios, delta, missed,
                                                                       pid1_state())
            finally:
                release()
        finally:
            loop.close()
