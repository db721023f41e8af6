#!/usr/bin/env python3
"""What stacks of block I/O (-K, -U) cost, side by side with the same run
without them (issue 48): fio io_uring, queue depth 32, 4 KiB random
O_DIRECT reads on a loop device over a page-cached file (bench/blkiops.py's
workload and method), untraced, -T blk -P (the same programs keyed by
request that stacks need, no stack taken), -T blk -P -K, -T blk -P -U
(--user-stack=fp), -T blk -P -K -U, and -T blk -P -U --user-stack=dwarf
(issue 44: each request copies the user registers and 8 KiB of user
stack, unwound in user space), every configuration once a round in a
rotated order.

Two passes, as root (take both locks on a shared machine, bench/README.md):
1. throughput: each configuration's median IOPS and its loss against the
   median untraced IOPS;
2. kernel BPF time: kernel.bpf_stats_enabled on (restored after), one run
   per traced configuration: BPF ns per request of the loop device, the
   added ns per request against -T blk -P, and the memory of the tracer's
   maps (memlock in /proc/PID/fdinfo), the stack maps' share of it; for
   dwarf, from the tool's JSON report, the bytes copied per copy, the
   user-space unwind time per stack, and the copies the ring buffer had no
   room for (counted: user space unwinds slower than fio submits).
Writes bench/results/stacks-DATE.md and prints it.
"""

import json
import os
import statistics
import subprocess

import blkiops
from benchlib import TOOL, cpu_model, need_root, save, sysctl

STACK_MAPS = ("stack_traces", "stack_counts", "stack_proc_news", "stack_losses", "ustack_buf",
              "ustack_snaps", "ustack_modes")


def configs(disk):
    base = [TOOL, "-d", disk, "-T", "blk", "-P"]
    return [
        ("untraced", None, None),
        ("-T blk -P", base, None),
        ("-T blk -P -K", base + ["-K"], None),
        ("-T blk -P -U", base + ["--user-stack=fp"], None),
        ("-T blk -P -K -U", base + ["-K", "--user-stack=fp"], None),
        ("-T blk -P -U dwarf", base + ["--user-stack=dwarf", "--json"], None),
    ]


def map_memory(pid):
    """(all maps' memlock, the stack maps' memlock) of the tracer, bytes."""
    total = stacks = 0
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            if os.readlink(os.path.join(fd_dir, fd)) != "anon_inode:bpf-map":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        mem = int(info.get("memlock", "0").strip())
        map_id = info.get("map_id", "").strip()
        total += mem
        p = subprocess.run(["bpftool", "-j", "map", "show", "id", map_id],
                           capture_output=True, text=True)
        if p.returncode == 0 and json.loads(p.stdout).get("name") in STACK_MAPS:
            stacks += mem
    return total, stacks


def unwinding(out):
    """The tool's JSON report's unwinding figures (None without them)."""
    for line in out.splitlines():
        if line.startswith("{"):
            st = json.loads(line).get("stacks", {})
            if "unwinding" in st:
                return dict(st["unwinding"], lost=st["lost"]["stack_copies"])
    return None


def kernel_run(cfg, dev, disk, secs):
    """(BPF ns per request, runs per request, maps bytes, stack maps bytes,
    the unwinding figures of dwarf or None)."""
    name, argv, env = cfg
    before = blkiops.prog_stats()
    t = blkiops.start(argv, env)
    try:
        mem = map_memory(t.proc.pid)
        ours = {i: v for i, v in blkiops.prog_stats().items() if i not in before}
        n0 = blkiops.completed(disk)
        blkiops.fio(dev, secs)
        n1 = blkiops.completed(disk)
        after = blkiops.prog_stats()
    finally:
        t.stop()
    ns = sum(after[i][1] - v[1] for i, v in ours.items() if i in after)
    cnt = sum(after[i][2] - v[2] for i, v in ours.items() if i in after)
    req = max(1, n1 - n0)
    return ns / req, cnt / req, mem[0], mem[1], unwinding(t.out)


def main():
    a = blkiops.arguments(__doc__)
    need_root("stacks.py")
    tmp, img, dev, disk = blkiops.cached_loop(a.size_mib)
    C = configs(disk)
    kern = {}
    stats_old = sysctl("kernel.bpf_stats_enabled")
    try:
        iops = blkiops.throughput(C, dev, disk, a.rounds, a.seconds)
        sysctl("kernel.bpf_stats_enabled", "1")
        for c in C[1:]:
            kern[c[0]] = kernel_run(c, dev, disk, a.seconds)
    finally:
        sysctl("kernel.bpf_stats_enabled", stats_old)
        blkiops.drop_loop(tmp, img, dev)
    base = statistics.median(iops["untraced"])
    lines = ["# Stacks of block I/O: cost side by side (bench/stacks.py)", "",
             f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; kernel {os.uname().release}; "
             f"fio io_uring QD32 4 KiB randread O_DIRECT on {disk} over a page-cached "
             f"{a.size_mib} MiB file, {a.seconds} s a run, {a.rounds} rounds (rotated order).",
             "", "| configuration | median IOPS | loss vs untraced | rounds |",
             "|---|---:|---:|---|"]
    for c in C:
        m = statistics.median(iops[c[0]])
        lines.append(f"| {c[0]} | {m / 1000:.1f}k | {(1 - m / base) * 100:.1f}% | "
                     + ", ".join(f"{x / 1000:.1f}k" for x in iops[c[0]]) + " |")
    ref = kern["-T blk -P"][0]
    lines += ["", "Kernel BPF time (kernel.bpf_stats_enabled, one run each, the programs "
              "the tracer loaded; per request of the loop device) and the tracer's map "
              "memory (memlock):", "",
              "| configuration | BPF ns / request | added by stacks | runs / request "
              "| maps | of which stack maps |", "|---|---:|---:|---:|---:|---:|"]
    for c in C[1:]:
        ns, runs, mem, smem, _ = kern[c[0]]
        lines.append(f"| {c[0]} | {ns:.0f} | {ns - ref:+.0f} | {runs:.2f} | "
                     f"{mem / 1048576:.1f} MiB | {smem / 1048576:.1f} MiB |")
    lines += ["", "DWARF unwinding (--user-stack=dwarf), from the tool's report: copies "
              "sent to user space, bytes of stack copied per copy, user-space unwind time "
              "per stack, copies lost with no room in the ring buffer:", "",
              "| configuration | copies | bytes / copy | unwind us / stack | lost |",
              "|---|---:|---:|---:|---:|"]
    for c in C[1:]:
        u = kern[c[0]][4]
        if u and u["stacks"]:
            lines.append(f"| {c[0]} | {u['stacks']} | {u['bytes_copied'] / u['stacks']:.0f} | "
                         f"{u['unwind_ns'] / u['stacks'] / 1000:.1f} | {u['lost']} |")
    text = "\n".join(lines) + "\n"
    save("stacks", text)
    print(text)


if __name__ == "__main__":
    main()
