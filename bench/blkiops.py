#!/usr/bin/env python3
"""The block layer's cost at top IOPS (issue 21): fio io_uring, queue depth
32, 4 KiB random O_DIRECT reads on a loop device over a page-cached file,
untraced and under each tracer, in alternating rounds.

Two passes, as root (take both locks on a shared machine, bench/README.md):
1. throughput: every round runs every configuration once, in a rotated
   order; each configuration's median IOPS and its loss against the median
   untraced IOPS; all rounds printed. BPF run-time statistics are off here:
   they cost every program run two clock reads.
2. kernel BPF time: kernel.bpf_stats_enabled on, one run per traced
   configuration; run_time_ns and run_cnt summed over the programs the
   tracer loaded, divided by the requests the loop device completed
   (/proc/diskstats). Runs per request count every disk's events, as the
   tracepoints fire for all of them.

The floor, when built, is an empty program on block_rq_complete alone.
'(old)' configurations are -T blk with IOSB_BLK_STAMPS=0: the programs keyed
by request that one program per request replaced, measured side by side.
Writes bench/results/blkiops-DATE.md and prints it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import BUILD, ROOT, TOOL, Tracer, cpu_model, need_root, save, sysctl

sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from harness import disk_stats  # noqa: E402  (the one reader of /proc/diskstats)

BIOLATENCY = "/usr/sbin/biolatency"
# An empty tp_btf block_rq_complete program (make -f bench/bench.mk
# bench-build): the dispatch that one program per request cannot avoid.
FLOOR = os.path.join(BUILD, "bench", "floor")
FLOOR_DONE = os.path.join(BUILD, "bench", "floor-blk_done.bpf.o")


def configs(disk, pattern=False):
    ours = [TOOL, "-d", disk]
    old = {"IOSB_BLK_STAMPS": "0"}
    new = None  # the default: one program per request
    if pattern:
        # --pattern on and off side by side: its block_rq_issue program
        # beside one program per request, and beside the keyed ones (-P).
        return [
            ("untraced", None, None),
            ("-T blk", ours + ["-T", "blk"], new),
            ("-T blk --pattern", ours + ["-T", "blk", "--pattern"], new),
            ("-T blk -P", ours + ["-T", "blk", "-P"], None),
            ("-T blk -P --pattern", ours + ["-T", "blk", "-P", "--pattern"], None),
            ("biolatency", ["stdbuf", "-oL", BIOLATENCY, "-d", disk], None),
        ]
    return [
        ("untraced", None, None),
        ("-T blk", ours + ["-T", "blk"], new),
        ("-T blk -Q", ours + ["-T", "blk", "-Q"], new),
        ("-T blk (old)", ours + ["-T", "blk"], old),
        ("-T blk -Q (old)", ours + ["-T", "blk", "-Q"], old),
        ("-T blk -P", ours + ["-T", "blk", "-P"], None),
        ("all layers", [TOOL], None),
        ("biolatency", ["stdbuf", "-oL", BIOLATENCY, "-d", disk], None),
        ("biolatency -Q", ["stdbuf", "-oL", BIOLATENCY, "-Q", "-d", disk], None),
    ] + ([("floor: empty block_rq_complete", [FLOOR, FLOOR_DONE], None)]
         if os.path.exists(FLOOR_DONE) else [])


def prog_stats():
    """id -> (name, run_time_ns, run_cnt) of every loaded BPF program."""
    p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                       check=True)
    return {d["id"]: (d.get("name", "?"), d.get("run_time_ns", 0), d.get("run_cnt", 0))
            for d in json.loads(p.stdout or "[]")}


def completed(disk):
    """Requests the disk completed: reads, writes, discards, flushes."""
    s = disk_stats(disk)
    return s.reads + s.writes + s.discards + s.flushes


def fio(dev, secs):
    p = subprocess.run(["fio", "--name=r", f"--filename={dev}", "--direct=1", "--bs=4k",
                        "--rw=randread", "--ioengine=io_uring", "--iodepth=32",
                        f"--runtime={secs}", "--time_based", "--output-format=json"],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["read"]["iops"]


def start(argv, env):
    """A tracer, from its ready line: ours and biolatency both print it."""
    if env:
        os.environ.update(env)
    try:
        return Tracer(argv)
    finally:
        for k in env or ():
            del os.environ[k]


def run(cfg, dev, disk, secs, stats):
    """(IOPS, BPF ns per request, runs per request, programs that ran)."""
    name, argv, env = cfg
    if not argv:
        return fio(dev, secs), None, None, None
    before = prog_stats() if stats else {}
    t = start(argv, env)
    try:
        ours = {i: v for i, v in prog_stats().items() if i not in before} if stats else {}
        n0 = completed(disk)
        iops = fio(dev, secs)
        n1 = completed(disk)
        after = prog_stats() if stats else {}
    finally:
        t.stop()
    if not stats:
        return iops, None, None, None
    ns = sum(after[i][1] - v[1] for i, v in ours.items() if i in after)
    cnt = sum(after[i][2] - v[2] for i, v in ours.items() if i in after)
    ran = sorted(after[i][0] for i, v in ours.items() if i in after and after[i][2] > v[2])
    req = max(1, n1 - n0)
    return iops, ns / req, cnt / req, ran


def cached_loop(size_mib):
    """(temporary directory, image, loop device, its name): a loop device
    over a file filled and read once, so that its reads come from the page
    cache. drop_loop() undoes it."""
    tmp = tempfile.mkdtemp(dir="/var/tmp")
    img = os.path.join(tmp, "disk.img")
    with open(img, "wb") as f:
        f.truncate(size_mib << 20)
    subprocess.run(["dd", "if=/dev/urandom", f"of={img}", "bs=1M", f"count={size_mib}",
                    "conv=notrunc", "status=none"], check=True)
    subprocess.run(["cat", img], stdout=subprocess.DEVNULL, check=True)
    dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True, text=True,
                         check=True).stdout.strip()
    return tmp, img, dev, os.path.basename(dev)


def drop_loop(tmp, img, dev):
    subprocess.run(["losetup", "-d", dev])
    os.unlink(img)
    os.rmdir(tmp)


def throughput(C, dev, disk, rounds, secs):
    """Name -> the IOPS of each round: every configuration once a round, in
    an order rotated each round; each round printed on stderr."""
    iops = {c[0]: [] for c in C}
    time.sleep(0.5)
    fio(dev, 1)  # warm-up
    for r in range(rounds):
        for c in C[r % len(C):] + C[:r % len(C)]:
            iops[c[0]].append(run(c, dev, disk, secs, False)[0])
        print(f"round {r + 1}: " + ", ".join(f"{c[0]} {iops[c[0]][-1]:.0f}" for c in C),
              file=sys.stderr, flush=True)
    return iops


def arguments(doc):
    """The options of this bench and of those that run its workload."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4, help="fio runtime per run")
    ap.add_argument("--size-mib", type=int, default=512)
    if doc == __doc__:
        ap.add_argument("--pattern", action="store_true",
                        help="--pattern on and off, side by side (writes blkiops-pattern-DATE.md)")
    return ap.parse_args()


