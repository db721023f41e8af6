#!/usr/bin/env python3
"""The syscall layer's two sources side by side (root; about 5 minutes).

Per round, alternating, each on an otherwise idle tracer set-up:
  untraced; the floor (tp_btf sys_enter + sys_exit each reading the clock
  once and storing it: bench/floor.bpf.c -DFLOOR_RAW); `-T syscall` on the
  raw pair (--attach=raw, the default); `-T syscall` on a tracepoint pair
  per syscall (--attach=tracepoint); libbpf-tools' syscount -L.
Workloads: cached 4 KiB preads (traced calls), getppid() (a call no
layer traces) and 1-byte writes and reads of a pipe (calls the syscall
layer sees and leaves out: not on a storage file). Then start-up (exec to "Hit Ctrl-C to end.") and exit
(SIGINT to exit) of all layers with each source.

Figures are medians over rounds of the traced run minus the untraced run
of the same round, per call. Markdown on stdout (bench/results/
sources-DATE.md with --save). Needs `make -f bench/bench.mk bench-build`.
"""

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

from benchlib import BUILD, IOWORK, READY, TOOL, Tracer, cpu_model, need_root, save, scratch_file

FLOOR = os.path.join(BUILD, "bench", "floor")
SYSLOOP = os.path.join(BUILD, "bench", "sysloop")


def peer(name):
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin"):
        for n in (name, f"bpf-{name}"):
            if os.path.exists(os.path.join(d, n)):
                return os.path.join(d, n)
    return shutil.which(name) or shutil.which(f"bpf-{name}")


def run_ns(argv):
    p = subprocess.run(["taskset", "-c", "0", *argv], capture_output=True, text=True,
                       check=True)
    lines = p.stdout.strip().splitlines()
    if lines and lines[-1].startswith("iowork "):
        return int(dict(kv.split("=", 1) for kv in lines[-1].split()[1:])["ns"])
    return int(lines[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n-pread", type=int, default=300000)
    ap.add_argument("--n-getppid", type=int, default=1000000)
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args()
    need_root("bench/sources.py")
    for f in (TOOL, IOWORK, FLOOR, SYSLOOP):
        if not os.path.exists(f):
            raise SystemExit(f"{f} missing: make && make -f bench/bench.mk bench-build")
    path = scratch_file()
    configs = {
        "floor (raw pair, a clock read each)": ([FLOOR, os.path.join(BUILD, "bench",
                                                                      "floor-raw.bpf.o")], READY),
        "-T syscall (raw, default)": ([TOOL, "-T", "syscall", "--attach=raw"], READY),
        "-T syscall --attach=tracepoint": ([TOOL, "-T", "syscall", "--attach=tracepoint"],
                                           READY),
    }
    sc = peer("syscount")
    if sc:
        configs["syscount -L"] = (["stdbuf", "-oL", sc, "-L"], "Ctrl+C to quit")
    loads = {
        "cached 4 KiB pread": ([IOWORK, "pread", str(a.n_pread), path], a.n_pread),
        "getppid (not traced)": ([SYSLOOP, str(a.n_getppid)], a.n_getppid),
        # 1-byte write + read pairs on a pipe: seen, and left out (not storage).
        "pipe write/read (left out)": ([SYSLOOP, str(a.n_getppid // 2), "pipe"],
                                       a.n_getppid // 2 * 2),
    }
    added = {(w, c): [] for w in loads for c in configs}
    for _ in range(a.rounds):
        for w, (argv, n) in loads.items():
            for c, (targv, ready) in configs.items():
                base = run_ns(argv)
                t = Tracer(targv, ready)
                traced = run_ns(argv)
                t.stop()
                added[(w, c)].append((traced - base) / n)
    life = {}
    for src in ("raw", "tracepoint"):
        starts, exits = [], []
        for _ in range(a.rounds):
            t = Tracer([TOOL, f"--attach={src}"], READY)
            time.sleep(0.2)
            starts.append(t.start_s * 1000)
            exits.append(t.stop() * 1000)
        life[src] = (starts, exits)

    cpu = cpu_model()
    med = statistics.median
    md = [f"# Syscall sources side by side ({datetime.date.today()})", "",
          f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}; {a.rounds} rounds, "
          "medians of (traced - untraced) per call, workload pinned to CPU 0.", "",
          "| workload | tracer | added ns/call | vs floor | all rounds |", "|---|---|---:|---:|---|"]
    floor_key = "floor (raw pair, a clock read each)"
    for w in loads:
        f = med(added[(w, floor_key)])
        for c in configs:
            xs = added[(w, c)]
            md.append(f"| {w} | {c} | {med(xs):.0f} | {med(xs) / f:.2f} | "
                      f"{', '.join(f'{x:.0f}' for x in xs)} |")
    md += ["", "| all layers, syscall source | start-up (ms) | SIGINT to exit (ms) |",
           "|---|---:|---:|"]
    for src, (starts, exits) in life.items():
        md.append(f"| {src} | {med(starts):.0f} ({min(starts):.0f}-{max(starts):.0f}) | "
                  f"{med(exits):.0f} ({min(exits):.0f}-{max(exits):.0f}) |")
    text = "\n".join(md) + "\n"
    sys.stdout.write(text)
    if a.save:
        save("sources", text)


if __name__ == "__main__":
    main()
