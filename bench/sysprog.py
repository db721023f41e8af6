#!/usr/bin/env python3
"""The syscall layer against its floor, per traced call (issue 21): cached
4 KiB preads (build/iowork, pinned to CPU 0) untraced, under the floor
(tp_btf sys_enter + sys_exit, one clock read each: bench/floor.bpf.c
-DFLOOR_RAW) and under each build and option set of iostackbreak given.

Two passes, as root (take both locks on a shared machine, bench/README.md):
1. added time: per round, every configuration once in a rotated order,
   each run paired with an untraced run just before it; added ns per call
   = traced - untraced, medians over rounds, and the ratio to the floor's:
   of the medians, and the median of each round's ratio (paired: a
   round's runs are minutes apart at most, so a machine that drifts
   over the run moves both sides of a round's ratio alike).
   BPF run-time statistics are off here: they cost every run two clock reads.
2. kernel run time: kernel.bpf_stats_enabled on (restored after), the same
   rotation; per program that ran, run_time_ns / run_cnt, and the sum of all
   the tracer's programs per traced call; the ratios as in 1.

  bench/sysprog.py [--rounds N] [--n N] [--tool LABEL=PATH ...]
                   [--args 'ARGS' ...] [--ladder] [--save NAME]
--tool: builds to compare, LABEL=COMMAND (default: this tree's
build/iostackbreak, as "this"; e.g. "hash=env IOSB_THREAD_SLOTS=4096
build/iostackbreak"; the binary last); --args: option sets (default "-T syscall"), each run with every
tool; --ladder: also the floor's steps up to a minimal histogram tracer
(LADDER). Needs `make -f bench/bench.mk bench-build`.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys

from benchlib import (BUILD, IOWORK, TOOL, ProgCounters, Tracer, cpu_model, need_root, save,
                      scratch_file, sysctl)

FLOOR = [os.path.join(BUILD, "bench", "floor"), os.path.join(BUILD, "bench", "floor-raw.bpf.o")]
FLOOR_NAME = "floor (raw pair, a clock read each)"
# --ladder: what a tracer of this layer cannot do without, a step at a time
# on top of the floor (bench/floor.bpf.c -DFLOOR_TASK, -DFLOOR_TASK_HIST).
LADDER = [("floor + the start in task storage",
           [FLOOR[0], os.path.join(BUILD, "bench", "floor-task.bpf.o")]),
          ("floor + task storage + a histogram",
           [FLOOR[0], os.path.join(BUILD, "bench", "floor-task_hist.bpf.o")])]


def pread_ns(path, n):
    p = subprocess.run(["taskset", "-c", "0", IOWORK, "-c", "pread", str(n), path],
                       capture_output=True, text=True, check=True)
    last = p.stdout.strip().splitlines()[-1]
    return int(dict(kv.split("=", 1) for kv in last.split()[1:])["ns"])


def prog_ids(pid):
    """The BPF programs a tracer holds, from its descriptors."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                ids |= {int(x.split()[1]) for x in f if x.startswith("prog_id:")}
        except OSError:  # closed since listed
            pass
    return ids


