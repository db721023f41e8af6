"""Shared plumbing for the integration tests: run the tool and the workload,
wait for their handshakes, read the kernel's own counters.

The tests compare iostackbreak's counts with independent truths: the
workload's own count, /proc/PID/io and /proc/diskstats."""

import json
import os
import re
import select
import signal
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# IOSB_TOOL: another build of the tool (make sanitized runs build-san's).
TOOL = os.environ.get("IOSB_TOOL") or os.path.join(ROOT, "build", "iostackbreak")
IOWORK = os.path.join(ROOT, "build", "iowork")
READY_LINE = "Hit Ctrl-C to end."


class Skip(Exception):
    """The test cannot run here; the message says why."""


class Tool:
    """iostackbreak running in the background until stop()."""

    def __init__(self, *args, timeout=60):
        self.args = [TOOL, *args]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stderr_lines = []
        # Read the raw descriptor: a buffered readline() can swallow the
        # ready line into Python's buffer where select() cannot see it.
        fd = self.proc.stderr.fileno()
        pending = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self.stderr_lines.append(line.decode(errors="replace"))
                if line.decode(errors="replace").endswith(READY_LINE):
                    if pending:
                        self.stderr_lines.append(pending.decode(errors="replace"))
                    return
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError(f"no '{READY_LINE}' from {self.args} in {timeout}s: "
                                 + " | ".join(self.stderr_lines))
        out, err = self.proc.communicate()
        raise AssertionError(f"{self.args} exited {self.proc.returncode} before attaching: "
                             + " | ".join(self.stderr_lines + err.splitlines()))

    def stop(self, sig=signal.SIGINT, timeout=60):
        """Stops the tool; returns (exit code, stdout, all of stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "\n".join(self.stderr_lines) + "\n" + err

    def wait(self, timeout=60):
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "\n".join(self.stderr_lines) + "\n" + err

    def stop_json(self, sig=signal.SIGINT):
        rc, out, err = self.stop(sig)
        assert rc == 0, f"tool exited {rc}: {err}"
        return [json.loads(line) for line in out.splitlines() if line.strip()]


class Work:
    """The iowork workload, set up and held until go()."""

    def __init__(self, *args, prefix=()):
        # prefix: a command that execs it (taskset -c 1 ...): same pid.
        self.args = [*prefix, IOWORK, "-w", *args]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            _, err = self.proc.communicate()
            raise AssertionError(f"{self.args} did not get ready: {line!r} {err}")
        self.pid = int(line.split()[1])

    def io(self):
        return read_proc_io(self.pid)

    def go(self):
        self.proc.send_signal(signal.SIGUSR1)

    def finish_held(self, timeout=120):
        """With -x: the result of the measured phase, the process still alive."""
        # A blocking readline is fine here: the line comes right after the
        # phase, and the process stays alive until release().
        line = self.proc.stdout.readline()
        assert line.startswith("iowork "), f"{self.args}: {line!r}"
        return dict(kv.split("=", 1) for kv in line.split()[1:])

    def release(self, timeout=30):
        """With -x: lets the held process exit."""
        self.proc.send_signal(signal.SIGUSR1)
        self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"{self.args} exited {self.proc.returncode}"

    def finish(self, timeout=120):
        """Waits for the measured phase to end; returns the result fields."""
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"{self.args} failed: {out} {err}"
        line = [l for l in out.splitlines() if l.startswith("iowork ")][-1]
        return dict(kv.split("=", 1) for kv in line.split()[1:])


def read_proc_io(pid):
    with open(f"/proc/{pid}/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


def diskstats(name):
    """(reads completed, writes completed, flushes completed) of a disk."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                # Field 15 of the kernel's list, 19th of the line (after 3 id fields).
                flushes = int(fields[18]) if len(fields) > 18 else 0
                return int(fields[3]), int(fields[7]), flushes
    raise AssertionError(f"{name} not in /proc/diskstats")


