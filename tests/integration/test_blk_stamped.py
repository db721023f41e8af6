"""One program per request (issue 21): -T blk without a task filter reads
the times the kernel stamps in each request at block_rq_complete. Checked
against the workload's own count (fio total_ios), /proc/diskstats (counts,
and its time spent reading, which starts from the same stamp as -Q), fio's
clat, and the programs keyed by request (IOSB_BLK_STAMPS=0) timing the same
requests side by side; and the fall back where a queue is not stamped."""

import json
import os
import subprocess
import tempfile
import time

from harness import (DEFAULT_BLK, KEYED, TOOL, LoopDevice, Tool, cell, check_blk_count, count,
                     environment, on_cleanup)
from harness import disk_stats, test
from harness import run_process

def reads(name):
    """(reads completed, ms spent reading) of a disk (harness.disk_stats)."""
    s = disk_stats(name)
    return s.reads, s.ms_reading


def fio(dev, *args):
    p = run_process(["fio", "--name=r", f"--filename={dev}", "--direct=1", "--bs=4k",
                        "--rw=randread", "--output-format=json", *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["read"]


def plan(*args, env=None):
    p = run_process([TOOL, "--plan", *args], capture_output=True, text=True, timeout=60,
                       env=environment(env))
    assert p.returncode == 0, p.stderr
    return p.stdout + p.stderr


def set_queue(name, knob, value):
    """Writes queue/<knob> and restores it at cleanup."""
    path = f"/sys/block/{name}/queue/{knob}"
    with open(path) as f:
        old = f.read().strip()

    def restore():
        if os.path.exists(path):  # not when the device is gone already
            with open(path, "w") as f:
                f.write(old)
    on_cleanup(f"{path} back to {old}", restore)
    with open(path, "w") as f:
        f.write(value)


@test
def blk_stamped_one_program_counts_and_times_like_the_kernel():
    """psync QD1, then io_uring QD32, 2 s each, with and without -Q: the
    one-program tool and the programs keyed by request run side by side.
    Both count the same requests, and that count plus the completions the
    kernel never ran the programs for (request_completion_missed, only the
    keyed programs can see them) equals fio's total_ios and diskstats
    (check_blk_count); --stats shows 1
    program against 2 or more; the -Q sum is under the
    diskstats time spent reading (same start stamp; diskstats stops its
    clock later, in blk_account_io_done, after the bios are ended: 12% more
    on 5 us psync reads); each mean is under fio's clat; and at QD32 the
    means of the two ways agree within 10%, the plug's cached clock adding
    under 1% there (at QD1 it adds about 0.5 us, printed)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp, size_mib=256)
        try:
            for mode in ([], ["-Q"]):
                out = plan("-T", "blk", "-d", loop.name, *mode, env=DEFAULT_BLK)
                assert "blk timing: one program per request" in out, out
                for engine in (["--ioengine=psync"], ["--ioengine=io_uring", "--iodepth=32"]):
                    args = ("-T", "blk", "-d", loop.name, "--json", "--stats", *mode)
                    new, old = Tool(*args, env=DEFAULT_BLK), Tool(*args, env=KEYED)
                    before = reads(loop.name)
                    f = fio(loop.dev, *engine, "--runtime=2", "--time_based")
                    time.sleep(0.1)
                    after = reads(loop.name)
                    rn, ro = new.stop_json()[-1], old.stop_json()[-1]
                    n, ms = after[0] - before[0], after[1] - before[1]
                    cn, co = cell(rn, "blk", "read"), cell(ro, "blk", "read")
                    mean_n, mean_o = cn["sum_ns"] / cn["count"], co["sum_ns"] / co["count"]
                    progs = {s["layer"]: s["programs"] for s in rn["stats"]["layers"]}
                    progs_o = {s["layer"]: s["programs"] for s in ro["stats"]["layers"]}
                    # The kernel's BPF time per request, side by side (not
                    # checked: a figure for bench/blkiops.py to measure).
                    bpf = {k: sum(s["run_time_ns"] for s in r["stats"]["layers"]) / max(n, 1)
                           for k, r in (("one", rn), ("keyed", ro))}
                    what = (f"{mode or ['issue']} {engine[0][11:]}: fio {f['total_ios']}, "
                            f"diskstats {n} ({ms} ms), one program {cn['count']} "
                            f"(mean {mean_n / 1e3:.1f} us, {progs['blk']} program), keyed "
                            f"{co['count']} (mean {mean_o / 1e3:.1f} us, {progs_o['blk']} "
                            f"programs), fio clat {f['clat_ns']['mean'] / 1e3:.1f} us; BPF "
                            f"{bpf['one']:.0f} against {bpf['keyed']:.0f} ns/request")
                    print("    " + what, flush=True)
                    assert f["total_ios"] == n, what
                    assert rn["dropped"] == 0, (what, rn["dropped_by_reason"])
                    # The same requests both ways; what the kernel never ran
                    # either for, only the keyed programs see (issue 19).
                    assert cn["count"] == co["count"], what
                    check_blk_count(ro, co["count"], n, what)
                    assert progs["blk"] == 1 and progs_o["blk"] >= 2, what
                    assert mean_n < f["clat_ns"]["mean"], what
                    if mode:
                        # Same start; diskstats stops its clock later, in
                        # blk_account_io_done, after the bios are ended.
                        assert cn["sum_ns"] < (ms + 1) * 1e6, what
                    # The plug's cached clock (blk_time_get_ns) can date
                    # io_start_time_ns back to the request's start in the
                    # same plug: +0.4-0.5 us on 5 us psync reads of a loop
                    # device (printed, not checked); under 1% at QD32.
                    if "io_uring" in engine[0]:
                        assert abs(mean_n - mean_o) < 0.1 * mean_o, what
        finally:
            loop.close()


@test
def blk_stamped_falls_back_where_a_queue_is_not_stamped():
    """wbt off on the disk: device time falls back to the programs keyed by
    request, naming the disk, and counts exactly against diskstats; iostats
    0: -Q falls back too."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            set_queue(loop.name, "wbt_lat_usec", "0")
            out = plan("-T", "blk", "-d", loop.name, env=DEFAULT_BLK)
            assert "programs keyed by request" in out and f"{loop.name}: wbt is off" in out, out
            out = plan("-T", "blk", "-d", loop.name, "-Q", env=DEFAULT_BLK)
            assert "one program" in out, out
            tool = Tool("-T", "blk", "-d", loop.name, "--json", env=DEFAULT_BLK)
            before = reads(loop.name)
            f = fio(loop.dev, "--ioengine=psync", "--runtime=1", "--time_based")
            time.sleep(0.1)
            n = reads(loop.name)[0] - before[0]
            rep = tool.stop_json()[-1]
            assert f["total_ios"] == n, (f["total_ios"], n)
            check_blk_count(rep, count(rep, "blk", "read"), n, "wbt off")
            set_queue(loop.name, "iostats", "0")
            out = plan("-T", "blk", "-d", loop.name, "-Q", env=DEFAULT_BLK)
            assert f"{loop.name}: queue/iostats is not 1" in out, out
            out = plan("-T", "blk", "-d", loop.name, env={"IOSB_BLK_STAMPS": "0"})
            assert "IOSB_BLK_STAMPS=0" in out, out
        finally:
            loop.close()
