#!/usr/bin/env python3
"""What the lock, journal and page cache programs cost per event (root,
host lock; about a minute).

Three workloads, each run twice: once while the tool traces another,
idle process (every event finds no call open in its thread and leaves),
and once traced (-p the workload: each event does its work). The kernel's
own run time per run (BPF_STATS_RUN_TIME, which --stats turns on; read
with bpftool from the programs the tool holds) is the figure, as the
parts' cost is measured in bench/parts.py:

- lock: a 4 KiB pwriter behind a 64 MiB pwriter on one file (the inode's
  rwsem): lock:contention_begin/end;
- journal: append + fsync on an ext4 with a journal over a loop device:
  jbd2_start/end_commit, block_bio_back/frontmerge, sched_waking (which
  only the journal part attaches), and ext4_writepages_result (the pages
  each fsync writes);
- cache: a cold sequential read (its file's pages evicted after the
  workload's setup, that file's alone: tests/integration/harness.py,
  evict_pages):
  mm_filemap_add_to_page_cache, page_cache_sync_ra/async_ra.

Writes markdown to stdout (and bench/results/why-DATE.md with --save).
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from benchlib import IOWORK, ROOT, TOOL, Tracer, cpu_model, ext4_loop, need_root, save

sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from harness import evict_pages  # noqa: E402

NEW = ("tb_lock_begin", "tb_lock_end", "tb_commit_start", "tb_commit_end", "tb_bio_backmerge",
       "tb_bio_frontmerge", "tb_waking", "tb_wakeup", "tb_switch", "tp_cache_add", "tp_ra_sync",
       "tp_ra_async", "tp_writeback")


def held_progs(pid):
    """name -> (run_cnt, run_time_ns) of the programs process pid holds."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
    p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                       check=True)
    return {d["name"]: (d.get("run_cnt", 0), d.get("run_time_ns", 0))
            for d in json.loads(p.stdout) if d["id"] in ids}


def held(args):
    """iowork -w -x ARGS, set up and waiting for SIGUSR1 (and again after
    its result line: the tool, which ends with its -p target, is read
    first)."""
    p = subprocess.Popen([IOWORK, "-w", "-x", *args], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("READY"), line
    return p


def go_and_wait(procs):
    for p in procs:
        p.send_signal(10)  # SIGUSR1
        time.sleep(0.05)
    for p in procs:
        assert p.stdout.readline().startswith("iowork ")


def release(procs):
    for p in procs:
        p.send_signal(10)
        p.communicate(timeout=60)
        assert p.returncode == 0


def measure(start_workload, traced):
    """Starts the workload (held), the tool on it or on an idle process,
    runs it; the programs' (runs, ns) deltas."""
    procs, target = start_workload()
    idle = None
    if not traced:
        idle = subprocess.Popen(["sleep", "600"])
        target = idle.pid
    tool = Tracer([TOOL, "-T", "syscall,blk", "--stats", "-p", str(target), "--json"])
    before = held_progs(tool.proc.pid)
    go_and_wait(procs)
    time.sleep(0.2)
    after = held_progs(tool.proc.pid)
    release(procs)
    tool.stop()
    if idle:
        idle.kill()
        idle.wait()
    return {n: (after[n][0] - before[n][0], after[n][1] - before[n][1])
            for n in after if n in NEW and n in before}


def lock_workload(tmp):
    def start():
        path = os.path.join(tmp, "lockfile")
        small = held(["-s", "4k", "-P", "1000", "-c", "pwrite", "1500", path])
        big = held(["-s", "64m", "-c", "pwrite", "30", path])
        return [small, big], small.pid
    return start


def journal_workload(mnt):
    def start():
        w = held(["-W", "-A", "-c", "fsync", "300", os.path.join(mnt, "f")])
        subprocess.run(["sync"], check=True)
        return [w], w.pid
    return start


def cache_workload(tmp):
    def start():
        path = os.path.join(tmp, "readfile")
        w = held(["-s", "4k", "-c", "read", "16384", path])
        evict_pages(path)
        return [w], w.pid
    return start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    need_root("bench/why.py")
    rows = []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp, \
            ext4_loop(tmp, 256, "j.img", "-o", "data=ordered") as mnt:
        for name, wl in (("lock", lock_workload(tmp)), ("journal", journal_workload(mnt)),
                         ("cache", cache_workload(tmp))):
            for traced in (False, True):
                for prog, (runs, ns) in sorted(measure(wl, traced).items()):
                    if runs:
                        rows.append((name, "traced" if traced else "no call open", prog,
                                     runs, ns / runs))
    md = [f"# What the lock, journal and page cache programs cost "
          f"({datetime.date.today()})", "",
          f"{cpu_model()}, {os.cpu_count()} CPUs, Linux {platform.release()}; the kernel's "
          "run time per program run (BPF_STATS_RUN_TIME).", "",
          "| workload | the workload's threads | program | runs | ns per run |",
          "|---|---|---|---:|---:|"]
    for name, mode, prog, runs, per in rows:
        md.append(f"| {name} | {mode} | {prog} | {runs} | {per:.0f} |")
    text = "\n".join(md) + "\n"
    sys.stdout.write(text)
    if args.save:
        save("why", text)


if __name__ == "__main__":
    main()
