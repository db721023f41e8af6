"""Buffered writes: the disk writes a flusher submits later are charged to the
process that dirtied the pages (bpf/writeback.bpf.c), checked against the
kernel's own count of what a process caused to be written: /proc/PID/io
write_bytes - cancelled_write_bytes, charged where a page goes from clean
to dirty, the same place the tool records the dirtier.

Every test makes its own ext4 on a loop device and syncs that file system
only (sync -f, syncfs): nothing else on the machine is flushed or changed.

This host's kernel hides a few block completions from BPF
(harness.host_hides_completions): a hidden write completion's pages are
never seen written. An ftrace instance records the loop disk's write
completions with the task that was current, so the bytes hidden are known
without BPF: the tool's figure must then lie between the truth less the
hidden bytes and the truth, and equal it when none was hidden."""

import json
import os
import subprocess
import sys

from harness import (LoopDevice, Process, Tool, FtraceInstance, HiddenCompletions, make_cgroup,
                     make_tempdir, mount, on_cleanup, read_proc_io, run, run_process, Skip)
from harness import test

MIB = 1 << 20

# A buffered writer the test holds: READY, then SIZE bytes at OFF in 1 MiB
# pwrites when told, then DONE, and it exits when told, so that /proc/PID/io
# can be read just before it exits.
WRITER = r'''
import os, sys
path, off, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
print("READY", os.getpid(), flush=True)
sys.stdin.readline()
buf = b"\xa5" * (1 << 20)
for o in range(off, off + size, len(buf)):
    os.pwrite(fd, buf, o)
os.close(fd)
print("DONE", flush=True)
sys.stdin.readline()
'''


def charged(io):
    return io["write_bytes"] - io["cancelled_write_bytes"]


