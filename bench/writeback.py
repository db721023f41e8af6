#!/usr/bin/env python3
"""What charging written-back requests to their dirtiers costs (root, host
lock; about a minute).

A buffered writer (iowork -s 64k -c write N, a new file on an ext4 the
bench makes on a loop device) dirties 64 MiB, then the file system is
synced alone (sync -f) and its flusher writes the pages back. Each round
runs it under `-T blk -p PID` twice, side by side: with the dirtier
tracking (the default) and with --no-writeback. The kernel's own run time
per program run (BPF_STATS_RUN_TIME, which --stats turns on) gives:

- per dirtying event: tb_dirty_folio's run time per run (a folio going
  from clean to dirty: one map update); it does not run at all off;
- per written-back request: tb_rq_complete's run time per run on less its
  run time per run off (the walk of the request's pages and the look-ups);
  the requests are the loop disk's, the same in both runs;

and, outside BPF, the writer's ns per write call (iowork's ns=) and the
time sync -f took, on and off.

Writes markdown to stdout (and bench/results/writeback-DATE.md with --save).
"""

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import TOOL, Tracer, cpu_model, ext4_loop, need_root, save
from why import held, held_progs, release

WRITES = 1024  # of 64 KiB: 64 MiB, 16384 pages


def one_run(mnt, name, on):
    """The writer under the tool, then syncfs; the programs' (runs, ns)
    deltas, the writer's ns per call and the sync's seconds."""
    path = os.path.join(mnt, name)
    w = held(["-s", "64k", "-c", "write", str(WRITES), path])
    args = [TOOL, "-T", "blk", "--stats", "-p", str(w.pid), "--json"]
    if not on:
        args.append("--no-writeback")
    tool = Tracer(args)
    before = held_progs(tool.proc.pid)
    w.send_signal(10)  # SIGUSR1: go
    line = w.stdout.readline()
    assert line.startswith("iowork "), line
    result = dict(kv.split("=", 1) for kv in line.split()[1:])
    t0 = time.monotonic()
    subprocess.run(["sync", "-f", mnt], check=True)
    sync_s = time.monotonic() - t0
    after = held_progs(tool.proc.pid)
    release([w])
    tool.stop()
    os.unlink(path)
    progs = {n: (after[n][0] - before[n][0], after[n][1] - before[n][1])
             for n in after if n in before}
    return progs, int(result["ns"]) / WRITES, sync_s


def per_run(progs, name):
    runs, ns = progs.get(name, (0, 0))
    return ns / runs if runs else None, runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args()
    need_root("bench/writeback.py")
    rows = {True: [], False: []}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp, \
            ext4_loop(tmp, 512, "wb.img") as mnt:
        for r in range(args.rounds):
            # Alternate which goes first: the machine drifts.
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                rows[on].append(one_run(mnt, f"f{r}{int(on)}", on))

    def median(on, fn):
        vals = [v for v in (fn(x) for x in rows[on]) if v is not None]
        return statistics.median(vals) if vals else None

    dirty_ns = median(True, lambda x: per_run(x[0], "tb_dirty_folio")[0])
    dirty_runs = median(True, lambda x: per_run(x[0], "tb_dirty_folio")[1])
    rq_on = median(True, lambda x: per_run(x[0], "tb_rq_complete")[0])
    rq_off = median(False, lambda x: per_run(x[0], "tb_rq_complete")[0])
    rq_runs = median(True, lambda x: per_run(x[0], "tb_rq_complete")[1])
    call_on, call_off = median(True, lambda x: x[1]), median(False, lambda x: x[1])
    sync_on, sync_off = median(True, lambda x: x[2]), median(False, lambda x: x[2])

    def fmt(v, f="{:.0f}"):
        return "-" if v is None else f.format(v)

    md = [f"# What charging written-back requests to their dirtiers costs "
          f"({datetime.date.today()})", "",
          f"{cpu_model()}, {os.cpu_count()} CPUs; "
          f"medians of {args.rounds} rounds, on and --no-writeback side by side; "
          f"a writer dirtying 64 MiB in {WRITES} writes of 64 KiB, then sync -f.", "",
          "| figure | writeback on | --no-writeback |", "|---|---:|---:|",
          f"| tb_dirty_folio runs (folios dirtied) | {fmt(dirty_runs)} | 0 |",
          f"| tb_dirty_folio ns per run (per dirtying event) | {fmt(dirty_ns)} | - |",
          f"| tb_rq_complete runs (requests completed) | {fmt(rq_runs)} | - |",
          f"| tb_rq_complete ns per run | {fmt(rq_on)} | {fmt(rq_off)} |",
          f"| the page walk per written-back request (on - off) | "
          f"{fmt(None if rq_on is None or rq_off is None else rq_on - rq_off)} | - |",
          f"| writer ns per 64 KiB write call | {fmt(call_on)} | {fmt(call_off)} |",
          f"| sync -f seconds | {fmt(sync_on, '{:.3f}')} | {fmt(sync_off, '{:.3f}')} |"]
    text = "\n".join(md) + "\n"
    sys.stdout.write(text)
    if args.save:
        save("writeback", text)


if __name__ == "__main__":
    main()