def main():
    a = arguments(__doc__)
    need_root("blkiops.py")
    for tool in (TOOL, BIOLATENCY, "fio", "bpftool", "losetup", "stdbuf"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            raise SystemExit(f"blkiops.py: {tool} not found (make; scripts/install-deps.sh)")
    tmp, img, dev, disk = cached_loop(a.size_mib)
    C = configs(disk, a.pattern)
    kern = {}
    stats_old = sysctl("kernel.bpf_stats_enabled")
    lines = []
    try:
        iops = throughput(C, dev, disk, a.rounds, a.seconds)
        sysctl("kernel.bpf_stats_enabled", "1")
        for c in C[1:]:
            kern[c[0]] = run(c, dev, disk, a.seconds, True)
    finally:
        sysctl("kernel.bpf_stats_enabled", stats_old)
        drop_loop(tmp, img, dev)
    base = statistics.median(iops["untraced"])
    bio = {k: 1 - statistics.median(iops[k]) / base for k in ("biolatency", "biolatency -Q")
           if k in iops}
    lines += ["# Block layer cost at top IOPS (bench/blkiops.py)", "",
              f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; kernel {os.uname().release}; "
              f"fio io_uring QD32 4 KiB randread O_DIRECT on {disk} over a page-cached "
              f"{a.size_mib} MiB file, {a.seconds} s a run, {a.rounds} rounds (rotated order).",
              "", "| configuration | median IOPS | loss vs untraced | vs biolatency's loss "
              "| rounds |", "|---|---:|---:|---:|---|"]
    for c in C:
        m = statistics.median(iops[c[0]])
        loss = 1 - m / base
        peer = bio.get("biolatency -Q" if "-Q" in c[0] else "biolatency", 0)
        rel = f"{loss / peer:.2f}x" if c[0] != "untraced" and peer > 0 else "-"
        lines.append(f"| {c[0]} | {m / 1000:.1f}k | {loss * 100:.1f}% | {rel} | "
                     + ", ".join(f"{x / 1000:.1f}k" for x in iops[c[0]]) + " |")
    lines += ["", "Kernel BPF time (kernel.bpf_stats_enabled, one run each, the programs "
              "the tracer loaded; per request of the loop device):", "",
              "| configuration | BPF ns / request | runs / request | programs that ran |",
              "|---|---:|---:|---|"]
    for c in C[1:]:
        _, ns, runs, ran = kern[c[0]]
        lines.append(f"| {c[0]} | {ns:.0f} | {runs:.2f} | {len(ran)}: {', '.join(ran)} |")
    text = "\n".join(lines) + "\n"
    save("blkiops-pattern" if a.pattern else "blkiops", text)
    print(text)


if __name__ == "__main__":
    main()
