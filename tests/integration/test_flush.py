"""Flushes and fsync's block I/O (issue 29), against the kernel's counters.

For each fsync pattern, on an ext4 over a loop device (the only writer on
that disk, so the window is exact): the tool's blk write and flush counts,
under the plain report and under -P, -D and -F, against /proc/diskstats'
writes column and against the device flushes the kernel's own tracepoint
reports (ftrace, block_rq_complete of REQ_OP_FLUSH), and a process filter
(-p) that must see its own flushes."""

import contextlib
import os
import tempfile
import time

from harness import LoopDevice, Skip, Tool, Work, cell, diskstats_writes, run

TRACEFS = "/sys/kernel/tracing"
N = 120

# name, iowork arguments (FILE is the file on the test file system), syscall
# op the process does, journal?, write cache
PATTERNS = [
    ("unchanged-fsync", ["-c", "fsync", N, "FILE"], "fsync", False, "write back"),
    ("overwrite-fsync", ["-W", "-c", "fsync", N, "FILE"], "fsync", False, "write back"),
    ("append-fdatasync", ["-W", "-A", "-c", "fdatasync", N, "FILE"], "fsync", False,
     "write back"),
    ("o_sync-writes", ["-S", "sync", "-c", "pwrite", N, "FILE"], "write", False, "write back"),
    ("o_dsync-writes", ["-S", "dsync", "-c", "pwrite", N, "FILE"], "write", False, "write back"),
    ("4-threads-fsync", ["-t", "4", "-W", "-c", "fsync", N, "FILE"], "fsync", False,
     "write back"),
    ("write-through", ["-W", "-c", "fsync", N, "FILE"], "fsync", False, "write through"),
    ("journal-overwrite-fsync", ["-W", "-c", "fsync", N, "FILE"], "fsync", True, "write back"),
    ("journal-append-fdatasync", ["-W", "-A", "-c", "fdatasync", N, "FILE"], "fsync", True,
     "write back"),
]


class DeviceFlushes:
    """Counts the device flushes the kernel completes on one disk, by its own
    tracepoint through ftrace: an independent count, no BPF."""

    def __init__(self, dev_t):
        self.dir = os.path.join(TRACEFS, "instances", f"iosb-flush-{os.getpid()}")
        if not os.path.isdir(os.path.join(TRACEFS, "events", "block")):
            raise Skip("no tracefs block events")
        os.mkdir(self.dir)
        ev = os.path.join(self.dir, "events", "block", "block_rq_complete")
        with open(os.path.join(ev, "filter"), "w") as f:
            f.write(f"dev == {dev_t}")
        with open(os.path.join(ev, "enable"), "w") as f:
            f.write("1")
        with open(os.path.join(self.dir, "buffer_size_kb"), "w") as f:
            f.write("8192")

    def start(self):
        with open(os.path.join(self.dir, "tracing_on"), "w") as f:
            f.write("1")

    def stop(self):
        with open(os.path.join(self.dir, "tracing_on"), "w") as f:
            f.write("0")
        with open(os.path.join(self.dir, "trace")) as f:
            text = f.read()
        assert "LOST" not in text, "ftrace lost events: the count would be short"
        # rwbs of a device flush: "FF" (REQ_OP_FLUSH | REQ_PREFLUSH)
        return sum(1 for line in text.splitlines() if "block_rq_complete:" in line
                   and line.split("block_rq_complete:")[1].split()[1] == "FF")

    def close(self):
        with contextlib.suppress(OSError):
            self.stop()
        os.rmdir(self.dir)


def kernel_dev_t(name):
    with open(f"/sys/class/block/{name}/dev") as f:
        major, minor = (int(x) for x in f.read().split(":"))
    return (major << 20) | minor


def op_totals(report, layer="blk"):
    """Per op, the count summed over a report's cells (any breakdown)."""
    out = {}
    for c in report["cells"]:
        if c["layer"] == layer:
            out[c["op"]] = out.get(c["op"], 0) + c["count"] + c.get("errors", 0)
    return out


def dropped(report):
    return report.get("dropped", 0)


