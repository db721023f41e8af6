"""The block layer exact: every request of a run counted once, checked
against fio's own count and /proc/diskstats; requests merged in the
scheduler neither counted missed nor left behind. A completion the kernel
ran no BPF program for (harness.host_hides_completions) is counted apart
by the programs keyed by request (harness.KEYED), and that count is
checked against ftrace's record of the same run; the VM guests show none
missed on stock kernels (tests/vm/guest_blk.sh)."""

import json
import os
import subprocess
import tempfile
import time

from harness import (DEFAULT_BLK, KEYED, HiddenCompletions, LoopDevice, Tool, check_blk_count,
                     count, diskstats_merged, host_hides_completions)
from harness import disk_stats, test
from harness import run_process

def disk_fields(name):
    """(reads, writes, writes merged) of a disk (harness.disk_stats)."""
    s = disk_stats(name)
    return s.reads, s.writes, s.writes_merged


def fio(dev, *args, timeout=120):
    p = run_process(["fio", f"--filename={dev}", "--direct=1", "--bs=4k",
                        "--output-format=json", *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    jobs = json.loads(p.stdout[p.stdout.index("{"):])["jobs"]
    return (sum(j["read"]["total_ios"] for j in jobs),
            sum(j["write"]["total_ios"] for j in jobs))


def traced(loop, tool_args, fio_args, env=KEYED):
    """One fio run under the tool: (report, fio's (reads, writes), diskstats
    delta). env DEFAULT_BLK: the tool's own choice of programs."""
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
def blk_missed_equals_the_completions_hidden_from_bpf():
    """Which completions a kernel hides from BPF, counted without BPF:
    ftrace records each block_rq_complete on the disk with the task that
    was current (record-tgid), while fio io_uring QD32 (two jobs) reads it
    and two tools trace it at once, the programs keyed by request and the
    default, one program per request. The keyed programs count
    counted + missed = fio's total_ios = diskstats = ftrace's completions,
    and missed equals the completions ftrace saw land on top of PID 1;
    the default programs count every completion the kernel ran them for:
    exactly the keyed programs' counted. On a kernel that hides nothing,
    both count every request and missed is 0."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=256)
        try:
            # About 100,000 completions a second here, 60-odd bytes each in
            # the ring: 2 s fit in 32 MiB a CPU (an overrun fails the test).
            ft = HiddenCompletions(loop.name, buffer_kb=32768)
            for mode in ([], ["-Q"]):
                keyed = Tool("-T", "blk", "--json", "-d", loop.name, *mode, env=KEYED)
                default = Tool("-T", "blk", "--json", "-d", loop.name, *mode, env=DEFAULT_BLK)
                before = disk_fields(loop.name)
                merged_before = diskstats_merged(loop.name)[0]
                ft.start()
                ios = fio(loop.dev, "--name=r", "--rw=randread", "--ioengine=io_uring",
                          "--iodepth=32", "--numjobs=2", "--group_reporting",
                          "--runtime=2", "--time_based")
                time.sleep(0.1)
                completions, hidden = ft.stop()
                after = disk_fields(loop.name)
                merged = diskstats_merged(loop.name)[0] - merged_before
                rk, rd = keyed.stop_json()[-1], default.stop_json()[-1]
                got, missed = count(rk, "blk", "read"), rk["dropped_by_reason"][
                    "request_completion_missed"]
                plain = count(rd, "blk", "read")
                reads = after[0] - before[0]
                print(f"    {mode or ['issue']}: fio {ios[0]}, diskstats {reads}, ftrace "
                      f"{completions} ({hidden} on top of PID 1); keyed {got} + missed {missed}, "
                      f"one program per request {plain}", flush=True)
                # Two jobs' reads of neighbouring blocks can merge into one
                # request (diskstats' reads merged): fio's reads are the
                # requests and those merged into them.
                assert ios[0] == reads + merged and reads == completions, \
                    (ios, reads, merged, completions)
                assert rd["dropped_by_reason"]["request_completion_missed"] == 0, rd
                check_blk_count(rk, got, reads, f"{mode or ['issue']} keyed")
                if host_hides_completions():
                    assert missed == hidden and plain == got, (missed, hidden, plain, got)
                else:
                    assert missed == 0 and plain == got == reads, (missed, plain, got, reads)
        finally:
            loop.close()
