#!/usr/bin/env python3
"""What splitting calls into parts costs (root; about 3 minutes).

1. Per context switch: two threads pinned to one CPU hand a token back
   and forth through futexes (no system call of any traced op), untraced
   and with the tool attached (-T syscall, every thread with no call open),
   with and without --no-offcpu: the difference between the two is what
   the sched_switch and sched_wakeup programs add per switch (the switches
   are counted from /proc); a separate pass with --stats gives the kernel's
   own run time per program run.
2. Per traced call: cached 4 KiB preads (-T syscall -p the workload),
   with the parts (default), --no-offcpu and --no-parts.

Rounds alternate the configurations; the figure is the median of the
differences to the untraced run of the same round. Writes markdown to
stdout (and bench/results/parts-DATE.md with --save).
"""

import argparse
import datetime
import json
import os
import platform
import signal
import statistics
import subprocess
import sys

from benchlib import IOWORK, TOOL, Tracer, cpu_model, need_root, save, scratch_file

PINGPONG = r"""
import os, sys, threading, time
n = int(sys.argv[1])
ping, pong = threading.Semaphore(0), threading.Semaphore(0)

def switches():
    total = 0
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/status") as f:
            for line in f:
                if "ctxt_switches:" in line:  # voluntary and nonvoluntary
                    total += int(line.split()[1])
    return total

def other():
    for _ in range(n):
        ping.acquire()
        pong.release()

t = threading.Thread(target=other)
t.start()
s0, t0 = switches(), time.perf_counter_ns()
for _ in range(n):
    ping.release()
    pong.acquire()
t1, s1 = time.perf_counter_ns(), switches()
t.join()
print(t1 - t0, s1 - s0)
"""


def tool(*args):
    return Tracer([TOOL, *args])


def pingpong(rounds):
    """(ns, context switches) of the hand-offs."""
    p = subprocess.run(["taskset", "-c", "0", "python3", "-c", PINGPONG, str(rounds)],
                       capture_output=True, text=True, check=True)
    ns, switches = p.stdout.split()
    return int(ns), int(switches)


def pread_ns(path, n):
    p = subprocess.run(["taskset", "-c", "0", IOWORK, "pread", str(n), path],
                       capture_output=True, text=True, check=True)
    line = [l for l in p.stdout.splitlines() if l.startswith("iowork ")][-1]
    return int(dict(kv.split("=", 1) for kv in line.split()[1:])["ns"])


def traced_pread_ns(path, n, extra):
    work = subprocess.Popen(["taskset", "-c", "0", IOWORK, "-w", "pread", str(n), path],
                            stdout=subprocess.PIPE, text=True)
    pid = int(work.stdout.readline().split()[1])
    t = tool("-T", "syscall", "-p", str(pid), "--json", *extra)
    work.send_signal(signal.SIGUSR1)
    out, _ = work.communicate()
    t.proc.wait(timeout=60)  # a -p run ends with its process
    line = [l for l in out.splitlines() if l.startswith("iowork ")][-1]
    return int(dict(kv.split("=", 1) for kv in line.split()[1:])["ns"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--switch-rounds", type=int, default=200000)
    ap.add_argument("--n-pread", type=int, default=300000)
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    need_root("bench/parts.py")
    path = scratch_file()

    sw = {"--no-offcpu": [], "default": []}
    sw_parts, switch_stats = [], []
    for _ in range(a.rounds):
        base, nsw = pingpong(a.switch_rounds)
        per = {}
        for cfg in sw:
            extra = [] if cfg == "default" else [cfg]
            tr = tool("-T", "syscall", "--json", *extra)
            t, n = pingpong(a.switch_rounds)
            tr.stop()
            per[cfg] = (t - base) / max(n, 1)
            sw[cfg].append(per[cfg])
        sw_parts.append(per["default"] - per["--no-offcpu"])
        # The kernel's own figure, in a pass of its own (--stats costs too).
        tr = tool("-T", "syscall", "--json", "--stats")
        pingpong(a.switch_rounds)
        tr.stop()
        other = json.loads(tr.out.splitlines()[-1])["stats"].get("other")
        if other and other["runs"]:
            switch_stats.append(other["run_time_ns"] / other["runs"])

    calls = {"default": [], "--no-offcpu": [], "--no-parts": []}
    for _ in range(a.rounds):
        base = pread_ns(path, a.n_pread)
        for cfg in calls:
            extra = [] if cfg == "default" else [cfg]
            calls[cfg].append((traced_pread_ns(path, a.n_pread, extra) - base) / a.n_pread)

    cpu = cpu_model()
    md = [f"# Parts of calls: cost ({datetime.date.today()})", "",
          f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}; {a.rounds} alternating "
          "rounds, medians of the differences to the untraced run of each round.", "",
          "| what | added per event (median) | all rounds |", "|---|---|---|"]
    for cfg, xs in sw.items():
        md.append(f"| context switch (futex hand-off), -T syscall attached, no call open "
                  f"({cfg}) | {statistics.median(xs):.0f} ns | "
                  f"{', '.join(f'{x:.0f}' for x in xs)} |")
    md.append(f"| of which the sched_switch + sched_wakeup programs (default - --no-offcpu) | "
              f"{statistics.median(sw_parts):.0f} ns | "
              f"{', '.join(f'{x:.0f}' for x in sw_parts)} |")
    if switch_stats:
        md.append(f"| sched_switch/sched_wakeup program, kernel's run time per run | "
                  f"{statistics.median(switch_stats):.0f} ns | "
                  f"{', '.join(f'{x:.0f}' for x in switch_stats)} |")
    for cfg, xs in calls.items():
        md.append(f"| cached 4 KiB pread, -T syscall ({cfg}) | {statistics.median(xs):.0f} ns | "
                  f"{', '.join(f'{x:.0f}' for x in xs)} |")
    text = "\n".join(md) + "\n"
    sys.stdout.write(text)
    if a.save:
        save("parts", text)


if __name__ == "__main__":
    main()