def run_pattern(name, args, sysop, journal, cache, tmp):
    """Runs one pattern; returns the figures of the window."""
    loop = LoopDevice(tmp, size_mib=256, name=f"{name}.img")
    mnt = os.path.join(tmp, name)
    os.mkdir(mnt)
    mounted = False
    ftr = None
    tools = []
    try:
        # No lazy init: no background writer on the disk during the window.
        feats = [] if journal else ["-O", "^has_journal"]
        run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
            *feats, loop.dev, check=True)
        with open(f"/sys/block/{loop.name}/queue/write_cache", "w") as f:
            f.write(cache)
        run("mount", loop.dev, mnt, check=True)
        mounted = True
        path = os.path.join(mnt, "f")
        work = Work(*[path if a == "FILE" else str(a) for a in args])
        # Whatever setup left dirty goes out before the tools' window opens.
        run("sync")
        time.sleep(0.3)
        d = ["-d", loop.name, "--json"]
        tools = {
            "plain": Tool("-T", "blk", *d),
            "P": Tool("-T", "blk", "-P", *d),
            "D": Tool("-T", "blk", "-D", *d),
            "F": Tool("-T", "blk", "-F", *d),
            "Q": Tool("-T", "blk", "-Q", *d),
            "p": Tool("-T", "syscall,blk", "-p", str(work.pid), *d),
        }
        ftr = DeviceFlushes(kernel_dev_t(loop.name))
        before = diskstats_writes(loop.name)
        ftr.start()
        work.go()
        result = work.finish()
        assert int(result["done"]) == N, result
        time.sleep(0.3)
        after = diskstats_writes(loop.name)
        device_flushes = ftr.stop()
        reports = {k: t.stop_json()[-1] for k, t in tools.items()}
        tools = {}
        return {
            "diskstats": tuple(a - b for a, b in zip(after, before)),
            "device_flushes": device_flushes,
            "reports": reports,
            "sysop": sysop,
        }
    finally:
        for t in (tools.values() if isinstance(tools, dict) else []):
            with contextlib.suppress(Exception):
                t.stop()
        if ftr:
            ftr.close()
        if mounted:
            run("umount", mnt)
        loop.close()


def check_pattern(name, fig):
    ws, wsect, dflush = fig["diskstats"]
    r = fig["reports"]
    plain = op_totals(r["plain"])
    what = f"{name}: diskstats {fig['diskstats']}, device flushes {fig['device_flushes']}"
    # The stated relation: write = diskstats' writes (an empty PREFLUSH write
    # counted as the kernel does), flush = the flushes the device completed.
    assert plain.get("write", 0) == ws, f"{what}: tool writes {plain}"
    assert plain.get("flush", 0) == fig["device_flushes"], f"{what}: tool flushes {plain}"
    assert plain.get("flush", 0) == dflush, f"{what}: tool flushes {plain}"
    for key in ("P", "D", "F", "Q"):
        got = op_totals(r[key])
        for op in set(plain) | set(got):
            assert got.get(op, 0) == plain.get(op, 0), \
                f"{what}: -{key} {op} {got.get(op, 0)} != plain {plain.get(op, 0)}"
        assert dropped(r[key]) == 0, f"{what}: -{key} dropped {r[key]['dropped_by_reason']}"
    own = op_totals(r["p"])
    calls = cell(r["p"], "syscall", fig["sysop"])["count"]
    assert calls >= N, f"{what}: -p saw {calls} {fig['sysop']} calls"
    if fig["device_flushes"] and "journal" not in name:
        # No journal: the process asked for every flush the disk did.
        assert own.get("flush", 0) == fig["device_flushes"], f"{what}: -p {own}"


def table_row(name, fig):
    r = fig["reports"]
    plain, own = op_totals(r["plain"]), op_totals(r["p"])
    pre = sum(c["count"] for c in r["F"]["cells"] if c["layer"] == "blk" and c["op"] == "write"
              and "preflush" in c.get("flags", []))
    ws, wsect, dflush = fig["diskstats"]
    return (f"{name:26} tool write {plain.get('write', 0):4} (preflush-only {pre:3}) "
            f"flush {plain.get('flush', 0):4} | -p write {own.get('write', 0):4} "
            f"flush {own.get('flush', 0):4} | diskstats writes {ws:4} sectors {wsect:6} "
            f"flushes {dflush:4} | device flushes {fig['device_flushes']:4}")


def _pattern_test(pattern):
    name = pattern[0]

    def test():
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            fig = run_pattern(*pattern, tmp)
        print("   ", table_row(name, fig))
        check_pattern(name, fig)

    test.__name__ = "flush_relation_" + name.replace("-", "_")
    return test


TESTS = [_pattern_test(p) for p in PATTERNS]
