#!/usr/bin/env python3
"""What --record costs (root; about 2 minutes): the bytes per event of the
recording, and the time per event it adds to the I/O it records.

Two workloads, each traced with -p on its process alone:
1. cached 4 KiB preads (-T syscall): one call event per pread;
2. O_DIRECT 4 KiB preads on a loop device (-T syscall,blk): a call event,
   a block request event and the call's off-CPU slices per pread.

Each round runs the workload untraced, traced without --record and traced
with --record=FILE (in a random order); the time --record adds per op is
the difference between the two traced runs of the round, per event that
time divided by the events per op (from the tool's own line: "recording
FILE: N events, B bytes"), which also gives the bytes per event. The
figures are the medians over the rounds. Writes markdown to stdout (and
bench/results/record-DATE.md with --save).
"""

import argparse
import datetime
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import tempfile

from benchlib import IOWORK, TOOL, Tracer, cpu_model, need_root, save, scratch_file

LINE = re.compile(r"recording \S+: (\d+) events, (\d+) bytes; (\d+) events lost")


def iowork_ns(argv):
    line = [l for l in argv.splitlines() if l.startswith("iowork ")][-1]
    return int(dict(kv.split("=", 1) for kv in line.split()[1:])["ns"])


def run(work, layers, extra):
    """The workload (iowork -w ...), traced (layers) or not (None): its
    ns, and the tool's stderr."""
    if layers is None:
        p = subprocess.run(["taskset", "-c", "0", IOWORK, *work], capture_output=True,
                           text=True, check=True)
        return iowork_ns(p.stdout), ""
    proc = subprocess.Popen(["taskset", "-c", "0", IOWORK, "-w", *work],
                            stdout=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline().split()[1])
    t = Tracer([TOOL, "-T", layers, "-p", str(pid), "--json", "-o", os.devnull, *extra])
    proc.send_signal(signal.SIGUSR1)
    out, _ = proc.communicate()
    _, err = t.proc.communicate(timeout=120)  # a -p run ends with its process
    return iowork_ns(out), err.decode(errors="replace")


def bench(name, work, layers, n, rounds, tmp):
    rec = os.path.join(tmp, "bench.rec")
    added, per_event, sizes, lost = [], [], [], 0
    for _ in range(rounds):
        cfgs = ["untraced", "traced", "recorded"]
        random.shuffle(cfgs)
        ns = {}
        for cfg in cfgs:
            if cfg == "untraced":
                ns[cfg], _ = run(work, None, [])
            elif cfg == "traced":
                ns[cfg], _ = run(work, layers, [])
            else:
                ns[cfg], err = run(work, layers, [f"--record={rec}"])
                m = LINE.search(err)
                if not m:
                    raise SystemExit(f"no recording line: {err}")
                events, size, lost_now = (int(x) for x in m.groups())
                lost += lost_now
                os.unlink(rec)
        add = (ns["recorded"] - ns["traced"]) / n
        added.append(add)
        per_event.append(add * n / events)
        sizes.append(size / events)
    return {
        "name": name,
        "events_per_op": events / n,
        "bytes_per_event": statistics.median(sizes),
        "added_ns_per_op": statistics.median(added),
        "ns_per_event": statistics.median(per_event),
        "lost": lost,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n-pread", type=int, default=200000)
    ap.add_argument("--n-direct", type=int, default=20000)
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    need_root("bench/record.py")
    path = scratch_file()
    tmp = tempfile.mkdtemp(dir="/var/tmp")
    img = os.path.join(tmp, "disk.img")
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True, text=True,
                         check=True).stdout.strip()
    try:
        rows = [bench("cached pread, -T syscall", ["pread", str(a.n_pread), path], "syscall",
                      a.n_pread, a.rounds, tmp),
                bench("O_DIRECT pread on a loop device, -T syscall,blk",
                      ["-D", "pread", str(a.n_direct), dev], "syscall,blk", a.n_direct,
                      a.rounds, tmp)]
    finally:
        subprocess.run(["losetup", "-d", dev], check=True)
        shutil.rmtree(tmp)
        shutil.rmtree(os.path.dirname(path))
    text = [f"# --record: bytes and time per event ({datetime.date.today()})", "",
            f"{cpu_model()}, Linux {platform.release()}, {os.cpu_count()} CPUs; "
            f"{a.rounds} rounds, medians; workload pinned to CPU 0.", "",
            "| workload | events per op | bytes per event | --record adds per op | "
            "per event | events lost |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        text.append(f"| {r['name']} | {r['events_per_op']:.2f} | {r['bytes_per_event']:.0f} | "
                    f"{r['added_ns_per_op']:.0f} ns | {r['ns_per_event']:.0f} ns | "
                    f"{r['lost']} |")
    text += ["", "The added time is the recorded run's ns per op minus the traced run's "
             "(without --record) of the same round: the event's ring-buffer reservation, "
             "its copy to user space, and the file's write, on the traced CPU and the "
             "reader's."]
    out = "\n".join(text) + "\n"
    print(out)
    if a.save:
        save("record", out)


if __name__ == "__main__":
    main()