def prog_stats(ids):
    out = {}
    for i in ids:
        p = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(i)],
                           capture_output=True, text=True)
        if p.returncode == 0:
            d = json.loads(p.stdout)
            out[i] = (d.get("name", "?"), d.get("run_time_ns", 0), d.get("run_cnt", 0),
                      d.get("bytes_xlated", 0) // 8, d.get("bytes_jited", 0))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=300000, help="preads per run")
    ap.add_argument("--tool", action="append", default=[], help="LABEL=COMMAND")
    ap.add_argument("--args", action="append", default=[], help="options, one string")
    ap.add_argument("--ladder", action="store_true", help="also the floor's steps (LADDER)")
    ap.add_argument("--save", help="also write bench/results/NAME-DATE.md")
    a = ap.parse_args()
    need_root("bench/sysprog.py")
    tools = [t.split("=", 1) for t in a.tool] or [["this", TOOL]]
    argsets = a.args or ["-T syscall"]
    tools = [(label, shlex.split(cmd)) for label, cmd in tools]
    ladder = LADDER if a.ladder else []
    for f in [IOWORK, *FLOOR] + [c[1][-1] for c in ladder] + [t[1][-1] for t in tools]:
        if not os.path.exists(f):
            raise SystemExit(f"{f} missing: make && make -f bench/bench.mk bench-build")
    configs = [(FLOOR_NAME, FLOOR), *ladder]
    for label, cmd in tools:
        for s in argsets:
            configs.append((f"{label}: {s}", [*cmd, *shlex.split(s)]))
    failed = []
    for name, argv in configs[1:]:
        try:
            Tracer(argv).stop()
        except SystemExit as e:  # reported, and left out of the rounds
            failed.append(f"{name}: {str(e)[-300:]}")
    configs = [c for c in configs if not any(f.startswith(c[0] + ":") for f in failed)]
    path = scratch_file()
    added = {c[0]: [] for c in configs}
    per_prog = {c[0]: {} for c in configs}
    per_call = {c[0]: [] for c in configs}
    for r in range(a.rounds):
        for name, argv in configs[r % len(configs):] + configs[:r % len(configs)]:
            base = pread_ns(path, a.n)
            t = Tracer(argv)
            try:
                traced = pread_ns(path, a.n)
            finally:
                t.stop()
            added[name].append((traced - base) / a.n)
        print(f"round {r + 1}: " + ", ".join(f"{c[0]} {added[c[0]][-1]:.0f}" for c in configs),
              file=sys.stderr, flush=True)
    old = sysctl("kernel.bpf_stats_enabled", "1")
    try:
        for r in range(a.rounds):
            for name, argv in configs[r % len(configs):] + configs[:r % len(configs)]:
                t = Tracer(argv)
                try:
                    ids = prog_ids(t.proc.pid)
                    counters = ProgCounters(ids)
                    before = counters.snapshot()
                    pread_ns(path, a.n)
                    after = counters.snapshot()
                    counters.close()
                    sizes = prog_stats(ids)  # instructions and bytes, outside the window
                finally:
                    t.stop()
                total = 0
                for i, (pname, ns, cnt) in after.items():
                    runs = cnt - before[i][2]
                    if runs <= 0:
                        continue
                    total += ns - before[i][1]
                    insns, jited = sizes.get(i, (pname, 0, 0, 0, 0))[3:5]
                    per_prog[name].setdefault(pname, []).append(
                        ((ns - before[i][1]) / runs, runs / a.n, insns, jited))
                per_call[name].append(total / a.n)
    finally:
        sysctl("kernel.bpf_stats_enabled", old)
        os.unlink(path)
        os.rmdir(os.path.dirname(path))
    med = statistics.median
    floor = med(added[FLOOR_NAME])
    floor_k = med(per_call[FLOOR_NAME])

    def paired(xs, floors):
        """The median of the rounds' ratios to the floor of the same round."""
        return med(x / f for x, f in zip(xs, floors) if f > 0)

    md = ["# The syscall layer against its floor (bench/sysprog.py)", "",
          f"{cpu_model()}, {os.cpu_count()} CPUs, Linux {os.uname().release}; "
          f"{a.n} cached 4 KiB preads a run on CPU 0, {a.rounds} rounds (rotated order).",
          "", "Added time (traced - the untraced run before it; stats off):", "",
          "| tracer | added ns/call | vs floor | paired | all rounds |",
          "|---|---:|---:|---:|---|"]
    for name, _ in configs:
        x = added[name]
        md.append(f"| {name} | {med(x):.0f} | {med(x) / floor:.2f} | "
                  f"{paired(x, added[FLOOR_NAME]):.2f} | "
                  + ", ".join(f"{v:.0f}" for v in x) + " |")
    md += ["", "Kernel run time (BPF_STATS_RUN_TIME; the program body, not its dispatch):",
           "", "| tracer | BPF ns / call | vs floor | paired | programs: ns per run (runs per "
           "call; instructions after the verifier, bytes jited) |",
           "|---|---:|---:|---:|---|"]
    for name, _ in configs:
        progs = "; ".join(f"{p} {med(v[0] for v in xs):.1f} ({med(v[1] for v in xs):.2f}; "
                          f"{xs[0][2]}, {xs[0][3]})"
                          for p, xs in sorted(per_prog[name].items()))
        md.append(f"| {name} | {med(per_call[name]):.1f} "
                  f"({', '.join(f'{v:.0f}' for v in per_call[name])}) | "
                  f"{med(per_call[name]) / floor_k:.2f} | "
                  f"{paired(per_call[name], per_call[FLOOR_NAME]):.2f} | {progs} |")
    md += [f"\nDid not start: {f}" for f in failed]
    text = "\n".join(md) + "\n"
    print(text)
    if a.save:
        save(a.save, text)


if __name__ == "__main__":
    main()