def diskstats_writes(name):
    """(writes completed, sectors written, flushes completed) of a disk."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                return int(fields[7]), int(fields[9]), int(fields[18]) if len(fields) > 18 else 0
    raise AssertionError(f"{name} not in /proc/diskstats")


def cell(report, layer, op):
    for c in report["cells"]:
        if c["layer"] == layer and c["op"] == op:
            return c
    raise AssertionError(f"no cell {layer} {op} in report: {report}")


def count(report, layer, op):
    return cell(report, layer, op)["count"]


def run(*args, timeout=60, check=False):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode:
        raise AssertionError(f"{args} exited {p.returncode}: {p.stderr}")
    return p


class LoopDevice:
    """A throwaway loop device over a file in a temp dir."""

    def __init__(self, tmpdir, size_mib=64, name="disk.img", partitioned=False):
        self.path = os.path.join(tmpdir, name)
        with open(self.path, "wb") as f:
            f.truncate(size_mib << 20)
        if partitioned:
            p = subprocess.run(["sfdisk", "--quiet", self.path], input="label: dos\n,\n",
                               capture_output=True, text=True)
            if p.returncode:
                raise AssertionError(f"sfdisk failed: {p.stderr}")
        args = ["losetup", "-f", "--show"] + (["-P"] if partitioned else []) + [self.path]
        p = run(*args)
        if p.returncode:
            raise Skip(f"cannot create a loop device: {p.stderr.strip()}")
        self.dev = p.stdout.strip()
        self.name = os.path.basename(self.dev)
        if partitioned and not os.path.exists(f"/sys/class/block/{self.name}p1"):
            # Without udev the partition scan may not happen: ask for it.
            run("partx", "-a", self.dev)
        # Let anything that probes new devices finish before we count.
        time.sleep(0.2)

    def close(self):
        run("losetup", "-d", self.dev)


def bpf_prog_ids():
    p = run("bpftool", "-j", "prog", "list", check=True)
    return {prog["id"] for prog in json.loads(p.stdout or "[]")}


# The system calls of each op of the syscall layer (bpf/cells.def).
SYSCALL_NAMES = {
    "read": ("read", "pread64", "readv", "preadv", "preadv2"),
    "write": ("write", "pwrite64", "writev", "pwritev", "pwritev2"),
    "open": ("open", "openat", "openat2", "creat"),
    "fsync": ("fsync", "fdatasync"),
}
KINDS = ("pipe", "socket", "other")


def strace_fd_kind(annotation):
    """The kind of file strace --decode-fds=path,socket,dev names: None for
    storage (a path: a regular file or a directory; a block device), else
    "pipe", "socket" or "other" as the tool counts them."""
    if annotation.startswith("pipe:"):
        return "pipe"
    if re.match(r"^(socket|UNIX|TCP|TCPv6|UDP|UDPv6|NETLINK|UNIX-STREAM)[:\[]", annotation):
        return "socket"
    if annotation.startswith("anon_inode:") or "<char " in annotation:
        return "other"
    assert annotation.startswith("/"), annotation
    return None


def strace_calls(cmd, cwd=None, timeout=120):
    """The syscall layer's calls of a deterministic command, per strace -f:
    ({op: calls on storage files}, {(op, kind): calls left out}). A call on
    a descriptor that is not open is "other"; an open goes by the file it
    returned, and a failed one counts as storage (as the tool counts them)."""
    op_of = {name: op for op, names in SYSCALL_NAMES.items() for name in names}
    storage = {op: 0 for op in SYSCALL_NAMES}
    left = {(op, k): 0 for op in SYSCALL_NAMES for k in KINDS}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        # -ff: a file per process, so no call is split over two lines.
        p = subprocess.run(["strace", "-ff", "--decode-fds=path,socket,dev", "-o",
                            os.path.join(d, "st"), "-e", "trace=" + ",".join(op_of), *cmd],
                           capture_output=True, text=True, timeout=timeout, cwd=cwd)
        assert p.returncode == 0, f"strace {cmd}: {p.stderr}"
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    m = re.match(r"^(\w+)\(", line)
                    if not m or m.group(1) not in op_of:
                        continue  # signals, exits
                    op = op_of[m.group(1)]
                    if op == "open":
                        r = re.search(r"\) += (-?\d+)(?:<(.*)>)?(?: .*)?$", line)
                        assert r, line
                        kind = None if int(r.group(1)) < 0 else strace_fd_kind(r.group(2))
                    else:
                        a = re.match(r"^\w+\(\d+(<.*?>)?(?:, |\))", line)
                        assert a, line
                        kind = "other" if a.group(1) is None else strace_fd_kind(a.group(1)[1:-1])
                    if kind is None:
                        storage[op] += 1
                    else:
                        left[op, kind] += 1
    return storage, left
