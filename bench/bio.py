#!/usr/bin/env python3
"""What the bio layer costs at a block device's top IOPS, beside -T blk.

    bench/bio.py [--rounds R] [--secs S]     # as root, under both locks

fio io_uring, queue depth 32, 4 KiB random reads on a loop device over a
cached file (the DESIGN's top-IOPS case), in rounds of alternating runs:
untraced, `-T blk -d LOOP`, `-T bio -d LOOP`, `-T bio,blk -d LOOP`, the
traced ones in a fresh random order each round, an untraced run between
every two. Per configuration: median IOPS and its loss against the mean of
the untraced runs beside it, and the kernel's BPF run time per I/O
(--stats). Writes bench/results/bio-DATE.md."""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import TOOL, Tracer, cpu_model, need_root, save  # noqa: E402

CONFIGS = {"-T blk": ["-T", "blk"], "-T bio": ["-T", "bio"], "-T bio,blk": ["-T", "bio,blk"]}


def fio(dev, secs):
    p = subprocess.run(["fio", "--name=b", f"--filename={dev}", "--direct=1", "--bs=4k",
                        "--rw=randread", "--ioengine=io_uring", "--iodepth=32",
                        f"--runtime={secs}", "--time_based", "--output-format=json"],
                       capture_output=True, text=True, check=True)
    job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["read"]
    return job["iops"], job["total_ios"]


def bpf_ns_per_io(out, ios):
    """The --stats table's total BPF run time (ns) over the run's I/Os."""
    total = 0
    for line in out.splitlines():
        m = re.match(r"^(bio|blk)\s+\d+\s+\d+\s+(\d+)", line)
        if m:
            total += int(m.group(2))
    return total / ios if ios else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=4)
    a = ap.parse_args()
    need_root("bench/bio.py")
    d = subprocess.run(["mktemp", "-d", "/var/tmp/iosb-bio.XXXXXX"], capture_output=True,
                       text=True, check=True).stdout.strip()
    img = os.path.join(d, "disk.img")
    with open(img, "wb") as f:
        f.write(os.urandom(1 << 20) * 256)  # 256 MiB, in the page cache
    dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True, text=True,
                         check=True).stdout.strip()
    name = os.path.basename(dev)
    iops = {k: [] for k in ["untraced", *CONFIGS]}
    loss = {k: [] for k in CONFIGS}
    bpf = {k: [] for k in CONFIGS}
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    try:
        for r in range(a.rounds):
            order = list(CONFIGS)
            rng.shuffle(order)
            before = fio(dev, a.secs)[0]
            iops["untraced"].append(before)
            for k in order:
                t = Tracer([TOOL, *CONFIGS[k], "-d", name, "--stats"])
                got, ios = fio(dev, a.secs)
                t.stop()
                after = fio(dev, a.secs)[0]
                iops["untraced"].append(after)
                iops[k].append(got)
                loss[k].append(1 - got / ((before + after) / 2))
                bpf[k].append(bpf_ns_per_io(t.out, ios))
                before = after
                print(f"round {r + 1} {k}: {got:,.0f} IOPS ({100 * loss[k][-1]:+.1f}% lost), "
                      f"BPF {bpf[k][-1]:.0f} ns/IO", flush=True)
    finally:
        subprocess.run(["losetup", "-d", dev])
        subprocess.run(["rm", "-rf", d])
    lines = [f"# bio layer at top IOPS ({cpu_model()}, {os.uname().release})", "",
             f"fio io_uring QD32 4 KiB random reads, loop device over a cached file, "
             f"{a.rounds} rounds of {a.secs} s, order seed {seed}.", "",
             "| configuration | median IOPS | median loss | BPF ns per I/O (--stats) |",
             "|---|---:|---:|---:|",
             f"| untraced | {statistics.median(iops['untraced']):,.0f} | - | - |"]
    for k in CONFIGS:
        lines.append(f"| `{k} -d LOOP` | {statistics.median(iops[k]):,.0f} | "
                     f"{100 * statistics.median(loss[k]):.1f}% | {statistics.median(bpf[k]):.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    save("bio", text)


if __name__ == "__main__":
    main()
