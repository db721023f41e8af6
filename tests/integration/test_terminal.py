"""For people at a terminal: the verdict line, the heat map, the live view.
Each is checked against the report it comes from, or against a workload
whose behaviour is known."""

import json
import os
import re
import tempfile

from harness import LoopDevice, Tool, Work, cell

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"))


def short_duration(ns):
    """What the verdict prints for a time (src/verdict.c format_duration)."""
    for size, name in UNITS:
        if ns >= size:
            v = ns / size
            return f"{v:.1f} {name}" if v < 10 else f"{v:.0f} {name}"
    return f"{ns} ns"


def direct_reads_report(n, *extra):
    """n direct 4 KiB reads of a loop device under -p, with the tool's
    extra options; returns (the tool's stdout, the loop device's name)."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        loop = LoopDevice(tmp)
        try:
            work = Work("-x", "-D", "pread", str(n), loop.dev)
            tool = Tool("-T", "syscall,blk", "-d", loop.name, "-p", str(work.pid), *extra)
            work.go()
            result = work.finish_held()
            work.release()
            rc, out, err = tool.wait(timeout=60)
        finally:
            loop.close()
    assert rc == 0, err
    assert int(result["done"]) == n, result
    return out, loop.name


@test
def verdict_matches_the_tables_it_sums_up():
    out, disk = direct_reads_report(400, "--json")
    rep = json.loads(out.splitlines()[-1])
    verdict = rep["verdict"]
    read = cell(rep, "syscall", "read")
    b = next(b for b in rep["breakdown"] if b["op"] == "read")
    # Rule 2: read has all the time; the other ops with calls are named
    # only for a long tail.
    head = f"read p99 {short_duration(read['p99_ns'])} ({read['count']:,} calls"
    assert verdict.startswith(head), (verdict, head)
    # Rule 3: the parts, largest first, each share as the breakdown has it.
    tail = verdict.split(": ", 1)[1].split("; ")[0]
    shares = re.findall(r"(\d+)% ([a-z_ ]+?)(?: \(|,|$)", tail)
    assert shares, verdict
    sums = {p["part"]: p["sum_ns"] for p in b["parts"]}
    named = {"waiting for " + disk: "io_wait", "runqueue": "runqueue", "blocked": "blocked",
             "syscall on CPU": "syscall"}
    prev = 101
    for pct, what in shares:
        part = named[what.strip()]
        want = 100 * sums[part] / b["total_ns"]
        assert abs(int(pct) - want) <= 0.5 + 1e-9, (verdict, part, want)
        assert int(pct) <= prev, verdict
        prev = int(pct)
    if "io_wait" in [named[w.strip()] for _, w in shares]:
        per_call = b["blk_requests"] / b["count"]
        shown = f"{per_call:.2g}" if per_call < 1 else f"{per_call:.1f}"
        assert f"waiting for {disk} ({shown} requests/call)" in verdict, verdict


@test
def verdict_heads_every_text_report_and_no_verdict_drops_it():
    out, _ = direct_reads_report(100, "-u")
    first = next(line for line in out.splitlines() if line.strip())
    assert first.startswith("verdict: read p99 "), out[:400]
    assert "(100 calls" in first, first
    out, _ = direct_reads_report(100, "-u", "--no-verdict")
    assert "verdict" not in out, out[:400]