class Writer:
    """WRITER as a process of the test; exit() returns the kernel's count
    of the bytes it caused to be written since it was ready."""

    def __init__(self, path, off, size):
        self.proc = Process([sys.executable, "-B", "-c", WRITER, path, str(off), str(size)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("READY "), line
        self.pid = int(line.split()[1])
        self.before = read_proc_io(self.pid)

    def go(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def done(self):
        """Waits for its writes; returns the bytes charged to it. It stays
        until exit(): a tool traces -p PID only while PID lives."""
        line = self.proc.stdout.readline()
        assert line.strip() == "DONE", line
        return charged(read_proc_io(self.pid)) - charged(self.before)

    def exit(self):
        """Lets it exit; the kernel's count, read just before, unchanged."""
        after = read_proc_io(self.pid)
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=30)
        assert self.proc.returncode == 0, self.proc.returncode
        return charged(after) - charged(self.before)


class Ext4Loop:
    """ext4 on a loop device of the test's own, mounted in a temp dir."""

    def __init__(self, size_mib=256):
        tmp = make_tempdir(prefix="iosb-wb-")
        self.loop = LoopDevice(tmp, size_mib=size_mib)
        self.mnt = os.path.join(tmp, "mnt")
        os.mkdir(self.mnt)
        # No lazy init, no bitmap prefetch: no background writer of its own.
        run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
            self.loop.dev, check=True)
        p = mount("-o", "no_prefetch_block_bitmaps", self.loop.dev, where=self.mnt)
        assert p.returncode == 0, p.stderr
        self.name = self.loop.name

    def path(self, name):
        return os.path.join(self.mnt, name)

    def syncfs(self):
        """Writes back this file system alone (syncfs(2)), and waits."""
        run("sync", "-f", self.mnt, check=True, timeout=120)


class HiddenWrites(HiddenCompletions):
    """Write completions of one disk that the kernel ran with PID 1 current
    (hidden from BPF on this host), counted by ftrace: (requests, bytes)."""

    def __init__(self, disk):
        super().__init__(disk)
        self.start()

    def stop(self):
        n = nbytes = 0
        for hidden, fields in self.stop_events():
            if not hidden or "W" not in fields[1] or "+" not in fields:
                continue
            n += 1
            nbytes += int(fields[fields.index("+") + 1]) * 512
        return n, nbytes


def written_back(rep, pid=None, comm=None):
    """Bytes of the blk write cells written back for a process (-P)."""
    return sum(c["bytes"] for c in rep["cells"]
               if c["layer"] == "blk" and c["op"] == "write" and c.get("writeback")
               and (pid is None or c.get("pid") == pid)
               and (comm is None or c.get("comm") == comm))


def check_bytes(got, truth, hidden, what):
    """got is truth, but for write completions the kernel hid from BPF
    (their bytes counted by ftrace): truth - hidden <= got <= truth."""
    n, nbytes = hidden
    if not n:
        assert got == truth, f"{what}: {got} bytes written back, kernel charged {truth}"
        return
    assert truth - nbytes <= got <= truth, \
        f"{what}: {got} bytes, kernel charged {truth}, {n} completions ({nbytes} bytes) hidden"
    print(f"    hidden from BPF by this host's kernel: {what}: {n} write completions, "
          f"{nbytes} bytes; counted {got} of {truth}", flush=True)


def one_report(tool):
    reps = tool.stop_json()
    assert len(reps) == 1, reps
    return reps[0]


def run_writer(fs, w, *args):
    """w writes under -T blk -d DISK ARGS; syncfs. Returns the bytes the
    kernel charged it, the report, the hidden write completions."""
    tool = Tool("-T", "blk", "-d", fs.name, *args, "--json")
    hidden = HiddenWrites(fs.name)
    w.go()
    w.done()
    fs.syncfs()
    rep = one_report(tool)
    return w.exit(), rep, hidden.stop()


@test
def writer_charged_its_written_back_bytes():
    """A process writes 32 MiB buffered to a new file and exits; syncfs;
    under -T blk -p PID the bytes written back for it equal its
    /proc/PID/io write_bytes - cancelled_write_bytes, and it submitted
    none of them itself (a flusher or the sync did)."""
    fs = Ext4Loop()
    w = Writer(fs.path("f"), 0, 32 * MIB)
    truth, rep, seen = run_writer(fs, w, "-p", str(w.pid))
    assert truth == 32 * MIB, f"/proc/PID/io charged {truth} for 32 MiB of new pages"
    wb = rep["writeback"]
    check_bytes(wb["bytes"], truth, seen, "written back for the writer")
    assert wb["self_submitted_bytes"] == 0, wb
    cells = [c for c in wb["cells"] if c["op"] == "write"]
    assert len(cells) == 1 and cells[0]["writeback"] is True, wb
    assert cells[0]["bytes"] == wb["bytes"] and cells[0]["count"] == wb["requests"], wb
    assert wb["evicted_folios"] == 0, wb


@test
def dd_under_every_process_with_the_kworker_as_submitter():
    """dd writes 24 MiB buffered to a new file; syncfs. Under -T syscall,blk
    -P (every process) dd's written-back bytes equal the 24 MiB the kernel
    charged it (a new file of whole pages), the kworker that submitted
    them keeps its own submitted row, and every byte of the disk's write
    requests is someone's: traced dirtiers', unknown (the journal, metadata
    the jbd2 thread dirtied before the run), or not page cache."""
    fs = Ext4Loop()
    tool = Tool("-T", "syscall,blk", "-d", fs.name, "-P", "--json")
    hidden = HiddenWrites(fs.name)
    dd = run_process(["dd", "if=/dev/zero", f"of={fs.path('dd')}", "bs=1M", "count=24",
                      "status=none"], timeout=120)
    assert dd.returncode == 0
    fs.syncfs()
    rep = one_report(tool)
    seen = hidden.stop()
    check_bytes(written_back(rep, comm="dd"), 24 * MIB, seen, "written back for dd")
    rows = [c for c in rep["cells"] if c["layer"] == "blk" and c["op"] == "write"]
    submitters = {c["comm"] for c in rows if not c.get("writeback") and c["bytes"]}
    assert any(s.startswith("kworker") or s == "sync" for s in submitters), submitters
    assert "dd" not in submitters, "dd submitted none of its writes itself"
    wb = rep["writeback"]
    total = sum(c["bytes"] for c in rows if not c.get("writeback"))
    parts = (wb["bytes"] + wb["self_submitted_bytes"] + wb["unknown_bytes"] +
             wb["not_page_cache_bytes"] + wb["unwalked_bytes"] + wb["crowded_bytes"])
    assert parts == total, f"write requests {total} bytes, their pages' parts {parts}: {wb}"
    unknown = written_back(rep, pid=None, comm="(unknown)")
    assert unknown == wb["unknown_bytes"], (unknown, wb)


def two_writers(a_file, a_off, a_size, b_file, b_off, b_size):
    """Two Writers at once on one file system, -p A,B -P: each is charged
    its own /proc/PID/io bytes, and the kernel charged each its size."""
    fs = Ext4Loop()
    a = Writer(fs.path(a_file), a_off, a_size)
    b = Writer(fs.path(b_file), b_off, b_size)
    tool = Tool("-T", "blk", "-d", fs.name, "-p", f"{a.pid},{b.pid}", "-P", "--json")
    hidden = HiddenWrites(fs.name)
    a.go()
    b.go()
    a.done()
    b.done()
    fs.syncfs()
    rep = one_report(tool)
    ta, tb = a.exit(), b.exit()
    seen = hidden.stop()
    check_bytes(written_back(rep, pid=a.pid), ta, seen, f"writer of {a_file} at {a_off}")
    check_bytes(written_back(rep, pid=b.pid), tb, seen, f"writer of {b_file} at {b_off}")
    assert (ta, tb) == (a_size, b_size), (ta, tb)


@test
def two_writers_two_files_each_their_own():
    """Two processes write 16 and 24 MiB to two new files at once."""
    two_writers("a", 0, 16 * MIB, "b", 0, 24 * MIB)


@test
def two_writers_one_file_each_their_pages():
    """Two processes write the two halves of one new file at once (16 MiB
    each, side by side, so writeback joins them into the same requests):
    each is charged its own pages, page by page."""
    two_writers("shared", 0, 16 * MIB, "shared", 16 * MIB, 16 * MIB)


@test
def fio_buffered_writes_charged_to_fio():
    """fio --rw=write --direct=0 (its own file, 24 MiB): the bytes written
    back for fio's processes equal fio's own io_bytes."""
    fs = Ext4Loop()
    tool = Tool("-T", "blk", "-d", fs.name, "-c", "fio", "-P", "--json")
    hidden = HiddenWrites(fs.name)
    p = run_process(["fio", "--name=wb", f"--filename={fs.path('fio')}", "--rw=write",
                     "--direct=0", "--bs=64k", "--size=24M", "--ioengine=psync",
                     "--output-format=json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]
    fs.syncfs()
    rep = one_report(tool)
    seen = hidden.stop()
    check_bytes(written_back(rep, comm="fio"), job["write"]["io_bytes"], seen,
                "written back for fio")


@test
def cgroup_writer_charged_to_its_cgroup():
    """A writer in a cgroup v2 the test makes: -G charges the cgroup the
    bytes written back for its pages. The truth is the cgroup's io.stat
    wbytes for the disk where the host's v2 hierarchy has the io
    controller on below its root; elsewhere (blkio in v1, or io off), the
    only process in the cgroup's /proc/PID/io."""
    root = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") \
        else "/sys/fs/cgroup"
    if not os.path.exists(os.path.join(root, "cgroup.procs")):
        raise Skip("no cgroup v2 hierarchy mounted")
    fs = Ext4Loop()
    cg = make_cgroup(os.path.join(root, f"iosb-wb-{os.getpid()}"))
    # io.stat only where the host already enables the io controller below
    # the root: enabling it there would change every cgroup on the machine.
    with open(os.path.join(root, "cgroup.subtree_control")) as f:
        io_v2 = "io" in f.read().split()
    w = Writer(fs.path("cg"), 0, 16 * MIB)
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(w.pid))
    dev = open(f"/sys/class/block/{fs.name}/dev").read().strip()

    def wbytes():
        if not io_v2:
            return 0
        with open(os.path.join(cg, "io.stat")) as f:
            for line in f:
                if line.startswith(dev + " "):
                    kv = dict(x.split("=") for x in line.split()[1:])
                    return int(kv["wbytes"])
        return 0

    before = wbytes()
    truth, rep, seen = run_writer(fs, w, "--cgroup", cg, "-G")
    if io_v2:
        truth = wbytes() - before
    got = sum(c["bytes"] for c in rep["cells"] if c["layer"] == "blk" and
              c.get("writeback") and (c.get("cgroup") or "").endswith(os.path.basename(cg)))
    check_bytes(got, truth, seen, "written back for the cgroup")


def kernel_hz():
    """CONFIG_HZ of the running kernel (/proc/config.gz), or Skip."""
    import gzip
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=")[1])
    except OSError:
        pass
    raise Skip("no /proc/config.gz: the tick that bounds a pause is not known")


class StrictBdi:
    """The test's loop device throttles its writers on its own: strict_limit
    with a small max_bytes on its bdi (the device's own settings, put back
    when the test ends; vm.dirty_* stay as they are)."""

    def __init__(self, disk, max_bytes):
        self.dir = os.path.realpath(f"/sys/class/block/{disk}/bdi")
        if not os.path.exists(os.path.join(self.dir, "max_bytes")):
            raise Skip("no bdi max_bytes (Linux 6.2+)")
        on_cleanup(f"bdi {self.dir}", self.restore)
        self.write("strict_limit", "1")
        self.write("max_bytes", str(max_bytes))

    def write(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(value)

    def restore(self):
        self.write("max_ratio", "100")
        self.write("strict_limit", "0")


@test
def throttled_writer_part_matches_ftrace():
    """A writer dirties 96 MiB on a loop device whose bdi allows 2 MiB of
    dirty pages (strict_limit): the kernel pauses it in balance_dirty_pages.
    An ftrace instance records the pauses it announced for that task
    (writeback:balance_dirty_pages, pause > 0, in ms). Its write calls'
    throttle_pauses equal the ftrace hits, and their throttled part lies
    within one tick per pause of the pauses' sum: a pause of n jiffies
    sleeps from inside the current tick until the timer's, more than n - 1
    ticks and at most n plus the wake-up (the part ends at sched_wakeup).
    The parts still add up to the calls' time."""
    hz = kernel_hz()
    fs = Ext4Loop()
    StrictBdi(fs.name, 2 * MIB)
    w = Writer(fs.path("t"), 0, 96 * MIB)
    ft = FtraceInstance("thr", [("writeback", "balance_dirty_pages")],
                        f"pause > 0 && common_pid == {w.pid}")
    on_cleanup("ftrace instance", ft.close)
    tool = Tool("-T", "syscall,blk", "-p", str(w.pid), "--json")
    ft.start()
    w.go()
    w.done()
    text = ft.stop()
    fs.syncfs()
    rep = one_report(tool)
    w.exit()
    pauses = [int(f.split("=")[1]) for line in text.splitlines()
              if "balance_dirty_pages:" in line
              for f in line.split() if f.startswith("pause=")]
    assert pauses, "no balance_dirty_pages pause: the writer was not throttled"
    write = [b for b in rep["breakdown"] if b["op"] == "write"]
    assert len(write) == 1, rep["breakdown"]
    b = write[0]
    assert b["throttle_pauses"] == len(pauses), (b["throttle_pauses"], len(pauses))
    parts = {p["part"]: p["sum_ns"] for p in b["parts"]}
    tick = 10**9 // hz
    want = sum(pauses) * 10**6
    assert want - len(pauses) * tick <= parts["throttled"] <= want + len(pauses) * tick, \
        f"throttled {parts['throttled']} ns, {len(pauses)} pauses of {want} ns, tick {tick}"
    assert sum(parts.values()) == b["total_ns"], (parts, b["total_ns"])
